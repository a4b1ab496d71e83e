package main

// This file is `kafkasim sweep`: a scenario over the Cartesian product of
// a grid, N seeds per configuration, in parallel worlds, writing
//
//	DIR/sweep.json     what decides the runs (compared on resume and merge)
//	DIR/runs.jsonl     one line per run: configuration, seed, verdicts, replay
//	DIR/results.csv    one line per configuration
//	DIR/results.json   the same, with the sweep
//	DIR/loss.{png,svg} DIR/p_run_loss.{png,svg} DIR/tradeoff.{png,svg}
//
// runs.jsonl is the journal: a line is appended as each run finishes, so an
// interrupted sweep (Ctrl-C) keeps its runs, and rerunning the same command
// resumes from it. Every other file is written atomically, and runs.jsonl
// is rewritten atomically, sorted, when the sweep completes. A shard
// (-shard i/n) writes only sweep.json and runs.jsonl; `kafkasim merge`
// makes the rest.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

func init() {
	commands["sweep"] = command{"run a scenario over a grid of configurations × seeds; write CSV, JSON, runs and plots", runSweep}
	commands["merge"] = command{"join the outputs of a sharded sweep into the files one unsharded sweep writes", runMerge}
}

// gridFlags collects repeated -grid key=v1,v2 flags, in order.
type gridFlags []sweep.Axis

func (g *gridFlags) String() string { return "" }

func (g *gridFlags) Set(v string) error {
	a, err := sweep.ParseAxis(v)
	if err != nil {
		return err
	}
	*g = append(*g, a)
	return nil
}

// manifest is DIR/sweep.json: the sweep, and which shard of it a
// directory holds ("" for all of it).
type manifest struct {
	sweep.Spec
	Shard string `json:"shard,omitempty"`
}

func (m manifest) encode() []byte {
	b, _ := json.MarshalIndent(m, "", "  ")
	return append(b, '\n')
}

func readManifest(dir string) (manifest, bool, error) {
	return readManifestFile[manifest](dir, "sweep.json", "sweep")
}

// readRuns reads a sweep's runs.jsonl journal (readJournal).
func readRuns(dir string, strict bool) ([]sweep.RunRecord, []int, error) {
	return readJournal(dir, "sweep", strict, func(r *sweep.RunRecord) error {
		if r.Seed == 0 {
			return errors.New("no seed")
		}
		return nil
	})
}

// checkDir refuses a path that exists and is not a directory (-out FILE,
// a file given as a shard directory): what to do with it is not ours to
// guess.
func checkDir(what, path string) error {
	fi, err := os.Stat(path)
	if err == nil && !fi.IsDir() {
		return usagef("%s %s is a file, not a directory", what, path)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return usagef("%s %s: %v", what, path, err)
	}
	return nil
}

func runSweep(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sweep", stderr)
	scenario := fs.String("scenario", "", "scenario name (kafkasim list) or path of a script file")
	variant := fs.String("variant", "", "variant every configuration starts from (default: the scenario's first)")
	var grid gridFlags
	fs.Var(&grid, "grid", "key=v1,v2,...: a Kafka property, a script variable ($acks, the swarm's $crash ...) or variant (repeatable)")
	seeds := fs.Int("seeds", 10, "seeds per configuration (1..N)")
	set := setFlags{}
	fs.Var(set, "set", "override a configuration property in every configuration, key=value (repeatable; -grid wins over it)")
	cf := addConfigFlags(fs)
	rf := addRunFlags(fs, "configuration")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := rf.check(); err != nil {
		return err
	}
	lc, err := cf.load("sweep", set, stderr)
	if err != nil {
		return err
	}
	shard, shards := rf.shard, rf.shards
	s, err := loadScenario(*scenario)
	if err != nil {
		return err
	}
	sw := &sweep.Spec{Scenario: s.Name, Variant: *variant, Grid: grid, Seeds: *seeds, BudgetMs: rf.budget.Milliseconds()}
	if len(set) > 0 {
		sw.Set = set
	}
	if sw.Variant == "" {
		sw.Variant = s.Variants[0].Name
	}
	for _, a := range grid {
		for _, n := range lc.overriddenBy(set, a.Key, "-grid "+a.Key+"="+strings.Join(a.Values, ",")) {
			fmt.Fprintln(stderr, n)
		}
	}
	if err := sw.Validate(s); err != nil {
		return lc.blame(err)
	}
	m := manifest{Spec: *sw, Shard: rf.shardText}
	done, prior, err := prepareOut(rf.out, m, shard, shards)
	if err != nil {
		return err
	}
	jobs := sw.Jobs(shard, shards)
	var toRun []plannedRun
	for _, p := range sw.Points() {
		v, set := sw.RunArgs(s, p)
		toRun = append(toRun, plannedRun{s: s, variant: v, set: set})
	}
	mp, err := checkMemory(*rf.maxMemory, min(rf.parallel, len(jobs)), toRun)
	if err != nil {
		return err
	}
	defer watchMemory(mp, stderr)()
	recs, err := runJournaled(rf, stderr, "sweep", len(jobs), prior, func(stop <-chan struct{}, onRun func(sweep.RunRecord) error) (bool, error) {
		_, stopped, err := sweep.Run(s, sw, sweep.Options{Parallel: rf.parallel, Shard: shard, Shards: shards, Done: done, Stop: stop, OnRun: onRun})
		return stopped, err
	})
	if err != nil {
		return err
	}
	recs = sweep.SortRecords(recs)
	if shards > 1 {
		return writeShardRuns(rf, stdout, len(recs), func(w io.Writer) error { return reports.WriteRunsJSONL(w, recs) })
	}
	return writeSweepOutputs(rf.out, stdout, sw, recs)
}

