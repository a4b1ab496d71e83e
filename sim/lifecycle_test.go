package sim_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// clock records the local time at each timer and reports its last start.
type clock struct {
	fired  []sim.Time
	period sim.Duration
	limit  int
}

func (c *clock) Start(ctx *sim.Context)                        { ctx.SetTimer(c.period, "tick") }
func (c *clock) Receive(*sim.Context, sim.NodeID, sim.Message) {}
func (c *clock) Timer(ctx *sim.Context, _ sim.TimerID, _ string) {
	c.fired = append(c.fired, ctx.Now())
	if len(c.fired) < c.limit {
		ctx.SetTimer(c.period, "tick")
	}
}

func TestCrashDropsTimersAndInFlightMessages(t *testing.T) {
	w, sinks := meshWorld(t, 2, 1, sim.LinkConfig{MinLatency: 10 * sim.Millisecond, MaxLatency: 10 * sim.Millisecond})
	broadcast(w, sinks)
	w.RunFor(5 * sim.Millisecond)
	must(t, w.Inject(sim.Crash{Node: 1}))
	w.RunFor(1 * sim.Millisecond)
	must(t, w.Inject(sim.Restart{Node: 1}))
	w.Run()
	if len(sinks[1].got) != 0 {
		t.Fatalf("restarted n1 received %v sent before its crash", sinks[1].got)
	}
	if len(sinks[0].got) != 1 {
		t.Fatalf("n0 got %v; the message n1 sent before crashing is still in the network and must arrive", sinks[0].got)
	}
	if err := w.Disk(1).Create("x"); err != nil {
		t.Fatalf("disk of a restarted node: %v", err)
	}
	must(t, w.Inject(sim.Crash{Node: 1}))
	if err := w.Disk(1).Create("y"); !errors.Is(err, sim.ErrNodeDown) {
		t.Fatalf("disk op on a crashed node: %v, want ErrNodeDown", err)
	}
	if err := w.Inject(sim.Crash{Node: 1}); err == nil {
		t.Fatal("crashing a crashed node was accepted")
	}
	if err := w.Inject(sim.Restart{Node: 0}); err == nil {
		t.Fatal("restarting a running node was accepted")
	}
}

func TestCrashCancelsTimers(t *testing.T) {
	w, err := sim.New(sim.Config{})
	must(t, err)
	var c *clock
	id, _ := w.AddNode("c", func() sim.Node { c = &clock{period: 10 * sim.Millisecond, limit: 100}; return c }, sim.NodeOptions{})
	must(t, w.Inject(sim.Start{Node: id}))
	w.RunFor(25 * sim.Millisecond)
	first := c
	must(t, w.Inject(sim.Crash{Node: id}))
	w.RunFor(100 * sim.Millisecond)
	if len(first.fired) != 2 {
		t.Fatalf("crashed instance fired %d times, want 2 (before the crash only)", len(first.fired))
	}
}

func TestPauseDelaysTimers(t *testing.T) {
	w, _ := sim.New(sim.Config{})
	var c *clock
	id, _ := w.AddNode("c", func() sim.Node { c = &clock{period: 10 * sim.Millisecond, limit: 3}; return c }, sim.NodeOptions{})
	must(t, w.Inject(sim.Start{Node: id}))
	must(t, w.InjectAt(sim.Time(5*sim.Millisecond), sim.Pause{Node: id, For: 50 * sim.Millisecond}))
	w.Run()
	want := []sim.Time{sim.Time(55 * sim.Millisecond), sim.Time(65 * sim.Millisecond), sim.Time(75 * sim.Millisecond)}
	if len(c.fired) != 3 || c.fired[0] != want[0] || c.fired[1] != want[1] || c.fired[2] != want[2] {
		t.Fatalf("timers fired at %v, want %v (the first one late, after the pause)", c.fired, want)
	}
}

