package sim_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// sink records what it receives; on a "fire" timer it sends one numbered
// message to each target.
type sink struct {
	got     []int
	from    []sim.NodeID
	targets []sim.NodeID
	n       int
}

type num int

func (num) Kind() string { return "num" }
func (num) Size() int    { return 8 }

func (s *sink) Start(*sim.Context) {}
func (s *sink) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	s.got = append(s.got, int(m.(num)))
	s.from = append(s.from, from)
}
func (s *sink) Timer(ctx *sim.Context, _ sim.TimerID, _ string) {
	for _, t := range s.targets {
		ctx.Send(t, num(s.n))
	}
	s.n++
}

// meshWorld is n sinks, each sending to all others when told.
func meshWorld(t testing.TB, n int, seed uint64, link sim.LinkConfig) (*sim.World, []*sink) {
	w, err := sim.New(sim.Config{Seed: seed, Link: link})
	must(t, err)
	sinks := make([]*sink, n)
	for i := 0; i < n; i++ {
		i := i
		_, err := w.AddNode(fmt.Sprintf("n%d", i), func() sim.Node { sinks[i] = &sink{}; return sinks[i] }, sim.NodeOptions{})
		must(t, err)
	}
	for i := 0; i < n; i++ {
		must(t, w.Inject(sim.Start{Node: sim.NodeID(i)}))
		for j := 0; j < n; j++ {
			if j != i {
				sinks[i].targets = append(sinks[i].targets, sim.NodeID(j))
			}
		}
	}
	return w, sinks
}

// broadcast makes every node send one message to every other node.
func broadcast(w *sim.World, sinks []*sink) {
	for i := range sinks {
		sinks[i].Timer(nodeCtx(w, i), 0, "fire")
	}
}

// nodeCtx runs fn in node i's context through a zero-delay action.
func nodeCtx(w *sim.World, i int) *sim.Context { return sim.ContextForTest(w, sim.NodeID(i)) }

func TestPartitionBlocksExactlyTheCutLinks(t *testing.T) {
	w, sinks := meshWorld(t, 4, 1, sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond})
	// {n0,n1} | {n2} ; n3 is in no group and keeps all its links. Plus a
	// one-way cut n3 -> n0.
	must(t, w.Inject(sim.Partition{Groups: [][]sim.NodeID{{0, 1}, {2}}}))
	must(t, w.Inject(sim.Cut{From: 3, To: 0}))
	broadcast(w, sinks)
	w.Run()
	cut := map[[2]int]bool{{0, 2}: true, {1, 2}: true, {2, 0}: true, {2, 1}: true, {3, 0}: true}
	for to, s := range sinks {
		heard := map[int]bool{}
		for _, f := range s.from {
			heard[int(f)] = true
		}
		for from := range sinks {
			if from == to {
				continue
			}
			if want := !cut[[2]int{from, to}]; heard[from] != want {
				t.Errorf("n%d -> n%d delivered=%v, want %v", from, to, heard[from], want)
			}
		}
	}
	// Heal restores delivery on every link.
	must(t, w.Inject(sim.Heal{}))
	for _, s := range sinks {
		s.from = nil
	}
	broadcast(w, sinks)
	w.Run()
	for to, s := range sinks {
		if len(s.from) != len(sinks)-1 {
			t.Errorf("after heal n%d heard from %v, want all %d others", to, s.from, len(sinks)-1)
		}
	}
	if st := w.LinkStats(0, 2); st.Sent != 2 || st.Dropped != 1 || st.Delivered != 1 || st.BytesSent != 16 {
		t.Errorf("link n0->n2 stats %+v", st)
	}
}

func TestInFlightMessagesLostWhenCut(t *testing.T) {
	w, sinks := meshWorld(t, 2, 1, sim.LinkConfig{MinLatency: 10 * sim.Millisecond, MaxLatency: 10 * sim.Millisecond})
	broadcast(w, sinks)
	w.RunFor(5 * sim.Millisecond)
	must(t, w.Inject(sim.Cut{From: 0, To: 1}))
	w.Run()
	if len(sinks[1].got) != 0 || len(sinks[0].got) != 1 {
		t.Fatalf("n1 got %v (want nothing: cut while in flight), n0 got %v (want 1 message)", sinks[1].got, sinks[0].got)
	}
}

