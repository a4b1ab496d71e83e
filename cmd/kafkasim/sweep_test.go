package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

// tinySweep is a fast sweep (the manual-controller acks=1 scenario): 2 × 2
// configurations × 3 seeds.
var tinySweep = []string{"sweep", "-scenario", "acks1-leader-crash", "-grid", "acks=1,all", "-grid", "unclean.leader.election.enable=false,true", "-seeds", "3", "-progress", "none"}

var sweepFiles = []string{"sweep.json", "runs.jsonl", "results.csv", "results.json", "loss.png", "loss.svg", "p_run_loss.png", "p_run_loss.svg", "tradeoff.png", "tradeoff.svg"}

func sweepInto(t *testing.T, dir string, extra ...string) {
	t.Helper()
	if code, out, errb := runCmd(append(append(append([]string{}, tinySweep...), "-out", dir), extra...)...); code != 0 {
		t.Fatalf("sweep %v: exit %d\n%s%s", extra, code, out, errb)
	}
}

func sameFiles(t *testing.T, a, b string, names []string) {
	t.Helper()
	for _, name := range names {
		x, err1 := os.ReadFile(filepath.Join(a, name))
		y, err2 := os.ReadFile(filepath.Join(b, name))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between %s and %s (%v, %v)", name, a, b, err1, err2)
		}
	}
}

