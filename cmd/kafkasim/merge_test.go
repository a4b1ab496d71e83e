package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepAndMergeRefuseAFileAsDirectory: -out FILE (sweep and merge) and
// a file given as a shard directory exit 2 with a message, and leave the
// file as it was.
func TestSweepAndMergeRefuseAFileAsDirectory(t *testing.T) {
	shard := t.TempDir()
	sweepInto(t, shard, "-shard", "0/1")
	file := filepath.Join(t.TempDir(), "results")
	if err := os.WriteFile(file, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"sweep -out FILE":   append(append([]string{}, tinySweep...), "-out", file),
		"merge -out FILE":   {"merge", "-out", file, shard},
		"merge FILE as dir": {"merge", "-out", filepath.Join(t.TempDir(), "out"), file},
	} {
		code, _, errb := runCmd(args...)
		if code != 2 || !strings.Contains(errb, file+" is a file, not a directory") {
			t.Errorf("%s: exit %d, want 2 naming the file (%q)", name, code, errb)
		}
		if b, _ := os.ReadFile(file); string(b) != "keep me\n" {
			t.Errorf("%s changed the file: %q", name, b)
		}
	}
}

// TestMergeRefusesBadShardLines: a garbage line, a line of another sweep
// and a line given twice in a shard's runs.jsonl are refused by file and
// line (exit 2), where merge used to skip the garbage and call the rest
// "incomplete (4 of 4 runs)"; nothing is written.
func TestMergeRefusesBadShardLines(t *testing.T) {
	var shards []string
	for _, i := range []string{"0", "1", "2"} {
		d := t.TempDir()
		sweepInto(t, d, "-shard", i+"/3")
		shards = append(shards, d)
	}
	other := t.TempDir()
	if code, _, errb := runCmd("sweep", "-scenario", "acks1-leader-crash", "-grid", "acks=1,all", "-seeds", "6", "-progress", "none", "-shard", "0/3", "-out", other); code != 0 {
		t.Fatalf("other sweep: exit %d %s", code, errb)
	}
	otherRuns, _ := os.ReadFile(filepath.Join(other, "runs.jsonl"))
	foreign := strings.SplitAfter(string(otherRuns), "\n")[0]
	runs, _ := os.ReadFile(filepath.Join(shards[0], "runs.jsonl"))
	lines := strings.SplitAfter(string(runs), "\n")
	for name, c := range map[string]struct {
		line2, want string
	}{
		"garbage": {"{\"point\": oops\n", "runs.jsonl:2: not a run record"},
		"empty":   {"\n", "runs.jsonl:2: not a run record"},
		"foreign": {foreign, "runs.jsonl:2: a run of acks=1, but configuration 0 of this sweep is acks=1 unclean.leader.election.enable=false: the line comes from another sweep"},
		"twice":   {lines[0], "runs.jsonl:2: acks=1 unclean.leader.election.enable=false seed 1 is there twice (first at line 1)"},
		"shard 1": {strings.SplitAfter(mustRead(t, shards[1]), "\n")[0], "belongs to shard 1/3, not to this shard 0/3"},
	} {
		bad := t.TempDir()
		for _, f := range []string{"sweep.json"} {
			b, _ := os.ReadFile(filepath.Join(shards[0], f))
			os.WriteFile(filepath.Join(bad, f), b, 0o644)
		}
		body := lines[0] + c.line2 + strings.Join(lines[2:], "")
		if err := os.WriteFile(filepath.Join(bad, "runs.jsonl"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		code, _, errb := runCmd("merge", "-out", out, bad, shards[1], shards[2])
		if code != 2 || !strings.Contains(errb, filepath.Join(bad, c.want)) && !strings.Contains(errb, c.want) || strings.Contains(errb, "incomplete") {
			t.Errorf("%s: exit %d, want 2 with %q\n%s", name, code, c.want, errb)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: merge wrote %s", name, out)
		}
	}
}

func mustRead(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
