package sim

import (
	"fmt"
	"strings"
)

// Fault is a change to the world injected at a point in time: a node's
// lifecycle or the network's shape. Faults are values so that scenarios can
// compose them into schedules and swarm runs can draw them from the seed.
type Fault interface {
	// Apply applies the fault now. Invalid parameters give an error and
	// change nothing.
	Apply(w *World) error
	// String describes the fault for traces and step lists.
	String() string
}

// Start starts a node that has never run.
type Start struct{ Node NodeID }

// Crash stops a node: its memory, timers and in-flight inputs are gone.
// With LoseUnsynced it is a power loss: the disk also loses what was not
// synced (per the chooser: none, a prefix or all of it, maybe torn).
// Without it, it is a process crash: the OS page cache survives.
type Crash struct {
	Node         NodeID
	LoseUnsynced bool
	// LoseAll makes a power loss drop every unsynced write, rather than the
	// prefix the chooser picks (a script that replays a published trace
	// needs the worst case).
	LoseAll bool
}

// Shutdown stops a node cleanly: a node that implements Stopper is told to
// stop (it may flush and close what it holds), then it goes down as a
// process crash does (nothing unsynced is lost: the OS has it).
type Shutdown struct{ Node NodeID }

// Stopper is implemented by nodes that can shut down cleanly.
type Stopper interface {
	Shutdown(ctx *Context)
}

// Restart starts a fresh instance of a crashed node, which recovers from its disk.
type Restart struct{ Node NodeID }

// Pause stalls a node for a duration (a GC or VM pause): nothing is handled,
// messages wait, timers fire late.
type Pause struct {
	Node NodeID
	For  Duration
}

// Partition cuts every link between nodes of different groups, both ways.
// Links of nodes in no group are untouched.
type Partition struct{ Groups [][]NodeID }

// Cut cuts the link From -> To, and To -> From too when BothWays.
type Cut struct {
	From, To NodeID
	BothWays bool
}

// Heal restores every cut link but those in Keep.
type Heal struct {
	// Keep are the directed links (From -> To) that stay cut: the end
	// phase of a script that says 'end-phase keep-cuts' heals the rest
	// and judges liveness under these.
	Keep []Cut
}

func (f Start) String() string { return fmt.Sprintf("start n%d", f.Node) }
func (f Crash) String() string {
	if f.LoseUnsynced {
		return fmt.Sprintf("power-loss n%d", f.Node)
	}
	return fmt.Sprintf("crash n%d", f.Node)
}
func (f Restart) String() string  { return fmt.Sprintf("restart n%d", f.Node) }
func (f Shutdown) String() string { return fmt.Sprintf("shutdown n%d", f.Node) }
func (f Pause) String() string    { return fmt.Sprintf("pause n%d %v", f.Node, f.For) }
func (f Partition) String() string {
	var parts []string
	for _, g := range f.Groups {
		var ids []string
		for _, id := range g {
			ids = append(ids, fmt.Sprintf("n%d", id))
		}
		parts = append(parts, "{"+strings.Join(ids, ",")+"}")
	}
	return "partition " + strings.Join(parts, " ")
}
func (f Cut) String() string {
	if f.BothWays {
		return fmt.Sprintf("cut n%d<->n%d", f.From, f.To)
	}
	return fmt.Sprintf("cut n%d->n%d", f.From, f.To)
}
func (Heal) String() string { return "heal" }

// Apply implements Fault.
func (f Start) Apply(w *World) error {
	if err := w.checkNode("start", f.Node); err != nil {
		return err
	}
	n := w.nodes[f.Node]
	if n.started {
		return fmt.Errorf("start %s: already started (use Restart after a crash)", n.name)
	}
	w.start(n)
	return nil
}

// Apply implements Fault.
func (f Crash) Apply(w *World) error {
	if err := w.checkNode("crash", f.Node); err != nil {
		return err
	}
	n := w.nodes[f.Node]
	if !n.up {
		return fmt.Errorf("crash %s: node is not running", n.name)
	}
	n.up = false
	n.inst = nil
	n.inc++
	n.touched++
	n.blocked = 0
	n.disk.down = true
	n.disk.busy = 0
	if f.LoseUnsynced {
		n.disk.powerLoss(f.LoseAll)
	}
	w.trace.add(w.events, w.now, n.id, n.name, "crash", []Field{S("lose-unsynced", fmt.Sprint(f.LoseUnsynced))})
	// A process that dies on a running host has its connections reset; a
	// host that lost power says nothing (network.go).
	n.hostDown = f.LoseUnsynced
	if !n.hostDown {
		w.resetPeers(n)
	}
	clear(n.senders)
	return nil
}

// Apply implements Fault.
func (f Shutdown) Apply(w *World) error {
	if err := w.checkNode("shutdown", f.Node); err != nil {
		return err
	}
	n := w.nodes[f.Node]
	if !n.up {
		return fmt.Errorf("shutdown %s: node is not running", n.name)
	}
	if s, ok := n.inst.(Stopper); ok {
		if err := w.Act(f.Node, s.Shutdown); err != nil {
			return err
		}
	}
	w.trace.add(w.events, w.now, n.id, n.name, "shutdown", nil)
	return Crash{Node: f.Node}.Apply(w)
}

// Apply implements Fault.
func (f Restart) Apply(w *World) error {
	if err := w.checkNode("restart", f.Node); err != nil {
		return err
	}
	n := w.nodes[f.Node]
	if n.up || !n.started {
		return fmt.Errorf("restart %s: node must be crashed (up=%v, started=%v)", n.name, n.up, n.started)
	}
	w.start(n)
	return nil
}

