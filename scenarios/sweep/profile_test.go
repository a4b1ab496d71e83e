package sweep

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

func parseProfileSwarm(t *testing.T) *scenarios.Script {
	t.Helper()
	s, err := scenarios.Load("../testdata/profile-swarm.txt")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runOK(t *testing.T, s *scenarios.Script, variant string, opts harness.Options) *harness.Result {
	t.Helper()
	res, err := harness.Run(s, variant, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != "" {
		t.Fatalf("seed %d: %s", opts.Seed, res.Failed)
	}
	return res
}

// TestSweepRefusesBadProfile: a grid's $profile other than swarm or fixed
// is refused before the sweep, naming the value.
func TestSweepRefusesBadProfile(t *testing.T) {
	s := parseProfileSwarm(t)
	sw := &Spec{Scenario: s.Name, Variant: "safe", Seeds: 1, Grid: []Axis{{Key: "$profile", Values: []string{"fixed", "often"}}}}
	if err := sw.Validate(s); err == nil || !strings.Contains(err.Error(), `$profile="often"`) {
		t.Fatalf("sweep: got %v, want the bad $profile named", err)
	}
}

// TestSwarmSweepOverRatesKeepsThem: a sweep whose grid sets a swarm rate
// runs it as given ($profile=fixed) unless the grid sweeps $profile too.
func TestSwarmSweepOverRatesKeepsThem(t *testing.T) {
	s := parseProfileSwarm(t)
	rates := &Spec{Scenario: s.Name, Variant: "safe", Seeds: 1, Grid: []Axis{{Key: "crash", Values: []string{"0", "0.5"}}}}
	_, set := rates.runArgs(s, rates.Points()[1])
	if set["$profile"] != scenarios.ProfileFixed || set["$crash"] != "0.5" {
		t.Fatalf("a sweep over crash runs with %v, want $crash=0.5 and $profile=fixed", set)
	}
	both := &Spec{Scenario: s.Name, Variant: "safe", Seeds: 1, Grid: []Axis{{Key: "$crash", Values: []string{"0.5"}}, {Key: "$profile", Values: []string{"swarm"}}}}
	if _, set := both.runArgs(s, both.Points()[0]); set["$profile"] != scenarios.ProfileSwarm {
		t.Fatalf("a sweep over $profile runs with %v", set)
	}
	other := &Spec{Scenario: s.Name, Variant: "safe", Seeds: 1, Grid: []Axis{{Key: "min.insync.replicas", Values: []string{"1", "2"}}}}
	if _, set := other.runArgs(s, other.Points()[0]); set["$profile"] != "" {
		t.Fatalf("a sweep over no rate runs with %v, want the swarm profile", set)
	}
	res := runOK(t, s, "safe", harness.Options{Seed: 1, Set: map[string]string{"$crash": "0.5", "$profile": "fixed"}})
	if rec := NewRunRecord(rates, rates.Points()[1], res); !strings.HasPrefix(rec.Profile, "fixed: crash=0.5 ") {
		t.Fatalf("runs.jsonl profile %q", rec.Profile)
	}
}