func TestLinksAreFIFOWithoutReorder(t *testing.T) {
	w, sinks := meshWorld(t, 2, 5, sim.LinkConfig{MinLatency: 0, MaxLatency: 10 * sim.Millisecond})
	for i := 0; i < 200; i++ {
		sinks[0].Timer(nodeCtx(w, 0), 0, "fire")
	}
	w.Run()
	for i, v := range sinks[1].got {
		if v != i {
			t.Fatalf("delivery %d carried message %d: FIFO broken (%v)", i, v, sinks[1].got[:i+1])
		}
	}
}

// rates sends many messages over one link per seed and returns the observed
// fractions of duplicated and reordered deliveries.
func rates(t *testing.T, link sim.LinkConfig, seeds, perSeed int) (dup, reorder, drop float64) {
	var dups, reorders, drops, sent int
	for seed := 1; seed <= seeds; seed++ {
		w, sinks := meshWorld(t, 2, uint64(seed), link)
		for i := 0; i < perSeed; i++ {
			sinks[0].Timer(nodeCtx(w, 0), 0, "fire")
		}
		w.Run()
		st := w.LinkStats(0, 1)
		dups += int(st.Duplicated)
		drops += int(st.Dropped)
		sent += perSeed
		maxSeen := -1
		for _, v := range sinks[1].got {
			if v < maxSeen {
				reorders++
			}
			maxSeen = max(maxSeen, v)
		}
	}
	return float64(dups) / float64(sent), float64(reorders) / float64(sent), float64(drops) / float64(sent)
}

func TestFaultRatesMatchConfiguration(t *testing.T) {
	const n = 20000
	within := func(name string, got, want float64) {
		// Five standard deviations of a binomial proportion.
		if sd := math.Sqrt(want * (1 - want) / n); math.Abs(got-want) > 5*sd+1e-9 {
			t.Errorf("%s rate %.4f, want %.4f ± %.4f", name, got, want, 5*sd)
		}
	}
	dup, _, drop := rates(t, sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond, DuplicateProbability: 0.1, DropProbability: 0.05}, 20, n/20)
	within("duplicate", dup, 0.1*0.95) // a dropped message is not duplicated
	within("drop", drop, 0.05)
	// With reordering on, late messages overtake: some deliveries arrive
	// after a higher-numbered one; with it off, none do.
	_, reorder, _ := rates(t, sim.LinkConfig{MinLatency: 0, MaxLatency: 5 * sim.Millisecond, ReorderProbability: 0.2}, 20, n/20)
	if reorder < 0.02 {
		t.Errorf("reorder probability 0.2 produced only %.4f out-of-order deliveries", reorder)
	}
	_, none, _ := rates(t, sim.LinkConfig{MinLatency: 0, MaxLatency: 5 * sim.Millisecond}, 5, 1000)
	if none != 0 {
		t.Errorf("reorder probability 0 produced %.4f out-of-order deliveries", none)
	}
}

func TestLinkBadInput(t *testing.T) {
	bad := []sim.LinkConfig{
		{MinLatency: -1},
		{MinLatency: 2, MaxLatency: 1},
		{MaxLatency: 1, DropProbability: 1.1},
		{MaxLatency: 1, DuplicateProbability: -0.5},
		{MaxLatency: 1, ReorderProbability: 2},
		{MaxLatency: 1, DelayProbability: 0.5, Delay: -1},
		{MaxLatency: 1, DropProbability: math.NaN()},
	}
	for _, c := range bad {
		if _, err := sim.New(sim.Config{Link: c}); err == nil {
			t.Errorf("world accepted link %+v", c)
		}
	}
	w, _ := meshWorld(t, 2, 1, sim.DefaultLink)
	if err := w.Inject(sim.Partition{Groups: [][]sim.NodeID{{0}, {7}}}); err == nil {
		t.Error("partition with an unknown node accepted")
	}
	if err := w.Inject(sim.Partition{Groups: [][]sim.NodeID{{0, 1}, {1}}}); err == nil {
		t.Error("partition with a node in two groups accepted")
	}
	if err := w.SetLink(0, 9, sim.DefaultLink); err == nil {
		t.Error("SetLink to an unknown node accepted")
	}
	if w.Cut(0, 1) {
		t.Error("a rejected partition cut a link")
	}
}

