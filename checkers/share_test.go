package checkers

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// shareRun builds share histories: one topic t, one partition, group g.
type shareRun struct {
	rec  *Recorder
	vals map[int64]string
}

func newShareRun(drained bool) *shareRun {
	r := &shareRun{rec: NewRecorder(), vals: map[int64]string{}}
	r.rec.ShareGroup(ShareGroup{Group: "g", Topics: []string{"t"}, DeliveryCountLimit: 3, LockDuration: sim.Duration(100 * ms),
		AutoOffsetReset: "earliest", Drained: drained})
	return r
}

func (r *shareRun) send(at sim.Time, value string, offset int64) {
	id := r.rec.Send(at, "p1", "t", 0, "", value, -1)
	r.rec.Acked(id, at+ms, offset)
	r.vals[offset] = value
}

// fetch records member's ShareFetch over [at, at+1ms] acquiring offset
// with delivery count n.
func (r *shareRun) fetch(at sim.Time, member string, offset int64, n int16) {
	id := r.rec.ShareFetch(at, member, "g", member, "t", 0)
	r.rec.ShareAcquired(id, at+ms, []Record{{Offset: offset, Value: r.vals[offset], DeliveryCount: n}})
}

func (r *shareRun) ack(at sim.Time, member string, offset int64, typ int8, ok bool) {
	id := r.rec.ShareAcknowledge(at, member, "g", member, "t", 0, typ, []int64{offset})
	if ok {
		r.rec.ShareAcked(id, at+ms)
	} else {
		r.rec.Fail(id, at+ms, "INVALID_RECORD_STATE")
	}
}

func (r *shareRun) check(t *testing.T, f Final) Verdict {
	t.Helper()
	v := Share(r.rec.Finish(sec), f)
	t.Log(v)
	return v
}

func wantShare(t *testing.T, v Verdict, kind string, permitted bool) {
	t.Helper()
	for _, a := range v.Anomalies {
		if a.Kind == kind {
			if a.Permitted != permitted {
				t.Fatalf("%s: permitted=%v, want %v: %s", kind, a.Permitted, permitted, a)
			}
			return
		}
	}
	t.Fatalf("no %s anomaly in %s", kind, v)
}

// A clean history: m0 accepted at once; m1's lock expires on c1, c2 gets
// it at delivery 2 and accepts; m2 is released three times and archived at
// the limit; m3 is rejected. Passes, and the note counts the outcomes.
func TestShareCleanHistoryPasses(t *testing.T) {
	r := newShareRun(true)
	for i, v := range []string{"m0", "m1", "m2", "m3"} {
		r.send(sim.Time(i)*ms, v, int64(i))
	}
	r.fetch(10*ms, "c1", 0, 1)
	r.ack(12*ms, "c1", 0, AckAccept, true)
	r.fetch(20*ms, "c1", 1, 1)
	r.fetch(150*ms, "c2", 1, 2) // c1's 100ms lock expired
	r.ack(152*ms, "c2", 1, AckAccept, true)
	for n := int16(1); n <= 3; n++ {
		at := sim.Time(200+10*int(n)) * ms
		r.fetch(at, "c1", 2, n)
		r.ack(at+2*ms, "c1", 2, AckRelease, true)
	}
	r.fetch(300*ms, "c2", 3, 1)
	r.ack(302*ms, "c2", 3, AckReject, true)
	v := r.check(t, Final{})
	if v.Result != ResultOK {
		t.Fatalf("want ok, got %s", v)
	}
	if want := "4 acknowledged records owed, 7 deliveries; 2 accepted, 1 rejected, 1 archived at the delivery limit (3), 2 redelivered, 0 never delivered, 0 unfinished"; !strings.Contains(v.Notes[0], want) {
		t.Fatalf("note %q, want %q", v.Notes[0], want)
	}
}

// KIP-932: every acknowledged record is delivered at least once.
func TestShareLostRecord(t *testing.T) {
	r := newShareRun(true)
	r.send(0, "m0", 0)
	r.send(ms, "m1", 1)
	r.fetch(10*ms, "c1", 0, 1)
	r.ack(12*ms, "c1", 0, AckAccept, true)
	v := r.check(t, Final{})
	wantShare(t, v, "share-lost", false)

	// Not drained: only counted.
	r2 := newShareRun(false)
	r2.send(0, "m0", 0)
	if v := r2.check(t, Final{}); v.Result != ResultOK || !strings.Contains(v.Notes[0], "1 never delivered") {
		t.Fatalf("undrained: want ok with the count, got %s", v)
	}
}

// An unclean election of t-0 permits losing the record itself.
func TestShareLostRecordPermittedByUncleanElection(t *testing.T) {
	r := newShareRun(true)
	r.send(0, "m0", 0)
	f := Final{Facts: Facts{UncleanElections: []UncleanElection{{Topic: "t", Partition: 0, Broker: 1, Epoch: 2, Time: 50 * ms}}}}
	wantShare(t, r.check(t, f), "share-lost", true)
}

