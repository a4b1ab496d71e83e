package mutants

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// TestControllerMutantsDetected runs, for each controller and KIP-966
// mutant the swarms catch, one seed where it is caught, with the checkers
// that catch it, and the same seed without it, which must be clean.
// (stale-controller-epoch is equivalent; alter-partition-stale-epoch and
// the KRaft half of no-fence-on-session-expiry are not caught in 100 swarm
// seeds: see the catalogue.)
func TestControllerMutantsDetected(t *testing.T) {
	var (
		swarmZK    = mutant.Target{Scenario: "swarm", Variant: "kip279-safe"}
		swarmKRaft = mutant.Target{Scenario: "kraft-swarm", Variant: "kraft-safe"}
		swarmELR   = mutant.Target{Scenario: "kraft-swarm", Variant: "kraft-elr"}
	)
	checkDetected(t, []detectCase{
		{"clean-election-out-of-isr", swarmZK, 3, []string{"acked-loss", "invariants"}},
		{"clean-election-out-of-isr", swarmKRaft, 4, []string{"acked-loss", "invariants"}},
		{"leader-epoch-not-bumped", swarmZK, 1, []string{"divergence", "invariants", "liveness"}},
		{"leader-epoch-not-bumped", swarmKRaft, 1, []string{"acked-loss", "divergence", "liveness"}},
		{"no-fence-on-session-expiry", swarmZK, 12, []string{"acked-loss", "divergence", "liveness"}},
		{"elr-keeps-unclean-replica", swarmELR, 26, []string{"linearizability", "acked-loss"}},
	})
}
