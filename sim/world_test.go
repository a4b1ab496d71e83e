package sim_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/kafkasim/kafkasim/sim/simtest"
)

func chaosWorld(t testing.TB, seed uint64, ch sim.Chooser, record bool) *sim.World {
	return chaosWorldOpts(t, seed, ch, record, false)
}

func chaosWorldOpts(t testing.TB, seed uint64, ch sim.Chooser, record, keep bool) *sim.World {
	w, err := simtest.Chaos(seed, simtest.ChaosOptions{Chooser: ch, RecordChoices: record, KeepTrace: keep})
	if err != nil {
		t.Fatal(err)
	}
	return w
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

// TestTouchedCountsHandlersAndCrashes: Touched moves for the node whose
// handler ran or that crashed, and only for it.
func TestTouchedCountsHandlersAndCrashes(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := w.AddNode("a", func() sim.Node { return &pinger{peer: 1} }, sim.NodeOptions{})
	b, _ := w.AddNode("b", func() sim.Node { return &pinger{peer: 0} }, sim.NodeOptions{})
	idle, _ := w.AddNode("idle", func() sim.Node { return &pinger{peer: 0} }, sim.NodeOptions{})
	for _, id := range []sim.NodeID{b, a} {
		if err := w.Inject(sim.Start{Node: id}); err != nil {
			t.Fatal(err)
		}
	}
	if w.Touched(a) != 1 || w.Touched(b) != 1 || w.Touched(idle) != 0 {
		t.Fatalf("after start: a=%d b=%d idle=%d, want 1 1 0", w.Touched(a), w.Touched(b), w.Touched(idle))
	}
	if _, ok := w.Step(); !ok { // a's ping reaches b
		t.Fatal("no event")
	}
	if w.Touched(a) != 1 || w.Touched(b) != 2 {
		t.Errorf("after b's delivery: a=%d b=%d, want 1 2", w.Touched(a), w.Touched(b))
	}
	if err := w.Inject(sim.Crash{Node: a}); err != nil {
		t.Fatal(err)
	}
	if w.Touched(a) != 2 || w.Touched(idle) != 0 || w.Touched(99) != 0 {
		t.Errorf("after a's crash: a=%d idle=%d unknown=%d, want 2 0 0", w.Touched(a), w.Touched(idle), w.Touched(99))
	}
}
