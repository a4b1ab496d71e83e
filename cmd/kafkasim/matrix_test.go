package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/reports"
)

// tinyMatrix is two scenarios × four releases at one seed: kip101-hw-lag
// (KIP-101's HW truncation loss) and consumer-truncation (KIP-320's
// consumer truncation detection, from 2.1).
var tinyMatrix = []string{"matrix", "-scenario", "kip101-hw-lag", "-scenario", "consumer-truncation", "-versions", "0.10.2,1.1,2.0,2.1", "-seeds", "1", "-progress", "none"}

var matrixFiles = []string{"matrix-spec.json", "runs.jsonl", "matrix.csv", "matrix.json", "matrix.md", "matrix.png", "matrix.svg"}

func matrixInto(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	code, out, errb := runCmd(append(append(append([]string{}, tinyMatrix...), "-out", dir), extra...)...)
	// kip101-hw-lag on 0.10.2 breaks Kafka's contract (HW truncation): exit 1
	// by run's rule, every output written.
	if code != 1 || !strings.Contains(errb, "break Kafka's contract") {
		t.Fatalf("matrix %v: exit %d, want 1\n%s%s", extra, code, out, errb)
	}
	return out
}

func readMatrixRows(t *testing.T, dir string) map[[2]string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[[2]string]map[string]any{}
	for _, r := range m.Rows {
		out[[2]string{r["scenario"].(string), r["version"].(string)}] = r
	}
	return out
}

