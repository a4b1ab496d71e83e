package sim

import (
	"fmt"
	"math/rand/v2"
	"runtime/debug"
)

// Config describes a world.
type Config struct {
	// Seed drives the default chooser and the nodes' own random streams.
	Seed uint64
	// Chooser makes every nondeterministic decision; nil means NewRandom(Seed).
	Chooser Chooser
	// RecordChoices keeps every decision (World.Choices) for replay and shrinking.
	RecordChoices bool
	// KeepTrace keeps the trace records; the trace hash runs either way.
	KeepTrace bool
	// KeepKinds keeps, with KeepTrace off, the records of these kinds only
	// (a runner that needs a few transitions without paying for the rest).
	// New copies it: changing the map afterwards changes nothing.
	KeepKinds map[string]bool
	// MaxTime ends the run when the next event is later; 0 means one hour.
	MaxTime Time
	// MaxEvents ends the run after that many events; 0 means 100 million.
	MaxEvents uint64
	// Link configures every link; the zero value means DefaultLink.
	Link LinkConfig
}

// StopReason says why a run ended.
type StopReason uint8

// The reasons a run ends.
const (
	Quiescent  StopReason = iota // no event left to run
	Until                        // the time given to RunUntil was reached
	TimeLimit                    // the next event lies past Config.MaxTime
	EventLimit                   // Config.MaxEvents events have run
	Stopped                      // a node or an action called Stop
	Panicked                     // a node or an action panicked: the run failed
)

var stopNames = [...]string{"quiescent", "until", "time-limit", "event-limit", "stopped", "panicked"}

func (r StopReason) String() string { return stopNames[r] }

// PanicInfo describes a panic inside a run, stamped so it can be replayed.
type PanicInfo struct {
	Seed  uint64
	Event uint64
	Time  Time
	Node  string // "world" for an action
	Value any
	Stack string
}

func (p *PanicInfo) Error() string {
	return fmt.Sprintf("panic in %s at event %d (time %v, seed %d): %v", p.Node, p.Event, p.Time, p.Seed, p.Value)
}

// Result is the outcome of Run or RunUntil.
type Result struct {
	Reason StopReason
	Now    Time
	Events uint64
	Hash   uint64
	Panic  *PanicInfo // set when Reason == Panicked
}

// World is one simulated universe: nodes, network, disks, clock and queue,
// all driven by one chooser on one goroutine.
type World struct {
	cfg       Config
	chooser   Chooser
	recorder  *Recorder
	now       Time
	seq       uint64
	events    uint64
	queue     events
	ready     []int32 // the slots of events due now, in seq order, not yet run
	nodes     []*nodeState
	names     map[string]NodeID
	links     []link // stride^2, row = sender: link(from, to)
	stride    int    // at least len(nodes) (growLinks)
	timerSeq  TimerID
	timers    timerSet // pending timers; a cancelled one is removed
	trace     Trace
	stopped   bool
	failed    *PanicInfo
	current   NodeID // node whose handler is running, -1 for none
	stepOnly  bool   // run one event only
	cancelled int    // cancelled timers still in the queue
}

// New returns an empty world.
func New(cfg Config) (*World, error) {
	if cfg.Link == (LinkConfig{}) {
		cfg.Link = DefaultLink
	}
	if err := cfg.Link.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxTime < 0 {
		return nil, fmt.Errorf("max time %v: must be >= 0 (0 = one hour)", cfg.MaxTime)
	}
	if cfg.MaxTime == 0 {
		cfg.MaxTime = Time(Hour)
	}
	if cfg.MaxEvents == 0 {
		cfg.MaxEvents = 100_000_000
	}
	w := &World{cfg: cfg, names: map[string]NodeID{}, current: -1}
	w.chooser = cfg.Chooser
	if w.chooser == nil {
		w.chooser = NewRandom(cfg.Seed)
	}
	if cfg.RecordChoices {
		w.recorder = &Recorder{Inner: w.chooser}
		w.chooser = w.recorder
	}
	w.trace.setKeep(cfg.KeepTrace, cfg.KeepKinds)
	return w, nil
}

