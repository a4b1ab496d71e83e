package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKRaftModeFromRolesOrRelease(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		kraft bool
		roles Roles
	}{
		{map[string]string{}, false, RolesNone},
		{map[string]string{PropInterBrokerProtocolVersion: "3.9"}, false, RolesNone},
		{map[string]string{PropInterBrokerProtocolVersion: "4.0"}, true, RolesBroker},
		{map[string]string{PropInterBrokerProtocolVersion: "4.1", PropProcessRoles: "controller,broker"}, true, RolesCombined},
		{map[string]string{PropProcessRoles: "broker"}, true, RolesBroker},
		{map[string]string{PropProcessRoles: " broker , controller "}, true, RolesCombined},
	} {
		b, err := ParseBroker(tc.props)
		if err != nil {
			t.Errorf("%v: %v", tc.props, err)
			continue
		}
		if b.KRaftMode() != tc.kraft || b.KRaft.ProcessRoles != tc.roles {
			t.Errorf("%v: KRaftMode %v roles %q; want %v %q", tc.props, b.KRaftMode(), b.KRaft.ProcessRoles, tc.kraft, tc.roles)
		}
	}
}

func TestKRaftDefaultsAreKafkas(t *testing.T) {
	b, err := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: "4.0"})
	if err != nil {
		t.Fatal(err)
	}
	k := b.KRaft
	got := []int64{k.ElectionTimeout.Milliseconds(), k.FetchTimeout.Milliseconds(), k.ElectionBackoffMax.Milliseconds(),
		k.RequestTimeout.Milliseconds(), k.RetryBackoff.Milliseconds(), k.BrokerSessionTimeout.Milliseconds(), k.BrokerHeartbeatInterval.Milliseconds()}
	if d := cmp.Diff([]int64{1000, 2000, 1000, 2000, 20, 9000, 2000}, got); d != "" {
		t.Errorf("KRaft timeouts (-Kafka's +got):\n%s", d)
	}
	if !k.PreVote || !k.CheckQuorum || !k.VoteCheckLog {
		t.Errorf("4.0: prevote %v, check quorum %v, vote log check %v; want all on", k.PreVote, k.CheckQuorum, k.VoteCheckLog)
	}
	old, _ := ParseBroker(map[string]string{PropProcessRoles: "broker", PropInterBrokerProtocolVersion: "3.5"})
	if old.KRaft.PreVote {
		t.Error("3.5: pre-vote on; Kafka shipped KIP-996 pre-vote in 4.0")
	}
}