// resetter records the resets it is told of.
type resetter struct {
	peer   sim.NodeID
	resets []sim.NodeID
	at     []sim.Time
}

func (r *resetter) Start(ctx *sim.Context)                          {}
func (r *resetter) Receive(*sim.Context, sim.NodeID, sim.Message)   {}
func (r *resetter) Timer(ctx *sim.Context, _ sim.TimerID, _ string) { ctx.Send(r.peer, thePing) }
func (r *resetter) Disconnected(ctx *sim.Context, peer sim.NodeID) {
	r.resets = append(r.resets, peer)
	r.at = append(r.at, ctx.Now())
}

// TestRefusedMessageResetsADisconnectableSender: a message reaching a
// crashed process comes back as a reset to a Disconnectable sender after
// the reverse link's minimum latency; across a cut link it does not; a
// process that dies resets its peers; a host that lost power says nothing.
func TestRefusedMessageResetsADisconnectableSender(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 1, Link: sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: 3 * sim.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	r := &resetter{peer: 1}
	a, _ := w.AddNode("a", func() sim.Node { return r }, sim.NodeOptions{})
	b, _ := w.AddNode("b", func() sim.Node { return &pinger{peer: 0} }, sim.NodeOptions{})
	for _, id := range []sim.NodeID{a, b} {
		if err := w.Inject(sim.Start{Node: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Inject(sim.Crash{Node: b}); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Act(a, func(ctx *sim.Context) { ctx.Send(b, thePing) }))
	w.RunFor(100 * sim.Millisecond)
	if len(r.resets) != 1 || r.resets[0] != b {
		t.Fatalf("resets %v, want one from b", r.resets)
	}
	if d := r.at[0]; d < sim.Time(2*sim.Millisecond) || d > sim.Time(4*sim.Millisecond) {
		t.Errorf("reset at %v, want the delivery plus 1ms", d)
	}
	must(w.Inject(sim.Partition{Groups: [][]sim.NodeID{{a}, {b}}}))
	must(w.Act(a, func(ctx *sim.Context) { ctx.Send(b, thePing) }))
	w.RunFor(100 * sim.Millisecond)
	if len(r.resets) != 1 {
		t.Errorf("a cut link reset the sender: %v", r.resets)
	}
	must(w.Inject(sim.Heal{}))
	// b's process dies with a's connection open: a is told at once.
	must(w.Inject(sim.Restart{Node: b}))
	must(w.Act(a, func(ctx *sim.Context) { ctx.Send(b, thePing) }))
	w.RunFor(100 * sim.Millisecond)
	n := len(r.resets)
	must(w.Inject(sim.Crash{Node: b}))
	w.RunFor(100 * sim.Millisecond)
	if len(r.resets) != n+1 {
		t.Errorf("b's process died: %d resets, want %d", len(r.resets), n+1)
	}
	// b's host loses power: nothing answers, not even a reset.
	must(w.Inject(sim.Restart{Node: b}))
	must(w.Act(a, func(ctx *sim.Context) { ctx.Send(b, thePing) }))
	w.RunFor(100 * sim.Millisecond)
	n = len(r.resets)
	must(w.Inject(sim.Crash{Node: b, LoseUnsynced: true}))
	must(w.Act(a, func(ctx *sim.Context) { ctx.Send(b, thePing) }))
	w.RunFor(100 * sim.Millisecond)
	if len(r.resets) != n {
		t.Errorf("b lost power: %d resets, want %d", len(r.resets), n)
	}
}
