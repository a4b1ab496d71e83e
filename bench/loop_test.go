package bench

import (
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// TestBareLoopKeepsQueueDepth: the bare loop starts QueueDepth events and
// keeps that many queued after every event it fires.
func TestBareLoopKeepsQueueDepth(t *testing.T) {
	l := newBareLoop()
	if len(l.heap) != QueueDepth {
		t.Fatalf("%d events queued at the start, want %d", len(l.heap), QueueDepth)
	}
	for n := uint64(1); n <= 10_000; n++ {
		l.runTo(n)
		if len(l.heap) != QueueDepth {
			t.Fatalf("after event %d: %d events queued, want %d", n, len(l.heap), QueueDepth)
		}
	}
	if l.at <= 0 {
		t.Fatalf("10,000 events took no simulated time (%d)", l.at)
	}
}

// TestKernelKeepsQueueDepth: the kernel's ping-pong has QueueDepth
// messages in flight (sent and not yet delivered) after every event, as
// the bare loop it is compared with.
func TestKernelKeepsQueueDepth(t *testing.T) {
	w, err := kernelWorld()
	if err != nil {
		t.Fatal(err)
	}
	inFlight := func() int64 {
		ab, ba := w.LinkStats(0, 1), w.LinkStats(1, 0)
		return ab.Sent + ba.Sent - ab.Delivered - ba.Delivered
	}
	if got := inFlight(); got != QueueDepth {
		t.Fatalf("%d messages in flight once started, want %d", got, QueueDepth)
	}
	for i := 0; i < 10_000; i++ {
		if _, ok := w.Step(); !ok {
			t.Fatalf("event %d: the world stopped", i)
		}
		if got := inFlight(); got != QueueDepth {
			t.Fatalf("after event %d: %d messages in flight, want %d", w.Events(), got, QueueDepth)
		}
	}
	if w.Now() <= sim.Time(0) {
		t.Fatal("10,000 events took no simulated time")
	}
}
