package harness

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/sim"
)

// TestParseFaultProfile: a named profile, key=value words over it or
// alone, separated by spaces or commas; String reads back to the same
// profile (the tape keeps it so), and the default is the built-in swarm
// step's rates, fixed, a draw every 2s.
func TestParseFaultProfile(t *testing.T) {
	for _, c := range []struct {
		text string
		want FaultProfile
	}{
		{"default", FaultProfile{Name: "default", Mode: scenarios.ProfileFixed, Every: 2 * sim.Second, Restart: -1,
			Rates: map[string]float64{"crash": 0.3, "power-loss": 0.1, "pause": 0.1, "partition": 0.2, "heal": 0.3}}},
		{"failover,fault-every=500ms", FaultProfile{Name: "failover", Mode: scenarios.ProfileFixed, Every: 500 * sim.Millisecond, Restart: 1,
			Rates: map[string]float64{"crash": 0.5}}},
		{"crash=0.6 partition=0.4 heal=0.3 profile=swarm", FaultProfile{Mode: scenarios.ProfileSwarm, Every: 2 * sim.Second, Restart: -1,
			Rates: map[string]float64{"crash": 0.6, "partition": 0.4, "heal": 0.3}}},
		{"network restart=0.5 pause=0", FaultProfile{Name: "network", Mode: scenarios.ProfileFixed, Every: 2 * sim.Second, Restart: 0.5,
			Rates: map[string]float64{"pause": 0, "partition": 0.4, "heal": 0.4}}},
	} {
		p, err := ParseFaultProfile(c.text)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if !reflect.DeepEqual(p, c.want) {
			t.Errorf("%q: %+v, want %+v", c.text, p, c.want)
		}
		back, err := ParseFaultProfile(p.String())
		if err != nil {
			t.Fatalf("%q read back from %q: %v", c.text, p.String(), err)
		}
		back.Name = p.Name
		for k, f := range p.Rates {
			if back.Rates[k] != f {
				t.Errorf("%q read back from %q: %s=%v, want %v", c.text, p.String(), k, back.Rates[k], f)
			}
		}
		if back.Every != p.Every || back.Mode != p.Mode || back.Restart != p.Restart {
			t.Errorf("%q read back from %q: %+v", c.text, p.String(), back)
		}
	}
	// default is the built-in swarm scenario's step, as it is written.
	def := mustParse(t, "default")
	for _, st := range scenarios.Swarm().Steps {
		if st.Op != "swarm" {
			continue
		}
		for _, k := range FaultKinds {
			if st.KV[k] != rateText(def.Rates[k]) {
				t.Errorf("default: %s=%v, the swarm scenario's step says %s=%s", k, def.Rates[k], k, st.KV[k])
			}
		}
		if st.KV["fault-every"] != durationText(def.Every) {
			t.Errorf("default: fault-every=%v, the swarm scenario's step says %s", def.Every, st.KV["fault-every"])
		}
	}
	if m := mustParse(t, "default").MeanInterval(); m < 2800*sim.Millisecond || m > 3000*sim.Millisecond {
		t.Errorf("default: a fault every %v, want about 2.9s (2s over 1-0.7*0.9*0.9*0.8*0.7)", m)
	}
}

func mustParse(t *testing.T, text string) FaultProfile {
	t.Helper()
	p, err := ParseFaultProfile(text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParseFaultProfileRefuses: bad input names what is wrong and what is
// allowed.
func TestParseFaultProfileRefuses(t *testing.T) {
	for text, want := range map[string][]string{
		"":                          {"empty", "default, failover, network", "crash, power-loss, pause, partition, heal"},
		"chaos":                     {`"chaos" is no named profile`, "default, failover, network"},
		"crash=1.5":                 {`crash="1.5": want a chance in [0,1]`},
		"crash=x":                   {`crash="x"`},
		"bogus=1":                   {`unknown key "bogus"`, "crash, power-loss, pause, partition, heal", "fault-every", "restart", "profile"},
		"fault-every=0s crash=0.1":  {`fault-every="0s": want a duration of virtual time of 10.000ms or more`},
		"fault-every=5ms crash=0.1": {`fault-every="5ms"`},
		"fault-every=2 crash=0.1":   {`fault-every="2"`},
		"crash=0.1 crash=0.2":       {"crash given twice"},
		"heal=0.5":                  {"injects nothing"},
		"crash=0.1 default":         {`"default": a named profile comes first`},
		"profile=random crash=0.1":  {`profile="random": allowed swarm`, "fixed"},
		"consumer-crash=0.5":        {"consumer-crash", "real clients"},
		"restart=2 crash=0.1":       {`restart="2"`},
	} {
		_, err := ParseFaultProfile(text)
		if err == nil {
			t.Errorf("%q: accepted", text)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %v, want it to say %q", text, err, w)
			}
		}
	}
}
