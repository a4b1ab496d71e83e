package matrix

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/checkers"
)

// TestReleaseLabels: each default label maps to its release's properties.
func TestReleaseLabels(t *testing.T) {
	want := map[string]string{
		"0.10.2":    "inter.broker.protocol.version=0.10.2 zk",
		"2.0":       "inter.broker.protocol.version=2.0 zk",
		"3.9-zk":    "inter.broker.protocol.version=3.9 zk",
		"3.9-kraft": "inter.broker.protocol.version=3.9 process.roles=broker kraft",
		"4.0":       "inter.broker.protocol.version=4.0 kraft",
		"4.1":       "inter.broker.protocol.version=4.1 kraft",
	}
	for _, l := range DefaultVersions {
		r, err := ParseRelease(l)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		var got []string
		for _, p := range r.Props {
			got = append(got, p[0]+"="+p[1])
		}
		if w, ok := want[l]; ok && strings.Join(append(got, r.Mode), " ") != w {
			t.Errorf("%s: %v %s, want %s", l, got, r.Mode, w)
		}
	}
	for _, bad := range []string{"", "9.9", "2", "2.0.0.0", "4.0-zk", "2.0-kraft", "3.9-raft", "0.10"} {
		if _, err := ParseRelease(bad); err == nil || !strings.Contains(err.Error(), "allowed: 0.10.2, 0.11.0") {
			t.Errorf("%q: %v, want an error listing the labels", bad, err)
		}
	}
}

// TestSetReplacesWhatTheVariantPins: a variant's version-selecting
// properties get the release's own value; the others are left alone.
func TestSetReplacesWhatTheVariantPins(t *testing.T) {
	r, _ := ParseRelease("2.0")
	set := r.Set(map[string]string{config.PropTruncation: "hw", "consumer.kafkasim.truncation.detection": "true",
		config.PropProcessRoles: "broker", config.PropMinInsyncReplicas: "2"})
	want := map[string]string{config.PropInterBrokerProtocolVersion: "2.0", "consumer.kafkasim.truncation.detection": "false", config.PropProcessRoles: ""}
	if len(set) != len(want) {
		t.Fatalf("set %v, want %v", set, want)
	}
	for k, v := range want {
		if set[k] != v {
			t.Errorf("%s=%q, want %q (set %v)", k, set[k], v, set)
		}
	}
}

// TestJobsCoverTheRunnableCellsOnce: shards partition the runs of the
// cells that run; n/a cells have none.
func TestJobsCoverTheRunnableCellsOnce(t *testing.T) {
	p, err := NewPlan(&Spec{Scenarios: []string{"kip101-hw-lag", "kafka3410-halt"}, Versions: []string{"2.0", "4.0"}, Seeds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cells) != 4 || p.Cells[1].Status == StatusRan || p.Cells[3].Status != StatusRan {
		t.Fatalf("cells %+v", p.Cells)
	}
	all := p.Jobs(0, 0)
	if len(all) != 9 {
		t.Fatalf("%d jobs, want 3 runnable cells × 3 seeds", len(all))
	}
	seen := map[Job]int{}
	for i := 0; i < 4; i++ {
		for _, j := range p.Jobs(i, 4) {
			seen[j]++
		}
	}
	for _, j := range all {
		if seen[j] != 1 {
			t.Errorf("%v in %d shards", j, seen[j])
		}
	}
}

// TestConsumerSkipNeedsTheRecordInTheLog: a lost-write whose record the
// final committed log holds is a consumer skip (KIP-320's problem); one
// whose record the broker lost is not.
func TestConsumerSkipNeedsTheRecordInTheLog(t *testing.T) {
	f := checkers.Final{Partitions: []checkers.PartitionFinal{{Topic: "t", Partition: 0, Leader: 1, LeaderEpoch: 1,
		Replicas: []checkers.Replica{{ReplicaState: checkers.ReplicaState{Broker: 1, Alive: true, Role: checkers.Leader, LeaderEpoch: 1, LEO: 2, HW: 2},
			Log: []checkers.Entry{{Offset: 0, LeaderEpoch: 0, Value: "m1"}, {Offset: 1, LeaderEpoch: 1, Value: "m3"}}}}}}}
	if !inFinalLog(f, checkers.Anomaly{Topic: "t", Partition: 0, Value: "m3", Offsets: []int64{1}}) {
		t.Error("m3 at 1 is in the log: a skip")
	}
	if inFinalLog(f, checkers.Anomaly{Topic: "t", Partition: 0, Value: "m2", Offsets: []int64{1}}) {
		t.Error("m2 at 1 was replaced by m3: not a skip")
	}
}