// AddNode adds a node, made (and remade at every restart) by factory. It
// does not start it: call Start.
func (w *World) AddNode(name string, factory func() Node, opts NodeOptions) (NodeID, error) {
	if name == "" || name == "world" {
		return -1, fmt.Errorf("node name %q: must be non-empty and not %q", name, "world")
	}
	if _, dup := w.names[name]; dup {
		return -1, fmt.Errorf("node name %q: already used", name)
	}
	if factory == nil {
		return -1, fmt.Errorf("node %q: factory must not be nil", name)
	}
	if err := opts.Validate(); err != nil {
		return -1, fmt.Errorf("node %q: %w", name, err)
	}
	id := NodeID(len(w.nodes))
	disk, err := NewDisk(opts.Disk, w.chooser)
	if err != nil {
		return -1, err
	}
	disk.down = true
	n := &nodeState{id: id, name: name, factory: factory, opts: opts, disk: disk}
	n.ctx = Context{w: w, n: n}
	w.nodes = append(w.nodes, n)
	w.names[name] = id
	if size := len(w.nodes); size > w.stride {
		w.growLinks(size + size/4)
	}
	return id, nil
}

// growLinks grows the link matrix to stride rows of stride links, keeping
// existing links' settings and counters; the links of nodes not added yet
// get the world's link configuration, as AddNode would give them. The
// matrix grows by a quarter at a time, not a node at a time: a served
// world adds a node per client connection, and reallocating n² links per
// node allocated n³ in all (gigabytes for a few hundred connections).
func (w *World) growLinks(stride int) {
	old, was := w.links, w.stride
	w.links, w.stride = make([]link, stride*stride), stride
	for i := range w.links {
		from, to := i/stride, i%stride
		if from < was && to < was {
			w.links[i] = old[from*was+to]
		} else {
			w.links[i].configure(w.cfg.Link)
		}
	}
}

// Lookup returns the id of the node named name.
func (w *World) Lookup(name string) (NodeID, bool) {
	id, ok := w.names[name]
	return id, ok
}

// Name returns a node's name.
func (w *World) Name(id NodeID) string {
	if id < 0 || int(id) >= len(w.nodes) {
		return fmt.Sprintf("node(%d)", id)
	}
	return w.nodes[id].name
}

// Nodes returns the number of nodes.
func (w *World) Nodes() int { return len(w.nodes) }

// Node returns a node's current instance (nil while it is down), for
// inspection by tests and checkers between events.
func (w *World) Node(id NodeID) Node { return w.nodes[id].inst }

// Up reports whether a node is running.
func (w *World) Up(id NodeID) bool { return w.nodes[id].up }

// Disk returns a node's disk, for inspection between events.
func (w *World) Disk(id NodeID) *Disk { return w.nodes[id].disk }

// Now returns the world's time.
func (w *World) Now() Time { return w.now }

// Events returns how many events have run.
func (w *World) Events() uint64 { return w.events }

// Trace returns the world's trace.
func (w *World) Trace() *Trace { return &w.trace }

// Seed returns the world's seed.
func (w *World) Seed() uint64 { return w.cfg.Seed }

// Choices returns the recorded decisions (nil unless RecordChoices).
func (w *World) Choices() []Choice {
	if w.recorder == nil {
		return nil
	}
	return w.recorder.Choices
}

func (w *World) checkNode(what string, id NodeID) error {
	if id < 0 || int(id) >= len(w.nodes) {
		return fmt.Errorf("%s: unknown node %d (the world has nodes 0..%d)", what, id, len(w.nodes)-1)
	}
	return nil
}

// Choose draws an index in [0, n) through the world's chooser; actions use
// it to draw faults and workload so that they replay with the run.
func (w *World) Choose(k Kind, n int) int { return w.choose(k, n) }

// Chance reports, through the world's chooser, whether an event of
// probability p happens.
func (w *World) Chance(k Kind, p float64) bool { return w.chance(k, p) }

