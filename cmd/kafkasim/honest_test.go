package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// refusedScript's 'await p1 ack m1' cannot hold: min.insync.replicas=2
// with b1 down refuses m1 with NOT_ENOUGH_REPLICAS.
const refusedScript = `controller manual
brokers 2
topic t partitions=1 rf=2 assignment=0,1
set min.insync.replicas=2
crash b1
leader-and-isr t/0 leader=b0 epoch=0 isr=b0
run 10ms
produce p1 t/0 m1 acks=all
await p1 %s m1
run 1s
`

func writeScript(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "refused.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunThatCannotBeCarriedOutExitsFour: a broken await is not a
// checker's violation (1): run and replay exit 4, naming the record and
// the error; the replay timeline shows the refusal.
func TestRunThatCannotBeCarriedOutExitsFour(t *testing.T) {
	path := writeScript(t, strings.Replace(refusedScript, "%s", "ack", 1))
	for _, cmd := range []string{"run", "replay"} {
		code, out, errb := runCmd(cmd, "-scenario", path)
		if code != 4 {
			t.Errorf("%s: exit %d, want 4\n%s%s", cmd, code, out, errb)
		}
		if !strings.Contains(out, "RUN FAILED") || !strings.Contains(out, "m1 was not acknowledged: refused: NOT_ENOUGH_REPLICAS") {
			t.Errorf("%s: output does not name the record and the error:\n%s", cmd, out)
		}
		if cmd == "replay" && !strings.Contains(out, "client-fail client=p1 value=m1 error=NOT_ENOUGH_REPLICAS") {
			t.Errorf("replay: the timeline does not show the refused produce:\n%s", out)
		}
	}
	// 'await done' accepts the refusal: the run is carried out.
	path = writeScript(t, strings.Replace(refusedScript, "%s", "done", 1))
	if code, out, errb := runCmd("run", "-scenario", path); code == 4 || strings.Contains(out, "RUN FAILED") {
		t.Errorf("await done: exit %d\n%s%s", code, out, errb)
	}
}

// headerLines are a run's indented header lines that label it.
func headerLines(out string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "scenario ") {
			got = append(got, strings.SplitN(l, ":", 2)[0])
		}
		for _, p := range []string{"  variant", "  protocol:"} {
			if strings.HasPrefix(l, p) {
				got = append(got, l)
			}
		}
	}
	return got
}

func TestRunHeaderNamesProtocolAndOverrides(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-variant", "kip279", "-set", "truncation=hw"}, []string{
			"scenario kip101-hw-lag, variant kip279, seed 1",
			"  variant kip279, overridden: truncation=hw (the variant sets truncation=kip279)",
			"  protocol: inter.broker.protocol.version=0.10.2 (truncation=hw)"}},
		{[]string{"-variant", "kip279", "-set", "inter.broker.protocol.version=0.10.2"}, []string{
			"scenario kip101-hw-lag, variant kip279, seed 1",
			"  variant kip279, overridden: inter.broker.protocol.version=0.10.2 (the variant sets truncation=kip279)",
			"  protocol: inter.broker.protocol.version=0.10.2 (truncation=hw)"}},
		{[]string{"-set", "truncation=hw"}, []string{
			"scenario kip101-hw-lag, variant hw, seed 1",
			"  variants hw, kip101, kip279 identical under -set truncation=hw: run once",
			"  protocol: inter.broker.protocol.version=0.10.2 (truncation=hw)"}},
		{[]string{"-variant", "kip101"}, []string{
			"scenario kip101-hw-lag, variant kip101, seed 1",
			"  protocol: inter.broker.protocol.version=1.1 (truncation=kip101)"}},
	} {
		_, out, errb := runCmd(append([]string{"run", "-scenario", "kip101-hw-lag"}, c.args...)...)
		if d := cmp.Diff(c.want, headerLines(out)); d != "" {
			t.Errorf("%v (-want +got):\n%s%s", c.args, d, errb)
		}
	}
}

// TestListCitesSources: list's sources are KIP/JIRA numbers, Kafka's
// documentation or code, or kafkasim itself.
func TestListCitesSources(t *testing.T) {
	code, out, _ := runCmd("list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	cite := regexp.MustCompile(`from .*(KIP-[0-9]+|KAFKA-[0-9]+|Kafka documentation|Kafka's|kafkasim swarm|Assignor)`)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "from ") && (!cite.MatchString(l) || strings.Contains(l, "reference section")) {
			t.Errorf("source line %q", l)
		}
	}
	_, _, errb := runCmd("run", "-scenario", "nope")
	if !strings.Contains(errb, "swarm") {
		t.Errorf("unknown scenario: %q does not list the swarm", errb)
	}
}

