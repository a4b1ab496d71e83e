package sim_test

import (
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// TestKernelAllocatesNothingPerEvent keeps the event loop's delivery path
// (send, the link's latency draw, the trace hash, the event heap) free of
// allocations once the queue has grown (issue 17: 0 allocations per
// event).
func TestKernelAllocatesNothingPerEvent(t *testing.T) {
	w := pingPongWorld(t, sim.DefaultLink, nil)
	w.RunUntil(w.Now().Add(sim.Second)) // warm up: grow the queue
	start := w.Events()
	allocs := testing.AllocsPerRun(5, func() { w.RunFor(sim.Second) })
	perRun := float64(w.Events()-start) / 6 // AllocsPerRun runs once more to warm up
	if allocs > 0 {
		t.Errorf("%.0f allocations per second of ping-pong (%.0f events)", allocs, perRun)
	}
}