// TestMatrixCellsSayWhatHistorySays: KIP-101 (0.11) ended the HW
// truncation loss, so kip101-hw-lag loses only on 0.10.2; before KIP-320
// (2.1) the consumer of consumer-truncation skips the records written over
// the truncated ones (lost-write) and from 2.1 it rewinds to the
// divergence (nonmonotonic-poll) — both lose the same acks=1 records, as
// Kafka's contract permits, so the consumer's anomaly is what tells them
// apart.
func TestMatrixCellsSayWhatHistorySays(t *testing.T) {
	dir := t.TempDir()
	out := matrixInto(t, dir, "-parallel", "1")
	if !strings.Contains(out, "which Kafka loses what") || !strings.Contains(out, "kip101-hw-lag") {
		t.Fatalf("no table on stdout:\n%s", out)
	}
	rows := readMatrixRows(t, dir)
	for _, v := range []string{"0.10.2", "1.1", "2.0", "2.1"} {
		hw := rows[[2]string{"kip101-hw-lag", v}]
		if hw["status"] != "ran" || hw["runs"].(float64) != 1 {
			t.Fatalf("kip101-hw-lag on %s: %v", v, hw)
		}
		if lost := hw["runs_with_loss"].(float64) > 0; lost != (v == "0.10.2") {
			t.Errorf("kip101-hw-lag on %s: runs_with_loss %v, want loss only on 0.10.2", v, hw["runs_with_loss"])
		}
		ct := rows[[2]string{"consumer-truncation", v}]
		an := strings.Join(asStrings(ct["anomalies"]), " ")
		pre := v != "2.1"
		if skipped := ct["runs_consumer_skipped"].(float64) > 0; skipped != pre || strings.Contains(an, "consumer:lost-write") != pre ||
			strings.Contains(an, "consumer:nonmonotonic-poll") == pre {
			t.Errorf("consumer-truncation on %s: skipped %v, anomalies %s; want a silent skip (lost-write) only before 2.1, a rewind (nonmonotonic-poll) from 2.1", v, ct["runs_consumer_skipped"], an)
		}
		if ct["runs_with_loss"].(float64) != 1 || ct["runs_bug"].(float64) != 0 || ct["runs_permitted"].(float64) != 1 {
			t.Errorf("consumer-truncation on %s: %v; want the acks=1 loss, permitted, on every release", v, ct)
		}
	}
	// Every run's replay command runs as printed and repeats the run.
	f, err := os.Open(filepath.Join(dir, "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	for sc.Scan() {
		var r struct {
			Replay    string `json:"replay"`
			TraceHash string `json:"trace_hash"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		args := strings.Fields(r.Replay)
		if args[0] != "kafkasim" || args[1] != "replay" || strings.ContainsAny(r.Replay, `'"`) {
			t.Fatalf("replay %q: want a plain kafkasim replay command", r.Replay)
		}
		code, out, errb := runCmd(args[1:]...)
		if code == 2 || code == 4 || !strings.Contains(out, "trace "+r.TraceHash) {
			t.Errorf("%s: exit %d, trace %s not repeated\n%s", r.Replay, code, r.TraceHash, errb)
		}
		n++
	}
	if n != 8 {
		t.Fatalf("%d runs in runs.jsonl, want 8", n)
	}
}

// TestMatrixELRRows: KAFKA-3410's halted follower fails liveness only
// under HW truncation (0.10.2); on 4.1 the ELR is empty (the follower left
// the ISR at min ISR) and KIP-966's last-known-leader election brings the
// disk-less leader back, losing the record as every release from 0.11 does
// (permitted: an unclean election). Last replica standing
// loses committed acknowledged records before ELR (2.0) and not on 4.1; on
// 0.10.2 unclean election (on by default before KIP-106, 0.11) elects a
// follower holding every acknowledged record, so only a committed,
// never-acknowledged one is lost (C).
func TestMatrixELRRows(t *testing.T) {
	dir := t.TempDir()
	code, out, errb := runCmd("matrix", "-scenario", "kafka3410-halt", "-scenario", "last-replica-standing", "-versions", "0.10.2,2.0,4.1",
		"-seeds", "1", "-progress", "none", "-out", dir)
	if code != 1 { // kafka3410-halt's liveness on 0.10.2 is a bug
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errb)
	}
	rows := readMatrixRows(t, dir)
	num := func(s, v, col string) float64 { return rows[[2]string{s, v}][col].(float64) }
	for _, v := range []string{"0.10.2", "2.0", "4.1"} {
		if got := num("kafka3410-halt", v, "runs_liveness_failed") > 0; got != (v == "0.10.2") {
			t.Errorf("kafka3410-halt on %s: runs_liveness_failed %v, want liveness failing only on 0.10.2", v, num("kafka3410-halt", v, "runs_liveness_failed"))
		}
		if num("kafka3410-halt", v, "runs_with_loss") != 1 || num("kafka3410-halt", v, "runs_offline_by_design") != 0 {
			t.Errorf("kafka3410-halt on %s: %v; want the record lost, the partition back", v, rows[[2]string{"kafka3410-halt", v}])
		}
		if got := num("last-replica-standing", v, "runs_with_loss") > 0; got != (v == "2.0") {
			t.Errorf("last-replica-standing on %s: runs_with_loss %v, want acknowledged loss only on 2.0", v, num("last-replica-standing", v, "runs_with_loss"))
		}
		if got := num("last-replica-standing", v, "runs_committed_lost") > 0; got != (v == "0.10.2") {
			t.Errorf("last-replica-standing on %s: runs_committed_lost %v, want a committed, never-acknowledged loss only on 0.10.2", v, num("last-replica-standing", v, "runs_committed_lost"))
		}
	}
}

func asStrings(v any) []string {
	var out []string
	xs, _ := v.([]any)
	for _, x := range xs {
		out = append(out, x.(string))
	}
	return out
}

// TestMatrixDeterministicAcrossParallelismAndShards: -parallel 1 and 2, and
// two shards merged, write the same bytes.
func TestMatrixDeterministicAcrossParallelismAndShards(t *testing.T) {
	base := t.TempDir()
	one, two, merged := filepath.Join(base, "p1"), filepath.Join(base, "p2"), filepath.Join(base, "merged")
	matrixInto(t, one, "-parallel", "1")
	matrixInto(t, two, "-parallel", "2")
	sameFiles(t, one, two, matrixFiles)
	var shards []string
	for _, s := range []string{"0/2", "1/2"} {
		d := filepath.Join(base, "shard-"+s[:1])
		// A shard exits by its own runs: 1 for the one holding the bug.
		if code, out, errb := runCmd(append(append([]string{}, tinyMatrix...), "-out", d, "-shard", s, "-parallel", "2")...); code != 0 && code != 1 {
			t.Fatalf("matrix -shard %s: exit %d\n%s%s", s, code, out, errb)
		}
		shards = append(shards, d)
	}
	slices.Reverse(shards) // the order of the shard directories does not matter
	if code, out, errb := runCmd(append([]string{"merge", "-out", merged}, shards...)...); code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", code, out, errb)
	}
	sameFiles(t, one, merged, matrixFiles)
	// A shard missing, or given twice, is bad input.
	if code, _, errb := runCmd("merge", "-out", filepath.Join(base, "m2"), shards[0]); code != 2 || !strings.Contains(errb, "missing") {
		t.Errorf("merge of one shard of two: exit %d, %s", code, errb)
	}
	if code, _, errb := runCmd("merge", "-out", filepath.Join(base, "m3"), shards[0], shards[0]); code != 2 || !strings.Contains(errb, "twice") {
		t.Errorf("merge of a shard twice: exit %d, %s", code, errb)
	}
}

