package bench

// This file is the kernel workload and its yardstick: two nodes bouncing
// QueueDepth messages forever on the real sim.World, and the same
// ping-pong on a bare binary-heap loop (a slice heap of (time, seq,
// handler) with an interface call and a latency draw per event): what any
// discrete-event loop must pay. The kernel does more per event — the
// seeded chooser's draw, the link model, the trace hash, the node's
// context — and the ratio says what that costs.
//
// NB: both run at the same queue depth. A heap's push and pop cost grows
// with its size, and a real world keeps dozens of events queued (a cluster
// run's messages, timers and timeouts), so a bare loop carrying one event
// at a time would be a yardstick of an empty heap.

import (
	"github.com/kafkasim/kafkasim/sim"
)

// kernelEvents is how many events the kernel workloads deliver.
const kernelEvents = 2_000_000

// QueueDepth is how many events the kernel and bare-loop workloads keep in
// flight: node a starts QueueDepth pings, and the bare loop starts
// QueueDepth bouncers; each delivery sends one back, so the depth holds
// for the whole run.
// Invariant: both workloads use this constant, so the kernel's ratio to
// the bare loop compares loops of the same size.
const QueueDepth = 64

type pinger struct{ peer sim.NodeID }

type ping struct{}

func (*ping) Kind() string { return "ping" }
func (*ping) Size() int    { return 64 }

var thePing = &ping{}

func (p *pinger) Start(ctx *sim.Context) {
	if ctx.ID() == 0 {
		for range QueueDepth {
			ctx.Send(p.peer, thePing)
		}
	}
}
func (p *pinger) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) { ctx.Send(from, m) }
func (p *pinger) Timer(*sim.Context, sim.TimerID, string)                  {}

// kernelWorld is the kernel workload's world, started: QueueDepth pings
// on the default link (a latency drawn per message).
func kernelWorld() (*sim.World, error) {
	w, err := sim.New(sim.Config{Seed: 1, Link: sim.DefaultLink, MaxEvents: 1 << 62, MaxTime: 1 << 62})
	if err != nil {
		return nil, err
	}
	w.AddNode("a", func() sim.Node { return &pinger{peer: 1} }, sim.NodeOptions{})
	w.AddNode("b", func() sim.Node { return &pinger{peer: 0} }, sim.NodeOptions{})
	w.Inject(sim.Start{Node: 1})
	w.Inject(sim.Start{Node: 0})
	return w, nil
}

// kernelPingPong delivers kernelEvents messages on the kernel world.
func kernelPingPong() (Sample, error) {
	w, err := kernelWorld()
	if err != nil {
		return Sample{}, err
	}
	for w.Events() < kernelEvents {
		w.RunFor(100 * sim.Millisecond)
	}
	return Sample{Simulated: sim.Duration(w.Now()), Events: w.Events(), Records: int(w.Events())}, nil
}

// handler is the bare loop's event payload.
type handler interface{ fire(l *bareLoop, at int64) }

type bareEvent struct {
	at  int64
	seq uint64
	h   handler
}

// bareLoop is a binary min-heap of events ordered by (at, seq).
type bareLoop struct {
	heap []bareEvent
	seq  uint64
	n    uint64
	rng  uint64
	at   int64 // the time of the last event fired
}

// newBareLoop is a bare loop with QueueDepth bouncers queued at time 0.
func newBareLoop() *bareLoop {
	l := &bareLoop{rng: 1, heap: make([]bareEvent, 0, QueueDepth+1)}
	for range QueueDepth {
		l.push(0, bouncer{})
	}
	return l
}

func (l *bareLoop) less(i, j int) bool {
	a, b := &l.heap[i], &l.heap[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (l *bareLoop) push(at int64, h handler) {
	l.seq++
	l.heap = append(l.heap, bareEvent{at, l.seq, h})
	for i := len(l.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if !l.less(i, p) {
			break
		}
		l.heap[i], l.heap[p] = l.heap[p], l.heap[i]
		i = p
	}
}

func (l *bareLoop) pop() bareEvent {
	top := l.heap[0]
	last := len(l.heap) - 1
	l.heap[0] = l.heap[last]
	l.heap = l.heap[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(l.heap) {
			break
		}
		if c+1 < len(l.heap) && l.less(c+1, c) {
			c++
		}
		if !l.less(c, i) {
			break
		}
		l.heap[i], l.heap[c] = l.heap[c], l.heap[i]
		i = c
	}
	return top
}

// runTo fires events until n events have fired in all.
func (l *bareLoop) runTo(n uint64) {
	at := l.at
	for l.n < n {
		e := l.pop()
		at = e.at
		l.n++
		e.h.fire(l, e.at)
	}
	l.at = at
}

// bareLatency is sim.DefaultLink's latency range, drawn the way the link
// draws it (MinLatency plus a whole number of LatencySteps), so the bare
// loop's heap sees the same spread of due times as the kernel's.
var bareLatency = struct{ min, step, steps int64 }{
	int64(sim.DefaultLink.MinLatency), int64(sim.DefaultLink.LatencyStep),
	int64((sim.DefaultLink.MaxLatency-sim.DefaultLink.MinLatency)/sim.DefaultLink.LatencyStep) + 1,
}

// bouncer re-sends itself after a latency drawn from a xorshift generator,
// as the ping-pong's link draws one per message.
type bouncer struct{}

func (bouncer) fire(l *bareLoop, at int64) {
	l.rng ^= l.rng << 13
	l.rng ^= l.rng >> 7
	l.rng ^= l.rng << 17
	l.push(at+bareLatency.min+int64(l.rng%uint64(bareLatency.steps))*bareLatency.step, bouncer{})
}

// bareLoopPingPong runs kernelEvents events on the bare loop.
func bareLoopPingPong() (Sample, error) {
	l := newBareLoop()
	l.runTo(kernelEvents)
	return Sample{Simulated: sim.Duration(l.at), Events: l.n, Records: int(l.n)}, nil
}