func TestClockSkewAndDrift(t *testing.T) {
	w, _ := sim.New(sim.Config{})
	var c *clock
	id, _ := w.AddNode("c", func() sim.Node { c = &clock{period: sim.Second, limit: 2}; return c }, sim.NodeOptions{Skew: 5 * sim.Millisecond, DriftPPM: 1000})
	must(t, w.Inject(sim.Start{Node: id}))
	w.Run()
	// The node's second is 1s on its own clock: with +1000ppm it is
	// 1s/1.001 of world time, and its clock reads skew + 1.001 * world time.
	for i, got := range c.fired {
		want := sim.Time(5*sim.Millisecond) + sim.Time(i+1)*sim.Time(sim.Second)
		if d := got - want; d < 0 || d > 2 {
			t.Fatalf("timer %d fired at local %v, want %v (within 2ns)", i, got, want)
		}
	}
	if now := w.Now(); now >= sim.Time(2*sim.Second) {
		t.Fatalf("world time %v: a fast clock must fire before 2s of world time", now)
	}
}

// looper sends itself a message forever: a livelock.
type looper struct{}

func (looper) Start(ctx *sim.Context) { ctx.Send(ctx.ID(), num(0)) }
func (looper) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	ctx.Send(ctx.ID(), m)
}
func (looper) Timer(*sim.Context, sim.TimerID, string) {}

func TestGuardsEndLivelocks(t *testing.T) {
	w, _ := sim.New(sim.Config{MaxEvents: 1000})
	id, _ := w.AddNode("l", func() sim.Node { return looper{} }, sim.NodeOptions{})
	must(t, w.Inject(sim.Start{Node: id}))
	if res := w.Run(); res.Reason != sim.EventLimit || res.Events != 1000 {
		t.Fatalf("run ended %v after %d events, want event-limit after 1000", res.Reason, res.Events)
	}
	w, _ = sim.New(sim.Config{MaxTime: sim.Time(sim.Second)})
	id, _ = w.AddNode("l", func() sim.Node { return looper{} }, sim.NodeOptions{})
	must(t, w.Inject(sim.Start{Node: id}))
	if res := w.Run(); res.Reason != sim.TimeLimit || res.Now > sim.Time(sim.Second) {
		t.Fatalf("run ended %v at %v, want time-limit by 1s", res.Reason, res.Now)
	}
}

// bomb panics on its first message.
type bomb struct{}

func (bomb) Start(*sim.Context) {}
func (bomb) Receive(*sim.Context, sim.NodeID, sim.Message) {
	panic("invariant broken: HW > LEO")
}
func (bomb) Timer(*sim.Context, sim.TimerID, string) {}

func TestPanicBecomesFailedRun(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 77})
	a, _ := w.AddNode("a", func() sim.Node { return looper{} }, sim.NodeOptions{})
	b, _ := w.AddNode("b", func() sim.Node { return bomb{} }, sim.NodeOptions{})
	must(t, w.Inject(sim.Start{Node: b}))
	w.At(sim.Time(sim.Millisecond), "send", func(w *sim.World) { sim.ContextForTest(w, a).Send(b, num(1)) })
	res := w.Run()
	if res.Reason != sim.Panicked || res.Panic == nil {
		t.Fatalf("run ended %v, want panicked", res.Reason)
	}
	p := res.Panic
	if p.Seed != 77 || p.Node != "b" || p.Event == 0 || !strings.Contains(p.Error(), "HW > LEO") || !strings.Contains(p.Error(), "seed 77") {
		t.Fatalf("panic info %+v / %q lacks seed, node or event", p, p.Error())
	}
	if again := w.Run(); again.Reason != sim.Panicked {
		t.Fatalf("a failed world ran on: %v", again.Reason)
	}
}

