package mutants

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// detectCase is one mutant on one (target, seed) where the checkers catch
// it: each of checkers must say bug.
type detectCase struct {
	mutant   string
	target   mutant.Target
	seed     uint64
	checkers []string
}

// checkDetected runs each case with its mutant on and the same run
// without it: the mutant must be detected by the checkers named, the
// control not at all.
func checkDetected(t *testing.T, cases []detectCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.mutant+"/"+c.target.Scenario+"/"+c.target.Variant, func(t *testing.T) {
			d, _, err := RunOne(c.mutant, c.target, c.seed, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !d.Detected {
				t.Fatalf("%s on %s/%s seed %d: not detected (%s)", c.mutant, c.target.Scenario, c.target.Variant, c.seed, d.Replay)
			}
			for _, want := range c.checkers {
				if !slices.Contains(d.Checkers, want) {
					t.Errorf("%s seed %d: checkers %v, want %s among them (%s)", c.mutant, c.seed, d.Checkers, want, d.Replay)
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
