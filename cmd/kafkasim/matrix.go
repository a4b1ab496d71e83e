package main

// This file is `kafkasim matrix`: scenarios × Kafka releases, N seeds per
// cell, in parallel worlds (package scenarios/matrix), writing
//
//	DIR/matrix-spec.json  what decides the runs (compared on resume and merge)
//	DIR/runs.jsonl        one line per run: cell, seed, verdicts, replay
//	DIR/matrix.csv        one line per (scenario, version)
//	DIR/matrix.json       the same, with the matrix
//	DIR/matrix.md         the table "which Kafka loses what" as Markdown
//	DIR/matrix.{png,svg}  the heat map
//
// As for sweep: runs.jsonl is the journal (Ctrl-C keeps the finished runs,
// rerunning the same command resumes), every other file is written
// atomically, a shard (-shard i/n) writes only matrix-spec.json and
// runs.jsonl, and `kafkasim merge` (which recognises a matrix shard by its
// matrix-spec.json) joins the shards.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/scenarios/matrix"
)

func init() {
	commands["matrix"] = command{"run scenarios under each Kafka release × seeds; write the table which Kafka loses what, CSV, JSON, heat map", runMatrix}
}

// defaultMatrixScenarios run when no -scenario is given; a name this build
// does not know is skipped with a note (it appears once merged).
var defaultMatrixScenarios = []string{"kip101-hw-lag", "kip101-power-loss", "kip279-fast-failover", "consumer-truncation", "kafka3410-halt", "last-replica-standing", "swarm"}

const matrixSpecFile = "matrix-spec.json"

// listFlags collects a repeated flag that also takes comma lists, in
// order. With paths, a value that names an existing file is one item,
// commas and all (a script's path).
type listFlags struct {
	items []string
	paths bool
}

func (l *listFlags) String() string { return strings.Join(l.items, ",") }

func (l *listFlags) Set(v string) error {
	if fi, err := os.Stat(v); l.paths && err == nil && !fi.IsDir() {
		l.items = append(l.items, v)
		return nil
	}
	for _, x := range strings.Split(v, ",") {
		x = strings.TrimSpace(x)
		if x == "" {
			return fmt.Errorf("%q: an empty item; want one value or a comma-separated list", v)
		}
		l.items = append(l.items, x)
	}
	return nil
}

// matrixManifest is DIR/matrix-spec.json: the matrix, and which shard of it
// a directory holds ("" for all of it).
type matrixManifest struct {
	matrix.Spec
	Shard string `json:"shard,omitempty"`
}

func (m matrixManifest) encode() []byte {
	b, _ := json.MarshalIndent(m, "", "  ")
	return append(b, '\n')
}

func (m matrixManifest) describe() string {
	s := fmt.Sprintf("scenarios %s, versions %s, %d seeds, budget %dms", strings.Join(m.Scenarios, ","), strings.Join(m.Versions, ","), m.Seeds, m.BudgetMs)
	if len(m.Variants) > 0 {
		s += ", -variant " + strings.Join(m.Variants, ",")
	}
	if len(m.Set) > 0 {
		var kv []string
		for _, k := range sortedKeys(m.Set) {
			kv = append(kv, k+"="+m.Set[k])
		}
		s += ", set " + strings.Join(kv, " ")
	}
	if m.Shard != "" {
		s += ", shard " + m.Shard
	}
	return s
}

func readMatrixManifest(dir string) (matrixManifest, bool, error) {
	return readManifestFile[matrixManifest](dir, matrixSpecFile, "matrix")
}

// readMatrixRuns reads a matrix's runs.jsonl, as readRuns a sweep's.
func readMatrixRuns(dir string, strict bool) ([]matrix.RunRecord, []int, error) {
	return readJournal(dir, "matrix", strict, func(r *matrix.RunRecord) error {
		if r.Seed == 0 || r.Scenario == "" {
			return errors.New("no seed or scenario")
		}
		return nil
	})
}

