package mutants

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// TestTxnMutantsDetected runs each transaction mutant once where it is
// caught, and the same run without it, which must be clean.
func TestTxnMutantsDetected(t *testing.T) {
	for _, c := range []struct {
		mutant   string
		target   mutant.Target
		seed     uint64
		checkers []string // bug verdicts expected (among others)
	}{
		// The last partition of every transaction keeps its records open:
		// read_committed consumers stall, committed writes end unknown.
		{"txn-marker-skipped", mutant.Target{Scenario: "txn-swarm", Variant: "tv1"}, 1, []string{"liveness", "transactions"}},
		// read_committed reads an open transaction's records (G1b).
		{"lso-past-open-txn", mutant.Target{Scenario: "txn-swarm", Variant: "tv1"}, 1, []string{"transactions"}},
		// KIP-890 part 2 alone (verification off): the stale epoch is the
		// only fence of the late h1; accepted, it hangs t/0.
		{"zombie-not-fenced", mutant.Target{Scenario: "txn-hanging", Variant: "tv2"}, 1, []string{"duplicates", "liveness"}},
		// An aborted transaction's offsets stay committed: its inputs get
		// no output.
		{"txn-offsets-outside", mutant.Target{Scenario: "txn-swarm", Variant: "tv2"}, 1, []string{"transactions"}},
	} {
		t.Run(c.mutant, func(t *testing.T) {
			d, _, err := RunOne(c.mutant, c.target, c.seed, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !d.Detected {
				t.Fatalf("%s on %s/%s seed %d: not detected (%s)", c.mutant, c.target.Scenario, c.target.Variant, c.seed, d.Replay)
			}
			for _, ck := range c.checkers {
				if !slices.Contains(d.Checkers, ck) {
					t.Errorf("%s: checkers %v, want %s among them (%s)", c.mutant, d.Checkers, ck, d.Replay)
				}
			}
			ctl, _, err := RunOne("", c.target, c.seed, 0)
			if err != nil {
				t.Fatal(err)
			}
			if ctl.Detected {
				t.Errorf("%s/%s seed %d without a mutant: %v %s (%s)", c.target.Scenario, c.target.Variant, c.seed, ctl.Checkers, ctl.Failed, ctl.Replay)
			}
		})
	}
}