// Apply implements Fault.
func (f Pause) Apply(w *World) error {
	if err := w.checkNode("pause", f.Node); err != nil {
		return err
	}
	if f.For < 0 {
		return fmt.Errorf("pause duration %v: must be >= 0", f.For)
	}
	n := w.nodes[f.Node]
	if !n.up {
		return fmt.Errorf("pause %s: node is not running", n.name)
	}
	n.blocked = max(n.blocked, w.now.Add(f.For))
	w.trace.add(w.events, w.now, n.id, n.name, "pause", []Field{I("until", int64(n.blocked))})
	return nil
}

// Apply implements Fault.
func (f Partition) Apply(w *World) error {
	group := make(map[NodeID]int)
	for gi, g := range f.Groups {
		for _, id := range g {
			if err := w.checkNode("partition", id); err != nil {
				return err
			}
			if prev, dup := group[id]; dup {
				return fmt.Errorf("partition: node %s is in groups %d and %d (each node may be in one group)", w.Name(id), prev, gi)
			}
			group[id] = gi
		}
	}
	for _, g := range f.Groups {
		for _, a := range g {
			for _, h := range f.Groups {
				for _, b := range h {
					if group[a] != group[b] {
						w.cutLink(a, b, true)
					}
				}
			}
		}
	}
	w.traceWorld("partition", S("groups", w.describeGroups(f.Groups)))
	return nil
}

func (w *World) describeGroups(groups [][]NodeID) string {
	var parts []string
	for _, g := range groups {
		var names []string
		for _, id := range g {
			names = append(names, w.Name(id))
		}
		parts = append(parts, "{"+strings.Join(names, ",")+"}")
	}
	return strings.Join(parts, " ")
}

// Apply implements Fault.
func (f Cut) Apply(w *World) error {
	if err := w.checkNode("cut", f.From); err != nil {
		return err
	}
	if err := w.checkNode("cut", f.To); err != nil {
		return err
	}
	if f.From == f.To {
		return fmt.Errorf("cut: source and destination are both %s (must differ)", w.Name(f.From))
	}
	w.cutLink(f.From, f.To, true)
	if f.BothWays {
		w.cutLink(f.To, f.From, true)
	}
	w.traceWorld("cut", S("from", w.Name(f.From)), S("to", w.Name(f.To)), S("both-ways", fmt.Sprint(f.BothWays)))
	return nil
}

// Apply implements Fault.
func (f Heal) Apply(w *World) error {
	for _, k := range f.Keep {
		if err := w.checkNode("heal", k.From); err != nil {
			return err
		}
		if err := w.checkNode("heal", k.To); err != nil {
			return err
		}
		if k.BothWays {
			return fmt.Errorf("heal: keep %s: name each direction of a kept link as its own Cut", k)
		}
	}
	kept := make([]bool, len(w.links))
	var names []string
	for _, k := range f.Keep {
		if w.Cut(k.From, k.To) {
			kept[int(k.From)*w.stride+int(k.To)] = true
			names = append(names, w.Name(k.From)+"->"+w.Name(k.To))
		}
	}
	for i := range w.links {
		if !kept[i] {
			w.links[i].cut = false
		}
	}
	if len(f.Keep) == 0 {
		w.traceWorld("heal")
	} else {
		w.traceWorld("heal", S("kept", strings.Join(names, ",")))
	}
	return nil
}

// Inject applies f now.
func (w *World) Inject(f Fault) error { return f.Apply(w) }

// InjectAt schedules f at time t. Unknown nodes and negative durations are
// rejected now; a fault that does not fit the state it meets (crashing a
// node that is down) fails the run with its error when it applies.
func (w *World) InjectAt(t Time, f Fault) error {
	if err := w.check(f); err != nil {
		return err
	}
	return w.At(t, f.String(), func(w *World) {
		if err := f.Apply(w); err != nil {
			panic(fmt.Errorf("fault %s: %w", f, err))
		}
	})
}

// check validates what can be known about f before it applies: that its
// nodes exist and its durations are not negative.
func (w *World) check(f Fault) error {
	switch f := f.(type) {
	case Start:
		return w.checkNode("start", f.Node)
	case Crash:
		return w.checkNode("crash", f.Node)
	case Shutdown:
		return w.checkNode("shutdown", f.Node)
	case Restart:
		return w.checkNode("restart", f.Node)
	case Pause:
		if f.For < 0 {
			return fmt.Errorf("pause duration %v: must be >= 0", f.For)
		}
		return w.checkNode("pause", f.Node)
	case Partition:
		for _, g := range f.Groups {
			for _, id := range g {
				if err := w.checkNode("partition", id); err != nil {
					return err
				}
			}
		}
	case Cut:
		if err := w.checkNode("cut", f.From); err != nil {
			return err
		}
		return w.checkNode("cut", f.To)
	}
	return nil
}

// WipeDisk replaces a stopped node's disk with a blank one, as an operator
// who swaps a failed drive (or reprovisions the machine) does: every file,
// synced or not, is gone, and the node's next Restart finds an empty
// directory, which Kafka's storage tool formats anew (a new meta.properties
// with a new directory.id, KIP-853). KAFKA-14077 is what a static quorum
// does when a voter comes back this way.
type WipeDisk struct{ Node NodeID }

func (f WipeDisk) String() string { return fmt.Sprintf("wipe-disk n%d", f.Node) }

// Apply implements Fault.
func (f WipeDisk) Apply(w *World) error {
	if err := w.checkNode("wipe-disk", f.Node); err != nil {
		return err
	}
	n := w.nodes[f.Node]
	if n.up {
		return fmt.Errorf("wipe-disk %s: the node is running: a disk is wiped with its machine off (crash, power-loss or shutdown it first)", n.name)
	}
	n.disk.wipe()
	w.trace.add(w.events, w.now, n.id, n.name, "wipe-disk", nil)
	return nil
}
