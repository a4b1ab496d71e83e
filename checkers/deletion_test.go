package checkers

import (
	"strings"
	"testing"
)

// deletedRecordsRun: a, b, c, d acknowledged at offsets 0..3; the final
// log starts at offset 2 (DeleteRecords moved the log start to 2 when
// deleted is set) and lacks d (lost either way).
func deletedRecordsRun(deleted bool) (History, Final) {
	h := History{Ops: []Op{
		send(0, "p1", "a", -1, 0, ms, OK, 0),
		send(1, "p1", "b", -1, 2*ms, 3*ms, OK, 1),
		send(2, "p1", "c", -1, 4*ms, 5*ms, OK, 2),
		send(3, "p1", "d", -1, 6*ms, 7*ms, OK, 3),
	}}
	r := Replica{ReplicaState: ReplicaState{Broker: 0, Alive: true, Role: Leader, LeaderEpoch: 0, LEO: 3, HW: 3},
		Log: []Entry{{Offset: 2, Value: "c"}}}
	f := final1(0, 0, Facts{ReplicationFactor: 1, MinInsyncReplicas: 1}, r)
	if deleted {
		f.Partitions[0].DeletedBelow = 2
	}
	return h, f
}

// DeleteRecords permits exactly the records below the new log start to
// be gone: a and b are deleted by request, d (above it) is still lost;
// without the fact all three are lost.
func TestAckedLossExcusesDeleteRecords(t *testing.T) {
	h, f := deletedRecordsRun(true)
	v := AckedLoss(h, f)
	if a := onlyAnomaly(t, v); a.Kind != "lost" || a.Value != "d" {
		t.Fatalf("anomaly %s: want d lost", a)
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "2 acknowledged sends below the log start offset DeleteRecords set") {
		t.Errorf("notes %q: want the deleted count", v.Notes)
	}
	h, f = deletedRecordsRun(false)
	if v := AckedLoss(h, f); len(v.Anomalies) != 3 {
		t.Fatalf("no DeleteRecords: %d anomalies, want a, b and d lost:\n%s", len(v.Anomalies), v)
	}
}

// A topic deleted at 10ms and created again: the operations invoked
// before the deletion are set aside (the old incarnation's a and b are
// not in the new log), those after are judged against the new log (e at
// offset 0 is there; f, acknowledged at offset 1, is lost).
func TestSetAsideDeleted(t *testing.T) {
	h := History{Ops: []Op{
		send(0, "p1", "a", -1, 0, ms, OK, 0),
		send(1, "p1", "b", -1, 2*ms, 3*ms, OK, 1),
		poll(2, "c1", 4*ms, 5*ms, 0, Record{Offset: 0, Value: "a"}, Record{Offset: 1, Value: "b"}),
		send(3, "p1", "e", -1, 12*ms, 13*ms, OK, 0),
		send(4, "p1", "f", -1, 14*ms, 15*ms, OK, 1),
	}}
	f := final1(0, 0, Facts{ReplicationFactor: 1, MinInsyncReplicas: 1}, replica(0, Leader, 0, 1, "e"))
	if v := AckedLoss(h, f); len(v.Anomalies) != 3 {
		t.Fatalf("without the deletion: %d anomalies, want a, b and f lost:\n%s", len(v.Anomalies), v)
	}
	f.Partitions[0].DeletedAt = 10 * ms
	kept, note := SetAsideDeleted(h, f)
	if len(kept.Ops) != 2 || kept.Ops[0].Value != "e" || kept.Ops[0].Index != 0 || kept.Ops[1].Index != 1 {
		t.Fatalf("kept %+v", kept.Ops)
	}
	if !strings.HasPrefix(note, "3 operations on topics deleted") {
		t.Errorf("note %q", note)
	}
	v := AckedLoss(kept, f)
	if a := onlyAnomaly(t, v); a.Value != "f" {
		t.Fatalf("anomaly %s: want f lost", a)
	}
	mustResult(t, Linearizability(kept, f, 0), ResultOK)
	// No deletion: the history itself.
	f.Partitions[0].DeletedAt = 0
	if same, note := SetAsideDeleted(h, f); len(same.Ops) != len(h.Ops) || note != "" {
		t.Errorf("nothing deleted: %d ops, note %q", len(same.Ops), note)
	}
}

// Forgetting, as a served run goes, the operations a deletion sets aside
// (Recorder.Forget) ends in the history and the note that setting them
// aside at the end gives: the same operations, numbered alike, the same
// count. A pending operation is kept until it completes, and ids handed
// out before stay valid.
func TestForgetDeletedAsItGoes(t *testing.T) {
	record := func(forget bool) (*Recorder, History) {
		r := NewRecorder()
		a := r.Send(0, "p1", "t", 0, "", "a", -1)
		r.Acked(a, ms, 0)
		b := r.Send(2*ms, "p1", "t", 0, "", "b", -1) // in flight across the deletion
		c := r.Poll(4*ms, "c1", "t", 0, 0)
		r.Polled(c, 5*ms, []Record{{Offset: 0, Value: "a"}})
		if forget {
			drop := func(op *Op) bool { return op.Invoke < 10*ms }
			if n := r.Forget(drop); n != 2 {
				t.Fatalf("forgot %d, want a's send and the poll (b is pending)", n)
			}
		}
		r.Acked(b, 11*ms, 1)
		e := r.Send(12*ms, "p1", "t", 0, "", "e", -1)
		r.SetLeader(e, 0)
		r.Send(14*ms, "p1", "t", 0, "", "f", -1) // pending at the end
		r.Acked(e, 13*ms, 0)
		return r, r.Finish(20 * ms)
	}
	fin := final1(0, 0, Facts{ReplicationFactor: 1, MinInsyncReplicas: 1}, replica(0, Leader, 0, 1, "e"))
	fin.Partitions[0].DeletedAt = 10 * ms
	_, whole := record(false)
	want, wantNote := SetAsideDeleted(whole, fin)
	r, rest := record(true)
	got, note := SetAsideDeletedAfter(rest, fin, r.Forgotten())
	if r.Forgotten() != 2 || note != wantNote || !strings.HasPrefix(note, "3 operations") {
		t.Errorf("forgotten %d, note %q, want 2 and %q", r.Forgotten(), note, wantNote)
	}
	if len(got.Ops) != len(want.Ops) {
		t.Fatalf("kept %v, want %v", got.Ops, want.Ops)
	}
	for i := range got.Ops {
		if got.Ops[i].String() != want.Ops[i].String() {
			t.Errorf("op %d: %s, want %s", i, got.Ops[i], want.Ops[i])
		}
	}
}
