package sim_test

import (
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// pinger bounces one immutable message back and forth forever.
type pinger struct{ peer sim.NodeID }

type ping struct{}

func (*ping) Kind() string { return "ping" }
func (*ping) Size() int    { return 64 }

var thePing = &ping{}

func (p *pinger) Start(ctx *sim.Context) {
	if ctx.ID() == 0 {
		ctx.Send(p.peer, thePing)
	}
}
func (p *pinger) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) { ctx.Send(from, m) }
func (p *pinger) Timer(*sim.Context, sim.TimerID, string)                  {}

func pingPongWorld(b testing.TB, link sim.LinkConfig, msg func() sim.Message) *sim.World {
	w, err := sim.New(sim.Config{Seed: 1, Link: link, MaxEvents: 1 << 62, MaxTime: 1 << 62})
	if err != nil {
		b.Fatal(err)
	}
	w.AddNode("a", func() sim.Node { return &pinger{peer: 1} }, sim.NodeOptions{})
	w.AddNode("b", func() sim.Node { return &pinger{peer: 0} }, sim.NodeOptions{})
	w.Inject(sim.Start{Node: 1})
	w.Inject(sim.Start{Node: 0})
	return w
}

// BenchmarkPingPong measures the event loop: one op is one delivered
// message (an event), with a latency drawn per message.
func BenchmarkPingPong(b *testing.B) {
	w := pingPongWorld(b, sim.DefaultLink, nil)
	w.RunUntil(w.Now().Add(sim.Second)) // warm up: grow the queue
	b.ReportAllocs()
	b.ResetTimer()
	start := w.Events()
	for w.Events()-start < uint64(b.N) {
		w.RunFor(100 * sim.Millisecond)
	}
	b.ReportMetric(float64(w.Events()-start)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkPingPongFixedLatency is the loop without any chooser decision.
func BenchmarkPingPongFixedLatency(b *testing.B) {
	w := pingPongWorld(b, sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond}, nil)
	w.RunUntil(w.Now().Add(sim.Second))
	b.ReportAllocs()
	b.ResetTimer()
	start := w.Events()
	for w.Events()-start < uint64(b.N) {
		w.RunFor(100 * sim.Millisecond)
	}
	b.ReportMetric(float64(w.Events()-start)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkChooserRandomChoose(b *testing.B) {
	r := sim.NewRandom(1)
	s := 0
	for i := 0; i < b.N; i++ {
		s += r.Choose(sim.KindLatency, 901)
	}
	_ = s
}

func BenchmarkChooserRandomChance(b *testing.B) {
	r := sim.NewRandom(1)
	s := 0
	for i := 0; i < b.N; i++ {
		if r.Chance(sim.KindDrop, 0.01) {
			s++
		}
	}
	_ = s
}

func BenchmarkChooserRecorded(b *testing.B) {
	r := &sim.Recorder{Inner: sim.NewRandom(1)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Choose(sim.KindLatency, 901)
	}
}

// BenchmarkTraceRecordHashOnly is the cost of one node log record with
// recording off: the hash still runs.
func BenchmarkTraceRecordHashOnly(b *testing.B) {
	benchLog(b, false)
}

// BenchmarkTraceRecordKept is the cost of one record kept in memory.
func BenchmarkTraceRecordKept(b *testing.B) {
	benchLog(b, true)
}

func benchLog(b *testing.B, keep bool) {
	w, _ := sim.New(sim.Config{KeepTrace: keep})
	id, _ := w.AddNode("b0", func() sim.Node { return &pinger{} }, sim.NodeOptions{})
	w.Inject(sim.Start{Node: id})
	ctx := sim.ContextForTest(w, id)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Log("hw-advance", sim.S("partition", "t-0"), sim.I("hw", int64(i)), sim.I("leo", int64(i+1)))
	}
}