// TestCommandHelp: every subcommand's -help and -h print its synopsis,
// purpose, flags, exit codes and two examples on stdout, exit 0.
func TestCommandHelp(t *testing.T) {
	for name := range commands {
		for _, h := range []string{"-help", "-h"} {
			code, out, errb := runCmd(name, h)
			if code != 0 || errb != "" {
				t.Errorf("%s %s: exit %d, stderr %q", name, h, code, errb)
			}
			d, ok := docs[name]
			if !ok {
				t.Errorf("%s has no help text", name)
				continue
			}
			if len(d.examples) != 2 || d.purpose == "" || d.exits == "" {
				t.Errorf("%s: help wants a purpose, exit codes and two examples", name)
			}
			for _, want := range []string{"usage: kafkasim " + name, "exit codes:", "examples:", d.examples[0]} {
				if !strings.Contains(out, want) {
					t.Errorf("%s %s: no %q in\n%s", name, h, want, out)
				}
			}
		}
	}
	_, out, _ := runCmd("explore", "-help")
	for _, f := range []string{"-depth", "-progress", "-state"} {
		if !strings.Contains(out, f) {
			t.Errorf("explore -help does not list %s", f)
		}
	}
}

func TestExploreShrinkProgress(t *testing.T) {
	dir := t.TempDir()
	code, _, errb := runCmd("explore", "-scenario", "kip101-hw-lag", "-variant", "hw", "-depth", "9", "-checkers", "acked-loss",
		"-progress", "lines", "-save", filepath.Join(dir, "x.choices"))
	if code != 1 || !regexp.MustCompile(`explore: \d+ runs, \d+ distinct states, depth \d+ of 9, [0-9.]+ runs/s, \d+s elapsed`).MatchString(errb) {
		t.Errorf("explore: exit %d, stderr %q", code, errb)
	}
	code, _, errb = runCmd("shrink", "-scenario", "kip101-hw-lag", "-variant", "hw", "-choices", filepath.Join(dir, "x.choices"),
		"-progress", "lines", "-save", filepath.Join(dir, "s.choices"))
	if code != 0 || !regexp.MustCompile(`shrink: \d+ runs of at most 300, now \d+ faults, \d+ choices off the default`).MatchString(errb) {
		t.Errorf("shrink: exit %d, stderr %q", code, errb)
	}
	for _, cmd := range []string{"explore", "shrink"} {
		if code, _, _ := runCmd(cmd, "-scenario", "kip101-hw-lag", "-progress", "fancy"); code != 2 {
			t.Errorf("%s -progress fancy: exit %d, want 2", cmd, code)
		}
	}
}

// TestNotJudgedLeavesTheExitCode: a checker that does not apply to a run
// (linearizability when every partition holds transactions) is shown as
// not judged, with why, and does not make a clean run exit 3; a checker
// that applied and could not decide still does.
func TestNotJudgedLeavesTheExitCode(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"run", "-scenario", "txn-zombie-fencing", "-variant", "tv1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "  linearizability  not judged\n      note: every partition the history touches holds transactions (t-0)") {
		t.Errorf("want linearizability shown as not judged, with why:\n%s", out.String())
	}
	// Its records are the transactions', not acknowledged sends: the counts
	// say so (the new producer commits, the fenced zombie's ends unknown).
	if !strings.Contains(out.String(), "  acknowledged 0, acknowledged and lost 0, divergent offsets 0\n  transactions committed 1, aborted 0, outcome unknown 1 ") {
		t.Errorf("want the transactions counted beside the acknowledged sends:\n%s", out.String())
	}
	notJudged := checkers.Verdict{Checker: checkers.NameLinearizability, Result: checkers.ResultUnknown, NotJudged: true}
	undecided := checkers.Verdict{Checker: checkers.NameLinearizability, Result: checkers.ResultUnknown}
	ok := checkers.Verdict{Checker: checkers.NameAckedLoss}
	for _, c := range []struct {
		verdicts []checkers.Verdict
		want     int
	}{
		{[]checkers.Verdict{notJudged, ok}, 0},
		{[]checkers.Verdict{undecided, ok}, 3},
		{[]checkers.Verdict{notJudged, undecided}, 3},
	} {
		if got := harness.VerdictsExit(c.verdicts, nil, false); got != c.want {
			t.Errorf("VerdictsExit(%v) = %d, want %d", c.verdicts, got, c.want)
		}
	}
}