func TestWorldBadInput(t *testing.T) {
	if _, err := sim.New(sim.Config{MaxTime: -1}); err == nil {
		t.Error("negative max time accepted")
	}
	w, _ := sim.New(sim.Config{})
	mk := func() sim.Node { return bomb{} }
	if _, err := w.AddNode("", mk, sim.NodeOptions{}); err == nil {
		t.Error("empty node name accepted")
	}
	if _, err := w.AddNode("a", mk, sim.NodeOptions{DriftPPM: 2_000_000}); err == nil || !strings.Contains(err.Error(), "drift") {
		t.Errorf("drift of 2e6 ppm: %v", err)
	}
	if _, err := w.AddNode("a", mk, sim.NodeOptions{Disk: sim.DiskConfig{TearProbability: 2}}); err == nil {
		t.Error("tear probability 2 accepted")
	}
	w.AddNode("a", mk, sim.NodeOptions{})
	if _, err := w.AddNode("a", mk, sim.NodeOptions{}); err == nil {
		t.Error("duplicate node name accepted")
	}
	if err := w.InjectAt(0, sim.Crash{Node: 5}); err == nil || !strings.Contains(err.Error(), "unknown node 5") {
		t.Errorf("crash of an unknown node: %v", err)
	}
	if err := w.InjectAt(0, sim.Pause{Node: 0, For: -1}); err == nil {
		t.Error("negative pause accepted")
	}
	if err := w.Inject(sim.Cut{From: 0, To: 0}); err == nil {
		t.Error("cut of a node from itself accepted")
	}
	if _, err := w.Disk(0).ReadFile("f"); !errors.Is(err, sim.ErrNodeDown) && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("disk of a never-started node: %v", err)
	}
	w.RunFor(sim.Second)
	if err := w.At(0, "past", func(*sim.World) {}); err == nil {
		t.Error("an action in the past was accepted")
	}
}

func TestDurationString(t *testing.T) {
	for d, want := range map[sim.Duration]string{0: "0s", 750: "750ns", 12500: "12.500µs", 1250 * sim.Microsecond: "1.250ms", 3 * sim.Second: "3.000s", -2 * sim.Millisecond: "-2.000ms"} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(d), got, want)
		}
	}
}

// slowDisk syncs on start; its disk's latency keeps it busy.
type slowDisk struct{ handled []sim.Time }

func (s *slowDisk) Start(ctx *sim.Context) {
	must(nil, ctx.Disk().Create("f"))
	must(nil, ctx.Disk().Sync("f"))
}
func (s *slowDisk) Receive(ctx *sim.Context, _ sim.NodeID, _ sim.Message) {
	s.handled = append(s.handled, ctx.Now())
}
func (s *slowDisk) Timer(*sim.Context, sim.TimerID, string) {}

func TestDiskLatencyKeepsTheNodeBusy(t *testing.T) {
	w, _ := sim.New(sim.Config{Link: sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond}})
	var s *slowDisk
	id, _ := w.AddNode("s", func() sim.Node { s = &slowDisk{}; return s }, sim.NodeOptions{Disk: sim.DiskConfig{SyncLatency: 5 * sim.Millisecond, WriteLatency: sim.Millisecond}})
	src, _ := w.AddNode("src", func() sim.Node { return bomb{} }, sim.NodeOptions{})
	must(t, w.Inject(sim.Start{Node: id}))
	sim.ContextForTest(w, src).Send(id, num(1)) // arrives at 1ms
	w.Run()
	if len(s.handled) != 1 || s.handled[0] != sim.Time(6*sim.Millisecond) {
		t.Fatalf("message handled at %v, want 6ms (create 1ms + sync 5ms of disk latency)", s.handled)
	}
}

func TestStepRunsOneEventAtATime(t *testing.T) {
	w, sinks := meshWorld(t, 2, 1, sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond})
	broadcast(w, sinks)
	if _, ok := w.Step(); !ok || len(sinks[0].got)+len(sinks[1].got) != 1 {
		t.Fatalf("after one step: %v %v", sinks[0].got, sinks[1].got)
	}
	if _, ok := w.Step(); !ok || len(sinks[0].got)+len(sinks[1].got) != 2 {
		t.Fatal("second step did not deliver the second message")
	}
	if res, ok := w.Step(); ok || res.Reason != sim.Quiescent {
		t.Fatalf("step with nothing left: ok=%v reason=%v", ok, res.Reason)
	}
}

