package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/scenarios/suite"
)

func init() {
	commands["suite"] = command{"run every scenario under each variant over N seeds and check the expected outcomes", runSuite}
}

func runSuite(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("suite", stderr)
	seeds := fs.Int("seeds", 5, "seeds per scenario and variant")
	filter := fs.String("run", "", "only scenario/variant names matching this regular expression")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "worlds run at once")
	junit := fs.String("junit", "", "write JUnit XML (one test case per scenario × variant) to FILE")
	asJSON := fs.Bool("json", false, "print the results as JSON instead of a table")
	budget := fs.Duration("budget", 2*time.Second, "wall-clock budget of each linearizability check (past it: unknown)")
	progressMode := fs.String("progress", "auto", "progress on stderr: auto (a bar on a terminal, lines otherwise), bar, lines or none")
	report := fs.String("report", "", "write an HTML run report into DIR for each run not as expected")
	strict := fs.Bool("strict", false, "a violation Kafka's contract permits fails a run too (where no expect line names the checker)")
	set := setFlags{}
	fs.Var(set, "set", "override a configuration property in every run, key=value (repeatable; wins over the -config files)")
	cf := addConfigFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	lc, err := cf.load("suite", set, stderr)
	if err != nil {
		return err
	}
	if *seeds < 1 {
		return usagef("-seeds %d: must be >= 1", *seeds)
	}
	if *parallel < 1 {
		return usagef("-parallel %d: must be >= 1", *parallel)
	}
	if *budget <= 0 {
		return usagef("-budget %v: must be positive (e.g. 2s)", *budget)
	}
	var re *regexp.Regexp
	if *filter != "" {
		var err error
		if re, err = regexp.Compile(*filter); err != nil {
			return usagef("-run %q: %v", *filter, err)
		}
	}
	switch *progressMode {
	case "auto", "bar", "lines", "none":
	default:
		return usagef("-progress %q: allowed auto, bar, lines, none", *progressMode)
	}
	all, err := scenarios.All()
	if err != nil {
		return err
	}
	start := time.Now()
	var bar *progress
	opts := suite.Options{Seeds: *seeds, Filter: re, Parallel: *parallel, Budget: *budget, Strict: *strict}
	if len(set) > 0 {
		// A case the files or -set keep from running is left out,
		// saying why (as run leaves out a variant -set cannot apply to).
		opts.Set, opts.Origins, opts.ConfigFiles = set, lc.labels(), cf.replayArgs()
		opts.Skip = func(scenario, variant string, err error) {
			fmt.Fprintf(stderr, "kafkasim suite: %s/%s does not run under %s: %v\n", scenario, variant, cf.under(), lc.blame(err))
		}
	}
	opts.Progress = func(done, total int) {
		if bar == nil {
			bar = newProgress(stderr, *progressMode, "suite", total, 0)
		}
		bar.add(1)
	}
	cases, err := suite.Run(all, opts)
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		return lc.blame(err)
	}
	if len(cases) == 0 && len(set) > 0 {
		return usagef("no scenario/variant matching -run %q runs under the -config files (see above)", *filter)
	}
	if len(cases) == 0 {
		return usagef("-run %q matches no scenario/variant (see kafkasim list)", *filter)
	}
	failed := 0
	var jcases []reports.Case
	for _, c := range cases {
		jc := reports.Case{Scenario: c.Scenario, Variant: c.Variant, Runs: len(c.Runs), Seconds: c.Wall.Seconds()}
		for _, r := range c.Runs {
			if !r.OK() {
				why := r.Failed
				if why != "" && len(r.Unworkable) > 0 {
					why += " (note: " + strings.Join(r.Unworkable, "; ") + ")"
				}
				if why == "" {
					why = strings.Join(r.Mismatches, "; ")
				}
				if why == "" {
					why = strings.Join(harness.Unexpected(r), "; ")
				}
				jc.Failures = append(jc.Failures, fmt.Sprintf("seed %d: %s; replay: %s", r.Seed, why, r.Replay))
			}
		}
		if len(jc.Failures) > 0 {
			failed++
		}
		jcases = append(jcases, jc)
	}
	if *asJSON {
		out := struct {
			Cases []reports.SuiteRow `json:"cases"`
			Runs  []reports.RunJSON  `json:"runs"`
		}{Cases: reports.SuiteRows(cases)}
		for _, c := range cases {
			for _, r := range c.Runs {
				out.Runs = append(out.Runs, reports.NewRunJSON(r))
			}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		reports.WriteSuiteTable(stdout, cases)
		fmt.Fprintf(stdout, "%d scenario × variant cases, %d seeds each, %d not as expected, %v wall\n", len(cases), *seeds, failed, time.Since(start).Round(time.Millisecond))
	}
	if *junit != "" {
		f, err := os.Create(*junit)
		if err != nil {
			return usagef("-junit %q: %v", *junit, err)
		}
		if err := reports.WriteJUnit(f, jcases); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if *report != "" {
		if err := writeSuiteReports(*report, all, cases, set, *budget, stderr); err != nil {
			return err
		}
	}
	if failed > 0 {
		for _, jc := range jcases {
			for _, f := range jc.Failures {
				fmt.Fprintf(stderr, "%s/%s %s\n", jc.Scenario, jc.Variant, f)
			}
		}
		return failedError{fmt.Sprintf("%d of %d cases did not show what their scenario expects", failed, len(cases))}
	}
	return nil
}
