package sim

// This file is the virtual network. Simplifications, and why:
//   - Each directed link is FIFO by default, as a TCP connection is: a
//     message is never delivered before one sent earlier on the same link.
//     The reorder fault lets one message skip that order (as if sent on a new
//     connection).
//   - A partition is checked when a message is sent and again when it would
//     be delivered: messages in flight across a link when it is cut are lost,
//     as with a connection reset.

import "fmt"

// LinkConfig describes one directed link: its latency and its faults.
type LinkConfig struct {
	// MinLatency and MaxLatency bound the latency, drawn uniformly in steps
	// of LatencyStep (0 means 1µs). 0 <= MinLatency <= MaxLatency.
	MinLatency, MaxLatency, LatencyStep Duration
	// DropProbability, in [0,1], is the chance a message is lost.
	DropProbability float64
	// DuplicateProbability, in [0,1], is the chance a message is delivered twice.
	DuplicateProbability float64
	// ReorderProbability, in [0,1], is the chance a message ignores the
	// link's FIFO order (it may overtake earlier messages).
	ReorderProbability float64
	// DelayProbability, in [0,1], is the chance a message is held for an
	// extra Delay (>= 0) on top of its latency.
	DelayProbability float64
	Delay            Duration
}

// DefaultLink is the link used when none is configured: a data-center hop
// of 100µs to 1ms and no faults.
var DefaultLink = LinkConfig{MinLatency: 100 * Microsecond, MaxLatency: Millisecond, LatencyStep: Microsecond}

func probOK(p float64) bool { return p >= 0 && p <= 1 }

// Validate reports the first parameter outside its allowed range.
func (l LinkConfig) Validate() error {
	switch {
	case l.MinLatency < 0:
		return fmt.Errorf("link min latency %v: must be >= 0", l.MinLatency)
	case l.MaxLatency < l.MinLatency:
		return fmt.Errorf("link max latency %v: must be >= min latency %v", l.MaxLatency, l.MinLatency)
	case l.LatencyStep < 0:
		return fmt.Errorf("link latency step %v: must be >= 0 (0 = 1µs)", l.LatencyStep)
	case !probOK(l.DropProbability):
		return fmt.Errorf("link drop probability %v: must be in [0,1]", l.DropProbability)
	case !probOK(l.DuplicateProbability):
		return fmt.Errorf("link duplicate probability %v: must be in [0,1]", l.DuplicateProbability)
	case !probOK(l.ReorderProbability):
		return fmt.Errorf("link reorder probability %v: must be in [0,1]", l.ReorderProbability)
	case !probOK(l.DelayProbability):
		return fmt.Errorf("link delay probability %v: must be in [0,1]", l.DelayProbability)
	case l.Delay < 0:
		return fmt.Errorf("link delay %v: must be >= 0", l.Delay)
	}
	return nil
}

// LinkStats counts the traffic of one directed link.
type LinkStats struct {
	Sent, BytesSent, Delivered, Dropped, Duplicated int64
}

type link struct {
	cfg    LinkConfig
	steps  int // latency alternatives
	cut    bool
	lastAt Time // FIFO: the latest delivery time scheduled
	stats  LinkStats
}

func (l *link) configure(cfg LinkConfig) {
	l.cfg = cfg
	step := cfg.LatencyStep
	if step == 0 {
		step = Microsecond
	}
	l.cfg.LatencyStep = step
	l.steps = int((cfg.MaxLatency-cfg.MinLatency)/step) + 1
}

func (w *World) link(from, to NodeID) *link { return &w.links[int(from)*w.stride+int(to)] }

// send puts m on the link from -> to.
func (w *World) send(from, to NodeID, m Message) {
	if to < 0 || int(to) >= len(w.nodes) {
		panic(fmt.Sprintf("node %s sent %s to unknown node %d", w.nodes[from].name, m.Kind(), to))
	}
	l := w.link(from, to)
	size := m.Size()
	l.stats.Sent++
	l.stats.BytesSent += int64(size)
	src, dst := w.nodes[from], w.nodes[to]
	if int(from) >= len(dst.senders) {
		dst.senders = append(dst.senders, make([]bool, len(w.nodes)-len(dst.senders))...)
	}
	dst.senders[from] = true
	if l.cut {
		l.stats.Dropped++
		w.trace.add(w.events, w.now, from, src.name, "drop", []Field{S("to", dst.name), S("msg", m.Kind()), S("reason", "partition")})
		return
	}
	if l.cfg.DropProbability > 0 && w.chance(KindDrop, l.cfg.DropProbability) {
		l.stats.Dropped++
		w.trace.add(w.events, w.now, from, src.name, "drop", []Field{S("to", dst.name), S("msg", m.Kind()), S("reason", "fault")})
		return
	}
	copies := 1
	if l.cfg.DuplicateProbability > 0 && w.chance(KindDuplicate, l.cfg.DuplicateProbability) {
		copies = 2
		l.stats.Duplicated++
	}
	for i := 0; i < copies; i++ {
		msg := m
		if c, ok := m.(Cloner); ok {
			msg = c.Clone()
		}
		lat := l.cfg.MinLatency
		if l.steps > 1 {
			lat += Duration(w.choose(KindLatency, l.steps)) * l.cfg.LatencyStep
		}
		if l.cfg.DelayProbability > 0 && w.chance(KindDelay, l.cfg.DelayProbability) {
			lat += l.cfg.Delay
		}
		at := w.now.Add(lat)
		if l.cfg.ReorderProbability > 0 && w.chance(KindReorder, l.cfg.ReorderProbability) {
			// Skips FIFO: may overtake, and later messages do not wait for it.
		} else {
			if at <= l.lastAt {
				at = l.lastAt + 1
			}
			l.lastAt = at
		}
		w.trace.addSend(w.events, w.now, from, src.name, dst.name, m.Kind(), int64(size), int64(at.Sub(w.now)))
		w.schedule(event{at: at, kind: evDeliver, node: to, from: from, inc: dst.inc, msg: msg})
	}
}

