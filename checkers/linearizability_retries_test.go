package checkers

import (
	"strings"
	"testing"
	"time"
)

// TestRetriedRecordIsOneAppend: KIP-98's promise, as a served run's
// history shows it (each Produce request its own send). An idempotent
// producer's first attempt at m2 ends unknown (its connection closed, or
// NOT_ENOUGH_REPLICAS_AFTER_APPEND), its retry is acknowledged at the
// offset the leader had appended it at, and a read finds m2 there once:
// linearizable. So is a retry acknowledged twice at one offset (the
// broker answered the duplicate batch with the first one's offset), with
// a note; and a producer without idempotence whose retry wrote m2 again, a
// read finding it at two offsets. Two values acknowledged at one offset
// are still a violation: only attempts at one value are merged.
func TestRetriedRecordIsOneAppend(t *testing.T) {
	for _, c := range []struct {
		name string
		ops  []Op
		want Result
		note string
	}{
		{"an unknown attempt, then its retry acknowledged where the first landed", []Op{
			send(0, "p1", "m1", -1, 0, 1*ms, OK, 0),
			send(1, "p1", "m2", -1, 2*ms, 5*ms, Info, 0),
			send(2, "p1", "m2", -1, 6*ms, 7*ms, OK, 1),
			poll(3, "c1", 8*ms, 9*ms, 0, Record{Offset: 0, Value: "m1"}, Record{Offset: 1, Value: "m2"}),
		}, ResultOK, ""},
		{"a read of the first attempt's append before the retry was sent", []Op{
			send(0, "p1", "m2", -1, 0, 5*ms, Info, 0),
			poll(1, "c1", 2*ms, 3*ms, 0, Record{Offset: 0, Value: "m2"}),
			send(2, "p1", "m2", -1, 6*ms, 7*ms, OK, 0),
		}, ResultOK, ""},
		{"two acknowledgements at one offset", []Op{
			send(0, "p1", "m2", -1, 0, 4*ms, OK, 0),
			send(1, "p1", "m2", -1, 2*ms, 3*ms, OK, 0),
			poll(2, "c1", 5*ms, 6*ms, 0, Record{Offset: 0, Value: "m2"}),
		}, ResultOK, "1 acknowledgements of a value already acknowledged at the same offset count as one append"},
		{"a retry without idempotence that wrote the record twice", []Op{
			send(0, "p1", "m2", 1, 0, 4*ms, Info, 0),
			send(1, "p1", "m2", 1, 5*ms, 6*ms, OK, 1),
			poll(2, "c1", 7*ms, 8*ms, 0, Record{Offset: 0, Value: "m2"}, Record{Offset: 1, Value: "m2"}),
		}, ResultOK, ""},
		{"two values acknowledged at one offset", []Op{
			send(0, "p1", "m2", -1, 0, 1*ms, OK, 0),
			send(1, "p1", "m2", -1, 2*ms, 3*ms, OK, 0),
			send(2, "p2", "m3", -1, 4*ms, 5*ms, OK, 0),
			poll(3, "c1", 6*ms, 7*ms, 0, Record{Offset: 0, Value: "m3"}),
		}, ResultViolation, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Linearizability(History{Ops: c.ops}, Final{}, time.Second)
			mustResult(t, v, c.want)
			if c.note != "" && !strings.Contains(strings.Join(v.Notes, "\n"), c.note) {
				t.Errorf("notes %q, want one saying %q", v.Notes, c.note)
			}
		})
	}
}
