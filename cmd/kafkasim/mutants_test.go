package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyMutants measures the planted vote bug over 3 seeds of the KRaft
// swarm, with a short shrink and exploration.
var tinyMutants = []string{"mutants", "-mutant", "raft-vote-no-log-check", "-seeds", "3", "-shrink-runs", "20", "-explore-runs", "20", "-progress", "none"}

var mutantsFiles = []string{mutantsSpecFile, "runs.jsonl", "mutants.csv", "mutants.json", "mutants.md", "detection.png", "detection.svg"}

// TestMutantsShardsMergeAsOne: the mutants run finds the planted vote bug,
// and its shards, merged, write the bytes the unsharded run writes.
func TestMutantsShardsMergeAsOne(t *testing.T) {
	whole, s0, s1, merged := t.TempDir(), t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "m")
	code, out, errb := runCmd(append(append([]string{}, tinyMutants...), "-out", whole, "-parallel", "2")...)
	if code != 0 {
		t.Fatalf("mutants: exit %d\n%s%s", code, out, errb)
	}
	if !strings.Contains(out, "| raft-vote-no-log-check | raft |") || !strings.Contains(out, "detected: **1 of 1**") {
		t.Errorf("the table does not show the vote bug detected:\n%s", out)
	}
	for i, dir := range []string{s0, s1} {
		args := append(append([]string{}, tinyMutants...), "-out", dir, "-shard", []string{"0/2", "1/2"}[i])
		if code, out, errb := runCmd(args...); code != 0 {
			t.Fatalf("shard %d: exit %d\n%s%s", i, code, out, errb)
		}
	}
	if code, out, errb := runCmd("merge", "-out", merged, s0, s1); code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", code, out, errb)
	}
	sameFiles(t, whole, merged, mutantsFiles)
	// Resuming a complete run changes nothing.
	if code, _, errb := runCmd(append(append([]string{}, tinyMutants...), "-out", whole, "-parallel", "1")...); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, errb)
	}
	sameFiles(t, whole, merged, mutantsFiles)
}

func TestMutantsBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mutants", "-mutant", "fsync-lie", "-out", dir}, `"fsync-lie": not a mutant or layer`},
		{[]string{"mutants", "-seeds", "0", "-out", dir}, "-seeds 0"},
		{[]string{"mutants", "-mutant", "fsync-lies"}, "-out DIR is required"},
		{[]string{"mutants", "-shrink-runs", "-1", "-out", dir}, "-shrink-runs -1"},
	} {
		code, _, errb := runCmd(c.args...)
		if code != 2 || !strings.Contains(errb, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errb, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad input wrote %d files", len(entries))
	}
}

func TestMutantsList(t *testing.T) {
	code, out, _ := runCmd("mutants", "-list")
	if code != 0 || !strings.Contains(out, "fsync-lies") || !strings.Contains(out, "kafkasim.mutant.NAME=true") {
		t.Errorf("mutants -list: exit %d\n%s", code, out)
	}
}
