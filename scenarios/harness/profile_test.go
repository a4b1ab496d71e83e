package harness

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

var profileBase = map[string]float64{"crash": 0.3, "power-loss": 0.1, "pause": 0.1, "partition": 0.2, "heal": 0.3}

// parseProfile reads "swarm: crash=0.6 power-loss=0 ..." back.
func parseProfile(t *testing.T, text string) (string, map[string]float64) {
	t.Helper()
	mode, rest, ok := strings.Cut(text, ": ")
	if !ok {
		t.Fatalf("profile %q: want MODE: kind=rate ...", text)
	}
	rates := map[string]float64{}
	for _, kv := range strings.Fields(rest) {
		k, v, _ := strings.Cut(kv, "=")
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("profile %q: %v", text, err)
		}
		rates[k] = f
	}
	return mode, rates
}

// TestSwarmProfileIsReproducibleAndVaries: a seed draws the same profile
// every time, seeds draw different profiles, and every drawn rate is the
// script's scaled by one of {0, 0.5, 1, 2} (clipped to 1), heal never off
// and some fault kind always on.
func TestSwarmProfileIsReproducibleAndVaries(t *testing.T) {
	s := parseProfileSwarm(t)
	distinct := map[string]bool{}
	for seed := uint64(1); seed <= 8; seed++ {
		a := runOK(t, s, "safe", Options{Seed: seed})
		b := runOK(t, s, "safe", Options{Seed: seed})
		if a.Profile != b.Profile || a.TraceHash != b.TraceHash {
			t.Fatalf("seed %d: profile %q then %q, trace %016x then %016x", seed, a.Profile, b.Profile, a.TraceHash, b.TraceHash)
		}
		distinct[a.Profile] = true
		mode, rates := parseProfile(t, a.Profile)
		if mode != scenarios.ProfileSwarm {
			t.Fatalf("seed %d: profile %q: want the swarm mode by default", seed, a.Profile)
		}
		anyOn := false
		for k, base := range profileBase {
			ok := false
			for _, f := range profileScales {
				if math.Abs(rates[k]-math.Min(1, base*f)) < 1e-9 && (k != "heal" || f > 0) {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("seed %d: %s=%v is not %v scaled by one of %v (heal never off)", seed, k, rates[k], base, profileScales)
			}
			anyOn = anyOn || (k != "heal" && rates[k] > 0)
		}
		if !anyOn {
			t.Fatalf("seed %d: profile %q enables no fault kind", seed, a.Profile)
		}
	}
	if len(distinct) < 3 {
		t.Fatalf("8 seeds drew only %d profiles: %v", len(distinct), distinct)
	}
}

// TestSwarmProfileFixedKeepsTheScriptRates: $profile=fixed runs the
// script's rates exactly, and draws no profile choice.
func TestSwarmProfileFixedKeepsTheScriptRates(t *testing.T) {
	s := parseProfileSwarm(t)
	for seed := uint64(1); seed <= 3; seed++ {
		res := runOK(t, s, "safe", Options{Seed: seed, Set: map[string]string{"$profile": "fixed"}, RecordChoices: true})
		if want := "fixed: crash=0.3 power-loss=0.1 pause=0.1 partition=0.2 heal=0.3"; res.Profile != want {
			t.Fatalf("seed %d: profile %q, want %q", seed, res.Profile, want)
		}
		for _, c := range res.World.Choices() {
			if c.Kind == sim.KindProfile {
				t.Fatalf("seed %d: a fixed profile made the choice %v", seed, c)
			}
		}
	}
	swarm := runOK(t, s, "safe", Options{Seed: 1, RecordChoices: true})
	n := 0
	for _, c := range swarm.World.Choices() {
		if c.Kind == sim.KindProfile {
			n++
		}
	}
	if n < len(profileBase) {
		t.Fatalf("a swarm profile made %d profile choices, want at least %d (one per fault kind)", n, len(profileBase))
	}
}

func TestSwarmBadProfileIsBadInput(t *testing.T) {
	s := parseProfileSwarm(t)
	_, _, err := Prepare(s, "safe", map[string]string{"$profile": "random"})
	if err == nil || !strings.Contains(err.Error(), `$profile="random"`) || !strings.Contains(err.Error(), "swarm") || !strings.Contains(err.Error(), "fixed") {
		t.Fatalf("got %v, want an error naming $profile and the allowed values swarm and fixed", err)
	}
	_, _, err = Prepare(s, "safe", map[string]string{"$acks": "1"})
	if err == nil || !strings.Contains(err.Error(), "enable.idempotence") {
		t.Fatalf("acks=1 with enable.idempotence=true: got %v, want the conflict named", err)
	}
}

// TestSwarmClientsAreKafkaProducers: the swarm's clients are Kafka's
// producer with the variant's properties — idempotent with acks=all in the
// safe variant, acks=1 without idempotence in the unsafe one — and under
// faults they retry, with producer ids and sequences in the history.
func TestSwarmClientsAreKafkaProducers(t *testing.T) {
	s := parseProfileSwarm(t)
	for _, c := range []struct{ variant, props string }{
		{"safe", "acks=all max.in.flight.requests.per.connection=5 retries=2147483647 enable.idempotence=true"},
		{"unsafe", "acks=1 max.in.flight.requests.per.connection=5 retries=2147483647 enable.idempotence=false"},
	} {
		res := runOK(t, s, c.variant, Options{Seed: 2, Set: map[string]string{"$crash": "0.6", "$profile": "fixed"}, KeepTrace: true})
		for _, name := range []string{"p1", "p2"} {
			p, ok := res.History.Producer(name)
			if !ok || p.Properties() != c.props {
				t.Fatalf("%s: producer %s declared %q (%v), want %q", c.variant, name, p.Properties(), ok, c.props)
			}
		}
		retries, inits := 0, 0
		for _, r := range res.World.Trace().Records() {
			switch r.Kind {
			case "produce-retry":
				retries++
			case "producer-init-id":
				inits++
			}
		}
		acked := 0
		for _, op := range res.History.Ops {
			if op.Kind == checkers.Send && op.Outcome == checkers.OK {
				acked++
			}
		}
		if retries == 0 || acked == 0 {
			t.Fatalf("%s: %d produce-retry records and %d acknowledged sends under crashes: the clients do not retry", c.variant, retries, acked)
		}
		if idem := c.variant == "safe"; idem != (inits > 0) {
			t.Fatalf("%s: %d InitProducerId answers (idempotence %v)", c.variant, inits, idem)
		}
	}
}
func parseProfileSwarm(t *testing.T) *scenarios.Script {
	t.Helper()
	s, err := scenarios.Load("../testdata/profile-swarm.txt")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runOK(t *testing.T, s *scenarios.Script, variant string, opts Options) *Result {
	t.Helper()
	res, err := Run(s, variant, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != "" {
		t.Fatalf("seed %d: %s", opts.Seed, res.Failed)
	}
	return res
}
