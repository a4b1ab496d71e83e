package txn

import (
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"pgregory.net/rapid"
)

// TestCoordinatorUnderFaults drives two transactional ids with random
// requests while appends are delivered late, out of order or failed,
// markers are delivered late, time passes (timeouts) and the coordinator
// fails over (resign, then load from the committed log). It checks what
// must hold whatever happens:
//   - no transition outside Kafka's table (the coordinator panics);
//   - a producer's epoch never goes down, nor its producer id back;
//   - every markers request carries the epoch of a committed Prepare*
//     record with the same partitions, and is sent only after it is
//     committed;
//   - once everything in flight is done, a coordinator loaded from the
//     log holds what the live one holds.
func TestCoordinatorUnderFaults(t *testing.T) {
	var runs, withMarkers, withCompletes int
	defer func() {
		t.Logf("%d runs, %d sent markers, %d completed a transaction", runs, withMarkers, withCompletes)
		if runs > 20 && (withMarkers == 0 || withCompletes == 0) {
			t.Fatal("the generator never reaches markers or Complete*")
		}
	}()
	rapid.Check(t, func(rt *rapid.T) {
		runs++
		tv := int16(rapid.IntRange(1, 2).Draw(rt, "tv"))
		h := newHarness(t, testConfig(tv), false)
		ids := []string{"x", "y"}
		p := h.c.PartitionFor("x")
		if h.c.PartitionFor("y") != p {
			ids = []string{"x", "x2"} // keep both on one partition
		}
		h.lead(p)
		last := map[string][2]int64{}
		checkMonotonic := func() {
			for _, id := range ids {
				m, ok := h.c.Transaction(id)
				if !ok {
					continue
				}
				prev, seen := last[id]
				if seen && m.ProducerID == prev[0] && int64(m.ProducerEpoch) < prev[1] {
					rt.Fatalf("%s: epoch went from %d to %d", id, prev[1], m.ProducerEpoch)
				}
				last[id] = [2]int64{m.ProducerID, int64(m.ProducerEpoch)}
			}
		}
		for _, id := range ids { // a start every run shares: both ids initialised
			h.init(id, 60000, 4, -1, -1)
			h.drain()
		}
		steps := rapid.IntRange(10, 80).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			id := ids[rapid.IntRange(0, 1).Draw(rt, "id")]
			m, _ := h.c.Transaction(id)
			epoch := m.ProducerEpoch - int16(rapid.IntRange(0, 1).Draw(rt, "stale"))
			switch rapid.IntRange(0, 12).Draw(rt, "op") {
			case 0:
				h.init(id, int32(rapid.SampledFrom([]int{1000, 60000}).Draw(rt, "timeout")), 4, -1, -1)
			case 1, 9:
				h.add(id, m.ProducerID, epoch, tp("a", int32(rapid.IntRange(0, 2).Draw(rt, "p"))))
			case 2, 10:
				h.end(id, m.ProducerID, epoch, rapid.Bool().Draw(rt, "commit"), int16(rapid.SampledFrom([]int{3, 5}).Draw(rt, "v")))
			case 3, 4, 11, 12:
				if len(h.appends) > 0 {
					k := rapid.IntRange(0, len(h.appends)-1).Draw(rt, "append")
					var err *kerr.Error
					if rapid.IntRange(0, 5).Draw(rt, "fail") == 0 {
						err = kerr.NotEnoughReplicas
					}
					h.deliverAppend(k, err)
				}
			case 5:
				if len(h.markers) > 0 {
					h.deliverMarkers(rapid.IntRange(0, len(h.markers)-1).Draw(rt, "markers"))
				}
			case 6:
				h.now = h.now.Add(sim.Duration(rapid.IntRange(1, 12).Draw(rt, "secs")) * sim.Second)
				h.c.Tick(h.now)
			case 7:
				if rapid.IntRange(0, 3).Draw(rt, "failover") == 0 {
					h.c.Resign(h.now, p)
					h.appends, h.markers = nil, nil // the old leadership's writes never commit
					h.lead(p)
					last = map[string][2]int64{} // a reload may forget an unwritten epoch
				}
			case 8:
				h.c.Tick(h.now.Add(200 * sim.Millisecond))
			}
			checkMonotonic()
			checkMarkers(rt, h)
		}
		// Let everything finish; retries of a failed Complete* are ticked.
		for k := 0; k < 50 && (len(h.appends) > 0 || len(h.markers) > 0 || hasRetry(h)); k++ {
			h.drain()
			h.now = h.now.Add(sim.Second)
			h.c.Tick(h.now)
		}
		for _, id := range ids {
			if m, ok := h.c.Transaction(id); ok {
				checkReplayID(rt, h, id)
				if m.State == CompleteCommit || m.State == CompleteAbort {
					withCompletes++
				}
			}
		}
		if len(h.sent) > 0 {
			withMarkers++
		}
	})
}

func hasRetry(h *harness) bool {
	for _, id := range h.c.ids() {
		if h.c.txns[id].completeRetry != 0 {
			return true
		}
	}
	return false
}

// checkMarkers: each markers request matches a committed Prepare* record.
func checkMarkers(rt *rapid.T, h *harness) {
	for _, mk := range h.sent {
		found := false
		for _, recs := range h.log {
			for _, r := range recs {
				id, m, err := Decode(r)
				if err != nil {
					rt.Fatal(err)
				}
				if m != nil && id == mk.TransactionalID && m.State.preparing() && m.ProducerEpoch == mk.ProducerEpoch &&
					(m.State == PrepareCommit) == mk.Commit && len(m.TopicPartitions) == len(mk.Partitions) {
					found = true
				}
			}
		}
		if !found {
			rt.Fatalf("markers %+v without a committed Prepare record", mk)
		}
	}
}

func checkReplayID(rt *rapid.T, h *harness, id string) {
	p := h.c.PartitionFor(id)
	c := New(h.c.cfg, h.c.env)
	c.BecomeLeader(h.now, p)
	if err := c.Load(h.now, p, h.log[p]); err != nil {
		rt.Fatal(err)
	}
	live, _ := h.c.Transaction(id)
	got, ok := c.Transaction(id)
	if !ok {
		if live.ProducerEpoch == NoProducerEpoch {
			return // created in memory, its first write failed
		}
		rt.Fatalf("replay lost %s", live.String())
	}
	live.LastProducerEpoch, got.LastProducerEpoch = 0, 0
	if live.String() != got.String() {
		rt.Fatalf("replayed %s, live %s", got.String(), live.String())
	}
}