func TestKRaftBadInput(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		prop  string
		want  string
	}{
		{map[string]string{PropProcessRoles: "brokr"}, PropProcessRoles, "allowed: broker, controller"},
		{map[string]string{PropProcessRoles: "broker,broker"}, PropProcessRoles, "allowed"},
		{map[string]string{PropProcessRoles: "controller"}, PropProcessRoles, "must have the broker role"},
		{map[string]string{PropProcessRoles: "broker", PropZookeeperConnect: "zk:2181"}, PropZookeeperConnect, "does not use ZooKeeper"},
		{map[string]string{PropInterBrokerProtocolVersion: "4.0", PropProcessRoles: ""}, PropProcessRoles, "KRaft only"},
		{map[string]string{PropProcessRoles: "broker", PropInterBrokerProtocolVersion: "3.2"}, PropProcessRoles, "3.3"},
		{map[string]string{PropProcessRoles: "broker", PropControllerQuorumVoters: "3000@c0:9093,3000@c1:9093"}, PropControllerQuorumVoters, "listed twice"},
		{map[string]string{PropProcessRoles: "broker", PropControllerQuorumVoters: "c0:9093"}, PropControllerQuorumVoters, "id@host:port"},
		{map[string]string{PropControllerQuorumVoters: "3000@c0:9093"}, PropControllerQuorumVoters, "ZooKeeper mode"},
		{map[string]string{PropProcessRoles: "broker", "broker.heartbeat.interval.ms": "9000"}, "broker.heartbeat.interval.ms", "fenced between two heartbeats"},
		{map[string]string{PropProcessRoles: "broker", PropInterBrokerProtocolVersion: "3.8", PropKRaftVersion: "1"}, PropKRaftVersion, "arrived in 3.9"},
		{map[string]string{PropProcessRoles: "broker", PropInterBrokerProtocolVersion: "3.9", PropKRaftVersion: "1", PropControllerQuorumVoters: "3000@c0:9093"}, PropKRaftVersion, "controller.quorum.voters unset"},
		{map[string]string{PropInterBrokerProtocolVersion: "4.0", PropKRaftVersion: "2"}, PropKRaftVersion, ""},
		{map[string]string{PropInterBrokerProtocolVersion: "4.0", PropRaftAutoJoin: "true"}, PropRaftAutoJoin, "kafkasim.kraft.version=1"},
		{map[string]string{PropInterBrokerProtocolVersion: "4.1", PropKRaftVersion: "1", PropControllerAutoJoin: "true"}, PropControllerAutoJoin, "arrived in Kafka 4.2"},
		{map[string]string{PropInterBrokerProtocolVersion: "4.2", PropControllerAutoJoin: "true"}, PropControllerAutoJoin, "kafkasim.kraft.version=1"},
	} {
		_, err := ParseBroker(tc.props)
		var e *Error
		if !errors.As(err, &e) || e.Property != tc.prop || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v; want an error on %s saying %q", tc.props, err, tc.prop, tc.want)
		}
	}
}

// TestKRaftVersionIsAFormatChoice: kafkasim.kraft.version is 0 unless
// given (Kafka formats kraft.version 1 only when told to), and 1 is
// accepted from 3.9 (KIP-853).
func TestKRaftVersionIsAFormatChoice(t *testing.T) {
	for _, v := range []string{"3.9", "4.0", "4.1"} {
		b, err := ParseBroker(map[string]string{PropProcessRoles: "broker", PropInterBrokerProtocolVersion: v})
		if err != nil || b.KRaft.KRaftVersion != 0 {
			t.Errorf("%s: kraft.version %d, %v; want 0 by default", v, b.KRaft.KRaftVersion, err)
		}
		b, err = ParseBroker(map[string]string{PropProcessRoles: "broker", PropInterBrokerProtocolVersion: v, PropKRaftVersion: "1"})
		if err != nil || b.KRaft.KRaftVersion != 1 {
			t.Errorf("%s: kafkasim.kraft.version=1 gives %d, %v", v, b.KRaft.KRaftVersion, err)
		}
	}
}

func TestParseVoters(t *testing.T) {
	got, err := ParseVoters("3000@c0:9093, 3001@c1:9093,1@b1:9092")
	if err != nil {
		t.Fatal(err)
	}
	want := []Voter{{3000, "c0", 9093}, {3001, "c1", 9093}, {1, "b1", 9092}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ParseVoters (-want +got):\n%s", d)
	}
	if got[0].String() != "3000@c0:9093" {
		t.Errorf("String() = %q", got[0])
	}
}

// TestControllerAutoJoin: Kafka 4.2's controller.quorum.auto.join.enable
// is taken from 4.2 on a dynamic quorum, and switches auto-join on as
// kafkasim.raft.auto.join does on earlier releases.
func TestControllerAutoJoin(t *testing.T) {
	b, err := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: "4.2", PropKRaftVersion: "1", PropControllerAutoJoin: "true"})
	if err != nil || !b.KRaft.AutoJoinEnable || b.KRaft.AutoJoin {
		t.Fatalf("4.2 with %s=true: %+v, %v", PropControllerAutoJoin, b.KRaft, err)
	}
	if b, err := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: "4.2", PropKRaftVersion: "1"}); err != nil || b.KRaft.AutoJoinEnable {
		t.Fatalf("4.2 by default: auto-join %v, %v; want off, as Kafka's default", b.KRaft.AutoJoinEnable, err)
	}
}
