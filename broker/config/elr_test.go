package config

import (
	"errors"
	"testing"
)

func TestELRDefaultFollowsTheRelease(t *testing.T) {
	for _, tc := range []struct {
		version string
		on      bool
	}{{"3.9", false}, {"4.0", false}, {"4.1", true}} {
		b, err := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: tc.version})
		if err != nil {
			t.Fatalf("%s: %v", tc.version, err)
		}
		if b.ELR.Enabled() != tc.on {
			t.Errorf("%s: ELR on %v; want %v (KIP-966: off in 4.0, on for new 4.1 clusters)", tc.version, b.ELR.Enabled(), tc.on)
		}
	}
	b, err := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: "4.0", PropEligibleLeaderReplicasVersion: "1"})
	if err != nil || !b.ELR.Enabled() {
		t.Errorf("4.0 with eligible.leader.replicas.version=1: on %v, err %v; want on", b.ELR.Enabled(), err)
	}
}

func TestELRBadInput(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		kind  ErrorKind
	}{
		{map[string]string{PropEligibleLeaderReplicasVersion: "1"}, Conflict},                                          // ZooKeeper mode
		{map[string]string{PropEligibleLeaderReplicasVersion: "1", PropProcessRoles: "broker"}, Conflict},              // 3.9 KRaft
		{map[string]string{PropEligibleLeaderReplicasVersion: "1", PropInterBrokerProtocolVersion: "3.7"}, Conflict},   // ZooKeeper 3.7
		{map[string]string{PropEligibleLeaderReplicasVersion: "2", PropInterBrokerProtocolVersion: "4.1"}, OutOfRange}, // no level 2
		{map[string]string{PropEligibleLeaderReplicasVersion: "yes", PropInterBrokerProtocolVersion: "4.1"}, BadValue},
	} {
		_, err := ParseBroker(tc.props)
		var e *Error
		if !errors.As(err, &e) || e.Kind != tc.kind || e.Property != PropEligibleLeaderReplicasVersion {
			t.Errorf("%v: %v; want a %v error naming %s", tc.props, err, tc.kind, PropEligibleLeaderReplicasVersion)
		}
	}
}
