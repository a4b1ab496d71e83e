package mutants

import (
	"slices"
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
	cases := []struct {
		name     string
		target   mutant.Target
		seed     uint64
		checkers []string
	}{
		{"hw-before-isr-fetch", swarmZK, 1, []string{"invariants"}},
		{"follower-skips-truncation", swarmZK, 1, []string{"divergence"}},
		{"offsets-for-epoch-wrong-end", swarmZK, 1, []string{"divergence"}},
		{"isr-expands-lagging", swarmKRaft, 1, []string{"invariants"}},
		{"acks-all-below-min-isr", swarmZK, 1, []string{"invariants"}},
		{"follower-hw-past-leo", swarmZK, 1, []string{"invariants"}},
		{"fetch-beyond-hw", groupZK, 7, []string{"consumer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, _, err := RunOne(c.name, c.target, c.seed, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !d.Detected {
				t.Fatalf("%s on %s/%s seed %d: not detected (%s)", c.name, c.target.Scenario, c.target.Variant, c.seed, d.Replay)
			}
			for _, want := range c.checkers {
				if !slices.Contains(d.Checkers, want) {
					t.Errorf("%s seed %d: checkers %v, want %s among them (%s)", c.name, c.seed, d.Checkers, want, d.Replay)
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