func runMatrix(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("matrix", stderr)
	scens := listFlags{paths: true}
	fs.Var(&scens, "scenario", "scenario name (kafkasim list) or path of a script file (repeatable, or a comma list; default: "+strings.Join(defaultMatrixScenarios, ", ")+")")
	var variants listFlags
	fs.Var(&variants, "variant", "the variant a scenario's row runs: SCENARIO=V, or V for every scenario that has a variant V (repeatable, or a comma list; default: each scenario's first)")
	set := setFlags{}
	fs.Var(set, "set", "override a property in every run, key=value (repeatable; over the -config files; the release's own keys are the columns': -versions)")
	versions := fs.String("versions", strings.Join(matrix.DefaultVersions, ","), "comma-separated Kafka release labels (X.Y, 3.9-zk, 3.9-kraft, 4.0 ... 4.3, a patch such as 4.0.0)")
	seeds := fs.Int("seeds", 5, "seeds per cell (1..N)")
	strict := fs.Bool("strict", false, "exit 1 when a run shows a violation Kafka's contract permits, too")
	cf := addConfigFlags(fs)
	rf := addRunFlags(fs, "cell")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := rf.check(); err != nil {
		return err
	}
	if err := checkMatrixSet(set); err != nil {
		return err
	}
	lc, err := cf.load("matrix", set, stderr)
	if err != nil {
		return err
	}
	shard, shards := rf.shard, rf.shards
	rels, err := matrix.ParseVersions(*versions)
	if err != nil {
		return usageError{err.Error()}
	}
	sp := &matrix.Spec{Seeds: *seeds, BudgetMs: rf.budget.Milliseconds(), Variants: variants.items}
	if len(set) > 0 {
		sp.Set = set
	}
	for _, r := range rels {
		sp.Versions = append(sp.Versions, r.Label)
	}
	sp.Scenarios = scens.items
	if len(sp.Scenarios) == 0 {
		sp.Scenarios, sp.Skipped = defaultScenarios()
		for _, s := range sp.Skipped {
			fmt.Fprintf(stderr, "kafkasim matrix: skipped %s\n", s)
		}
	}
	plan, err := matrix.NewPlan(sp)
	if err != nil {
		return usageError{err.Error()}
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(stderr, "kafkasim matrix: %s\n", n)
	}
	if err := checkMatrixFiles(plan, lc, stderr); err != nil {
		return err
	}
	m := matrixManifest{Spec: *sp, Shard: rf.shardText}
	done, prior, err := prepareMatrixOut(rf.out, m, plan, shard, shards)
	if err != nil {
		return err
	}
	jobs := plan.Jobs(shard, shards)
	var toRun []plannedRun
	for _, c := range plan.Cells {
		if c.Status == "" {
			toRun = append(toRun, plannedRun{s: c.Script, variant: c.Variant, set: c.Set})
		}
	}
	mp, err := checkMemory(*rf.maxMemory, min(rf.parallel, len(jobs)), toRun)
	if err != nil {
		return err
	}
	defer watchMemory(mp, stderr)()
	start := time.Now()
	recs, err := runJournaled(rf, stderr, "matrix", len(jobs), prior, func(stop <-chan struct{}, onRun func(matrix.RunRecord) error) (bool, error) {
		_, stopped, err := plan.Run(matrix.Options{Parallel: rf.parallel, Shard: shard, Shards: shards, Done: done, Stop: stop, OnRun: onRun})
		return stopped, err
	})
	if err != nil {
		return err
	}
	recs = matrix.SortRecords(recs)
	// NB: the wall time goes to stderr only: no output file depends on it.
	fmt.Fprintf(stderr, "kafkasim matrix: %d runs in %.1fs wall (-parallel %d)\n", len(jobs)-len(prior), time.Since(start).Seconds(), rf.parallel)
	if shards > 1 {
		err = writeShardRuns(rf, stdout, len(recs), func(w io.Writer) error { return reports.WriteMatrixRuns(w, recs) })
	} else {
		err = writeMatrixOutputs(rf.out, stdout, plan, recs)
	}
	if err != nil {
		return err
	}
	code := matrixExit(recs, *strict)
	if code == harness.ExitFailed {
		return failedError{"some runs break Kafka's contract (B in the table; -strict: or lose what it permits)"}
	}
	return runExit(code)
}

