package checkers

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// deliver completes a Consume of proc delivering recs.
func (h *chist) deliver(proc string, from int64, recs ...Record) {
	id := h.r.Consume(h.tick(), proc, "g", proc, 1, "t", 0, from)
	h.r.Consumed(id, h.tick(), recs)
}

// TestFetchBoundMustFail: a record at or past the HW (read_committed: the
// LSO) its fetch response reported is read-beyond-hw / read-beyond-lso,
// never permitted, whatever the partition's facts.
func TestFetchBoundMustFail(t *testing.T) {
	unclean := Final{Facts: Facts{UncleanElections: []UncleanElection{{Topic: "t", Partition: 0, Time: 1}}}}
	for _, c := range []struct {
		name string
		recs []Record
		want string
	}{
		{"at the HW", []Record{{Offset: 0, Value: "a", HighWatermark: 2}, {Offset: 1, Value: "b", HighWatermark: 2}, {Offset: 2, Value: "c", HighWatermark: 2}}, "read-beyond-hw"},
		{"past the LSO", []Record{{Offset: 0, Value: "a", HighWatermark: 3, LastStableOffset: 1}, {Offset: 1, Value: "b", HighWatermark: 3, LastStableOffset: 1}}, "read-beyond-lso"},
	} {
		for _, f := range []Final{{}, unclean} {
			h := newCHist(AtLeastOnce)
			sends(h, 3)
			h.deliver("c1", 0, c.recs...)
			v := Consumers(h.r.Finish(h.tick()), f)
			if got := kinds(v); !strings.Contains(got, c.want) || strings.Contains(got, c.want+"(permitted)") {
				t.Errorf("%s: got %q, want %s (a bug)", c.name, got, c.want)
			}
		}
	}
}

// TestFetchBoundMustPass: records below their response's HW and LSO, a
// later response's higher HW, and bounds not recorded (0) are fine; so is a
// final reader's poll (Poll) that stays below.
func TestFetchBoundMustPass(t *testing.T) {
	h := newCHist(AtLeastOnce)
	sends(h, 4)
	h.deliver("c1", 0, Record{Offset: 0, Value: "a", HighWatermark: 1}, Record{Offset: 1, Value: "b"})
	h.deliver("c1", 2, Record{Offset: 2, Value: "c", HighWatermark: 4, LastStableOffset: 3}, Record{Offset: 3, Value: "d", HighWatermark: 4})
	id := h.r.Poll(h.tick(), "final-reader", "t", 0, 0)
	h.r.Polled(id, h.tick(), []Record{{Offset: 0, Value: "a", HighWatermark: 4}, {Offset: 3, Value: "d", HighWatermark: 4}})
	if v := Consumers(h.r.Finish(h.tick()), Final{}); v.Result != ResultOK {
		t.Errorf("%v", v)
	}
	h = newCHist(AtLeastOnce)
	id = h.r.Poll(h.tick(), "final-reader", "t", 0, 0)
	h.r.Polled(id, h.tick(), []Record{{Offset: 0, Value: "a", HighWatermark: 1}, {Offset: 1, Value: "b", HighWatermark: 1}})
	if got := kinds(Consumers(h.r.Finish(h.tick()), Final{})); !strings.Contains(got, "read-beyond-hw") {
		t.Errorf("a final read past the HW: got %q", got)
	}
}

// kip320Hist is consumer-truncation's history: c1 reads a..j (offsets
// 0..9, epoch 0) from b0; b1 is elected uncleanly at epoch 1 with a..e
// and takes k..t at 5..14; c1 then delivers from offset next on.
func kip320Hist(detection bool, next []Record) (History, Final) {
	h := &chist{r: NewRecorder()}
	h.r.Consumer(Consumer{Process: "c1", Group: "g", Semantics: AtLeastOnce, TruncationDetection: detection, AutoOffsetReset: "earliest"})
	vals := "abcdefghij"
	var first []Record
	for i := range 10 {
		h.send(vals[i:i+1], int64(i))
		first = append(first, Record{Offset: int64(i), Value: vals[i : i+1]})
	}
	h.assign("c1", 1)
	h.deliver("c1", 0, first...)
	log := []string{"a", "b", "c", "d", "e"}
	for i, v := range "klmnopqrst" {
		h.send(string(v), int64(5+i))
		log = append(log, string(v)+"@1")
	}
	h.deliver("c1", next[0].Offset, next...)
	f := final1(1, 1, Facts{UncleanElections: []UncleanElection{{Topic: "t", Partition: 0, Broker: 1, Epoch: 1, Time: h.t - 10*ms}}},
		replica(1, Leader, 1, int64(len(log)), log...))
	return h.r.Finish(h.tick()), f
}