func TestActRunsAsTheNode(t *testing.T) {
	w, sinks := meshWorld(t, 2, 1, sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond})
	must(t, w.Act(0, func(ctx *sim.Context) { ctx.Send(1, num(42)) }))
	w.Run()
	if len(sinks[1].got) != 1 || sinks[1].got[0] != 42 || sinks[1].from[0] != 0 {
		t.Fatalf("n1 got %v from %v", sinks[1].got, sinks[1].from)
	}
	must(t, w.Inject(sim.Crash{Node: 0}))
	if err := w.Act(0, func(*sim.Context) {}); err == nil {
		t.Fatal("acting as a crashed node was accepted")
	}
}

// canceller sets many timers and cancels most of them, so the queue is
// compacted on the way.
type canceller struct{ fired []string }

func (c *canceller) Start(ctx *sim.Context) {
	var ids []sim.TimerID
	for i := 0; i < 5000; i++ {
		ids = append(ids, ctx.SetTimer(sim.Duration(5000-i)*sim.Microsecond, fmt.Sprint(i)))
	}
	for i, id := range ids {
		if i%5 != 0 {
			ctx.CancelTimer(id)
		}
	}
}
func (c *canceller) Receive(*sim.Context, sim.NodeID, sim.Message) {}
func (c *canceller) Timer(ctx *sim.Context, _ sim.TimerID, name string) {
	c.fired = append(c.fired, name)
}

func TestCancelledTimersNeverFireAndOthersKeepTheirOrder(t *testing.T) {
	w, _ := sim.New(sim.Config{})
	c := &canceller{}
	id, _ := w.AddNode("c", func() sim.Node { return c }, sim.NodeOptions{})
	must(t, w.Inject(sim.Start{Node: id}))
	w.Run()
	if len(c.fired) != 1000 {
		t.Fatalf("%d timers fired, want 1000", len(c.fired))
	}
	for k, name := range c.fired {
		// Timer i fires at 5000-i µs: latest-set first.
		if want := fmt.Sprint(4995 - 5*k); name != want {
			t.Fatalf("fire %d was timer %s, want %s", k, name, want)
		}
	}
}

// TestWipeDiskLeavesABlankDisk: a wiped node restarts with no file, synced
// or not; a running node cannot be wiped.
func TestWipeDiskLeavesABlankDisk(t *testing.T) {
	w, err := sim.New(sim.Config{KeepTrace: true})
	must(t, err)
	_, err = w.AddNode("n0", func() sim.Node { return &sink{} }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: 0}))
	d := w.Disk(0)
	must(t, d.Create("meta.properties"))
	must(t, d.Append("meta.properties", []byte("directory.id=a")))
	must(t, d.Sync("meta.properties"))
	must(t, d.SyncDir("."))
	must(t, d.Create("unsynced"))
	if err := w.Inject(sim.WipeDisk{Node: 0}); err == nil || !strings.Contains(err.Error(), "running") {
		t.Fatalf("wiping a running node: %v, want an error saying it is running", err)
	}
	must(t, w.Inject(sim.Crash{Node: 0}))
	must(t, w.Inject(sim.WipeDisk{Node: 0}))
	must(t, w.Inject(sim.Restart{Node: 0}))
	for _, f := range []string{"meta.properties", "unsynced"} {
		if w.Disk(0).Exists(f) {
			t.Fatalf("%s survived the wipe", f)
		}
	}
	if d.Used() != 0 {
		t.Fatalf("a wiped disk uses %d bytes, want 0", d.Used())
	}
	found := false
	for _, r := range w.Trace().Records() {
		found = found || r.Kind == "wipe-disk"
	}
	if !found {
		t.Fatal("no wipe-disk trace record")
	}
}