func (w *World) choose(k Kind, n int) int {
	if n <= 1 {
		return 0
	}
	return w.chooser.Choose(k, n)
}

func (w *World) chance(k Kind, p float64) bool {
	if p <= 0 {
		return false
	}
	return w.chooser.Chance(k, p)
}

func (w *World) traceWorld(kind string, fields ...Field) {
	w.trace.add(w.events, w.now, -1, "world", kind, fields)
}

func (w *World) schedule(e event) {
	w.seq++
	e.seq = w.seq
	w.queue.push(e, w.now)
}

// At schedules fn to run as an event at time t (no earlier than now).
// Scripted steps and faults are actions.
func (w *World) At(t Time, name string, fn func(*World)) error {
	if t < w.now {
		return fmt.Errorf("action %q at %v: must not be before now (%v)", name, t, w.now)
	}
	w.schedule(event{at: t, kind: evAction, node: -1, name: name, action: fn})
	return nil
}

func (w *World) setTimer(n *nodeState, d Duration, name string) TimerID {
	if d < 0 {
		d = 0
	}
	w.timerSeq++
	w.timers.add(w.timerSeq)
	w.schedule(event{at: w.now.Add(n.globalDelay(d)), kind: evTimer, node: n.id, inc: n.inc, timer: w.timerSeq, name: name})
	return w.timerSeq
}

func (w *World) cancelTimer(id TimerID) {
	if !w.timers.has(id) {
		return
	}
	w.timers.remove(id)
	// A cancelled timer stays in the queue until it comes due. Nodes cancel
	// most request timeouts, so when they make up most of the queue it is
	// rebuilt without them: the order of the rest does not change.
	w.cancelled++
	if w.cancelled > 1024 && w.cancelled > w.queue.len()/2 {
		w.compactQueue()
	}
}

func (w *World) compactQueue() {
	w.queue.filter(func(e *event) bool { return e.kind != evTimer || w.timers.has(e.timer) })
	w.cancelled = 0
}

// Stop ends the run after the current event.
func (w *World) Stop() { w.stopped = true }

// start creates a fresh instance of n and starts it.
func (w *World) start(n *nodeState) {
	n.inst = n.factory()
	n.up = true
	n.started = true
	n.hostDown = false
	n.disk.down = false
	s := DeriveSeed(w.cfg.Seed, uint64(n.id)<<32|uint64(n.inc))
	n.rand = rand.New(rand.NewPCG(s, DeriveSeed(s, 1)))
	w.trace.add(w.events, w.now, n.id, n.name, "start", []Field{I("incarnation", int64(n.inc))})
	n.inst.Start(&n.ctx)
	w.afterHandler(n)
}

func (w *World) afterHandler(n *nodeState) {
	n.touched++
	if b := n.disk.takeBusy(); b > 0 {
		n.blocked = max(n.blocked, w.now.Add(b))
	}
}

// Touched counts the times node id's state may have changed so far: runs
// of its handlers (events, Act, start) and crashes. An observer that reads
// nodes' state after every event compares it to skip events that touched
// none of the nodes it watches.
func (w *World) Touched(id NodeID) uint64 {
	if int(id) < 0 || int(id) >= len(w.nodes) {
		return 0
	}
	return w.nodes[id].touched
}

// Run runs events until none is left, a limit is hit, or Stop is called.
func (w *World) Run() Result { return w.run(-1) }

// RunUntil runs every event due at or before t and then sets the clock to t.
func (w *World) RunUntil(t Time) Result { return w.run(t) }

// RunFor runs for d of virtual time from now.
func (w *World) RunFor(d Duration) Result { return w.run(w.now.Add(d)) }

func (w *World) result(r StopReason) Result {
	return Result{Reason: r, Now: w.now, Events: w.events, Hash: w.trace.hash, Panic: w.failed}
}