// A record released below the limit and never delivered again.
func TestShareUnfinished(t *testing.T) {
	r := newShareRun(true)
	r.send(0, "m0", 0)
	r.fetch(10*ms, "c1", 0, 1)
	r.ack(12*ms, "c1", 0, AckRelease, true)
	wantShare(t, r.check(t, Final{}), "share-unfinished", false)
}

// KIP-932: delivery counts never exceed group.share.delivery.count.limit.
func TestShareOverLimit(t *testing.T) {
	r := newShareRun(true)
	r.send(0, "m0", 0)
	for n := int16(1); n <= 4; n++ {
		at := sim.Time(10*int(n)) * ms
		r.fetch(at, "c1", 0, n)
		r.ack(at+2*ms, "c1", 0, AckRelease, true)
	}
	wantShare(t, r.check(t, Final{}), "share-over-limit", false)
}

// Every delivery is counted; a state reload between permits a repeat.
func TestShareUncounted(t *testing.T) {
	r := newShareRun(false)
	r.send(0, "m0", 0)
	r.fetch(10*ms, "c1", 0, 1)
	r.ack(12*ms, "c1", 0, AckRelease, true)
	r.fetch(20*ms, "c1", 0, 1)
	wantShare(t, r.check(t, Final{}), "share-uncounted", false)

	r = newShareRun(false)
	r.send(0, "m0", 0)
	r.fetch(10*ms, "c1", 0, 1)
	r.rec.ShareLoad(ShareLoad{Time: 15 * ms, Broker: 2, Group: "g", Topic: "t", Partition: 0, StateEpoch: 1})
	r.fetch(200*ms, "c2", 0, 1)
	wantShare(t, r.check(t, Final{}), "share-uncounted", true)
}

// No record held by two members under a live lock.
func TestShareDoubleHold(t *testing.T) {
	r := newShareRun(false)
	r.send(0, "m0", 0)
	r.fetch(10*ms, "c1", 0, 1)
	r.fetch(50*ms, "c2", 0, 2) // c1's lock runs to >= 110ms
	wantShare(t, r.check(t, Final{}), "share-double-hold", false)

	// c1 released it first: fine. So is a failed release? No: a failed
	// acknowledgement released nothing.
	for _, ok := range []bool{true, false} {
		r = newShareRun(false)
		r.send(0, "m0", 0)
		r.fetch(10*ms, "c1", 0, 1)
		r.ack(20*ms, "c1", 0, AckRelease, ok)
		r.fetch(50*ms, "c2", 0, 2)
		v := r.check(t, Final{})
		if ok && v.Result != ResultOK {
			t.Fatalf("released first: want ok, got %s", v)
		}
		if !ok {
			wantShare(t, v, "share-double-hold", false)
		}
	}
	// c1 left (its session closed): fine.
	r = newShareRun(false)
	r.send(0, "m0", 0)
	r.fetch(10*ms, "c1", 0, 1)
	r.rec.ShareLeft(20*ms, "c1", "g", "c1")
	r.fetch(50*ms, "c2", 0, 2)
	if v := r.check(t, Final{}); v.Result != ResultOK {
		t.Fatalf("left first: want ok, got %s", v)
	}
}

// No record acknowledged twice as ACCEPT; none delivered after its ACCEPT.
func TestShareAcceptTwiceAndRedelivery(t *testing.T) {
	r := newShareRun(false)
	r.send(0, "m0", 0)
	r.fetch(10*ms, "c1", 0, 1)
	r.ack(12*ms, "c1", 0, AckAccept, true)
	r.fetch(200*ms, "c2", 0, 2)
	r.ack(202*ms, "c2", 0, AckAccept, true)
	v := r.check(t, Final{})
	wantShare(t, v, "share-accept-twice", false)
	wantShare(t, v, "share-redelivered-after-accept", false)

	// A failed second ACCEPT is Kafka answering INVALID_RECORD_STATE: fine
	// for accept-twice.
	r = newShareRun(false)
	r.send(0, "m0", 0)
	r.fetch(10*ms, "c1", 0, 1)
	r.ack(12*ms, "c1", 0, AckAccept, true)
	r.ack(20*ms, "c1", 0, AckAccept, false)
	if v := r.check(t, Final{}); v.Result != ResultOK {
		t.Fatalf("want ok, got %s", v)
	}
}

