package scenarios

import (
	"testing"
)

// TestBuiltinScenariosMeetTheirExpectations runs every built-in scenario
// under every variant and checks each checker against the expectation the
// script states, and determinism: a second run gives the same trace hash.
func TestBuiltinScenariosMeetTheirExpectations(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		for _, v := range s.Variants {
			t.Run(s.Name+"/"+v.Name, func(t *testing.T) {
				res, err := s.Run(v.Name, Options{Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				if !res.OK() {
					t.Errorf("failed: %q, mismatches %v", res.Failed, res.Mismatches)
					for _, vd := range res.Verdicts {
						t.Log(vd.String())
					}
				}
				again, _ := s.Run(v.Name, Options{Seed: 1})
				if again.TraceHash != res.TraceHash {
					t.Errorf("not deterministic: hash %x then %x", res.TraceHash, again.TraceHash)
				}
			})
		}
	}
}
