package zk_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

// step is something a test client does at a world time (on its own clock,
// which the tests leave unskewed).
type step struct {
	at sim.Time
	fn func(n *client, ctx *sim.Context)
}

func at(ms int64, fn func(n *client, ctx *sim.Context)) step {
	return step{at: sim.Time(sim.Ms(ms)), fn: fn}
}

// client is a test node embedding a zk.Client and running a script. Its
// log lines go to the harness, which outlives the node's incarnations.
type client struct {
	h         *harness
	timeout   sim.Duration
	steps     []step
	onSession func(n *client, ctx *sim.Context, ev zk.SessionEvent)
	onWatch   func(n *client, ctx *sim.Context, ev zk.WatchEvent)
	c         *zk.Client
	looping   bool // set by a script that loops, per incarnation
}

func (n *client) Start(ctx *sim.Context) {
	n.c = zk.NewClient(n.h.zk, n.timeout)
	n.c.OnSession = func(ctx *sim.Context, ev zk.SessionEvent) {
		n.h.logf(ctx, "session %s %d", ev.State, ev.Session)
		if n.onSession != nil {
			n.onSession(n, ctx, ev)
		}
	}
	n.c.OnWatch = func(ctx *sim.Context, ev zk.WatchEvent) {
		n.h.logf(ctx, "watch %s %s", ev.Type, ev.Path)
		if n.onWatch != nil {
			n.onWatch(n, ctx, ev)
		}
	}
	n.c.Start(ctx)
	for i, s := range n.steps {
		if s.at >= ctx.Now() {
			ctx.SetTimer(s.at.Sub(ctx.Now()), "step-"+strconv.Itoa(i))
		}
	}
}

func (n *client) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	if !n.c.HandleMessage(ctx, from, m) {
		panic(fmt.Sprintf("test client: unexpected %s", m.Kind()))
	}
}

func (n *client) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	if n.c.HandleTimer(ctx, id, name) {
		return
	}
	i, err := strconv.Atoi(strings.TrimPrefix(name, "step-"))
	if err != nil {
		panic("test client: unknown timer " + name)
	}
	n.steps[i].fn(n, ctx)
}

// rec returns a callback that logs the outcome of an operation.
func (n *client) rec(label string) zk.Callback {
	return func(ctx *sim.Context, r *zk.Response) {
		n.h.logf(ctx, "%s %s%s", label, r.Code, describe(r))
	}
}

func describe(r *zk.Response) string {
	var b strings.Builder
	if r.Path != "" {
		fmt.Fprintf(&b, " path=%s", r.Path)
	}
	if r.Data != nil {
		fmt.Fprintf(&b, " data=%s", r.Data)
	}
	if r.Children != nil {
		fmt.Fprintf(&b, " children=%v", r.Children)
	}
	if r.Code == zk.Ok && (r.Op == zk.OpSetData || r.Op == zk.OpGetData || r.Op == zk.OpExists) {
		fmt.Fprintf(&b, " version=%d", r.Stat.Version)
	}
	for _, res := range r.Results {
		fmt.Fprintf(&b, " [%s %s]", res.Type, res.Code)
	}
	return b.String()
}

// harness is a world with one ZooKeeper server and test clients.
type harness struct {
	t     testing.TB
	w     *sim.World
	zk    sim.NodeID
	lines []string // "<node> <what>", in order
	times []sim.Time
}

func newHarness(t testing.TB, seed uint64, link sim.LinkConfig) *harness {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed, Link: link, MaxTime: sim.Time(10 * sim.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, w: w}
	h.zk, err = w.AddNode("zk", func() sim.Node { return zk.NewServer(zk.ServerConfig{}) }, sim.NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Inject(sim.Start{Node: h.zk}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) addClient(name string, timeout sim.Duration, steps ...step) (sim.NodeID, *client) {
	h.t.Helper()
	return h.addClientWith(name, timeout, nil, steps...)
}

// addClientWith is addClient with a hook that sets the client's handlers
// before it starts.
func (h *harness) addClientWith(name string, timeout sim.Duration, configure func(*client), steps ...step) (sim.NodeID, *client) {
	h.t.Helper()
	proto := &client{h: h, timeout: timeout, steps: steps}
	if configure != nil {
		configure(proto)
	}
	id, err := h.w.AddNode(name, func() sim.Node {
		n := *proto
		return &n
	}, sim.NodeOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.w.Inject(sim.Start{Node: id}); err != nil {
		h.t.Fatal(err)
	}
	return id, proto
}

func (h *harness) logf(ctx *sim.Context, format string, args ...any) {
	h.lines = append(h.lines, ctx.Name()+" "+fmt.Sprintf(format, args...))
	h.times = append(h.times, ctx.Now())
}

func (h *harness) server() *zk.Server { return h.w.Node(h.zk).(*zk.Server) }

// injectAt schedules a fault, failing the test if it is rejected.
func (h *harness) injectAt(ms int64, f sim.Fault) {
	h.t.Helper()
	if err := h.w.InjectAt(sim.Time(sim.Ms(ms)), f); err != nil {
		h.t.Fatal(err)
	}
}

// runUntil runs to ms, failing the test if the run panicked.
func (h *harness) runUntil(ms int64) {
	h.t.Helper()
	if res := h.w.RunUntil(sim.Time(sim.Ms(ms))); res.Reason == sim.Panicked {
		h.t.Fatalf("run panicked: %v\n%s", res.Panic, res.Panic.Stack)
	}
}

// grep returns the log lines containing every one of subs, in order.
func (h *harness) grep(subs ...string) []string {
	var out []string
next:
	for _, l := range h.lines {
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// when returns the time of the first log line containing sub.
func (h *harness) when(sub string) (sim.Time, bool) {
	for i, l := range h.lines {
		if strings.Contains(l, sub) {
			return h.times[i], true
		}
	}
	return 0, false
}

func (h *harness) exists(path string) bool {
	_, _, ok := h.server().Get(path)
	return ok
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
