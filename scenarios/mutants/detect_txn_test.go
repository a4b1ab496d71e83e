package mutants

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// TestTxnMutantsDetected runs each transaction mutant once where it is
// caught, and the same run without it, which must be clean.
func TestTxnMutantsDetected(t *testing.T) {
	checkDetected(t, []detectCase{
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
	})
}