// Step runs exactly one event (or ends the run, as Run would, and reports
// why). Scripted scenarios use it to stop at the precise event they wait
// for: "after b0 receives b1's fetch, cut b0 -> b1".
func (w *World) Step() (Result, bool) {
	before := w.events
	w.stepOnly = true
	res := w.run(-1)
	w.stepOnly = false
	return res, w.events > before && res.Reason == Stopped && w.failed == nil
}

func (w *World) run(until Time) (res Result) {
	if w.failed != nil {
		return w.result(Panicked)
	}
	w.stopped = false
	defer func() {
		if v := recover(); v != nil {
			node := "world"
			if w.current >= 0 {
				node = w.nodes[w.current].name
			}
			w.failed = &PanicInfo{Seed: w.cfg.Seed, Event: w.events, Time: w.now, Node: node, Value: v, Stack: string(debug.Stack())}
			w.traceWorld("panic", S("node", node), S("value", fmt.Sprint(v)))
			res = w.result(Panicked)
		}
	}()
	for {
		if w.stopped {
			return w.result(Stopped)
		}
		if w.events >= w.cfg.MaxEvents {
			return w.result(EventLimit)
		}
		if len(w.ready) == 0 {
			if w.queue.len() == 0 {
				if until >= 0 && until > w.now {
					w.now = until
					return w.result(Until)
				}
				return w.result(Quiescent)
			}
			next := w.queue.next()
			if until >= 0 && next > until {
				w.now = max(w.now, until)
				return w.result(Until)
			}
			if next > w.cfg.MaxTime {
				return w.result(TimeLimit)
			}
			w.now = next
		}
		for w.queue.len() > 0 && w.queue.next() == w.now {
			w.ready = append(w.ready, w.queue.popSlot())
		}
		i := 0
		if len(w.ready) > 1 {
			i = w.chooser.Choose(KindOrder, len(w.ready))
		}
		ev := w.queue.take(w.ready[i])
		w.ready = append(w.ready[:i], w.ready[i+1:]...)
		w.events++
		w.fire(&ev)
		if w.stepOnly {
			w.stopped = true
		}
	}
}

// fire runs one event.
func (w *World) fire(ev *event) {
	if ev.kind == evAction {
		w.current = -1
		w.traceWorld("action", S("name", ev.name))
		ev.action(w)
		return
	}
	n := w.nodes[ev.node]
	if ev.kind == evTimer {
		if !w.timers.has(ev.timer) {
			w.cancelled--
			return // cancelled
		}
		if !n.up || n.inc != ev.inc {
			w.timers.remove(ev.timer)
			return // the crash took it
		}
	}
	if n.up && n.blocked > w.now {
		// Paused or busy: the input waits, in order, until the node is free.
		ev.at = n.blocked
		w.schedule(*ev)
		return
	}
	w.current = n.id
	if ev.kind == evDeliver {
		w.deliver(ev)
	} else {
		w.timers.remove(ev.timer)
		w.trace.addTimer(w.events, w.now, n.id, n.name, ev.name)
		n.inst.Timer(&n.ctx, ev.timer, ev.name)
	}
	w.afterHandler(n)
	w.current = -1
}

// Act runs fn as node id, now, between events: a scripted scenario uses it
// to make a client node send a request or a broker take a step ("b1
// produces m2"). The node must be up. What fn does is traced like any
// handler's work.
func (w *World) Act(id NodeID, fn func(ctx *Context)) error {
	if err := w.checkNode("act", id); err != nil {
		return err
	}
	n := w.nodes[id]
	if !n.up {
		return fmt.Errorf("act as %s: node is not running", n.name)
	}
	prev := w.current
	w.current = id
	fn(&n.ctx)
	w.afterHandler(n)
	w.current = prev
	return nil
}

// NextEventTime returns when the next event is due, and false if none is
// queued. A runner that observes the world after every event uses it to
// stop at a time limit without running past it.
func (w *World) NextEventTime() (Time, bool) {
	if len(w.ready) > 0 {
		return w.now, true
	}
	if w.queue.len() == 0 {
		return 0, false
	}
	return w.queue.next(), true
}
