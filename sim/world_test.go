package sim_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// chatter is a test node that exercises everything a node can do: timers,
// sends to peers chosen through the chooser, disk writes and syncs, its own
// random stream and trace logging. On start it recovers a counter from disk.
type chatter struct {
	peers     []sim.NodeID
	counter   int64
	recovered int64
	tick      sim.TimerID
}

type note struct {
	from string
	n    int64
}

func (m *note) Kind() string { return "note" }
func (m *note) Size() int    { return 16 + len(m.from) }

func (c *chatter) Start(ctx *sim.Context) {
	if b, err := ctx.Disk().ReadFile("data/log"); err == nil {
		c.recovered = int64(len(b))
	}
	if !ctx.Disk().Exists("data/log") {
		if err := ctx.Disk().Create("data/log"); err != nil {
			panic(err)
		}
	}
	ctx.Log("recovered", sim.I("bytes", c.recovered))
	c.tick = ctx.SetTimer(sim.Duration(1+ctx.Rand().IntN(5))*sim.Millisecond, "tick")
}

func (c *chatter) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	n := m.(*note)
	ctx.Log("got", sim.S("from", n.from), sim.I("n", n.n))
	if err := ctx.Disk().Append("data/log", []byte(fmt.Sprintf("%s:%d;", n.from, n.n))); err != nil {
		panic(err)
	}
	if n.n%3 == 0 {
		ctx.Send(from, &note{from: ctx.Name(), n: n.n + 1})
	}
}

func (c *chatter) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	c.counter++
	to := c.peers[ctx.Choose(len(c.peers))]
	if to != ctx.ID() {
		ctx.Send(to, &note{from: ctx.Name(), n: c.counter})
	}
	if ctx.Chance(0.3) {
		if err := ctx.Disk().Sync("data/log"); err != nil {
			panic(err)
		}
	}
	c.tick = ctx.SetTimer(sim.Duration(1+ctx.Rand().IntN(5))*sim.Millisecond, "tick")
	if c.counter%7 == 0 {
		ctx.CancelTimer(c.tick)
		c.tick = ctx.SetTimer(2*sim.Millisecond, "tick")
	}
}

// chaosWorld builds a world of five chatters under every fault type, with a
// fault schedule drawn through the chooser.
func chaosWorld(t testing.TB, seed uint64, ch sim.Chooser, record bool) *sim.World {
	return chaosWorldOpts(t, seed, ch, record, false)
}

