package checkers

import (
	"strings"
	"testing"
)

// compactedRun: keys k1, k2, k1, k3 acknowledged at offsets 0..3; the
// cleaner removed offset 0 (k1, superseded by offset 2) and, wrongly,
// offset 1 (k2, the key's only record) from the final log.
func compactedRun(compacted bool) (History, Final) {
	h := History{Ops: []Op{
		send(0, "p1", "a", -1, 0, ms, OK, 0),
		send(1, "p1", "b", -1, 2*ms, 3*ms, OK, 1),
		send(2, "p1", "c", -1, 4*ms, 5*ms, OK, 2),
		send(3, "p1", "d", -1, 6*ms, 7*ms, OK, 3),
	}}
	for i, k := range []string{"k1", "k2", "k1", "k3"} {
		h.Ops[i].Key = k
	}
	r := Replica{ReplicaState: ReplicaState{Broker: 0, Alive: true, Role: Leader, LeaderEpoch: 0, LEO: 4, HW: 4},
		Log: []Entry{{Offset: 2, Value: "c", Key: "k1"}, {Offset: 3, Value: "d", Key: "k3"}}}
	f := final1(0, 0, Facts{ReplicationFactor: 1, MinInsyncReplicas: 1}, r)
	f.Partitions[0].Compacted = compacted
	return h, f
}

// TestAckedLossExcusesCompaction: on a compacted partition a keyed record
// whose key has a later committed record may be gone (Kafka's log
// compaction keeps the latest record of each key); a record whose key has
// none is lost all the same, and without compaction both are lost.
func TestAckedLossExcusesCompaction(t *testing.T) {
	h, f := compactedRun(true)
	v := AckedLoss(h, f)
	a := onlyAnomaly(t, v)
	if a.Kind != "lost" || a.Value != "b" {
		t.Fatalf("anomaly %s: want b (key k2, no later record) lost", a)
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "1 acknowledged keyed sends removed by log compaction") {
		t.Errorf("notes %q: want the compaction count", v.Notes)
	}
	h, f = compactedRun(false)
	if v := AckedLoss(h, f); len(v.Anomalies) != 2 {
		t.Fatalf("not compacted: %d anomalies, want a and b lost:\n%s", len(v.Anomalies), v)
	}
}