// checkMatrixSet refuses a -set of a version-selecting key
// (matrix.VersionKeys): the columns are the releases, and each release
// sets those keys itself, over -set, so the -set would not take effect.
// (A -config file's value of one is reported as overridden, since the
// operator's server.properties may well name its release.)
func checkMatrixSet(set setFlags) error {
	for _, k := range sortedKeys(set) {
		if !matrix.IsVersionKey(k) {
			continue
		}
		eg := "2.0,4.1"
		if _, err := matrix.ParseRelease(set[k]); k == config.PropInterBrokerProtocolVersion && err == nil {
			eg = set[k]
		}
		return usagef("-set %s=%s: the matrix's columns are the releases, and each sets %s itself; choose the releases with -versions (e.g. -versions %s). Keys the release decides, refused in -set: %s",
			k, set[k], k, eg, strings.Join(matrix.VersionKeys, ", "))
	}
	return nil
}

// checkMatrixFiles reports the values of the -config files a cell's
// release replaces, and refuses -config files and -set values that keep a
// cell from running that runs without them (a conflict with the scenario:
// bad input, not n/a).
func checkMatrixFiles(plan *matrix.Plan, lc *loadedConfig, stderr io.Writer) error {
	if len(plan.Spec.Set) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range plan.Cells {
		for _, n := range lc.replacedIn(plan.Spec.Set, c.Set, "-versions "+c.Release.Label) {
			if !seen[n] {
				seen[n] = true
				fmt.Fprintln(stderr, n)
			}
		}
		if c.Status == matrix.StatusRan {
			continue
		}
		_, _, err := harness.Prepare(c.Script, c.Variant, c.Set)
		if err == nil {
			continue
		}
		v, _ := c.Script.Variant(c.Variant)
		if _, _, bare := harness.Prepare(c.Script, c.Variant, c.Release.Set(c.Script.Configuration(v, nil))); bare == nil {
			return lc.blame(fmt.Errorf("%s on %s: %w", c.Scenario, c.Release.Label, err))
		}
	}
	return nil
}

// matrixExit is the exit of a matrix's runs by run's rule
// (harness.OutcomesExit: a release's configuration is never the variant's
// own, so expect lines do not apply).
func matrixExit(recs []matrix.RunRecord, strict bool) int {
	code := harness.ExitOK
	for _, r := range recs {
		code = harness.CombineExits(code, harness.OutcomesExit(r.Failed, r.Verdicts, strict))
	}
	return code
}

// defaultScenarios returns the default scenarios this build knows and a
// note for each it does not.
func defaultScenarios() (known, skipped []string) {
	all, err := scenarios.All()
	names := map[string]bool{}
	if err == nil {
		for _, s := range all {
			names[s.Name] = true
		}
	}
	for _, n := range defaultMatrixScenarios {
		if names[n] {
			known = append(known, n)
		} else {
			skipped = append(skipped, n+": not a scenario of this build (it joins the default matrix once it exists)")
		}
	}
	return known, skipped
}

// prepareMatrixOut checks the output directory before anything is written
// (as prepareOut for a sweep) and returns the runs already done.
func prepareMatrixOut(dir string, m matrixManifest, plan *matrix.Plan, shard, shards int) (map[matrix.Job]bool, []matrix.RunRecord, error) {
	old, ok, err := readMatrixManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, startOutDir(dir, matrixSpecFile, m.encode())
	}
	if !bytes.Equal(old.encode(), m.encode()) {
		return nil, nil, usagef("-out %s holds another matrix (%s); resume it with the same arguments, or give another directory", dir, old.describe())
	}
	recs, _, err := readMatrixRuns(dir, false)
	if err != nil {
		return nil, nil, err
	}
	return keepRuns(dir, plan.Jobs(shard, shards), recs, func(r matrix.RunRecord) matrix.Job { return matrix.Job{Cell: r.Point, Seed: r.Seed} },
		matrix.SortRecords, reports.WriteMatrixRuns)
}

