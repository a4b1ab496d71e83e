package main

// This file is what `kafkasim merge` does for every kind of sharded run
// (sweep, matrix, mutants): each shard directory holds a manifest of the
// same run naming its shard, the shards 0..n-1 are each given once, every
// shard's runs are read (and checked by the kind's own reader), and -out
// is new, empty or the same whole run, before anything is written.

import (
	"bytes"
	"os"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

// shardKind says how to read and compare one kind's manifests.
type shardKind[M any] struct {
	command, plural, file string // "matrix", "matrices", "matrix-spec.json"
	read                  func(dir string) (M, bool, error)
	shard                 func(M) string
	whole                 func(M) M // the manifest without its shard
	encode                func(M) []byte
	describe              func(M) string
}

// mergeShards checks every shard directory and reads its runs with runs
// (given the manifest and the shard i of n), then checks and makes out.
// It returns the whole run's manifest, every shard's runs in the order of
// dirs, and the number of shards.
func mergeShards[M, R any](k shardKind[M], out string, dirs []string, runs func(dir string, m M, i, n int) ([]R, error)) (M, []R, int, error) {
	var first, zero M
	var firstDir string
	seen := map[int]string{}
	shards := 0
	var recs []R
	for _, dir := range dirs {
		if err := checkDir("shard directory", dir); err != nil {
			return zero, nil, 0, err
		}
		m, ok, err := k.read(dir)
		if err != nil {
			return zero, nil, 0, err
		}
		if !ok {
			return zero, nil, 0, usagef("%s: no %s: not the output of kafkasim %s -shard", dir, k.file, k.command)
		}
		if k.shard(m) == "" {
			return zero, nil, 0, usagef("%s holds a whole %s, not a shard (its results are already complete)", dir, k.command)
		}
		i, n, err := sweep.ParseShard(k.shard(m))
		if err != nil {
			return zero, nil, 0, usagef("%s: %v", dir, err)
		}
		if firstDir == "" {
			first, firstDir, shards = m, dir, n
		}
		if !bytes.Equal(k.encode(k.whole(m)), k.encode(k.whole(first))) || n != shards {
			return zero, nil, 0, usagef("shards from different %s:\n  %s: %s\n  %s: %s", k.plural, firstDir, k.describe(first), dir, k.describe(m))
		}
		if prev, dup := seen[i]; dup {
			return zero, nil, 0, usagef("shard %s given twice: %s and %s", k.shard(m), prev, dir)
		}
		seen[i] = dir
		rs, err := runs(dir, m, i, n)
		if err != nil {
			return zero, nil, 0, err
		}
		recs = append(recs, rs...)
	}
	for i := 0; i < shards; i++ {
		if _, ok := seen[i]; !ok {
			return zero, nil, 0, usagef("shard %d/%d is missing (given: %d of %d shards)", i, shards, len(seen), shards)
		}
	}
	whole := k.whole(first)
	if old, ok, err := k.read(out); err != nil {
		return zero, nil, 0, err
	} else if ok && !bytes.Equal(k.encode(old), k.encode(whole)) {
		return zero, nil, 0, usagef("-out %s holds another %s (%s); give another directory", out, k.command, k.describe(old))
	} else if !ok {
		if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
			return zero, nil, 0, usagef("-out %s: the directory is not empty and holds no %s; give a new or empty directory", out, k.file)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return zero, nil, 0, usagef("-out %s: %v", out, err)
	}
	return whole, recs, shards, nil
}