// TestKIP320SkipMustFail: a KIP-320 consumer that fetched on from its
// old position after the leader change skipped new records of the new
// epoch below it: kip320-skip, a bug despite the unclean election.
func TestKIP320SkipMustFail(t *testing.T) {
	var next []Record
	for i, v := range "pqrst" {
		next = append(next, Record{Offset: int64(10 + i), Value: string(v), LeaderEpoch: 1, CurrentLeaderEpoch: 1})
	}
	h, f := kip320Hist(true, next)
	v := Consumers(h, f)
	got := kinds(v)
	if strings.Count(got, "kip320-skip") != 5 || strings.Contains(got, "kip320-skip(permitted)") {
		t.Fatalf("got %q, want 5 kip320-skip bugs (k..o at 5..9)", got)
	}
	for _, a := range v.Anomalies {
		if a.Kind == "kip320-skip" && !strings.Contains(a.Description, "KIP-320") {
			t.Errorf("evidence %q does not name KIP-320", a.Description)
		}
	}
}

// TestKIP320SkipMustPass: what KIP-320 cannot catch stays permitted.
func TestKIP320SkipMustPass(t *testing.T) {
	newEpoch := func(cur int32) []Record {
		var next []Record
		for i, v := range "pqrst" {
			next = append(next, Record{Offset: int64(10 + i), Value: string(v), LeaderEpoch: 1, CurrentLeaderEpoch: cur})
		}
		return next
	}
	for _, c := range []struct {
		name      string
		detection bool
		next      []Record
	}{
		// pre-KIP-320 (consumer-truncation/pre-kip320): it cannot tell.
		{"no truncation detection", false, newEpoch(1)},
		// No newer epoch between the two fetches: the consumer saw no
		// leader change (a leader given its old epoch again, a stale
		// follower): nothing to validate against.
		{"no leader change seen", true, newEpoch(0)},
	} {
		h, f := kip320Hist(c.detection, c.next)
		got := kinds(Consumers(h, f))
		if strings.Contains(got, "kip320-skip") || !strings.Contains(got, "lost-write(permitted)") {
			t.Errorf("%s: got %q, want permitted lost writes only", c.name, got)
		}
	}
	// The new leader's log of an older epoch runs past the position: b1
	// held epoch 0 records to offset 12 that c1 never saw (it read b0's
	// epoch 1 records at 5..9); KIP-320's end offset for epoch 1 on b1 is
	// 13, past the position, so no rewind. The skipped records are of an
	// older epoch than c1's last: permitted.
	h := &chist{r: NewRecorder()}
	h.r.Consumer(Consumer{Process: "c1", Group: "g", Semantics: AtLeastOnce, TruncationDetection: true})
	log := []string{"a", "b", "c", "d", "e"}
	for i, v := range "abcde" {
		h.send(string(v), int64(i))
	}
	for i, v := range "klmnopqr" {
		h.send(string(v), int64(5+i))
		log = append(log, string(v))
	}
	var first []Record
	for i, v := range "abcdefghij" {
		first = append(first, Record{Offset: int64(i), Value: string(v), LeaderEpoch: 1, CurrentLeaderEpoch: 1})
	}
	h.assign("c1", 1)
	h.deliver("c1", 0, first...)
	log = append(log, "s@2")
	h.send("s", 13)
	h.deliver("c1", 10, Record{Offset: 10, Value: "p", CurrentLeaderEpoch: 2}, Record{Offset: 11, Value: "q", CurrentLeaderEpoch: 2},
		Record{Offset: 12, Value: "r", CurrentLeaderEpoch: 2}, Record{Offset: 13, Value: "s", LeaderEpoch: 2, CurrentLeaderEpoch: 2})
	f := final1(1, 2, Facts{UncleanElections: []UncleanElection{{Topic: "t", Partition: 0, Broker: 1, Epoch: 2, Time: h.t - 5*ms}}},
		replica(1, Leader, 2, int64(len(log)), log...))
	if got := kinds(Consumers(h.r.Finish(h.tick()), f)); strings.Contains(got, "kip320-skip") {
		t.Errorf("older epoch past the position: got %q", got)
	}
}

