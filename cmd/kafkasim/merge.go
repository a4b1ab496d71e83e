package main

// This file is `kafkasim merge -out DIR SHARD_DIR...`: it joins the shards
// of one sweep (each written by `sweep -shard i/n`; shards of a matrix,
// recognised by their matrix-spec.json, go to mergeMatrix in matrix.go) into the files an
// unsharded sweep writes, byte for byte. Every shard is checked before
// anything is written: all must come from the same sweep (scenario,
// variant, grid, seeds, budget), the shards 0..n-1 must each be given
// once, and each must be complete.

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
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
	if err := checkDir("-out", *out); err != nil {
		return err
	}
	if err := checkDir("shard directory", dirs[0]); err != nil {
		return err
	}
	if _, isMutants, err := readMutantsManifest(dirs[0]); err != nil {
		return err
	} else if isMutants {
		return mergeMutants(*out, dirs, stdout, stderr) // mutants.go
	}
	if _, isMatrix, err := readMatrixManifest(dirs[0]); err != nil {
		return err
	} else if isMatrix {
		return mergeMatrix(*out, dirs, stdout) // matrix.go
	}
	k := shardKind[manifest]{command: "sweep", plural: "sweeps", file: "sweep.json", read: readManifest,
		shard: func(m manifest) string { return m.Shard }, whole: func(m manifest) manifest { m.Shard = ""; return m },
		encode: manifest.encode, describe: describe}
	whole, recs, shards, err := mergeShards(k, *out, dirs, shardRuns)
	if err != nil {
		return err
	}
	sw := whole.Spec
	fmt.Fprintf(stdout, "merged %d shards of %s\n", shards, describe(whole))
	return writeSweepOutputs(*out, stdout, &sw, sweep.SortRecords(recs))
}

// shardRuns reads shard i of n from dir and checks that its runs are
// exactly the shard's jobs: a line of another sweep, of another shard or
// given twice is refused by file and line, before the count is compared.
func shardRuns(dir string, m manifest, i, n int) ([]sweep.RunRecord, error) {
	runs, lines, err := readRuns(dir, true)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "runs.jsonl")
	points := m.Points()
	want := map[sweep.Job]bool{}
	for _, j := range m.Jobs(i, n) {
		want[j] = true
	}
	at := map[sweep.Job]int{}
	for k, r := range runs {
		j := sweep.Job{Point: r.Point, Seed: r.Seed}
		line := lines[k]
		switch {
		case r.Point < 0 || r.Point >= len(points) || r.Seed > uint64(m.Seeds):
			return nil, usagef("%s:%d: configuration %d seed %d (%s) is not a run of this sweep (%s: %d configurations × %d seeds): the line comes from another sweep",
				path, line, r.Point, r.Seed, strings.Join(r.Config, " "), describe(m), len(points), m.Seeds)
		case !slices.Equal(r.Config, m.Pairs(points[r.Point])):
			return nil, usagef("%s:%d: a run of %s, but configuration %d of this sweep is %s: the line comes from another sweep",
				path, line, strings.Join(r.Config, " "), r.Point, strings.Join(m.Pairs(points[r.Point]), " "))
		case !want[j]:
			k := r.Point*m.Seeds + int(r.Seed) - 1
			return nil, usagef("%s:%d: %s seed %d belongs to shard %d/%d, not to this shard %s", path, line, strings.Join(r.Config, " "), r.Seed, k%n, n, m.Shard)
		case at[j] > 0:
			return nil, usagef("%s:%d: %s seed %d is there twice (first at line %d)", path, line, strings.Join(r.Config, " "), r.Seed, at[j])
		}
		at[j] = line
	}
	if len(runs) < len(want) {
		return nil, usagef("shard %s in %s is incomplete (%d of %d runs): rerun its sweep command to finish it", m.Shard, dir, len(runs), len(want))
	}
	return sweep.SortRecords(runs), nil
}