func chaosWorldOpts(t testing.TB, seed uint64, ch sim.Chooser, record, keep bool) *sim.World {
	w, err := sim.New(sim.Config{
		Seed: seed, Chooser: ch, RecordChoices: record, KeepTrace: keep, MaxTime: sim.Time(2 * sim.Second),
		Link: sim.LinkConfig{
			MinLatency: 100 * sim.Microsecond, MaxLatency: 2 * sim.Millisecond,
			DropProbability: 0.05, DuplicateProbability: 0.05, ReorderProbability: 0.1,
			DelayProbability: 0.05, Delay: 10 * sim.Millisecond,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	var ids []sim.NodeID
	for i := 0; i < n; i++ {
		opts := sim.NodeOptions{Skew: sim.Duration(i) * sim.Millisecond, DriftPPM: int64(i * 100),
			Disk: sim.DiskConfig{TearProbability: 0.5, ReadCorruptProbability: 0.01, WriteLatency: sim.Microsecond}}
		id, err := w.AddNode(fmt.Sprintf("n%d", i), func() sim.Node { return &chatter{peers: ids} }, opts)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if err := w.Inject(sim.Start{Node: id}); err != nil {
			t.Fatal(err)
		}
	}
	// Every 50ms an action draws a fault through the chooser.
	for at := sim.Time(50 * sim.Millisecond); at < sim.Time(sim.Second); at += sim.Time(50 * sim.Millisecond) {
		w.At(at, "chaos", func(w *sim.World) {
			f := drawFault(w, ids)
			if f != nil {
				if err := w.Inject(f); err != nil {
					panic(err)
				}
			}
		})
	}
	w.At(sim.Time(sim.Second), "heal-all", func(w *sim.World) {
		w.Inject(sim.Heal{})
		for _, id := range ids {
			if !w.Up(id) {
				w.Inject(sim.Restart{Node: id})
			}
		}
	})
	w.At(sim.Time(1500*sim.Millisecond), "stop", func(w *sim.World) { w.Stop() })
	return w
}

// drawFault picks a fault that fits the world's state, through the
// chooser, so the schedule replays with the run.
func drawFault(w *sim.World, ids []sim.NodeID) sim.Fault {
	node := ids[w.Choose(sim.KindFault, len(ids))]
	switch w.Choose(sim.KindFault, 6) {
	case 0:
		if w.Up(node) {
			return sim.Crash{Node: node, LoseUnsynced: w.Choose(sim.KindFault, 2) == 1}
		}
		return sim.Restart{Node: node}
	case 1:
		if w.Up(node) {
			return sim.Pause{Node: node, For: 20 * sim.Millisecond}
		}
	case 2:
		return sim.Partition{Groups: [][]sim.NodeID{ids[:2], ids[2:]}}
	case 3:
		other := ids[(int(node)+1)%len(ids)]
		return sim.Cut{From: node, To: other}
	case 4:
		return sim.Heal{}
	}
	return nil
}

func runChaos(t testing.TB, seed uint64) sim.Result {
	w := chaosWorld(t, seed, nil, false)
	res := w.Run()
	if res.Reason != sim.Stopped {
		t.Fatalf("seed %d: run ended with %v (%v), want stopped", seed, res.Reason, res.Panic)
	}
	return res
}

func TestDeterminismSameSeedSameHash(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		a := runChaos(t, seed)
		b := runChaos(t, seed)
		if a.Hash != b.Hash || a.Events != b.Events {
			t.Fatalf("seed %d: two runs differ: hash %x/%x events %d/%d", seed, a.Hash, b.Hash, a.Events, b.Events)
		}
		if a.Events < 1000 {
			t.Fatalf("seed %d: only %d events; the workload is too small to test anything", seed, a.Events)
		}
	}
}

func TestDeterminismAcrossGOMAXPROCS(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	one := runChaos(t, 42)
	runtime.GOMAXPROCS(4)
	four := runChaos(t, 42)
	if one.Hash != four.Hash {
		t.Fatalf("GOMAXPROCS=1 hash %x, GOMAXPROCS=4 hash %x", one.Hash, four.Hash)
	}
}

func TestDifferentSeedsDifferentHashes(t *testing.T) {
	seen := map[uint64]uint64{}
	for seed := uint64(1); seed <= 20; seed++ {
		h := runChaos(t, seed).Hash
		if prev, dup := seen[h]; dup {
			t.Fatalf("seeds %d and %d give the same hash %x", prev, seed, h)
		}
		seen[h] = seed
	}
}

func TestReplayReproducesHash(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		rec := chaosWorld(t, seed, nil, true)
		want := rec.Run()
		choices := rec.Choices()
		if len(choices) == 0 {
			t.Fatal("no choices recorded")
		}
		rep := chaosWorld(t, seed, sim.Replay(choices), false)
		got := rep.Run()
		if got.Hash != want.Hash || got.Events != want.Events {
			t.Fatalf("seed %d: replay of %d choices gave hash %x events %d, want %x %d", seed, len(choices), got.Hash, got.Events, want.Hash, want.Events)
		}
	}
}

func TestReplayDivergenceFailsTheRun(t *testing.T) {
	rec := chaosWorld(t, 7, nil, true)
	rec.Run()
	choices := append([]sim.Choice(nil), rec.Choices()...)
	// Change the arity of one latency choice: the replay must notice.
	for i := range choices {
		if choices[i].Kind == sim.KindLatency {
			choices[i].N++
			break
		}
	}
	res := chaosWorld(t, 7, sim.Replay(choices), false).Run()
	if res.Reason != sim.Panicked {
		t.Fatalf("replay of a corrupted choice list ended %v, want panicked", res.Reason)
	}
	var div *sim.DivergenceError
	if err, ok := res.Panic.Value.(error); !ok || !errors.As(err, &div) {
		t.Fatalf("panic value %v, want a *DivergenceError", res.Panic.Value)
	}
}

func TestPrefixThenDefault(t *testing.T) {
	// An empty prefix takes alternative 0 everywhere: a fault-free,
	// minimum-latency, FIFO run, itself deterministic.
	a := chaosWorld(t, 3, &sim.Prefix{}, true)
	ra := a.Run()
	for _, c := range a.Choices() {
		if c.Index != 0 {
			t.Fatalf("default chooser took %v", c)
		}
	}
	rb := chaosWorld(t, 3, &sim.Prefix{}, false).Run()
	if ra.Hash != rb.Hash {
		t.Fatal("default runs differ")
	}
}

func TestTraceKeptMatchesHashOnly(t *testing.T) {
	w := chaosWorld(t, 9, nil, false)
	res := w.Run()
	kept := chaosWorldOpts(t, 9, nil, false, true)
	res2 := kept.Run()
	if res.Hash != res2.Hash {
		t.Fatalf("keeping the trace changed the hash: %x vs %x", res.Hash, res2.Hash)
	}
	recs := kept.Trace().Records()
	if uint64(len(recs)) != kept.Trace().Len() {
		t.Fatalf("kept %d records, trace counted %d", len(recs), kept.Trace().Len())
	}
	var b strings.Builder
	sim.WriteTimeline(&b, recs[:10])
	if !strings.Contains(b.String(), "start") {
		t.Fatalf("timeline lacks the start records:\n%s", b.String())
	}
}
