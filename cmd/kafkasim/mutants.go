package main

// This file is `kafkasim mutants`: the detection power of the checkers.
// For each planted bug (broker/mutant) it runs the scenarios that reach it
// with the bug on over N seeds, and the control without any, then shrinks
// each first detection and explores the model checker's small clusters
// with the bug on. It writes
//
//	DIR/mutants-spec.json  what decides the runs (compared on resume and merge)
//	DIR/runs.jsonl         one line per run: mutant, target, seed, checkers, replay
//	DIR/mutants.csv        one line per mutant, the control first
//	DIR/mutants.json       the same, with the plan and the detection curve
//	DIR/mutants.md         the table the README shows
//	DIR/detection.{png,svg} the fraction of mutants found against seeds
//
// It resumes, shards and merges as sweep does (journal.go); the shrinks
// and explorations run once every seed is judged (unsharded, or at merge).
// Exit 1 when a non-equivalent mutant went undetected or the control broke
// Kafka's contract: either is a finding.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios/mutants"
)

func init() {
	commands["mutants"] = command{"measure detection power: run each planted bug over N seeds of the scenarios that reach it; write the table and the detection curve", runMutants}
}

const mutantsSpecFile = "mutants-spec.json"

// mutantsManifest is DIR/mutants-spec.json.
type mutantsManifest struct {
	mutants.Spec
	Shard string `json:"shard,omitempty"`
}

func (m mutantsManifest) encode() []byte {
	b, _ := json.MarshalIndent(m, "", "  ")
	return append(b, '\n')
}

func (m mutantsManifest) describe() string {
	s := fmt.Sprintf("%d mutants (%s), %d seeds, budget %dms, shrink %d runs, explore %d runs", len(m.Mutants), strings.Join(m.Mutants, ","), m.Seeds, m.BudgetMs, m.ShrinkRuns, m.ExploreRuns)
	if m.Shard != "" {
		s += ", shard " + m.Shard
	}
	return s
}

func readMutantsManifest(dir string) (mutantsManifest, bool, error) {
	return readManifestFile[mutantsManifest](dir, mutantsSpecFile, "mutants")
}

func readMutantRuns(dir string, strict bool) ([]mutants.RunRecord, []int, error) {
	return readJournal(dir, "mutants", strict, func(r *mutants.RunRecord) error {
		if r.Seed == 0 || r.Mutant == "" {
			return errors.New("no mutant or seed")
		}
		return nil
	})
}

func runMutants(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mutants", stderr)
	var sel listFlags
	fs.Var(&sel, "mutant", "mutants to measure: names or layers, comma-separated (repeatable; default all; -list names them)")
	list := fs.Bool("list", false, "list the mutants (name, layer, the mistake each imitates, the scenarios that reach it) and exit")
	seeds := fs.Int("seeds", 100, "seeds per target (1..N)")
	shrinkRuns := fs.Int("shrink-runs", 150, "candidate runs to shrink each first detection (0: no shrink)")
	exploreRuns := fs.Int("explore-runs", 500, "runs of each exploration with the mutant on (0: no exploration)")
	rf := addRunFlags(fs, "mutant × target")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *list {
		return listMutants(stdout)
	}
	if err := rf.check(); err != nil {
		return err
	}
	if *shrinkRuns < 0 || *exploreRuns < 0 {
		return usagef("-shrink-runs %d, -explore-runs %d: must be 0 (off) or more", *shrinkRuns, *exploreRuns)
	}
	sp, err := mutants.NewSpec(sel.items, *seeds)
	if err != nil {
		return usageError{err.Error()}
	}
	sp.BudgetMs, sp.ShrinkRuns, sp.ExploreRuns = rf.budget.Milliseconds(), *shrinkRuns, *exploreRuns
	// Some mutants make a run churn memory (fsync-lies: followers truncate
	// and refetch whole segments); a soft limit makes the collector work
	// harder before two such worlds at once outgrow the machine.
	// (-max-memory: the built-in swarms a mutant reaches are small; the
	// bound is watched, not estimated.)
	mp, err := checkMemory(*rf.maxMemory, rf.parallel, nil)
	if err != nil {
		return err
	}
	defer watchMemory(mp, stderr)()
	m := mutantsManifest{Spec: *sp, Shard: rf.shardText}
	done, prior, err := prepareMutantsOut(rf.out, m, rf.shard, rf.shards)
	if err != nil {
		return err
	}
	jobs := sp.Jobs(rf.shard, rf.shards)
	recs, err := runJournaled(rf, stderr, "mutants", len(jobs), prior, func(stop <-chan struct{}, onRun func(mutants.RunRecord) error) (bool, error) {
		return mutants.Run(sp, mutants.Options{Parallel: rf.parallel, Shard: rf.shard, Shards: rf.shards, Done: done, Stop: stop, OnRun: onRun})
	})
	if err != nil {
		return err
	}
	recs = mutants.SortRecords(sp, recs)
	if rf.shards > 1 {
		return writeShardRuns(rf, stdout, len(recs), func(w io.Writer) error { return reports.WriteMutantRunsJSONL(w, recs) })
	}
	return finishMutants(rf.out, stdout, stderr, rf.parallel, rf.progress, sp, recs)
}

