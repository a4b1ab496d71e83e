package harness

import (
	"os"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// splitBrain parses kraft-split-brain's script with its 'end-phase' line
// replaced by line ("" removes it).
func splitBrain(t *testing.T, line string) *scenarios.Script {
	t.Helper()
	src, err := os.ReadFile("../scripts/kraft-split-brain.txt")
	if err != nil {
		t.Fatal(err)
	}
	const kept = "end-phase keep-cuts=ctl0,ctl1,ctl2\n"
	if !strings.Contains(string(src), kept) {
		t.Fatalf("kraft-split-brain.txt has no line %q", kept)
	}
	s, err := scenarios.Parse("kraft-split-brain.txt", "kraft-split-brain", strings.NewReader(strings.Replace(string(src), kept, line, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// endPhaseRecords returns the trace from the end phase's first record on.
func endPhaseRecords(t *testing.T, res *Result) []sim.Record {
	t.Helper()
	recs := res.World.Trace().Records()
	for i, r := range recs {
		if r.Kind == "end-phase" {
			return recs[i:]
		}
	}
	t.Fatalf("%s/%s: no end-phase record", res.Scenario, res.Variant)
	return nil
}

// TestKeptCutsStayCutThroughTheEndPhase: with 'end-phase keep-cuts=ctl0,
// ctl1,ctl2' the end phase heals nothing in kraft-split-brain: the heal
// record lists the cut-off controller's four directed links, no "heal"
// follows, and they are still cut when the run ends; the brokers' links
// to every controller were never cut and the final read reaches the HW.
// Under the kept cut the variants differ in liveness as KAFKA-15489
// says: without check-quorum t-0 has no leader and no probe is
// acknowledged (a contract break), with it liveness holds.
func TestKeptCutsStayCutThroughTheEndPhase(t *testing.T) {
	s, err := scenarios.Load("kraft-split-brain")
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{"no-check-quorum", "check-quorum"} {
		res, err := Run(s, variant, Options{Seed: 1, KeepTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK() {
			t.Errorf("%s: %v %s", variant, res.Mismatches, res.Failed)
		}
		w := res.World
		var kept []string
		readOK := false
		for _, r := range endPhaseRecords(t, res) {
			if r.Kind == "heal" {
				t.Errorf("%s: the end phase healed: %s", variant, r)
			}
			if v, _ := r.Get("phase"); r.Kind == "end-phase" && v == "heal" {
				desc, _ := r.Get("keep-cuts")
				kept = strings.Split(desc, ",")
			}
			if v, _ := r.Get("outcome"); r.Kind == "final-read" && v == "ok" {
				readOK = true
			}
		}
		if len(kept) != 4 {
			t.Fatalf("%s: the end phase kept %v, want the cut-off controller's 4 directed links", variant, kept)
		}
		for _, l := range kept {
			a, b, _ := strings.Cut(l, "->")
			from, okA := w.Lookup(a)
			to, okB := w.Lookup(b)
			if !okA || !okB || !scenarios.ControllerName.MatchString(a) || !scenarios.ControllerName.MatchString(b) || !w.Cut(from, to) {
				t.Errorf("%s: kept link %s is not a cut link between controllers at the end of the run", variant, l)
			}
		}
		for _, ctl := range []string{"ctl0", "ctl1", "ctl2"} {
			c, _ := w.Lookup(ctl)
			for _, b := range []string{"b0", "b1", "b2"} {
				if id, _ := w.Lookup(b); w.Cut(c, id) || w.Cut(id, c) {
					t.Errorf("%s: %s and %s are cut: the script cuts only the controllers' links", variant, ctl, b)
				}
			}
		}
		if !readOK {
			t.Errorf("%s: the final read of t-0 did not reach the HW under the kept cut", variant)
		}
		v := verdictOf(t, res, checkers.NameLiveness)
		switch variant {
		case "no-check-quorum":
			kinds := map[string]bool{}
			for _, a := range v.Broken() {
				if a.Topic == "t" && a.Partition == 0 {
					kinds[a.Kind] = true
				}
			}
			if v.Result != checkers.ResultViolation || !kinds[checkers.LivenessNoLeader] || !kinds[checkers.LivenessProbeFailed] {
				t.Errorf("%s: liveness %s\nwant a contract break naming t-0: no leader, no probe acknowledged", variant, v)
			}
		case "check-quorum":
			if v.Result != checkers.ResultOK {
				t.Errorf("%s: liveness %s, want ok (the cut-off leader resigns, the brokers follow the new one)", variant, v)
			}
		}
	}
}

// TestHealedCutsEndTheSplitBrain: the kept cut is what the verdict rests
// on. Without the 'end-phase' line, or keeping only cuts between brokers
// (there are none), the end phase heals the controllers' links, the old
// leader learns of the new one, and no-check-quorum's liveness holds.
func TestHealedCutsEndTheSplitBrain(t *testing.T) {
	for _, line := range []string{"", "end-phase heal\n", "end-phase keep-cuts=b0,b1,b2\n"} {
		res, err := Run(splitBrain(t, line), "no-check-quorum", Options{Seed: 1, KeepTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		healed := false
		for _, r := range endPhaseRecords(t, res) {
			healed = healed || r.Kind == "heal"
		}
		if !healed {
			t.Errorf("%q: the end phase did not heal the controllers' links", line)
		}
		if v := verdictOf(t, res, checkers.NameLiveness); v.Result != checkers.ResultOK {
			t.Errorf("%q: liveness %s, want ok once the cut heals (the new leader's BeginQuorumEpoch reaches the old one)", line, v)
		}
	}
}
