package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestListNamesEveryScenario(t *testing.T) {
	code, out, _ := runCmd("list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, name := range []string{"kip101-hw-lag", "kip101-power-loss", "kip279-fast-failover", "kafka7164-epoch-bump", "acks1-leader-crash", "unclean-election", "zombie-leader", "controller-failover", "producer-reorder", "swarm"} {
		if !strings.Contains(out, name) {
			t.Errorf("list lacks %s:\n%s", name, out)
		}
	}
}

func TestRunReportsViolationWithReplayCommand(t *testing.T) {
	code, out, _ := runCmd("run", "-scenario", "kip101-hw-lag", "-variant", "hw", "-seed", "3")
	if code != 0 {
		t.Fatalf("exit %d, want 0 (the acked-loss bug its expect line names)\n%s", code, out)
	}
	if !strings.Contains(out, "acked-loss       violation") || !strings.Contains(out, "replay: kafkasim replay -scenario kip101-hw-lag -variant hw -seed 3") {
		t.Fatalf("output lacks the verdict or the replay command:\n%s", out)
	}
	code, out, _ = runCmd("run", "-scenario", "kip101-hw-lag", "-variant", "kip279", "-seed", "3")
	if code != 0 {
		t.Fatalf("kip279: exit %d, want 0\n%s", code, out)
	}
}

func TestRunJSON(t *testing.T) {
	code, out, _ := runCmd("run", "-scenario", "kip101-power-loss", "-variant", "kip279", "-seed", "1", "-json")
	if code != 0 {
		t.Fatalf("exit %d (the loss of m2 is a violation, permitted: exit 0)", code)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"scenario", "seed", "config", "trace_hash", "events", "sim_time_ns", "verdicts", "stats", "replay"} {
		if _, ok := got[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	stats := got["stats"].(map[string]any)
	for _, k := range []string{"acked", "acked_lost", "divergent_offsets"} {
		if _, ok := stats[k]; !ok {
			t.Errorf("stats lack %q", k)
		}
	}
	v := got["verdicts"].([]any)[0].(map[string]any)
	for _, k := range []string{"checker", "result", "anomalies"} {
		if _, ok := v[k]; !ok {
			t.Errorf("verdict lacks %q", k)
		}
	}
}

func TestReplayPrintsTimelineAndIsDeterministic(t *testing.T) {
	_, a, _ := runCmd("replay", "-scenario", "kip279-fast-failover", "-variant", "kip101", "-seed", "2")
	_, b, _ := runCmd("replay", "-scenario", "kip279-fast-failover", "-variant", "kip101", "-seed", "2")
	if a != b {
		t.Fatal("two replays of one seed differ")
	}
	for _, want := range []string{"become-leader", "epoch-answer", "state", "LEO=", "divergence"} {
		if !strings.Contains(a, want) {
			t.Errorf("replay lacks %q", want)
		}
	}
}

func TestRunExportWritesKafkaLayout(t *testing.T) {
	dir := t.TempDir()
	runCmd("run", "-scenario", "acks1-leader-crash", "-variant", "acksall", "-seed", "1", "-export", dir)
	seg := filepath.Join(dir, "acksall", "b0", "tmp", "kafka-logs", "t-0", "00000000000000000000.log")
	if fi, err := os.Stat(seg); err != nil || fi.Size() == 0 {
		t.Fatalf("exported segment %s: %v", seg, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "acksall", "b0", "tmp", "kafka-logs", "replication-offset-checkpoint")); err != nil {
		t.Fatalf("no replication-offset-checkpoint: %v", err)
	}
}

func TestScenarioBadInputExitsTwo(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-scenario", "no-such-scenario"},
		{"run"},
		{"run", "-scenario", "kip101-hw-lag", "-seed", "x"},
		{"run", "-scenario", "kip101-hw-lag", "-variant", "nope"},
		{"run", "-scenario", "kip101-hw-lag", "-set", "acks=maybe"},
		{"run", "-scenario", "kip101-hw-lag", "-set", "no.such.property=1"},
		{"run", "-scenario", "kip101-hw-lag", "-set", "noequals"},
		{"run", "-scenario", "swarm", "-variant", "kip279-safe", "-set", "$profile=random"},
		{"run", "-scenario", "swarm", "-set", "$crash=2"},
		{"run", "-scenario", "kip101-hw-lag", "-set", "kafkasim.liveness.timeout.ms=0"},
		{"suite", "-seeds", "0"},
		{"suite", "-run", "("},
		{"suite", "-run", "nothing-matches-this"},
	} {
		code, out, errs := runCmd(args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s%s", args, code, out, errs)
		}
		if errs == "" {
			t.Errorf("%v: no message on stderr", args)
		}
	}
}

func TestMalformedScriptFileIsReportedWithLine(t *testing.T) {
	f := filepath.Join(t.TempDir(), "mine.txt")
	os.WriteFile(f, []byte("brokers 2\ntopic t\nrun 1s\nexplode b1\n"), 0o644)
	code, _, errs := runCmd("run", "-scenario", f)
	if code != 2 || !strings.Contains(errs, "mine.txt:4: unknown step \"explode\"") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestUserScriptRuns(t *testing.T) {
	f := filepath.Join(t.TempDir(), "mine.txt")
	os.WriteFile(f, []byte("describe my own\nbrokers 3\ntopic t partitions=1 rf=3\nrun 5s\nproduce p1 t/0 x acks=all\nawait p1 ack x\nrun 2s\n"), 0o644)
	code, out, errs := runCmd("run", "-scenario", f)
	if code != 0 || !strings.Contains(out, "acknowledged 1") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

func TestSuiteJUnit(t *testing.T) {
	f := filepath.Join(t.TempDir(), "junit.xml")
	code, out, errs := runCmd("suite", "-seeds", "1", "-run", "^kip101-hw-lag/", "-junit", f)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(f)
	if err != nil || !strings.Contains(string(b), `<testcase name="kip101-hw-lag/hw"`) || !strings.Contains(string(b), `tests="3"`) {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	if !strings.Contains(out, "kip101-hw-lag") || !strings.Contains(out, "1/1") {
		t.Fatalf("table:\n%s", out)
	}
}
