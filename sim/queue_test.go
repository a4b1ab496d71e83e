package sim

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestQueuePopsInOrder is the event heap's property test: whatever the
// pushes, pops and rebuilds, events come out by (at, seq), as a sort
// gives them.
func TestQueuePopsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var q queue
	var model []key
	seq := uint64(0)
	for step := 0; step < 20000; step++ {
		switch k := r.IntN(10); {
		case k < 6:
			seq++
			e := key{at: Time(r.IntN(50)), seq: seq}
			q.push(e)
			model = append(model, e)
		case k < 9:
			if len(q) == 0 {
				continue
			}
			slices.SortFunc(model, func(a, b key) int {
				if before(&a, &b) {
					return -1
				}
				return 1
			})
			got := q.pop()
			if got.at != model[0].at || got.seq != model[0].seq {
				t.Fatalf("step %d: popped (%d, %d), want (%d, %d)", step, got.at, got.seq, model[0].at, model[0].seq)
			}
			model = model[1:]
		default:
			r.Shuffle(len(q), func(i, j int) { q[i], q[j] = q[j], q[i] })
			q.init()
		}
	}
}

// TestEventsPopInOrder is TestQueuePopsInOrder for the two-heap queue:
// events near and far from now, compactions and all, come out by (at, seq),
// each with its own payload (slots are reused).
func TestEventsPopInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var q events
	var model []event
	now, seq := Time(0), uint64(0)
	for step := 0; step < 20000; step++ {
		switch k := r.IntN(20); {
		case k < 11:
			seq++
			d := Duration(r.IntN(3)) * Millisecond
			if r.IntN(3) == 0 {
				d = Duration(r.IntN(4)) * farHorizon
			}
			e := event{at: now.Add(d), seq: seq, name: "e" + strconv.FormatUint(seq, 10)}
			q.push(e, now)
			model = append(model, e)
		case k < 19:
			if q.len() == 0 {
				continue
			}
			slices.SortFunc(model, func(a, b event) int {
				if a.at < b.at || a.at == b.at && a.seq < b.seq {
					return -1
				}
				return 1
			})
			if q.next() != model[0].at {
				t.Fatalf("step %d: next %d, want %d", step, q.next(), model[0].at)
			}
			got := q.pop()
			if got.at != model[0].at || got.seq != model[0].seq || got.name != model[0].name {
				t.Fatalf("step %d: popped (%d, %d, %s), want (%d, %d, %s)", step, got.at, got.seq, got.name, model[0].at, model[0].seq, model[0].name)
			}
			now = got.at
			model = model[1:]
		default:
			q.filter(func(e *event) bool { return e.seq%7 != 0 })
			model = slices.DeleteFunc(model, func(e event) bool { return e.seq%7 == 0 })
		}
	}
}
