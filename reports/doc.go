// Package reports renders results: text tables, JSON, CSV and JUnit output,
// plots of data loss across configurations, and self-contained HTML run
// reports.
package reports
