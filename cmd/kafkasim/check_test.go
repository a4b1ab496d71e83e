package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verdictLines returns the checker lines of run or check output (the lines
// from "linearizability" to "ordering" and beyond, with their anomalies).
func verdictLines(out string) string {
	var keep []string
	on := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  linearizability") {
			on = true
		}
		if strings.HasPrefix(l, "  acknowledged ") || strings.HasPrefix(l, "  replay:") {
			on = false
		}
		if on && l != "" {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestCheckRejudgesASavedRun: check on the history run saved gives the
// run's verdicts, for a run that loses data and for one with consumers.
func TestCheckRejudgesASavedRun(t *testing.T) {
	// NB: run judges by the script's expect lines (the hw variant expects
	// its bug: exit 0), check by the contract alone (no script: exit 1);
	// at-least-once's duplicates are permitted either way.
	for _, c := range []struct {
		args            []string
		runCode, checkC int
	}{
		{[]string{"-scenario", "kip101-hw-lag", "-variant", "hw"}, 0, 1},
		{[]string{"-scenario", "kip101-hw-lag", "-variant", "kip279"}, 0, 0},
		{[]string{"-scenario", "consumer-crash", "-variant", "at-least-once", "-seed", "2"}, 0, 0},
	} {
		path := filepath.Join(t.TempDir(), "h.jsonl")
		code, runOut, stderr := runCmd(append([]string{"run", "-history", path}, c.args...)...)
		if code != c.runCode {
			t.Fatalf("%v: run exit %d, want %d\n%s%s", c.args, code, c.runCode, runOut, stderr)
		}
		code, checkOut, stderr := runCmd("check", "-history", path)
		if code != c.checkC {
			t.Fatalf("%v: check exit %d, want %d\n%s%s", c.args, code, c.checkC, checkOut, stderr)
		}
		if want, got := verdictLines(runOut), verdictLines(checkOut); want == "" || want != got {
			t.Fatalf("%v: check verdicts differ from run's:\nrun:\n%s\ncheck:\n%s", c.args, want, got)
		}
	}
}

// TestCheckSeesAnEditedHistory: deleting the surviving replica's copy of
// an acknowledged record from a clean run's final state makes check report
// the loss, so check judges the file rather than echoing the run.
func TestCheckSeesAnEditedHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if code, out, stderr := runCmd("run", "-history", path, "-scenario", "acks1-leader-crash", "-variant", "acksall"); code != 0 {
		t.Fatalf("run exit %d\n%s%s", code, out, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every replica forgets every record: the final logs are empty.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(l, `{"final":`) {
			for {
				i := strings.Index(l, `"Log":[`)
				if i < 0 {
					break
				}
				j := strings.Index(l[i:], "]")
				l = l[:i] + `"Log":null` + l[i+j+1:]
			}
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd("check", "-history", path)
	if code != 1 || !strings.Contains(out, "acked-loss       violation") {
		t.Fatalf("exit %d, want 1 with an acked-loss violation:\n%s", code, out)
	}
}

func TestCheckBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check"}, "-history FILE is required"},
		{[]string{"check", "-history", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"check", "-history", junk}, "not a kafkasim history file"},
		{[]string{"check", "-history", junk, "-budget", "0s"}, "-budget 0s"},
		{[]string{"run", "-scenario", "kip101-hw-lag", "-history", filepath.Join(dir, "h")}, "name one of the 3 variants"},
		{[]string{"run", "-scenario", "kip101-hw-lag", "-variant", "hw", "-history", filepath.Join(dir, "nodir", "h")}, "does not exist"},
	} {
		code, _, stderr := runCmd(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "h")); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote its history file")
	}
}

func TestCheckJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if code, out, stderr := runCmd("run", "-history", path, "-scenario", "kip101-hw-lag", "-variant", "hw"); code != 0 {
		t.Fatalf("run exit %d (the variant expects its bug)\n%s%s", code, out, stderr)
	}
	code, out, _ := runCmd("check", "-json", "-history", path)
	var got struct {
		Source   string
		Verdicts []struct{ Checker, Result string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 1 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if got.Source != "kafkasim replay -scenario kip101-hw-lag -variant hw -seed 1" || len(got.Verdicts) != 7 || got.Verdicts[1].Checker != "acked-loss" || got.Verdicts[1].Result != "violation" ||
		got.Verdicts[6].Checker != "liveness" || got.Verdicts[6].Result != "ok" {
		t.Fatalf("check -json = %+v", got)
	}
}

// jepsenHistory is a path to one of checkers/jepsen's test histories.
func jepsenHistory(name string) string {
	return filepath.Join("..", "..", "checkers", "jepsen", "testdata", name)
}

// TestCheckJepsen: check -format jepsen judges Jepsen EDN histories end to
// end: exit 0 for a clean history, 1 with the Jepsen anomaly named (unseen
// and Elle's cycles included, as Jepsen counts them), empty-transaction-graph
// unknown, and the log-based checkers always unknown with their reason.
func TestCheckJepsen(t *testing.T) {
	for _, c := range []struct {
		file string
		code int
		want []string
	}{
		{"clean.edn", 0, []string{"18 client operations, 2 keys, 2 non-client operations skipped", "  lost-write               ok\n", "  unseen                   ok\n"}},
		{"lost-write.edn", 1, []string{"  lost-write               violation\n", "lost-write key=1 value=2 offsets=[1]:", "  unseen                   violation\n"}},
		{"G1a.edn", 1, []string{"  G1a                      violation\n", "aborted read"}},
		{"int-send-skip.edn", 1, []string{"  int-send-skip            violation (permitted by Kafka's contract)\n"}},
		{"unseen.edn", 1, []string{"  unseen                   violation\n", "unseen unseen={1 1} offsets=[1]: 1 acknowledged value on 1 key never read", "may be late rather than lost"}},
		{"precommitted-read.edn", 1, []string{"  empty-transaction-graph  unknown\n", "Elle has nothing to analyse"}},
		{"g1c-wr.edn", 1, []string{"  G1c                      violation\n", "G1c offsets=[0 0]: cycle #2 -> #3 -> #2: #2 sent :a to :x at offset 0 which was polled by #3 (wr); #3 sent :b to :y at offset 0 which was polled by #2 (wr)"}},
	} {
		code, out, stderr := runCmd("check", "-format", "jepsen", "-history", jepsenHistory(c.file))
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.file, code, c.code, out, stderr)
			continue
		}
		for _, w := range append(c.want, "  acked-loss               unknown\n      note: not judged: needs the replicas' final logs") {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.file, w, out)
			}
		}
	}
}