// TestSweepCSVGolden: the CSV of a small fixed sweep is deterministic,
// whatever the parallelism.
func TestSweepCSVGolden(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	sweepInto(t, a, "-parallel", "1")
	sweepInto(t, b, "-parallel", "3")
	sameFiles(t, a, b, sweepFiles)
	got, _ := os.ReadFile(filepath.Join(a, "results.csv"))
	golden := filepath.Join("testdata", "sweep-acks1-leader-crash.csv")
	if *rewrite {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("results.csv differs from %s (run with -rewrite after checking):\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
	runs, _ := os.ReadFile(filepath.Join(a, "runs.jsonl"))
	if n := strings.Count(string(runs), "\n"); n != 12 || !strings.Contains(string(runs), `"replay":"kafkasim replay -scenario acks1-leader-crash -variant acks1 -seed 1 -set '$acks=1' -set acks=1`) {
		t.Fatalf("runs.jsonl: %d lines, want 12 with replay commands:\n%s", n, runs)
	}
}

// TestShardsMergeToTheUnshardedSweep: three shards merged give the same
// bytes as one unsharded sweep, plots included.
func TestShardsMergeToTheUnshardedSweep(t *testing.T) {
	whole, merged := t.TempDir(), filepath.Join(t.TempDir(), "merged")
	sweepInto(t, whole)
	var shards []string
	for _, i := range []string{"2", "0", "1"} {
		d := t.TempDir()
		sweepInto(t, d, "-shard", i+"/3")
		shards = append(shards, d)
	}
	if code, out, errb := runCmd(append([]string{"merge", "-out", merged}, shards...)...); code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", code, out, errb)
	}
	sameFiles(t, whole, merged, sweepFiles)
	// A missing shard, a shard given twice, or a shard of another sweep is
	// refused, and nothing is written.
	other := t.TempDir()
	if code, _, errb := runCmd(append(append([]string{}, tinySweep[:len(tinySweep)-4]...), "-seeds", "4", "-progress", "none", "-shard", "1/3", "-out", other)...); code != 0 {
		t.Fatalf("other sweep: exit %d %s", code, errb)
	}
	for name, dirs := range map[string][]string{
		"missing":   shards[:2],
		"twice":     {shards[0], shards[0], shards[1]},
		"different": {shards[0], shards[2], other},
		"whole":     {whole},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, errb := runCmd(append([]string{"merge", "-out", out}, dirs...)...)
		if code != 2 || errb == "" {
			t.Errorf("merge %s: exit %d, want 2 with a message (%s)", name, code, errb)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("merge %s wrote %s", name, out)
		}
	}
}

// TestSweepResumesAfterInterruption: a journal cut short (a torn last
// line, results not yet written) resumes to the same files as an
// uninterrupted sweep.
func TestSweepResumesAfterInterruption(t *testing.T) {
	whole, cut := t.TempDir(), t.TempDir()
	sweepInto(t, whole)
	sweepInto(t, cut)
	runs, _ := os.ReadFile(filepath.Join(cut, "runs.jsonl"))
	lines := strings.SplitAfter(string(runs), "\n")
	torn := strings.Join(lines[:5], "") + lines[5][:len(lines[5])/2]
	if err := os.WriteFile(filepath.Join(cut, "runs.jsonl"), []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range sweepFiles[2:] {
		os.Remove(filepath.Join(cut, f))
	}
	sweepInto(t, cut)
	sameFiles(t, whole, cut, sweepFiles)
}

// TestSweepBadInputExitsTwoAndKeepsOutputs: bad grids and shard specs
// exit 2 with a message and leave an existing sweep's files alone.
func TestSweepBadInputExitsTwoAndKeepsOutputs(t *testing.T) {
	dir := t.TempDir()
	sweepInto(t, dir)
	before, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
	base := []string{"sweep", "-scenario", "acks1-leader-crash", "-seeds", "2", "-progress", "none", "-out", dir}
	for name, extra := range map[string][]string{
		"unknown property": {"-grid", "no.such.property=1,2"},
		"bad value":        {"-grid", "min.insync.replicas=one"},
		"unknown variable": {"-grid", "$nope=1"},
		"shard 3/2":        {"-grid", "acks=1", "-shard", "3/2"},
		"shard 0/0":        {"-grid", "acks=1", "-shard", "0/0"},
		"no grid":          {},
		"another sweep":    {"-grid", "acks=1"},
		"bad grid syntax":  {"-grid", "acks"},
	} {
		code, _, errb := runCmd(append(append([]string{}, base...), extra...)...)
		if code != 2 || errb == "" {
			t.Errorf("%s: exit %d, want 2 with a message (%q)", name, code, errb)
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
	if !bytes.Equal(before, after) {
		t.Error("bad input changed the existing results.csv")
	}
}

// TestReplayReportWritesHTML: replay -report writes the run report.
func TestReplayReportWritesHTML(t *testing.T) {
	dir := t.TempDir()
	code, _, errb := runCmd("replay", "-scenario", "acks1-leader-crash", "-variant", "acks1", "-seed", "1", "-report", dir)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (a permitted loss)\n%s", code, errb)
	}
	b, err := os.ReadFile(filepath.Join(dir, "acks1-leader-crash-acks1-seed1.html"))
	if err != nil || !strings.Contains(string(b), "kafkasim replay -scenario acks1-leader-crash -variant acks1 -seed 1") || !strings.Contains(string(b), "<svg") {
		t.Fatalf("report: %v\n%.500s", err, b)
	}
}

// TestSweepAcksOnTheSwarm: the first sweep anyone tries (issue 30) runs on
// the swarm: acks=1 given on the grid turns the 3.9 clients' default
// idempotence off instead of conflicting with it, the sweep exits 0 (its
// results are data), and the acks=1 cells really send with acks=1: an
// acks=1 run loses acknowledged records as Kafka's contract permits, and
// its evidence quotes acks=1.
func TestSweepAcksOnTheSwarm(t *testing.T) {
	dir := t.TempDir()
	code, out, errb := runCmd("sweep", "-scenario", "swarm", "-grid", "acks=1,all", "-grid", "truncation=hw,kip279", "-seeds", "2", "-progress", "none", "-out", dir)
	if code != 0 {
		t.Fatalf("sweep: exit %d, want 0\n%s%s", code, out, errb)
	}
	for _, f := range sweepFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "runs.jsonl"))
	var recs []sweep.RunRecord
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r sweep.RunRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("runs.jsonl: %v: %s", err, line)
		}
		recs = append(recs, r)
	}
	if len(recs) != 8 {
		t.Fatalf("%d runs, want 8 (4 configurations × 2 seeds)", len(recs))
	}
	acks1Loss := 0
	for _, r := range recs {
		if r.Failed != "" {
			t.Errorf("%v seed %d failed: %s", r.Config, r.Seed, r.Failed)
		}
		if r.Config[0] == "acks=1" && slices.Contains(r.Verdicts, "acked-loss=permitted") && r.AckedLost > 0 {
			acks1Loss++
		}
	}
	if acks1Loss == 0 {
		t.Errorf("no acks=1 run lost an acknowledged record (permitted): are the clients sending with acks=1?\n%s", b)
	}
	// One acks=1 run as 'run' shows it: the evidence quotes acks=1, and a
	// permitted loss exits 0.
	code, out, errb = runCmd("run", "-scenario", "swarm", "-variant", "kip279-safe", "-seed", "1", "-set", "acks=1", "-set", "truncation=kip279")
	if code != 0 || !strings.Contains(out, "acknowledged (acks=1)") || !strings.Contains(out, "enable.idempotence=false") {
		t.Errorf("run with acks=1: exit %d, want 0 with acks=1 losses permitted\n%.3000s%s", code, out, errb)
	}
}
