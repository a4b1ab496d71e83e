package mutants

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// TestControlIsClean runs each swarm target once with no mutant: the
// control must show no contract break, or no detection means anything.
func TestControlIsClean(t *testing.T) {
	seen := map[mutant.Target]bool{}
	for _, m := range mutant.Catalogue {
		for _, tg := range m.Targets {
			if seen[tg] {
				continue
			}
			seen[tg] = true
			d, _, err := RunOne("", tg, 1, 0)
			if err != nil {
				t.Fatalf("%s/%s: %v", tg.Scenario, tg.Variant, err)
			}
			if d.Detected {
				t.Errorf("%s/%s seed 1 without a mutant: %v %s (%s)", tg.Scenario, tg.Variant, d.Checkers, d.Failed, d.Replay)
			}
		}
	}
}

func TestSetRefusesUnknown(t *testing.T) {
	if _, err := Set("no-such-mutant"); err == nil {
		t.Fatal("an unknown mutant was accepted")
	}
}