func TestCheckJepsenJSON(t *testing.T) {
	code, out, _ := runCmd("check", "-json", "-format", "jepsen", "-history", jepsenHistory("duplicate.edn"))
	var got struct {
		Format    string
		Ops       int
		Verdicts  []struct{ Checker, Result string }
		NotJudged []string `json:"not_judged"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 1 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	results := map[string]string{}
	for _, v := range got.Verdicts {
		results[v.Checker] = v.Result
	}
	if got.Format != "jepsen" || got.Ops != 4 || results["duplicate"] != "violation" || results["lost-write"] != "ok" ||
		results["acked-loss"] != "unknown" || results["linearizability"] != "unknown" || results["liveness"] != "unknown" || len(got.NotJudged) != 5 {
		t.Fatalf("check -json -format jepsen = %+v", got)
	}
}

func TestCheckJepsenBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.edn")
	text := "{:type :invoke, :f :poll, :value [[:poll]], :process 0, :index 0}\n{:type :okay, :f :poll, :value [[:poll {}]], :process 0, :index 1}\n"
	if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	malformed := filepath.Join(dir, "malformed.edn")
	if err := os.WriteFile(malformed, []byte("{:type :ok, :f :poll, :value [[:poll]], :process 0}\n{:type :ok, :f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "-format", "edn", "-history", bad}, `-format "edn": want kafkasim or jepsen`},
		{[]string{"check", "-format", "jepsen", "-history", bad}, "bad.edn: line 2: :type :okay: want :invoke, :ok, :fail or :info"},
		{[]string{"check", "-format", "jepsen", "-history", malformed}, "malformed.edn: line 2: malformed EDN"},
		{[]string{"check", "-history", jepsenHistory("clean.edn")}, "not a kafkasim history file"},
	} {
		code, out, stderr := runCmd(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, nothing on stdout and %q", c.args, code, out, stderr, c.want)
		}
	}
}

// TestCheckJepsenWWDeps: -ww-deps=false is a Jepsen run without :ww-deps:
// g0.edn's G0 cannot be seen, so the cycle verdicts are unknown (exit 3).
func TestCheckJepsenWWDeps(t *testing.T) {
	code, out, _ := runCmd("check", "-format", "jepsen", "-history", jepsenHistory("g0.edn"))
	if code != 1 || !strings.Contains(out, "  G0                       violation (permitted by Kafka's contract)\n") {
		t.Errorf("ww-deps on: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd("check", "-format", "jepsen", "-ww-deps=false", "-history", jepsenHistory("g0.edn"))
	if code != 3 || !strings.Contains(out, "  G0                       unknown\n") || !strings.Contains(out, "without :ww-deps") {
		t.Errorf("ww-deps off: exit %d\n%s", code, out)
	}
}
