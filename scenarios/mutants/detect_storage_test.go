package mutants

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// TestStorageMutantsDetected runs each producer-storage mutant on one
// (target, seed) where the checkers catch it, and the same run without it:
// the mutant must be detected by the checkers named, the control not at
// all.
func TestStorageMutantsDetected(t *testing.T) {
	swarm := mutant.Target{Scenario: "swarm", Variant: "kip279-safe"}
	kraft := mutant.Target{Scenario: "kraft-swarm", Variant: "kraft-safe"}
	checkDetected(t, []detectCase{
		{"sequence-check-off", swarm, 1, []string{"duplicates", "linearizability"}},
		{"producer-retry-new-sequence", swarm, 4, []string{"duplicates", "ordering"}},
		{"index-off-by-one", swarm, 3, []string{"acked-loss", "divergence"}},
		{"recovery-skips-last-segment", kraft, 2, []string{"divergence"}},
		{"fsync-lies", mutant.Target{Scenario: "swarm", Variant: "kip279-flush"}, 5, []string{"acked-loss"}},
	})
}
