package mutants

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// TestReplicationMutantsDetected runs each replication mutant once on a
// seed where the checkers catch it, and the same seed without it: the
// mutant's run must break the contract (naming the checkers expected),
// the control's must not.
func TestReplicationMutantsDetected(t *testing.T) {
	swarmZK := mutant.Target{Scenario: "swarm", Variant: "kip279-safe"}
	swarmKRaft := mutant.Target{Scenario: "kraft-swarm", Variant: "kraft-safe"}
	groupZK := mutant.Target{Scenario: "group-swarm", Variant: "eager"}
	checkDetected(t, []detectCase{
		{"hw-before-isr-fetch", swarmZK, 1, []string{"invariants"}},
		{"follower-skips-truncation", swarmZK, 1, []string{"divergence"}},
		{"offsets-for-epoch-wrong-end", swarmZK, 1, []string{"divergence"}},
		{"isr-expands-lagging", swarmKRaft, 1, []string{"invariants"}},
		{"acks-all-below-min-isr", swarmZK, 1, []string{"invariants"}},
		{"follower-hw-past-leo", swarmZK, 1, []string{"invariants"}},
		{"fetch-beyond-hw", groupZK, 7, []string{"consumer"}},
	})
}