// TestMatrixNotApplicable: a 'controller manual' script does not run on a
// KRaft release, and the cell says why; a scenario whose consumer is named
// c1 runs with the release's dedicated controllers (ctl0..ctl2: issue 28).
func TestMatrixNotApplicable(t *testing.T) {
	dir := t.TempDir()
	if code, out, errb := runCmd("matrix", "-scenario", "kip101-hw-lag", "-scenario", "consumer-truncation", "-versions", "3.9-kraft", "-seeds", "1", "-progress", "none", "-out", dir); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	rows := readMatrixRows(t, dir)
	hw := rows[[2]string{"kip101-hw-lag", "3.9-kraft"}]
	if st := hw["status"].(string); !strings.HasPrefix(st, "n/a: ") || !strings.Contains(st, "controller manual") || hw["runs"].(float64) != 0 {
		t.Errorf("kip101-hw-lag on 3.9-kraft: %v", hw)
	}
	ct := rows[[2]string{"consumer-truncation", "3.9-kraft"}]
	if ct["status"] != "ran" || ct["mode"] != "kraft" || ct["runs_failed"].(float64) != 0 {
		t.Errorf("consumer-truncation on 3.9-kraft: %v", ct)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "matrix.md"))
	if !strings.Contains(string(md), "| kip101-hw-lag | variant hw (truncation=hw overridden by the release) | n/a |") || !strings.Contains(string(md), reports.MatrixLegend) {
		t.Errorf("matrix.md:\n%s", md)
	}
}

func TestMatrixBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-versions", "0.10.2,9.9"}, `unknown version label "9.9" (allowed: 0.10.2, 0.11.0`},
		{[]string{"-versions", "2.0-kraft"}, `unknown version label "2.0-kraft"`},
		{[]string{"-versions", ""}, `-versions "": empty`},
		{[]string{"-versions", "1.1,1.1"}, "given twice"},
		{[]string{"-scenario", "no-such-scenario"}, `unknown scenario "no-such-scenario" (allowed:`},
		{[]string{"-seeds", "0"}, "-seeds 0: must be >= 1"},
		{[]string{"-shard", "2/2"}, `-shard "2/2": want i/n`},
		{[]string{"-shard", "x"}, `-shard "x": want i/n`},
		{[]string{"-progress", "loud"}, "allowed auto, bar, lines, none"},
	} {
		args := append([]string{"matrix", "-scenario", "kip101-hw-lag", "-seeds", "1", "-out", filepath.Join(dir, "o")}, c.args...)
		if code, _, errb := runCmd(args...); code != 2 || !strings.Contains(errb, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errb, c.want)
		}
	}
	if code, _, errb := runCmd("matrix", "-scenario", "kip101-hw-lag"); code != 2 || !strings.Contains(errb, "-out DIR is required") {
		t.Errorf("no -out: exit %d, %q", code, errb)
	}
	if code, _, errb := runCmd("matrix", "-scenario", "kip101-hw-lag", "-out", file); code != 2 || !strings.Contains(errb, "is a file") {
		t.Errorf("-out FILE: exit %d, %q", code, errb)
	}
	if code, out, _ := runCmd("matrix", "-help"); code != 0 || !strings.Contains(out, "which Kafka loses what") {
		t.Errorf("matrix -help: exit %d\n%s", code, out)
	}
}