// fetchCommitted records proc reading the group's committed offset.
func (h *chist) fetchCommitted(proc string, offset int64) {
	at := h.tick()
	h.r.FetchedCommitted(at, h.tick(), proc, "g", proc, 2, "t", 0, offset)
}

// TestLostCommitMustFail: a committed offset read below the last
// acknowledged commit, with no later commit of it, is lost-commit.
func TestLostCommitMustFail(t *testing.T) {
	for _, read := range []int64{4, -1} {
		h := newCHist(AtLeastOnce)
		h.commit("c1", 1, 4, true)
		h.commit("c1", 1, 9, true)
		h.fetchCommitted("c2", read)
		v := Groups(h.r.Finish(h.tick()), Final{})
		if got := kinds(v); got != "lost-commit" {
			t.Errorf("read %d: got %q, want lost-commit", read, got)
		}
	}
}

// TestLostCommitMustPass: the last acknowledged commit read back, a newer
// one, an older one a later (or unknown) commit wrote back, a commit
// acknowledged only after the read was sent, and a __consumer_offsets
// unclean election (permitted) or unfenced commits (permitted).
func TestLostCommitMustPass(t *testing.T) {
	cases := []struct {
		name  string
		build func(h *chist)
		want  string
	}{
		{"read back", func(h *chist) { h.commit("c1", 1, 9, true); h.fetchCommitted("c2", 9) }, ""},
		{"a newer commit", func(h *chist) { h.commit("c1", 1, 9, true); h.fetchCommitted("c2", 12) }, ""},
		{"a later commit of the older offset", func(h *chist) {
			h.commit("c1", 1, 9, true)
			h.commit("c2", 2, 4, true)
			h.fetchCommitted("c2", 4)
		}, "commit-backwards"},
		{"an unknown commit of it", func(h *chist) {
			h.commit("c1", 1, 9, true)
			id := h.r.Commit(h.tick(), "c2", "g", "c2", 2, "t", 0, 4)
			h.r.Info(id, h.tick(), "REQUEST_TIMED_OUT")
			h.fetchCommitted("c2", 4)
		}, ""},
		{"acknowledged after the read was sent", func(h *chist) {
			h.commit("c1", 1, 4, true)
			id := h.r.Commit(h.tick(), "c1", "g", "c1", 1, "t", 0, 9)
			sent := h.tick()
			h.r.Committed(id, h.tick())
			h.r.FetchedCommitted(sent, h.tick(), "c2", "g", "c2", 2, "t", 0, 4)
		}, ""},
	}
	for _, c := range cases {
		h := newCHist(AtLeastOnce)
		c.build(h)
		if got := kinds(Groups(h.r.Finish(h.tick()), Final{})); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	h := newCHist(AtLeastOnce)
	h.commit("c1", 1, 9, true)
	h.fetchCommitted("c2", 4)
	f := Final{Facts: Facts{UncleanElections: []UncleanElection{{Topic: "__consumer_offsets", Partition: 3, Time: sim.Time(1)}}}}
	if got := kinds(Groups(h.r.Finish(h.tick()), f)); got != "lost-commit(permitted)" {
		t.Errorf("__consumer_offsets unclean: got %q", got)
	}
	h = &chist{r: NewRecorder()}
	h.r.Consumer(Consumer{Process: "c1", Group: "g", Semantics: AtLeastOnce, UnfencedCommits: true})
	h.commit("c1", 1, 9, true)
	h.fetchCommitted("c1", 4)
	if got := kinds(Groups(h.r.Finish(h.tick()), Final{})); got != "lost-commit(permitted)" {
		t.Errorf("unfenced: got %q", got)
	}
}