// deliver hands a message to its destination unless the destination
// crashed since it was sent or the link was cut meanwhile.
func (w *World) deliver(ev *event) {
	dst := w.nodes[ev.node]
	l := w.link(ev.from, ev.node)
	reason := ""
	switch {
	case !dst.up || dst.inc != ev.inc:
		reason = "crashed"
	case l.cut:
		reason = "partition"
	}
	if reason != "" {
		l.stats.Dropped++
		w.trace.add(w.events, w.now, dst.id, dst.name, "drop", []Field{S("from", w.nodes[ev.from].name), S("msg", ev.msg.Kind()), S("reason", reason)})
		if reason == "crashed" {
			w.refuse(ev)
		}
		return
	}
	if r, ok := ev.msg.(*connectionReset); ok {
		w.trace.add(w.events, w.now, dst.id, dst.name, "reset", []Field{S("from", w.nodes[ev.from].name)})
		dst.inst.(Disconnectable).Disconnected(&dst.ctx, r.peer)
		return
	}
	l.stats.Delivered++
	w.trace.addRecv(w.events, w.now, dst.id, dst.name, w.nodes[ev.from].name, ev.msg.Kind())
	dst.inst.Receive(&dst.ctx, ev.from, ev.msg)
}

// Disconnectable is a node that learns when its connection to a peer is
// reset: when the peer's process dies on a running host (a Crash without
// LoseUnsynced, or a Shutdown), the OS closes its sockets and every node
// that had sent to it is told; when a message reaches a peer whose process
// is not running (or is a later incarnation), the host answers with a
// reset. A Kafka client then fails every request in flight on that
// connection at once rather than waiting for its timeout. Only nodes
// implementing it are told (after the reverse link's minimum latency); a
// cut link, a peer whose host lost power (until it restarts) or a sender
// that crashed meanwhile tells nothing, as an unreachable host does.
type Disconnectable interface {
	Disconnected(ctx *Context, peer NodeID)
}

// ResetChooser is a Disconnectable node that may want no resets for now
// (WantsResets false): then none is scheduled for it, so that a node
// whose protocol reacts to none adds no event to the trace.
type ResetChooser interface {
	WantsResets() bool
}

// connectionReset carries a reset back to the sender of a refused message.
type connectionReset struct{ peer NodeID }

func (*connectionReset) Kind() string { return "connection-reset" }
func (*connectionReset) Size() int    { return 0 }

// refuse answers a message that reached a dead process with a reset, when
// its sender wants to know (Disconnectable).
func (w *World) refuse(ev *event) {
	if !w.nodes[ev.node].hostDown {
		w.reset(ev.node, ev.from)
	}
}

// resetPeers tells the peers of n's dying process that their connections
// were reset, in id order.
func (w *World) resetPeers(n *nodeState) {
	for id, sent := range n.senders {
		if sent {
			w.reset(n.id, NodeID(id))
		}
	}
}

// reset sends a connection reset from peer to node, if node wants to know.
func (w *World) reset(peer, node NodeID) {
	src := w.nodes[node]
	if _, ok := src.inst.(Disconnectable); !ok || !src.up {
		return
	}
	if c, ok := src.inst.(ResetChooser); ok && !c.WantsResets() {
		return
	}
	back := w.link(peer, node)
	if back.cut {
		return
	}
	w.schedule(event{at: w.now.Add(back.cfg.MinLatency), kind: evDeliver, node: node, from: peer, inc: src.inc, msg: &connectionReset{peer: peer}})
}

// SetLink configures the link from -> to.
func (w *World) SetLink(from, to NodeID, cfg LinkConfig) error {
	if err := w.checkNode("link source", from); err != nil {
		return err
	}
	if err := w.checkNode("link destination", to); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	w.link(from, to).configure(cfg)
	return nil
}

// SetAllLinks configures every link, present and future, with cfg.
func (w *World) SetAllLinks(cfg LinkConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	w.cfg.Link = cfg
	for i := range w.links {
		w.links[i].configure(cfg)
	}
	return nil
}

// LinkStats returns the counters of the link from -> to.
func (w *World) LinkStats(from, to NodeID) LinkStats { return w.link(from, to).stats }

// cut sets or clears the cut flag of from -> to.
func (w *World) cutLink(from, to NodeID, cut bool) { w.link(from, to).cut = cut }

// Cut reports whether the link from -> to is cut.
func (w *World) Cut(from, to NodeID) bool { return w.link(from, to).cut }
