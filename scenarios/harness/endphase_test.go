package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/checkers"
)

func verdictOf(t *testing.T, r *Result, name string) checkers.Verdict {
	t.Helper()
	for _, v := range r.Verdicts {
		if v.Checker == name {
			return v
		}
	}
	t.Fatalf("%s/%s: no %s verdict", r.Scenario, r.Variant, name)
	return checkers.Verdict{}
}

// TestKafka3410HaltIsALivenessBug: KAFKA-3410 under HW truncation, the
// follower ahead of its emptied leader halts, halts again after the end
// phase restarts it, and never rejoins the ISR: liveness names b2's
// replica and the halt. With KIP-279 it truncates and rejoins: ok.
func TestKafka3410HaltIsALivenessBug(t *testing.T) {
	s, err := scenarios.Load("kafka3410-halt")
	if err != nil {
		t.Fatal(err)
	}
	hw, err := Run(s, "hw", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	v := verdictOf(t, hw, checkers.NameLiveness)
	found := false
	for _, a := range v.Broken() {
		if a.Kind == checkers.LivenessNotInISR && len(a.Replicas) == 1 && a.Replicas[0] == 2 && strings.Contains(a.Description, "b2 halted") {
			found = true
		}
	}
	if v.Result != checkers.ResultViolation || !found {
		t.Fatalf("hw: %s\nwant a liveness bug: b2's replica never back in the ISR, b2 halted", v)
	}
	if !hw.OK() {
		t.Errorf("hw: %v %s", hw.Mismatches, hw.Failed)
	}
	kip, err := Run(s, "kip279", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v := verdictOf(t, kip, checkers.NameLiveness); v.Result != checkers.ResultOK {
		t.Fatalf("kip279: %s: want ok (the follower truncates by leader epoch and rejoins)", v)
	}
}

// TestFinalReadsSeeTheHWLagLoss: in kip101-hw-lag/hw no client read after
// m2 was lost; the final reads do, so linearizability sees the
// acknowledged m2 contradicted by what the log holds at offset 1 (the
// probe appended there after the loss).
func TestFinalReadsSeeTheHWLagLoss(t *testing.T) {
	s, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, "hw", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	v := verdictOf(t, res, checkers.NameLinearizability)
	if v.Result != checkers.ResultViolation || len(v.Anomalies) == 0 || v.Anomalies[0].Value != "m2" ||
		!strings.Contains(v.Anomalies[0].Description, "append(m2) -> 1 (#") || !strings.Contains(v.Anomalies[0].Description, "both took offset 1") {
		t.Fatalf("%s: want a linearizability violation: the acknowledged m2 at offset 1 cannot be linearized with the final read", v)
	}
	reads := 0
	for _, op := range res.History.Ops {
		if op.Process == finalReaderName && op.Kind == checkers.Poll && op.Outcome == checkers.OK {
			reads++
			if op.FetchOffset != 0 || len(op.Records) != 2 || op.Records[0].Value != "m1" {
				t.Errorf("final read %s: want offsets 0 and 1 read from the log start", op)
			}
		}
	}
	if reads != 1 {
		t.Errorf("%d ok final reads, want 1 (one per partition)", reads)
	}
	for _, name := range []string{"kip101", "kip279"} {
		res, err := Run(s, name, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if v := verdictOf(t, res, checkers.NameLinearizability); v.Result != checkers.ResultOK {
			t.Errorf("%s: %s: want ok (m2 survives and the final read sees it)", name, v)
		}
	}
}

// TestFinalReadIsBounded: a partition nobody leads cannot be read; the
// final read gives up in bounded simulated time as info (never ok), and
// liveness names the partition without a leader.
func TestFinalReadIsBounded(t *testing.T) {
	src := "controller manual\nbrokers 2\ntopic t partitions=1 rf=2\nrun 1s\n"
	s, err := scenarios.Parse("leaderless.txt", "leaderless", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, "", Options{Seed: 1, Set: map[string]string{scenarios.PropLivenessTimeout: "2000"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != "" {
		t.Fatalf("run failed: %s", res.Failed)
	}
	infos := 0
	for _, op := range res.History.Ops {
		if op.Process == finalReaderName {
			if op.Outcome != checkers.Info || !strings.Contains(op.Error, "did not reach the HW") {
				t.Errorf("final read %s: want info, did not reach the HW", op)
			}
			infos++
		}
	}
	if infos != 2 {
		t.Errorf("%d final-read ops, want a poll and an HW read, both info", infos)
	}
	v := verdictOf(t, res, checkers.NameLiveness)
	if v.Result != checkers.ResultViolation || v.Anomalies[0].Kind != checkers.LivenessNoLeader {
		t.Errorf("%s: want no-leader", v)
	}
	if d := res.SimTime; d > 40*1e9 {
		t.Errorf("the run took %v of simulated time: the 2s liveness timeout and the final read's bound were not kept", d)
	}
}

// TestEndPhaseBadInput: the two new settings refuse bad values, naming
// the property or file:line and what is allowed.
func TestEndPhaseBadInput(t *testing.T) {
	s, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"0", "-5", "1.5", "abc", ""} {
		_, _, err := Prepare(s, "hw", map[string]string{scenarios.PropLivenessTimeout: bad})
		if err == nil || !strings.Contains(err.Error(), scenarios.PropLivenessTimeout) || !strings.Contains(err.Error(), "positive integer") {
			t.Errorf("%s=%q: error %v, want one naming the property and what is allowed", scenarios.PropLivenessTimeout, bad, err)
		}
	}
	if _, _, err := Prepare(s, "hw", map[string]string{scenarios.PropLivenessTimeout: "1500"}); err != nil {
		t.Errorf("a valid timeout refused: %v", err)
	}
	src := "brokers 2\ntopic t\n%s\nrun 1s\n"
	for _, line := range []string{"final-read maybe", "final-read", "final-read on off"} {
		_, err := scenarios.Parse("f.txt", "f", strings.NewReader(strings.Replace(src, "%s", line, 1)))
		if err == nil || !strings.Contains(err.Error(), "f.txt:3: final-read: want 'final-read on'") || !strings.Contains(err.Error(), "'final-read off'") {
			t.Errorf("%q: error %v, want f.txt:3 and the allowed values", line, err)
		}
	}
	off, err := scenarios.Parse("f.txt", "f", strings.NewReader("brokers 2\ntopic t\nfinal-read off # a read would move the position under test\nrun 1s\n"))
	if err != nil || !off.NoFinalRead {
		t.Fatalf("final-read off: %v", err)
	}
	res, err := Run(off, "", Options{Seed: 1, Set: map[string]string{scenarios.PropLivenessTimeout: "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range res.History.Ops {
		if op.Process == finalReaderName {
			t.Fatalf("final-read off, but the history has %s", op)
		}
	}
}
