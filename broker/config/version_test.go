package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// TestTruncationForEveryVersion pins the protocol version -> truncation
// mapping of DESIGN.md principle 4 for every known release.
func TestTruncationForEveryVersion(t *testing.T) {
	want := map[string]Truncation{
		"0.8.0": HW, "0.8.1": HW, "0.8.2": HW, "0.9.0": HW, "0.10.0": HW, "0.10.1": HW, "0.10.2": HW,
		"0.11.0": KIP101, "1.0": KIP101, "1.1": KIP101,
		"2.0": KIP279, "2.1": KIP279, "2.2": KIP279, "2.3": KIP279, "2.4": KIP279, "2.5": KIP279,
		"2.6": KIP279, "2.7": KIP279, "2.8": KIP279, "3.0": KIP279, "3.1": KIP279, "3.2": KIP279,
		"3.3": KIP279, "3.4": KIP279, "3.5": KIP279, "3.6": KIP279, "3.7": KIP279, "3.8": KIP279, "3.9": KIP279,
		"4.0": KIP279, "4.1": KIP279, "4.2": KIP279, "4.3": KIP279,
	}
	if got := len(Versions()); got != len(want) {
		t.Fatalf("Versions() has %d releases, the table %d", got, len(want))
	}
	for _, v := range Versions() {
		w, ok := want[v.String()]
		if !ok {
			t.Errorf("release %s missing from the table", v)
			continue
		}
		if got := TruncationFor(v); got != w {
			t.Errorf("TruncationFor(%s) = %s, want %s", v, got, w)
		}
		b, err := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: v.String()})
		if err != nil {
			t.Errorf("ParseBroker(%s): %v", v, err)
			continue
		}
		if b.Truncation != w || b.InterBrokerProtocolVersion != v {
			t.Errorf("ParseBroker(%s) = (%s, %s), want (%s, %s)", v, b.InterBrokerProtocolVersion, b.Truncation, v, w)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Version
	}{
		{"0.10.2", V0_10_2}, {"0.10.2.1", V0_10_2}, {" 0.11.0 ", V0_11_0}, {"1.1", V1_1},
		{"2.0", V2_0}, {"2.8.1", V2_8}, {"3.9", V3_9}, {"0.8.0", V0_8_0},
	} {
		got, err := ParseVersion(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseVersion(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "2.9", "4.4", "3", "0.10", "0.7.0", "2.0-IV1", "02.0", "2.0.1.1", "v2.0", "2.x", "1.0.0.0.0"} {
		_, err := ParseVersion(in)
		var e *Error
		if !errors.As(err, &e) || e.Kind != BadValue || e.Property != PropInterBrokerProtocolVersion {
			t.Errorf("ParseVersion(%q) = %v, want a BadValue error on %s", in, err, PropInterBrokerProtocolVersion)
			continue
		}
		if !strings.Contains(err.Error(), "0.10.2, 0.11.0, 1.0, 1.1, 2.0") || !strings.Contains(err.Error(), "3.9") {
			t.Errorf("ParseVersion(%q) error does not list the allowed releases: %v", in, err)
		}
	}
}

// TestVersionDependentDefaults checks the defaults an old release brings:
// KIP-106 (unclean election), KIP-537 (lag and ZooKeeper timeouts), the
// message format, and KIP-320 fencing.
func TestVersionDependentDefaults(t *testing.T) {
	for _, tc := range []struct {
		version           string
		unclean           bool
		lag, zk           sim.Duration
		format            string
		fencing           bool
		explicitOverrides map[string]string
	}{
		{"0.10.2", true, sim.Ms(10000), sim.Ms(6000), "0.10.2", false, nil},
		{"0.11.0", false, sim.Ms(10000), sim.Ms(6000), "0.11.0", false, nil},
		{"2.0", false, sim.Ms(10000), sim.Ms(6000), "2.0", false, nil},
		{"2.1", false, sim.Ms(10000), sim.Ms(6000), "2.1", true, nil},
		{"2.4", false, sim.Ms(10000), sim.Ms(6000), "2.4", true, nil},
		{"2.5", false, sim.Ms(30000), sim.Ms(18000), "2.5", true, nil},
		{"3.0", false, sim.Ms(30000), sim.Ms(18000), "3.0-IV1", true, nil},
		{"3.9", false, sim.Ms(30000), sim.Ms(18000), "3.0-IV1", true, nil},
		// An explicit setting wins over the version's default.
		{"0.10.2", false, sim.Ms(30000), sim.Ms(6000), "0.10.1", true, map[string]string{
			PropUncleanLeaderElection: "false", PropReplicaLagTimeMaxMs: "30000",
			PropLogMessageFormatVersion: "0.10.1", PropLeaderEpochFencing: "true"}},
	} {
		props := map[string]string{PropInterBrokerProtocolVersion: tc.version}
		for k, v := range tc.explicitOverrides {
			props[k] = v
		}
		b, err := ParseBroker(props)
		if err != nil {
			t.Errorf("%s: %v", tc.version, err)
			continue
		}
		if b.UncleanLeaderElectionEnable != tc.unclean || b.ReplicaLagTimeMax != tc.lag || b.ZookeeperSessionTimeout != tc.zk ||
			b.LogMessageFormatVersion != tc.format || b.LeaderEpochFencing != tc.fencing {
			t.Errorf("%s %v: got unclean=%v lag=%s zk=%s format=%s fencing=%v; want %v %s %s %s %v", tc.version, tc.explicitOverrides,
				b.UncleanLeaderElectionEnable, b.ReplicaLagTimeMax, b.ZookeeperSessionTimeout, b.LogMessageFormatVersion, b.LeaderEpochFencing,
				tc.unclean, tc.lag, tc.zk, tc.format, tc.fencing)
		}
	}
}

// TestTruncationAlias checks how truncation and
// inter.broker.protocol.version interact: alone, truncation selects the
// newest release using it; together they must agree.
func TestTruncationAlias(t *testing.T) {
	for _, tc := range []struct {
		props   map[string]string
		version Version
		trunc   Truncation
		unclean bool
		err     bool
	}{
		{map[string]string{}, Latest, KIP279, false, false},
		{map[string]string{"truncation": "hw"}, V0_10_2, HW, true, false},
		{map[string]string{"truncation": "HW"}, V0_10_2, HW, true, false},
		{map[string]string{"truncation": "kip101"}, V1_1, KIP101, false, false},
		{map[string]string{"truncation": "kip279"}, Latest, KIP279, false, false},
		{map[string]string{"truncation": "hw", "inter.broker.protocol.version": "0.9.0"}, V0_9_0, HW, true, false},
		{map[string]string{"truncation": "kip101", "inter.broker.protocol.version": "0.11.0"}, V0_11_0, KIP101, false, false},
		{map[string]string{"truncation": "kip279", "inter.broker.protocol.version": "2.0"}, V2_0, KIP279, false, false},
		{map[string]string{"truncation": "hw", "unclean.leader.election.enable": "false"}, V0_10_2, HW, false, false},
		{props: map[string]string{"truncation": "hw", "inter.broker.protocol.version": "0.11.0"}, err: true},
		{props: map[string]string{"truncation": "kip101", "inter.broker.protocol.version": "2.0"}, err: true},
		{props: map[string]string{"truncation": "kip101", "inter.broker.protocol.version": "0.10.2"}, err: true},
		{props: map[string]string{"truncation": "kip279", "inter.broker.protocol.version": "1.1"}, err: true},
	} {
		b, err := ParseBroker(tc.props)
		if tc.err {
			var e *Error
			if !errors.As(err, &e) || e.Kind != Conflict || e.Property != PropTruncation || e.Other != PropInterBrokerProtocolVersion ||
				!strings.Contains(err.Error(), "set only one of the two") {
				t.Errorf("%v: got %v, want a conflict naming truncation and inter.broker.protocol.version", tc.props, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.props, err)
			continue
		}
		if b.InterBrokerProtocolVersion != tc.version || b.Truncation != tc.trunc || b.UncleanLeaderElectionEnable != tc.unclean {
			t.Errorf("%v: got (%s, %s, unclean=%v), want (%s, %s, %v)", tc.props, b.InterBrokerProtocolVersion, b.Truncation,
				b.UncleanLeaderElectionEnable, tc.version, tc.trunc, tc.unclean)
		}
	}
}

// TestValidateHandBuiltBroker checks that Validate catches a Broker built
// without ParseBroker whose truncation contradicts its version.
func TestValidateHandBuiltBroker(t *testing.T) {
	b := DefaultBroker()
	b.InterBrokerProtocolVersion = V0_10_2
	b.LogMessageFormatVersion = "0.10.2"
	var e *Error
	if err := b.Validate(); !errors.As(err, &e) || e.Kind != Conflict || e.Property != PropTruncation {
		t.Errorf("version 0.10.2 with kip279: got %v, want a truncation conflict", err)
	}
	b.Truncation = TruncationFor(b.InterBrokerProtocolVersion)
	b.Txn.Version = 2
	if err := b.Validate(); !errors.As(err, &e) || e.Kind != Conflict || e.Property != PropTransactionVersion {
		t.Errorf("version 0.10.2 with transaction.version 2: got %v, want a transaction.version conflict", err)
	}
	b.Txn = defaultTxn(b.InterBrokerProtocolVersion)
	if err := b.Validate(); err != nil {
		t.Errorf("consistent hand-built broker: %v", err)
	}
	if err := (Broker{}).Validate(); err == nil {
		t.Error("the zero Broker validated")
	}
}
