package sim

import (
	"math/rand/v2"
	"testing"
)

// TestTimerSetIsASet compares timerSet with a map on random adds (in
// increasing order) and removes.
func TestTimerSetIsASet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var s timerSet
	model := map[TimerID]bool{}
	next := TimerID(0)
	for step := 0; step < 100000; step++ {
		switch {
		case r.IntN(2) == 0:
			next += TimerID(1 + r.IntN(3)*r.IntN(100))
			s.add(next)
			model[next] = true
		default:
			id := TimerID(r.IntN(int(next) + 2))
			if r.IntN(4) > 0 && len(model) > 0 && id < next-200 && next > 200 {
				id = next - TimerID(r.IntN(200)) // mostly recent ones
			}
			s.remove(id)
			delete(model, id)
		}
		id := TimerID(r.IntN(int(next) + 70))
		if s.has(id) != model[id] {
			t.Fatalf("step %d: has(%d) = %v, want %v", step, id, s.has(id), model[id])
		}
	}
	for id := TimerID(0); id <= next+64; id++ {
		if s.has(id) != model[id] {
			t.Fatalf("has(%d) = %v, want %v", id, s.has(id), model[id])
		}
	}
}
