package suite

import (
	"testing"
)

// TestExamplesPass: the scripts of examples/scenarios, which docs/ci.md
// offers as a start for a team's own, load as `kafkasim suite
// examples/scenarios` loads them and every case meets its expectations at
// the suite's default five seeds.
func TestExamplesPass(t *testing.T) {
	scripts, err := Load([]string{"../../examples/scenarios"}, DefaultExt)
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) != 10 {
		t.Fatalf("%d example scripts, want 10", len(scripts))
	}
	cases, err := Run(scripts, Options{Seeds: 5, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, r := range c.Runs {
			if !r.OK() {
				t.Errorf("%s/%s seed %d: failed %q, mismatches %v\n  replay: %s", c.Scenario, c.Variant, r.Seed, r.Failed, r.Mismatches, r.Replay)
			}
		}
	}
	for _, s := range scripts {
		if s.Description == "" || s.Source == "" {
			t.Errorf("%s: an example says what it shows and where that comes from (describe, source)", s.File)
		}
		expects := 0
		for _, v := range s.Variants {
			expects += len(v.Expect)
		}
		if expects == 0 {
			t.Errorf("%s: no expect line", s.File)
		}
	}
}
