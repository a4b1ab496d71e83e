package main

// This file writes HTML run reports for `replay -report DIR` and
// `suite -report DIR` (one report per run that did not meet its
// scenario's expectations, rerun with the timeline kept).

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/scenarios/suite"
)

// reportName is a run report's file name, slash-separated: a suite's case
// named by its path below a PATH argument (team/orders) has its report in
// that subdirectory (team/orders-acks1-seed3.html). Case names never hold
// ".." (suite.Load), so a report stays inside its directory.
func reportName(r *harness.Result) string {
	return fmt.Sprintf("%s-%s-seed%d.html", r.Scenario, r.Variant, r.Seed)
}

// writeRunReport writes DIR/<scenario>-<variant>-seed<N>.html and, with
// pictures (run and replay), its timeline as -timeline.svg and .png.
func writeRunReport(dir string, r *harness.Result, stderr io.Writer, pictures bool) error {
	path := filepath.Join(dir, filepath.FromSlash(reportName(r)))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return usagef("-report %s: %v", dir, err)
	}
	if err := reports.WriteFileAtomic(path, func(w io.Writer) error { return reports.WriteHTMLReport(w, r) }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote the run report %s\n", path)
	// The report's timeline as pictures of their own, to cite or embed.
	base := strings.TrimSuffix(path, ".html")
	for _, format := range []string{"svg", "png"} {
		if !pictures || r.World == nil {
			break // a run that kept no trace has no timeline
		}
		if err := reports.WriteFileAtomic(base+"-timeline."+format, func(w io.Writer) error { return reports.WriteTimeline(w, r, format) }); err != nil {
			return err
		}
	}
	return nil
}

// writeSuiteReports reruns every run of the suite that did not meet its
// expectations with the timeline kept, and writes its report into dir.
func writeSuiteReports(dir string, scripts []*scenarios.Script, cases []*suite.Case, o suite.Options, stderr io.Writer) error {
	byName := map[string]*scenarios.Script{}
	for _, s := range scripts {
		byName[s.Name] = s
	}
	for _, c := range cases {
		for _, r := range c.Runs {
			if r == nil || r.OK() {
				continue
			}
			res, err := harness.Run(byName[c.Scenario], c.Variant, harness.Options{Seed: r.Seed, Set: o.Set, Budget: o.Budget, Strict: o.Strict, Origins: o.Origins, ConfigFiles: o.ConfigFiles, Timeline: true})
			if err != nil {
				return err
			}
			if err := writeRunReport(dir, res, stderr, false); err != nil {
				return err
			}
		}
	}
	return nil
}
