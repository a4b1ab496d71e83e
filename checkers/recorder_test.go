package checkers

import (
	"strings"
	"testing"
)

func TestRecorderBuildsHistory(t *testing.T) {
	r := NewRecorder()
	r.Producer(Producer{Process: "p1", MaxInFlight: 5, Retries: 3})
	r.Producer(Producer{Process: "p1", Idempotent: true, MaxInFlight: 5, Retries: 3})
	a := r.Send(1*ms, "p1", "t", 0, "k", "m1", -1)
	r.SetLeader(a, 2)
	r.SetProducerID(a, 7, 0, 0)
	b := r.Send(2*ms, "p1", "t", 0, "k", "m2", -1)
	c := r.Poll(3*ms, "c1", "t", 0, 0)
	d := r.ReadHW(3*ms, "c1", "t", 0)
	e := r.Send(4*ms, "p2", "t", 0, "", "m3", 0)
	r.Acked(a, 5*ms, 0)
	r.Fail(b, 6*ms, "NOT_ENOUGH_REPLICAS")
	r.Polled(c, 7*ms, []Record{{Offset: 0, Value: "m1"}})
	r.HW(d, 7*ms, 1)
	if r.Pending() != 1 {
		t.Fatalf("pending = %d, want 1", r.Pending())
	}
	h := r.Finish(9 * ms)
	if len(h.Ops) != 5 || r.Pending() != 0 {
		t.Fatalf("ops = %d, pending = %d", len(h.Ops), r.Pending())
	}
	if op := h.Ops[e]; op.Outcome != Info || op.Complete != 9*ms || op.Error != "pending at end" {
		t.Fatalf("unfinished send = %s", op)
	}
	if op := h.Ops[a]; op.Leader != 2 || op.ProducerID != 7 || op.Offset != 0 || op.Outcome != OK {
		t.Fatalf("acked send = %+v", op)
	}
	if got, want := h.Ops[a].String(), "#0 p1 send t-0 m1 acks=-1 [1.000ms,5.000ms] ok offset=0"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if got, want := h.Ops[c].String(), "#2 c1 poll t-0 from=0 [3.000ms,7.000ms] ok [0:m1]"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if p, ok := h.Producer("p1"); !ok || !p.Idempotent || len(h.Producers) != 1 {
		t.Fatalf("producer p1 = %+v, %v (%d declared)", p, ok, len(h.Producers))
	}
}

func TestRecorderPanicsOnMisuse(t *testing.T) {
	for name, f := range map[string]func(r *Recorder){
		"twice":     func(r *Recorder) { id := r.Send(0, "p", "t", 0, "", "v", 1); r.Acked(id, 1, 0); r.Acked(id, 2, 0) },
		"unknown":   func(r *Recorder) { r.Acked(3, 1, 0) },
		"backwards": func(r *Recorder) { id := r.Send(5, "p", "t", 0, "", "v", 1); r.Acked(id, 1, 0) },
		"wrongkind": func(r *Recorder) { id := r.Poll(0, "c", "t", 0, 0); r.Acked(id, 1, 0) },
		"nokind":    func(r *Recorder) { r.Invoke(Op{}) },
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.HasPrefix(p.(string), "checkers: ") {
					t.Errorf("%s: panic = %v, want a checkers: message", name, p)
				}
			}()
			f(NewRecorder())
		}()
	}
}
