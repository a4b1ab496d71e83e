package harness

import (
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/google/go-cmp/cmp"
	"github.com/kafkasim/kafkasim/broker/config"
)

func hwLag(t *testing.T) *scenarios.Script {
	t.Helper()
	s, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSetEitherProtocolNameOverridesTheVariant: Kafka's
// inter.broker.protocol.version and the alias truncation override a
// variant's truncation alike (before, Kafka's name conflicted with the
// variant's alias: bad input).
func TestSetEitherProtocolNameOverridesTheVariant(t *testing.T) {
	s := hwLag(t)
	for _, set := range []map[string]string{
		{config.PropTruncation: "hw"},
		{config.PropInterBrokerProtocolVersion: "0.10.2"},
	} {
		_, cfg, err := Prepare(s, "kip279", set)
		if err != nil {
			t.Fatalf("-set %v: %v", set, err)
		}
		if got := scenarios.ProtocolLabel(cfg); got != "inter.broker.protocol.version=0.10.2 (truncation=hw)" {
			t.Errorf("-set %v: protocol %s", set, got)
		}
	}
	// Both names in one layer must still agree.
	if _, _, err := Prepare(s, "kip279", map[string]string{config.PropTruncation: "kip279", config.PropInterBrokerProtocolVersion: "0.10.2"}); err == nil {
		t.Error("-set truncation=kip279 inter.broker.protocol.version=0.10.2: no error, want the conflict")
	}
}

func TestOverriddenNamesWhatTheVariantSets(t *testing.T) {
	s := hwLag(t)
	v, _, err := Prepare(s, "kip279", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set  map[string]string
		want []string
	}{
		{map[string]string{"truncation": "hw"}, []string{"truncation=hw (the variant sets truncation=kip279)"}},
		{map[string]string{"inter.broker.protocol.version": "0.10.2"}, []string{"inter.broker.protocol.version=0.10.2 (the variant sets truncation=kip279)"}},
		{map[string]string{"truncation": "kip279"}, nil},
		{map[string]string{"acks": "1"}, nil}, // the variant does not set it
	} {
		if d := cmp.Diff(c.want, scenarios.Overridden(v, c.set)); d != "" {
			t.Errorf("-set %v (-want +got):\n%s", c.set, d)
		}
	}
}

func TestIdenticalVariantsUnderSet(t *testing.T) {
	s := hwLag(t)
	names := func(groups [][]scenarios.Variant) [][]string {
		var out [][]string
		for _, g := range groups {
			var ns []string
			for _, v := range g {
				ns = append(ns, v.Name)
			}
			out = append(out, ns)
		}
		return out
	}
	for _, c := range []struct {
		set  map[string]string
		want [][]string
	}{
		{nil, [][]string{{"hw"}, {"kip101"}, {"kip279"}}},
		{map[string]string{"truncation": "hw"}, [][]string{{"hw", "kip101", "kip279"}}},
		{map[string]string{"inter.broker.protocol.version": "2.0"}, [][]string{{"hw", "kip101", "kip279"}}},
		{map[string]string{"acks": "1"}, [][]string{{"hw"}, {"kip101"}, {"kip279"}}},
	} {
		if d := cmp.Diff(c.want, names(IdenticalVariants(s, c.set, s.Variants))); d != "" {
			t.Errorf("-set %v (-want +got):\n%s", c.set, d)
		}
	}
}

// TestRunNamesItsProtocol: every run says its protocol, defaults included.
func TestRunNamesItsProtocol(t *testing.T) {
	s, err := scenarios.Load("controller-failover")
	if err != nil {
		t.Fatal(err)
	}
	v, cfg, err := Prepare(s, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "inter.broker.protocol.version=" + config.Latest.String() + " (truncation=kip279)"
	if got := scenarios.ProtocolLabel(cfg); got != want || v.Name != "kip279" {
		t.Errorf("protocol %s, want %s", got, want)
	}
}
