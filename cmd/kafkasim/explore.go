package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios/workload"

	"github.com/kafkasim/kafkasim/scenarios/replay"

	"github.com/kafkasim/kafkasim/explore"
	kexplore "github.com/kafkasim/kafkasim/scenarios/explore"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

func init() {
	commands["explore"] = command{"model-check a scenario's cluster: every action sequence up to a depth", runExplore}
}

// runExplore is 'kafkasim explore': stateless model checking of the
// exploration workload (scenarios/workload) on a scenario's cluster,
// searched by scenarios/explore.
func runExplore(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("explore", stderr)
	scenario := fs.String("scenario", "", "scenario name (kafkasim list) or path of a script file; its header gives the cluster")
	variant := fs.String("variant", "", "variant to explore (default: the scenario's first)")
	set := setFlags{}
	fs.Var(set, "set", "override a configuration property, key=value (repeatable)")
	cf := addConfigFlags(fs)
	depth := fs.Int("depth", 10, "actions per run (the bound)")
	records := fs.Int("records", 2, "records the workload may produce")
	faults := fs.String("faults", strings.Join(workload.DefaultFaults, ","), "fault actions: "+strings.Join(workload.FaultNames, ",")+" (on a KRaft cluster: crash, power-loss, partition, and reconfig with kafkasim.kraft.version=1; default "+strings.Join(workload.KRaftDefaultFaults, ",")+")")
	acks := fs.String("acks", "all", "the producer's acks: all, 1 or 0")
	checks := fs.String("checkers", strings.Join(kexplore.DefaultCheckers, ","), "checkers whose contract-breaking violations count (on a KRaft cluster default "+strings.Join(kexplore.KRaftDefaultCheckers, ",")+")")
	maxRuns := fs.Int("max-runs", 0, "stop after N runs (0: explore the whole bound); resume with -state")
	parallel := fs.Int("parallel", 1, "runs executed at once (the result does not depend on it)")
	state := fs.String("state", "", "resume from and save the search (queue and visited states) to FILE")
	orders := fs.Bool("orders", false, "also branch on the order of events due at the same instant")
	dfs := fs.Bool("dfs", false, "depth-first instead of breadth-first (breadth-first finds the shortest violation)")
	save := fs.String("save", "", "write the violating run's choices to FILE (default: explore-<scenario>-<variant>.choices)")
	script := fs.String("script", "", "also write the violating run as a scenario script to FILE (its faults and controller decisions as timed steps, every variant)")
	progressMode := fs.String("progress", "auto", progressFlagDoc)
	maxMemory := addMaxMemory(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	lc, err := cf.load("explore", set, stderr)
	if err != nil {
		return err
	}
	if err := checkOutputFile("-script", *script); err != nil {
		return err
	}
	if err := checkProgressMode(*progressMode); err != nil {
		return err
	}
	s, err := loadScenario(*scenario)
	if err != nil {
		return err
	}
	if *depth < 1 {
		return usagef("-depth %d: must be at least 1", *depth)
	}
	if *parallel < 1 {
		return usagef("-parallel %d: must be at least 1", *parallel)
	}
	if *maxRuns < 0 {
		return usagef("-max-runs %d: must be 0 (explore the whole bound) or more", *maxRuns)
	}
	if len(splitList(*faults)) == 0 {
		// NB: an empty list does not mean "no faults" (an exploration
		// without faults has nothing to find); it is refused rather than
		// silently replaced by the default.
		return usagef("-faults %q: name at least one of %s (default %s)", *faults, strings.Join(workload.FaultNames, ","), strings.Join(workload.DefaultFaults, ","))
	}
	cfg := kexplore.Config{Variant: *variant, Set: set, MaxRuns: *maxRuns, Parallel: *parallel, StateFile: *state,
		NoOrders: !*orders, DepthFirst: *dfs,
		Params: workload.ExploreParams{Depth: *depth, Records: *records, Faults: splitList(*faults), Acks: *acks}}
	cfg.Checkers = splitList(*checks)
	// NB: -faults and -checkers left unset take the defaults of the
	// cluster's mode (ZooKeeper or KRaft), filled in by kexplore.Run.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["faults"] {
		cfg.Params.Faults = nil
	}
	if !given["checkers"] {
		cfg.Checkers = nil
	}
	var toRun []plannedRun
	for _, v := range s.Variants {
		if *variant == "" && v.Name != s.Variants[0].Name || *variant != "" && v.Name != *variant {
			continue
		}
		toRun = append(toRun, plannedRun{s: s, variant: v.Name, set: set, records: max(*records, 1)})
	}
	mp, err := checkMemory(*maxMemory, *parallel, toRun)
	if err != nil {
		return err
	}
	defer watchMemory(mp, stderr)()
	bar := newProgress(stderr, *progressMode, "explore", *maxRuns, 0)
	cfg.Progress = func(r explore.Report) {
		bar.update(r.Runs, fmt.Sprintf("%d distinct states, depth %d of %d", r.States, r.Depth, *depth))
	}
	ex, err := kexplore.Run(s, cfg)
	bar.finish()
	if err != nil {
		return lc.blame(err)
	}
	v := *variant
	if v == "" {
		v = s.Variants[0].Name
	}
	fmt.Fprintf(stdout, "explore %s / %s: %s, checkers %s\n", s.Name, v, ex.Params, strings.Join(ex.Checkers, ","))
	if n := workload.Partitions(s); n > 1 {
		fmt.Fprintf(stdout, "  explored partition %s/0 only, the first of the script's %d: the explorer enumerates one partition\n", s.Topics[0].Name, n)
	}
	fmt.Fprintf(stdout, "  runs %d, distinct states %d, depth %d, %v wall (%.0f runs/s, %.0f states/s)\n", ex.Runs, ex.States, ex.Depth,
		ex.Elapsed.Round(1e6), float64(ex.Runs)/ex.Elapsed.Seconds(), float64(ex.States)/ex.Elapsed.Seconds())
	if ex.Found == nil {
		if ex.Exhausted {
			fmt.Fprintf(stdout, "no violation up to depth %d\n", *depth)
			return nil
		}
		fmt.Fprintf(stdout, "no violation in %d runs; the bound is not exhausted (resume with -state FILE)\n", ex.Runs)
		return nil
	}
	path := *save
	if path == "" {
		path = fmt.Sprintf("explore-%s-%s.choices", s.Name, v)
	}
	if err := ex.File.Save(path); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "violation of %s in run %d, after %d actions: %s\n", ex.Checker, ex.Violation.Run, ex.Violation.Depth,
		strings.Join(workload.ExploreActions(ex.Found), "; "))
	for _, st := range harness.Story(ex.Found) {
		fmt.Fprintf(stdout, "  %s\n", st)
	}
	ex.Found.Replay = replay.ReplayChoicesCommand(ex.File, set) // Save set the file's path
	fmt.Fprintf(stdout, "choices saved to %s\n", path)
	if *script != "" {
		if err := workload.SaveScheduleScript(*script, s, ex.Found, "kafkasim explore "+strings.Join(args, " "), ex.Checker); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "script saved to %s: kafkasim run -scenario %s [-variant V]\n", *script, *script)
	}
	fmt.Fprintf(stdout, "replay: %s\n", ex.Found.Replay)
	return failedError{"explore found a violation of " + ex.Checker}
}

// checkOutputFile refuses an output file flag whose directory does not
// exist or that names a directory, before anything runs: bad input, and
// no partial output.
func checkOutputFile(flagName, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usagef("%s %s: a directory; want the path of a file to write", flagName, path)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return usagef("%s %s: the directory %s does not exist", flagName, path, filepath.Dir(path))
	}
	return nil
}

// splitList splits a comma-separated flag value.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
