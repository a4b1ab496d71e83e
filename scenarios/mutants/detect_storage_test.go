package mutants

import (
	"slices"
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
	for _, tc := range []struct {
		mutant   string
		target   mutant.Target
		seed     uint64
		checkers []string // each must say bug
	}{
		{"sequence-check-off", swarm, 1, []string{"duplicates", "linearizability"}},
		{"producer-retry-new-sequence", swarm, 4, []string{"duplicates", "ordering"}},
		{"index-off-by-one", swarm, 3, []string{"acked-loss", "divergence"}},
		{"recovery-skips-last-segment", kraft, 2, []string{"divergence"}},
		{"fsync-lies", mutant.Target{Scenario: "swarm", Variant: "kip279-flush"}, 5, []string{"acked-loss"}},
	} {
		t.Run(tc.mutant, func(t *testing.T) {
			d, _, err := RunOne(tc.mutant, tc.target, tc.seed, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !d.Detected {
				t.Fatalf("%s on %s/%s seed %d: not detected (%s)", tc.mutant, tc.target.Scenario, tc.target.Variant, tc.seed, d.Replay)
			}
			for _, c := range tc.checkers {
				if !slices.Contains(d.Checkers, c) {
					t.Errorf("%s seed %d: checkers %v, want %s among them (%s)", tc.mutant, tc.seed, d.Checkers, c, d.Replay)
				}
			}
			ctl, _, err := RunOne("", tc.target, tc.seed, 0)
			if err != nil {
				t.Fatal(err)
			}
			if ctl.Detected {
				t.Errorf("%s/%s seed %d without a mutant: %v %s (%s)", tc.target.Scenario, tc.target.Variant, tc.seed, ctl.Checkers, ctl.Failed, ctl.Replay)
			}
		})
	}
}