// writeMatrixOutputs writes every file of a complete matrix, each
// atomically, and prints the table.
func writeMatrixOutputs(dir string, stdout io.Writer, plan *matrix.Plan, recs []matrix.RunRecord) error {
	rows := plan.Aggregate(recs)
	sp := plan.Spec
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{matrixSpecFile, func(w io.Writer) error { _, err := w.Write(matrixManifest{Spec: *sp}.encode()); return err }},
		{"runs.jsonl", func(w io.Writer) error { return reports.WriteMatrixRuns(w, recs) }},
		{"matrix.csv", func(w io.Writer) error { return reports.WriteMatrixCSV(w, rows) }},
		{"matrix.json", func(w io.Writer) error { return reports.WriteMatrixJSON(w, sp, rows) }},
		{"matrix.md", func(w io.Writer) error { return reports.WriteMatrixMarkdown(w, sp, rows) }},
	}
	for _, f := range files {
		if err := reports.WriteFileAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	if err := reports.WriteMatrixPlots(dir, sp, rows); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "which Kafka loses what (%d seeds per cell):\n", sp.Seeds)
	if err := reports.WriteMatrixTable(stdout, rows); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: matrix.csv, matrix.json, matrix.md, matrix.png/.svg, runs.jsonl\n", dir)
	return nil
}

// mergeMatrix is `kafkasim merge` over matrix shards: every shard is
// checked (one matrix, each of 0..n-1 once, complete, every line a run of
// its shard) before the files of one unsharded matrix are written.
func mergeMatrix(out string, dirs []string, stdout io.Writer) error {
	k := shardKind[matrixManifest]{command: "matrix", plural: "matrices", file: matrixSpecFile, read: readMatrixManifest,
		shard: func(m matrixManifest) string { return m.Shard }, whole: func(m matrixManifest) matrixManifest { m.Shard = ""; return m },
		encode: matrixManifest.encode, describe: matrixManifest.describe}
	var plan *matrix.Plan
	whole, recs, shards, err := mergeShards(k, out, dirs, func(dir string, m matrixManifest, i, n int) ([]matrix.RunRecord, error) {
		if plan == nil {
			sp := m.Spec
			var err error
			if plan, err = matrix.NewPlan(&sp); err != nil {
				return nil, usagef("%s: %v", dir, err)
			}
		}
		return matrixShardRuns(dir, plan, m.Shard, i, n)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merged %d shards of the matrix %s\n", shards, whole.describe())
	return writeMatrixOutputs(out, stdout, plan, matrix.SortRecords(recs))
}

// matrixShardRuns reads shard i of n and checks its lines against the
// shard's jobs, by file and line.
func matrixShardRuns(dir string, plan *matrix.Plan, spec string, i, n int) ([]matrix.RunRecord, error) {
	runs, lines, err := readMatrixRuns(dir, true)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "runs.jsonl")
	want := map[matrix.Job]bool{}
	for _, j := range plan.Jobs(i, n) {
		want[j] = true
	}
	at := map[matrix.Job]int{}
	for k, r := range runs {
		j := matrix.Job{Cell: r.Point, Seed: r.Seed}
		line := lines[k]
		switch {
		case r.Point < 0 || r.Point >= len(plan.Cells) || r.Seed > uint64(plan.Spec.Seeds):
			return nil, usagef("%s:%d: cell %d seed %d (%s on %s) is not a run of this matrix: the line comes from another matrix", path, line, r.Point, r.Seed, r.Scenario, r.Version)
		case r.Scenario != plan.Cells[r.Point].Scenario || r.Version != plan.Cells[r.Point].Release.Label || !slices.Equal(r.Config, plan.Cells[r.Point].SetPairs()):
			c := plan.Cells[r.Point]
			return nil, usagef("%s:%d: a run of %s on %s, but cell %d of this matrix is %s on %s: the line comes from another matrix", path, line, r.Scenario, r.Version, r.Point, c.Scenario, c.Release.Label)
		case !want[j]:
			return nil, usagef("%s:%d: %s on %s seed %d does not belong to this shard %s", path, line, r.Scenario, r.Version, r.Seed, spec)
		case at[j] > 0:
			return nil, usagef("%s:%d: %s on %s seed %d is there twice (first at line %d)", path, line, r.Scenario, r.Version, r.Seed, at[j])
		}
		at[j] = line
	}
	if len(runs) < len(want) {
		return nil, usagef("shard %s in %s is incomplete (%d of %d runs): rerun its matrix command to finish it", spec, dir, len(runs), len(want))
	}
	return matrix.SortRecords(runs), nil
}
