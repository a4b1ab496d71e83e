package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"time"

	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/suite"
	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

func init() {
	commands["suite"] = command{"run the built-in scenarios, or your script files and directories, under each variant over N seeds and check the expected outcomes", runSuite}
}

func runSuite(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("suite", stderr)
	seeds := fs.Int("seeds", 5, "seeds per scenario and variant")
	filter := fs.String("run", "", "only the cases whose case/variant matches `REGEXP` (a script's case name: its path relative to its PATH argument, without the extension)")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "worlds run at once")
	junit := fs.String("junit", "", "write JUnit XML (one test case per scenario × variant; a failure names each failing seed's replay command and evidence) to FILE")
	asJSON := fs.Bool("json", false, "print the results as JSON instead of a table")
	budget := fs.Duration("budget", 2*time.Second, "wall-clock budget of each linearizability check (past it: unknown)")
	progressMode := fs.String("progress", "auto", "progress on stderr: auto (a bar on a terminal, lines otherwise), bar, lines or none")
	report := fs.String("report", "", "write an HTML run report into DIR for each run not as expected")
	strict := fs.Bool("strict", false, "a violation Kafka's contract permits fails a run too (where no expect line names the checker)")
	ext := fs.String("ext", suite.DefaultExt, "the extension of the scripts searched for in a PATH that is a directory (a PATH that is a file is read whatever its extension)")
	shardText := fs.String("shard", "", "run only share i/n of the cases (script × variant, in name order; 0 <= i < n, as sweep's -shard), e.g. one per CI machine")
	set := setFlags{}
	fs.Var(set, "set", "override a configuration property in every run, key=value (repeatable; wins over the -config files)")
	cf := addConfigFlags(fs)
	maxMemory := addMaxMemory(fs)
	paths, err := parseWithPaths(fs, args)
	if err != nil {
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
	extension, err := suite.CheckExt(*ext)
	if err != nil {
		return usageError{err.Error()}
	}
	shard, shards := 0, 0
	if *shardText != "" {
		if shard, shards, err = sweep.ParseShard(*shardText); err != nil {
			return usageError{err.Error()}
		}
	}
	// NB: the output paths are checked before the runs, so that a long
	// suite does not end on a typo.
	if *junit != "" {
		if st, err := os.Stat(filepath.Dir(*junit)); err != nil || !st.IsDir() {
			return usagef("-junit %s: the directory %s does not exist", *junit, filepath.Dir(*junit))
		}
		if st, err := os.Stat(*junit); err == nil && st.IsDir() {
			return usagef("-junit %s is a directory; name the XML file to write", *junit)
		}
	}
	if *report != "" {
		if err := checkDir("-report", *report); err != nil {
			return err
		}
	}
	var all []*scenarios.Script
	var bad *suite.BadInput
	if len(paths) == 0 {
		if all, err = scenarios.All(); err != nil {
			return err
		}
	} else if all, err = suite.Load(paths, extension); err != nil {
		if !errors.As(err, &bad) {
			return err
		}
	}
	start := time.Now()
	var bar *progress
	opts := suite.Options{Seeds: *seeds, Filter: re, Parallel: *parallel, Budget: *budget, Strict: *strict, Tally: !*asJSON}
	if len(set) > 0 {
		// A case the files or -set keep from running is left out,
		// saying why (as run leaves out a variant -set cannot apply to).
		opts.Set, opts.Origins, opts.ConfigFiles = set, lc.labels(), cf.replayArgs()
		opts.Skip = func(scenario, variant string, err error) {
			fmt.Fprintf(stderr, "kafkasim suite: %s/%s does not run under %s: %v\n", scenario, variant, cf.under(), lc.blame(err))
		}
	}
	items, err := suite.Plan(all, opts)
	var planBad *suite.BadInput
	if err != nil && !errors.As(err, &planBad) {
		return lc.blame(err)
	}
	if bad = bad.Join(planBad); bad != nil {
		return usageError{bad.Error()}
	}
	if len(items) == 0 && len(set) > 0 {
		return usagef("no scenario/variant matching -run %q runs under the -config files (see above)", *filter)
	}
	if len(items) == 0 {
		return usagef("-run %q matches no case/variant (see kafkasim list, or the scripts' names under the paths)", *filter)
	}
	toRun := make([]plannedRun, 0, len(items))
	for _, it := range items {
		toRun = append(toRun, plannedRun{s: it.Script, variant: it.Variant, set: set})
	}
	mp, err := checkMemory(*maxMemory, min(*parallel, len(items)**seeds), toRun)
	if err != nil {
		return err
	}
	defer watchMemory(mp, stderr)()
	planned := len(items)
	if shards > 1 {
		if items = suite.Shard(items, shard, shards); len(items) == 0 {
			return usagef("-shard %s: nothing to run: the suite has %d cases (script × variant), fewer than %d shards; use at most %d shards", *shardText, planned, shards, planned)
		}
	}
	opts.Progress = func(done, total int) {
		if bar == nil {
			bar = newProgress(stderr, *progressMode, "suite", total, 0)
		}
		bar.add(1)
	}
	cases, err := suite.RunItems(items, opts)
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		return lc.blame(err)
	}
	failed := 0
	var jcases []reports.Case
	for _, c := range cases {
		jc := reports.Case{Scenario: c.Scenario, Variant: c.Variant, Runs: c.Count(), Seconds: c.Wall.Seconds()}
		for _, r := range c.Runs {
			if !r.OK() {
				jc.Failures = append(jc.Failures, reports.FailureText(r))
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
		of := ""
		if shards > 1 {
			of = fmt.Sprintf(" (shard %s of %d cases)", *shardText, planned)
		}
		fmt.Fprintf(stdout, "%d scenario × variant cases%s, %d seeds each, %d not as expected, %v wall\n", len(cases), of, *seeds, failed, time.Since(start).Round(time.Millisecond))
	}
	if *junit != "" {
		if err := reports.WriteFileAtomic(*junit, func(w io.Writer) error { return reports.WriteJUnit(w, jcases) }); err != nil {
			return err
		}
	}
	if *report != "" {
		if err := writeSuiteReports(*report, all, cases, opts, stderr); err != nil {
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

// parseWithPaths parses flags and the PATH arguments among them: a flag
// may follow a path (kafkasim suite scenarios/ -junit x.xml), as CI files
// tend to write it; after "--" every argument is a path.
func parseWithPaths(fs *flag.FlagSet, args []string) ([]string, error) {
	var paths []string
	for {
		if err := parseArgs(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return paths, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(paths, rest...), nil
		}
		paths = append(paths, rest[0])
		args = rest[1:]
	}
}
