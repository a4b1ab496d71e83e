package mutants

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// TestDetectGroups runs each groups and client mutant once where a sweep
// found it (kafkasim sweep -grid kafkasim.mutant.NAME=false,true over
// group-swarm), and the same seed without it: the mutant is caught by the
// checkers named, the control is clean.
func TestDetectGroups(t *testing.T) {
	eager := mutant.Target{Scenario: "group-swarm", Variant: "eager"}
	kraft := mutant.Target{Scenario: "group-swarm", Variant: "kraft"}
	checkDetected(t, []detectCase{
		// A zombie member (consumer-stall) commits after its partitions
		// moved: the commit lands below the new owner's.
		{"commit-skips-generation", eager, 13, []string{"group"}},
		{"assignment-duplicated", eager, 1, []string{"group"}},
		// The new coordinator serves no offsets: members restart at the
		// earliest offset, below the acknowledged commits.
		{"offsets-load-skipped", eager, 2, []string{"group"}},
		// An unreplicated commit lost with the coordinator's leader: a
		// member resumes below it.
		{"offset-commit-before-replicated", kraft, 13, []string{"group"}},
		// A member killed between its commit and the end of processing:
		// the next owner starts past records nobody processed.
		{"commit-before-process", eager, 3, []string{"consumer"}},
		// A KIP-320 consumer fetches on from its old position after the
		// unclean election: it skips the new leader's records of the new
		// epoch below it (kip320-skip).
		// KIP-848: a partition handed to its new owner before the old one
		// acknowledged its revocation: the invariants monitor's
		// ValidPartitionEpoch (Vanlightly's TLA+ invariants, live).
		{"assign-before-revoke", mutant.Target{Scenario: "rebalance-storm", Variant: "consumer"}, 1, []string{"invariants"}},
		{"no-rewind-on-truncation", mutant.Target{Scenario: "consumer-truncation", Variant: "kip320"}, 1, []string{"consumer"}},
	})
}