// prepareOut checks the output directory before anything is written: a
// directory of another sweep (or of anything else) is refused; one of the
// same sweep is resumed. It returns the runs already done.
func prepareOut(dir string, m manifest, shard, shards int) (map[sweep.Job]bool, []sweep.RunRecord, error) {
	old, ok, err := readManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, startOutDir(dir, "sweep.json", m.encode())
	}
	if !bytes.Equal(old.encode(), m.encode()) {
		return nil, nil, usagef("-out %s holds another sweep (%s); resume it with the same arguments, or give another directory", dir, describe(old))
	}
	recs, _, err := readRuns(dir, false)
	if err != nil {
		return nil, nil, err
	}
	return keepRuns(dir, m.Jobs(shard, shards), recs, func(r sweep.RunRecord) sweep.Job { return sweep.Job{Point: r.Point, Seed: r.Seed} },
		sweep.SortRecords, reports.WriteRunsJSONL)
}

func describe(m manifest) string {
	var g []string
	for _, a := range m.Grid {
		g = append(g, a.Key+"="+strings.Join(a.Values, ","))
	}
	s := fmt.Sprintf("scenario %s, variant %s, grid %s, %d seeds, budget %dms", m.Scenario, m.Variant, strings.Join(g, " "), m.Seeds, m.BudgetMs)
	if len(m.Set) > 0 {
		s += ", -set " + scenarios.SetLabel(m.Set)
	}
	if m.Shard != "" {
		s += ", shard " + m.Shard
	}
	return s
}

// writeSweepOutputs writes every file of a complete sweep, each
// atomically, and prints the rows.
func writeSweepOutputs(dir string, stdout io.Writer, sw *sweep.Spec, recs []sweep.RunRecord) error {
	rows := sweep.Aggregate(sw, recs)
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"sweep.json", func(w io.Writer) error { _, err := w.Write(manifest{Spec: *sw}.encode()); return err }},
		{"runs.jsonl", func(w io.Writer) error { return reports.WriteRunsJSONL(w, recs) }},
		{"results.csv", func(w io.Writer) error { return reports.WriteSweepCSV(w, sw, rows) }},
		{"results.json", func(w io.Writer) error { return reports.WriteSweepJSON(w, sw, rows) }},
	}
	for _, f := range files {
		if err := reports.WriteFileAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	infos, err := reports.WriteSweepPlots(dir, sw, rows)
	if err != nil {
		return err
	}
	// LOSS is pooled with a bootstrap interval over seeds; RUNS LOSING the
	// fraction of runs that lost a record, with a Wilson interval over runs.
	fmt.Fprintf(stdout, "%-40s %5s %9s %-22s %-23s %8s %9s %9s\n", "CONFIGURATION", "RUNS", "LOSS", "95% CI (seeds)", "RUNS LOSING (95% CI)", "UNAVAIL", "P50 ms", "P99 ms")
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-40s %5d %8.4f%% [%8.4f%%, %8.4f%%] %5.1f%% [%5.1f%%, %5.1f%%] %7.2f%% %9.2f %9.2f\n", strings.Join(r.Config, " "), r.Runs,
			100*r.LossRate, 100*r.LossLow, 100*r.LossHigh, 100*r.PRunLoss, 100*r.PRunLossLow, 100*r.PRunLossHigh,
			100*r.Unavailability, r.LatencyP50Ms, r.LatencyP99Ms)
	}
	var names []string
	for _, in := range infos {
		names = append(names, fmt.Sprintf("%s.png/.svg (%s, %d series)", in.Name, in.Kind, in.Series))
	}
	fmt.Fprintf(stdout, "wrote %s: results.csv, results.json, runs.jsonl, %s\n", dir, strings.Join(names, ", "))
	return nil
}
