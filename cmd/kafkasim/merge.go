package main

// This file is `kafkasim merge -out DIR SHARD_DIR...`: it joins the shards
// of one sweep (each written by `sweep -shard i/n`) into the files an
// unsharded sweep writes, byte for byte. Every shard is checked before
// anything is written: all must come from the same sweep (scenario,
// variant, grid, seeds, budget), the shards 0..n-1 must each be given
// once, and each must be complete.

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/kafkasim/kafkasim/scenarios"
)

func runMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", stderr)
	out := fs.String("out", "", "output directory")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	dirs := fs.Args()
	if *out == "" {
		return usagef("-out DIR is required")
	}
	if len(dirs) == 0 {
		return usagef("no shard directories: kafkasim merge -out DIR SHARD_DIR...")
	}
	var first manifest
	var firstDir string
	seen := map[int]string{}
	shards := 0
	var recs []scenarios.RunRecord
	for _, dir := range dirs {
		m, ok, err := readManifest(dir)
		if err != nil {
			return err
		}
		if !ok {
			return usagef("%s: no sweep.json: not the output of kafkasim sweep -shard", dir)
		}
		if m.Shard == "" {
			return usagef("%s holds a whole sweep, not a shard (its results are already complete)", dir)
		}
		i, n, err := scenarios.ParseShard(m.Shard)
		if err != nil {
			return usagef("%s: %v", dir, err)
		}
		if firstDir == "" {
			first, firstDir, shards = m, dir, n
		}
		same, base := m, first
		same.Shard, base.Shard = "", ""
		if !bytes.Equal(same.encode(), base.encode()) || n != shards {
			return usagef("shards from different sweeps:\n  %s: %s\n  %s: %s", firstDir, describe(first), dir, describe(m))
		}
		if prev, dup := seen[i]; dup {
			return usagef("shard %s given twice: %s and %s", m.Shard, prev, dir)
		}
		seen[i] = dir
		runs, err := readRuns(dir)
		if err != nil {
			return err
		}
		runs = scenarios.SortRecords(runs)
		want := m.Jobs(i, n)
		if !sameJobs(runs, want) {
			return usagef("shard %s in %s is incomplete (%d of %d runs): rerun its sweep command to finish it", m.Shard, dir, len(runs), len(want))
		}
		recs = append(recs, runs...)
	}
	for i := 0; i < shards; i++ {
		if _, ok := seen[i]; !ok {
			return usagef("shard %d/%d is missing (given: %d of %d shards)", i, shards, len(seen), shards)
		}
	}
	sw := first.Sweep
	whole := manifest{Sweep: sw}
	if old, ok, err := readManifest(*out); err != nil {
		return err
	} else if ok && !bytes.Equal(old.encode(), whole.encode()) {
		return usagef("-out %s holds another sweep (%s); give another directory", *out, describe(old))
	} else if !ok {
		if entries, err := os.ReadDir(*out); err == nil && len(entries) > 0 {
			return usagef("-out %s: the directory is not empty and holds no sweep.json; give a new or empty directory", *out)
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return usagef("-out %s: %v", *out, err)
	}
	fmt.Fprintf(stdout, "merged %d shards of %s\n", shards, describe(whole))
	return writeSweepOutputs(*out, stdout, &sw, scenarios.SortRecords(recs))
}

// sameJobs reports whether sorted records are exactly the jobs.
func sameJobs(recs []scenarios.RunRecord, jobs []scenarios.Job) bool {
	if len(recs) != len(jobs) {
		return false
	}
	for i, j := range jobs {
		if recs[i].Point != j.Point || recs[i].Seed != j.Seed {
			return false
		}
	}
	return true
}