// A recovered state keeps every acceptance acknowledged before it, unless
// __share_group_state lost its ISR's data.
func TestShareLostAcceptance(t *testing.T) {
	build := func() *shareRun {
		r := newShareRun(false)
		r.send(0, "m0", 0)
		r.send(ms, "m1", 1)
		r.fetch(10*ms, "c1", 0, 1)
		r.ack(12*ms, "c1", 0, AckAccept, true)
		r.fetch(20*ms, "c1", 1, 1)
		r.ack(22*ms, "c1", 1, AckAccept, true)
		return r
	}
	r := build()
	r.rec.ShareLoad(ShareLoad{Time: 50 * ms, Broker: 2, Group: "g", Topic: "t", Partition: 0, StateEpoch: 1, StartOffset: 1})
	wantShare(t, r.check(t, Final{}), "share-lost-acceptance", false)

	r = build()
	r.rec.ShareLoad(ShareLoad{Time: 50 * ms, Broker: 2, Group: "g", Topic: "t", Partition: 0, StateEpoch: 1, StartOffset: 1,
		Batches: []ShareStateBatch{{FirstOffset: 1, LastOffset: 1, DeliveryState: ShareStateAcknowledged, DeliveryCount: 1}}})
	if v := r.check(t, Final{}); v.Result != ResultOK {
		t.Fatalf("state kept: want ok, got %s", v)
	}

	r = build()
	r.rec.ShareLoad(ShareLoad{Time: 50 * ms, Broker: 2, Group: "g", Topic: "t", Partition: 0, StateEpoch: 1})
	f := Final{Facts: Facts{UncleanElections: []UncleanElection{{Topic: "__share_group_state", Partition: 3, Broker: 2, Epoch: 1, Time: 40 * ms}}}}
	wantShare(t, r.check(t, f), "share-lost-acceptance", true)
}

// Without share groups the checker does not apply.
func TestShareNotJudgedWithout(t *testing.T) {
	if v := Share(History{}, Final{}); !v.NotJudged {
		t.Fatalf("want not judged, got %s", v)
	}
}

// A loss of share state excuses only what follows it: an unclean election
// of __share_group_state before the second ACCEPT permits it, one after
// does not.
func TestShareStateLossExcusesOnlyLater(t *testing.T) {
	for _, c := range []struct {
		at        sim.Time
		permitted bool
	}{{100 * ms, true}, {500 * ms, false}} {
		r := newShareRun(false)
		r.send(0, "m0", 0)
		r.fetch(10*ms, "c1", 0, 1)
		r.ack(12*ms, "c1", 0, AckAccept, true)
		r.fetch(200*ms, "c2", 0, 1)
		r.ack(202*ms, "c2", 0, AckAccept, true)
		f := Final{Facts: Facts{UncleanElections: []UncleanElection{{Topic: "__share_group_state", Partition: 0, Broker: 1, Epoch: 1, Time: c.at}}}}
		v := r.check(t, f)
		wantShare(t, v, "share-accept-twice", c.permitted)
		wantShare(t, v, "share-redelivered-after-accept", c.permitted)
	}
}

// ShareUnfinished counts what the end phase still waits for: a record
// never delivered or not finished, and a send still pending.
func TestShareUnfinishedCounts(t *testing.T) {
	r := newShareRun(true)
	g := ShareGroup{Group: "g", Topics: []string{"t"}, DeliveryCountLimit: 3, AutoOffsetReset: "earliest"}
	r.send(0, "m0", 0)
	r.send(ms, "m1", 1)
	pending := r.rec.Send(2*ms, "p1", "t", 0, "", "m2", -1)
	if n := ShareUnfinished(r.rec.History(), g); n != 3 {
		t.Fatalf("before any delivery: %d unfinished, want 3 (two owed, one pending)", n)
	}
	r.fetch(10*ms, "c1", 0, 1)
	ack := r.rec.ShareAcknowledge(12*ms, "c1", "g", "c1", "t", 0, AckAccept, []int64{0})
	if n := ShareUnfinished(r.rec.History(), g); n != 3 {
		t.Fatalf("with m0's ACCEPT pending: %d unfinished, want 3 (a pending acknowledgement may yet be refused)", n)
	}
	r.rec.ShareAcked(ack, 13*ms)
	r.fetch(20*ms, "c1", 1, 3) // at the limit: archived once released
	r.rec.Acked(pending, 30*ms, 2)
	r.vals[2] = "m2"
	if n := ShareUnfinished(r.rec.History(), g); n != 1 {
		t.Fatalf("after: %d unfinished, want 1 (m2, never delivered)", n)
	}
}

// A delivery served by a deposed leader (a zombie: the controller had
// elected another) may hand out an accepted record again: permitted; the
// same from the elected leader is not.
func TestShareZombieLeaderDelivery(t *testing.T) {
	for _, c := range []struct {
		served    int32
		permitted bool
	}{{1, true}, {2, false}} {
		r := newShareRun(false)
		r.send(0, "m0", 0)
		r.fetch(10*ms, "c1", 0, 1)
		r.ack(12*ms, "c1", 0, AckAccept, true)
		id := r.rec.ShareFetch(200*ms, "c2", "g", "c2", "t", 0)
		r.rec.SetLeader(id, c.served)
		r.rec.ShareAcquired(id, 201*ms, []Record{{Offset: 0, Value: "m0", DeliveryCount: 1}})
		f := Final{Facts: Facts{ISRChanges: []ISRChange{
			{Topic: "t", Partition: 0, Time: 0, ISR: []int32{1, 2}, Leader: 1, LeaderEpoch: 0},
			{Topic: "t", Partition: 0, Time: 100 * ms, ISR: []int32{2}, Leader: 2, LeaderEpoch: 1}}}}
		v := r.check(t, f)
		wantShare(t, v, "share-redelivered-after-accept", c.permitted)
		wantShare(t, v, "share-uncounted", c.permitted)
	}
}
