// Package sweep runs one scenario over a grid of configurations and many
// seeds and turns the runs into numbers. Its one job is the sweep: the grid
// (Spec, Axis, Point), the split of its runs into shards (Jobs,
// ParseShard), the run records of runs.jsonl (RunRecord, with a mergeable
// latency Histogram), and their aggregation into one Row per configuration
// with intervals over runs (Aggregate, Wilson, BootstrapRatio).
//
// It runs scripts through package harness (harness.Run) and depends on it,
// never the reverse; reports renders its rows, cmd/kafkasim parses the
// flags and journals the records.
//
//	sw := &sweep.Spec{Scenario: "swarm", Seeds: 20, Grid: []sweep.Axis{{Key: "$crash", Values: []string{"0.1", "0.5"}}}}
//	var recs []sweep.RunRecord
//	_, _, err := sweep.Run(scenarios.Swarm(), sw, sweep.Options{Parallel: 2,
//		OnRun: func(r sweep.RunRecord) error { recs = append(recs, r); return nil }})
//	rows := sweep.Aggregate(sw, sweep.SortRecords(recs))
package sweep
