package zk_test

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

func TestLayoutPaths(t *testing.T) {
	for got, want := range map[string]string{
		zk.BrokerIDPath(3):                   "/brokers/ids/3",
		zk.TopicPath("t"):                    "/brokers/topics/t",
		zk.TopicPartitionStatePath("t", 12):  "/brokers/topics/t/partitions/12/state",
		zk.DeleteTopicPath("t"):              "/admin/delete_topics/t",
		zk.IsrChangeNotificationPrefix + "x": "/isr_change_notification/isr_change_x",
	} {
		if got != want {
			t.Errorf("path %q, want %q", got, want)
		}
	}
	if n, ok := zk.IsrChangeSequence("/isr_change_notification/isr_change_0000000042"); !ok || n != 42 {
		t.Errorf("IsrChangeSequence = %d, %v; want 42, true", n, ok)
	}
	if _, ok := zk.IsrChangeSequence("/brokers/ids/1"); ok {
		t.Errorf("IsrChangeSequence accepted a non-notification path")
	}
}

// TestZNodeJSON pins the bytes Kafka's znodes hold: field order is fixed
// and partition maps are in numeric order, so data is deterministic.
func TestZNodeJSON(t *testing.T) {
	now := sim.Time(1500 * sim.Millisecond)
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"broker", zk.NewBrokerRegistration("b1", 9092, "r1", now),
			`{"version":4,"host":"b1","port":9092,"jmx_port":-1,"timestamp":"1500","endpoints":["PLAINTEXT://b1:9092"],"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"rack":"r1"}`},
		{"broker without rack", zk.NewBrokerRegistration("b2", 9093, "", now),
			`{"version":4,"host":"b2","port":9093,"jmx_port":-1,"timestamp":"1500","endpoints":["PLAINTEXT://b2:9093"],"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"}}`},
		{"controller", zk.NewControllerZNode(2, now), `{"version":1,"brokerid":2,"timestamp":"1500"}`},
		{"topic v2", zk.NewTopicAssignment(zk.ReplicaAssignment{10: {3, 1, 2}, 2: {1, 2, 3}, 0: {2, 3, 1}}),
			`{"version":2,"partitions":{"0":[2,3,1],"2":[1,2,3],"10":[3,1,2]},"adding_replicas":{},"removing_replicas":{}}`},
		{"topic v1 (seeds)", zk.TopicAssignment{Version: 1, Partitions: zk.ReplicaAssignment{1: {3, 2, 1}, 0: {2, 1, 3}}},
			`{"version":1,"partitions":{"0":[2,1,3],"1":[3,2,1]}}`},
		{"state", zk.PartitionState{ControllerEpoch: 5, Leader: 1, Version: 1, LeaderEpoch: 6, ISR: []int32{2, 1, 3}},
			`{"controller_epoch":5,"leader":1,"version":1,"leader_epoch":6,"isr":[2,1,3]}`},
		{"state no isr", zk.PartitionState{Leader: zk.NoLeader, Version: 1},
			`{"controller_epoch":0,"leader":-1,"version":1,"leader_epoch":0,"isr":[]}`},
		{"reassign", zk.ReassignPartitions{Version: 1, Partitions: []zk.PartitionReassignment{{Topic: "t", Partition: 0, Replicas: []int32{1, 2}}}},
			`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}`},
		{"preferred", zk.PartitionList{Version: 1, Partitions: []zk.TopicPartitionRef{{Topic: "t", Partition: 3}}},
			`{"version":1,"partitions":[{"topic":"t","partition":3}]}`},
		{"isr change empty", zk.PartitionList{Version: 1}, `{"version":1,"partitions":[]}`},
	}
	for _, c := range cases {
		if got := string(zk.Encode(c.v)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	if got := string(zk.EncodeControllerEpoch(7)); got != "7" {
		t.Errorf("controller epoch %q, want \"7\"", got)
	}
}

func TestZNodeJSONRoundTrip(t *testing.T) {
	var ta zk.TopicAssignment
	if err := zk.Decode([]byte(`{"version":1,"partitions":{"45":[2,1,3],"4":[3,2,1]}}`), &ta); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(zk.TopicAssignment{Version: 1, Partitions: zk.ReplicaAssignment{45: {2, 1, 3}, 4: {3, 2, 1}}}, ta); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	var st zk.PartitionState
	if err := zk.Decode([]byte(`{"leader":1,"leader_epoch":6,"isr":[2,1,3],"version":1,"controller_epoch":5}`), &st); err != nil {
		t.Fatal(err)
	}
	if st.Leader != 1 || st.LeaderEpoch != 6 || st.ControllerEpoch != 5 || !reflect.DeepEqual(st.ISR, []int32{2, 1, 3}) {
		t.Errorf("decoded %+v", st)
	}
	var reg zk.BrokerRegistration
	want := zk.NewBrokerRegistration("b1", 9092, "r1", 0)
	if err := zk.Decode(zk.Encode(want), &reg); err != nil {
		t.Errorf("broker registration round trip: %v", err)
	} else if diff := cmp.Diff(want, reg); diff != "" {
		t.Errorf("broker registration round trip (-want +got):\n%s", diff)
	}
	if _, err := zk.DecodeControllerEpoch([]byte("x1")); err == nil {
		t.Errorf("DecodeControllerEpoch accepted %q", "x1")
	}
	if err := zk.Decode([]byte(`{"version":`), &st); err == nil {
		t.Errorf("Decode accepted truncated JSON")
	}
}

func TestServerConfigValidate(t *testing.T) {
	if err := (zk.ServerConfig{}).Validate(); err != nil {
		t.Errorf("defaults rejected: %v", err)
	}
	for _, bad := range []zk.ServerConfig{
		{TickTime: -1},
		{MinSessionTimeout: sim.Ms(10000), MaxSessionTimeout: sim.Ms(5000)},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestSessionTimeoutNegotiation checks ZooKeeper's clamp of the requested
// timeout to [2, 20] ticks (tickTime 2000 ms by default).
func TestSessionTimeoutNegotiation(t *testing.T) {
	h := newHarness(t, 1, lan)
	var got []sim.Duration
	for i, req := range []int64{1000, 6000, 100000} {
		h.addClientWith("c"+string(rune('0'+i)), sim.Ms(req), func(n *client) {
			n.onSession = func(n *client, ctx *sim.Context, ev zk.SessionEvent) { got = append(got, n.c.SessionTimeout()) }
		})
	}
	h.runUntil(100)
	want := map[sim.Duration]bool{sim.Ms(4000): true, sim.Ms(6000): true, sim.Ms(40000): true}
	if len(got) != 3 {
		t.Fatalf("negotiated %v, want three", got)
	}
	for _, d := range got {
		if !want[d] {
			t.Errorf("negotiated %v, want one of 4s, 6s, 40s", d)
		}
		delete(want, d)
	}
}
