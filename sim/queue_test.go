package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQueuePopsInOrder is the event heap's property test: whatever the
// pushes, pops and rebuilds, events come out by (at, seq), as a sort
// gives them.
func TestQueuePopsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var q queue
	var model []event
	seq := uint64(0)
	for step := 0; step < 20000; step++ {
		switch k := r.IntN(10); {
		case k < 6:
			seq++
			e := event{at: Time(r.IntN(50)), seq: seq}
			q.push(e)
			model = append(model, e)
		case k < 9:
			if len(q) == 0 {
				continue
			}
			slices.SortFunc(model, func(a, b event) int {
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
