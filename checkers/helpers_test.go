package checkers

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

const ms = sim.Time(sim.Millisecond)

// entries builds a log from "value@epoch" or "value" (epoch 0) strings.
func entries(vals ...string) []Entry {
	out := make([]Entry, len(vals))
	for i, v := range vals {
		e := Entry{Offset: int64(i), Value: v}
		if at := strings.IndexByte(v, '@'); at >= 0 {
			e.Value = v[:at]
			e.LeaderEpoch = int32(v[at+1] - '0')
		}
		out[i] = e
	}
	return out
}

// replica builds a live replica whose LEO is its log length.
func replica(broker int32, role Role, epoch int32, hw int64, vals ...string) Replica {
	return Replica{ReplicaState: ReplicaState{Broker: broker, Alive: true, Role: role, LeaderEpoch: epoch,
		LEO: int64(len(vals)), HW: hw}, Log: entries(vals...)}
}

func dead(r Replica) Replica { r.Alive = false; return r }

// final1 builds a Final with one partition t-0.
func final1(leader, epoch int32, facts Facts, rs ...Replica) Final {
	return Final{Partitions: []PartitionFinal{{Topic: "t", Partition: 0, Leader: leader, LeaderEpoch: epoch, Replicas: rs}}, Facts: facts}
}

// send returns a finished send op for hand-written histories.
func send(index int, process, value string, acks int16, invoke, complete sim.Time, out Outcome, offset int64) Op {
	return Op{Index: index, Process: process, Kind: Send, Topic: "t", Partition: 0, Value: value, Acks: acks,
		Leader: -1, Invoke: invoke, Complete: complete, Outcome: out, Offset: offset}
}

func poll(index int, process string, invoke, complete sim.Time, from int64, recs ...Record) Op {
	return Op{Index: index, Process: process, Kind: Poll, Topic: "t", Partition: 0, FetchOffset: from,
		Invoke: invoke, Complete: complete, Outcome: OK, Records: recs, Leader: -1}
}

func mustResult(t *testing.T, v Verdict, want Result) {
	t.Helper()
	if v.Result != want {
		t.Fatalf("%s: result %s, want %s\n%s", v.Checker, v.Result, want, v)
	}
}

// onlyAnomaly returns the verdict's single anomaly, failing otherwise.
func onlyAnomaly(t *testing.T, v Verdict) Anomaly {
	t.Helper()
	if len(v.Anomalies) != 1 {
		t.Fatalf("%s: %d anomalies, want 1\n%s", v.Checker, len(v.Anomalies), v)
	}
	return v.Anomalies[0]
}