func listMutants(stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tLAYER\tREACHED BY\tTHE MISTAKE (NOT KAFKA)")
	for _, m := range mutant.Catalogue {
		var ts []string
		for _, t := range m.Targets {
			ts = append(ts, t.Scenario+"/"+t.Variant)
		}
		what := m.Mistake
		if m.Equivalent != "" {
			what += " [equivalent: " + m.Equivalent + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Layer, strings.Join(ts, " "), what)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "switch one on in any command with -set %sNAME=true\n", mutant.Prefix)
	return nil
}

// prepareMutantsOut checks the output directory before anything is
// written and returns the runs already done (as prepareOut for a sweep).
func prepareMutantsOut(dir string, m mutantsManifest, shard, shards int) (map[string]bool, []mutants.RunRecord, error) {
	old, ok, err := readMutantsManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, startOutDir(dir, mutantsSpecFile, m.encode())
	}
	if !bytes.Equal(old.encode(), m.encode()) {
		return nil, nil, usagef("-out %s holds another mutants run (%s); resume it with the same arguments, or give another directory", dir, old.describe())
	}
	recs, _, err := readMutantRuns(dir, false)
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	for _, j := range m.Jobs(shard, shards) {
		keys = append(keys, j.Key())
	}
	sp := m.Spec
	return keepRuns(dir, keys, recs, func(r mutants.RunRecord) string { return r.Key() },
		func(rs []mutants.RunRecord) []mutants.RunRecord { return mutants.SortRecords(&sp, rs) }, reports.WriteMutantRunsJSONL)
}

// finishMutants runs the follow-ups, writes every file of a complete run,
// each atomically, and prints the table.
func finishMutants(dir string, stdout, stderr io.Writer, parallel int, progress string, sp *mutants.Spec, recs []mutants.RunRecord) error {
	rows := mutants.Aggregate(sp, recs)
	if sp.ShrinkRuns > 0 || sp.ExploreRuns > 0 {
		n := 1 // the control
		for _, r := range rows {
			if r.Mutant != mutants.Control && r.Equivalent == "" {
				n++
			}
		}
		bar := newProgress(stderr, progress, "shrink+explore", n, 0)
		err := mutants.FollowUps(sp, rows, parallel, func() { bar.add(1) })
		bar.finish()
		if err != nil {
			return err
		}
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{mutantsSpecFile, func(w io.Writer) error { _, err := w.Write(mutantsManifest{Spec: *sp}.encode()); return err }},
		{"runs.jsonl", func(w io.Writer) error { return reports.WriteMutantRunsJSONL(w, recs) }},
		{"mutants.csv", func(w io.Writer) error { return reports.WriteMutantsCSV(w, rows) }},
		{"mutants.json", func(w io.Writer) error { return reports.WriteMutantsJSON(w, sp, rows) }},
		{"mutants.md", func(w io.Writer) error { return reports.WriteMutantsMarkdown(w, sp, rows) }},
	}
	for _, f := range files {
		if err := reports.WriteFileAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	if err := reports.WriteDetectionPlot(dir, sp, rows); err != nil {
		return err
	}
	if err := reports.WriteMutantsMarkdown(stdout, sp, rows); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %s: mutants.csv, mutants.json, mutants.md, detection.png/.svg, runs.jsonl\n", dir)
	s := reports.SummarizeMutants(rows)
	var bad []string
	if len(s.Undetected) > 0 {
		bad = append(bad, fmt.Sprintf("%d mutants undetected (%s)", len(s.Undetected), strings.Join(s.Undetected, ", ")))
	}
	if s.ControlBreaks > 0 {
		bad = append(bad, fmt.Sprintf("the control broke the contract on %d seeds", s.ControlBreaks))
	}
	if s.ControlExplored > 0 {
		bad = append(bad, fmt.Sprintf("the control's explorations found %d violations", s.ControlExplored))
	}
	if len(bad) > 0 {
		return failedError{strings.Join(bad, "; ")}
	}
	return nil
}

// mergeMutants is `kafkasim merge` over mutants shards: every shard is
// checked (one plan, each of 0..n-1 once, complete) before the files of
// one unsharded run are written.
func mergeMutants(out string, dirs []string, stdout, stderr io.Writer) error {
	k := shardKind[mutantsManifest]{command: "mutants", plural: "mutants runs", file: mutantsSpecFile, read: readMutantsManifest,
		shard: func(m mutantsManifest) string { return m.Shard }, whole: func(m mutantsManifest) mutantsManifest { m.Shard = ""; return m },
		encode: mutantsManifest.encode, describe: mutantsManifest.describe}
	whole, recs, shards, err := mergeShards(k, out, dirs, mutantShardRuns)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merged %d shards of the mutants run %s\n", shards, whole.describe())
	sp := whole.Spec
	return finishMutants(out, stdout, stderr, 1, "none", &sp, mutants.SortRecords(&sp, recs))
}

// mutantShardRuns reads shard i of n and checks that its runs are exactly
// the shard's jobs, by file and line.
func mutantShardRuns(dir string, m mutantsManifest, i, n int) ([]mutants.RunRecord, error) {
	runs, lines, err := readMutantRuns(dir, true)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, j := range m.Jobs(i, n) {
		want[j.Key()] = true
	}
	for k, r := range runs {
		if !want[r.Key()] {
			return nil, usagef("%s:%d: run %q is not one of shard %s's", filepath.Join(dir, "runs.jsonl"), lines[k], r.Key(), m.Shard)
		}
		delete(want, r.Key())
	}
	if len(want) > 0 {
		return nil, usagef("%s: shard %s is incomplete: %d of its runs are missing (resume it with the same command)", dir, m.Shard, len(want))
	}
	return runs, nil
}
