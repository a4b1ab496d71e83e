package sim

import (
	"fmt"
	"math/rand/v2"
)

// NodeID identifies a node of a world: its index in the order added.
type NodeID int32

// TimerID identifies a timer set by a node; it is unique within a world.
type TimerID uint64

// Message is what travels on the virtual network. A message is immutable
// once sent: the sender must not change it afterwards. A message that holds
// mutable memory implements Cloner, and the network sends a copy.
type Message interface {
	// Kind names the message in traces, e.g. "FetchRequest".
	Kind() string
	// Size is the message's length on the wire, in bytes, for accounting.
	Size() int
}

// Cloner is implemented by messages that must be copied when sent, so that
// nodes never share mutable memory.
type Cloner interface {
	Clone() Message
}

// Bytes is a message carrying raw bytes (for example a request encoded in
// Kafka's wire format). Its payload is copied on send.
type Bytes struct {
	Name string
	Data []byte
}

// Kind implements Message.
func (b *Bytes) Kind() string { return b.Name }

// Size implements Message.
func (b *Bytes) Size() int { return len(b.Data) }

// Clone implements Cloner.
func (b *Bytes) Clone() Message { return &Bytes{Name: b.Name, Data: append([]byte(nil), b.Data...)} }

// Node is a state machine driven by the world, one input at a time. It
// changes only its own state and acts on the world only through its
// Context. Start is called when the node first starts and after every
// restart, on a fresh instance that must recover from its disk alone.
type Node interface {
	Start(ctx *Context)
	Receive(ctx *Context, from NodeID, m Message)
	Timer(ctx *Context, id TimerID, name string)
}

// NodeOptions configure a node's clock and disk.
type NodeOptions struct {
	// Skew is added to the node's clock: ctx.Now() = world time + Skew + drift.
	Skew Duration
	// DriftPPM makes the node's clock run fast (positive) or slow
	// (negative) by this many parts per million; allowed [-100000, 100000].
	DriftPPM int64
	// Disk configures the node's disk.
	Disk DiskConfig
}

// Validate reports the first option outside its allowed range.
func (o NodeOptions) Validate() error {
	if o.DriftPPM < -100000 || o.DriftPPM > 100000 {
		return fmt.Errorf("clock drift %d ppm: must be in [-100000, 100000]", o.DriftPPM)
	}
	return o.Disk.Validate()
}

type nodeState struct {
	id      NodeID
	name    string
	factory func() Node
	opts    NodeOptions
	inst    Node
	up      bool
	started bool
	inc     uint32 // incarnation: bumped by every crash
	blocked Time   // nothing is handled before this time (pause, disk latency)
	touched uint64 // handler runs and crashes so far (World.Touched)
	// senders marks, by node id, the nodes that sent to this incarnation:
	// its peers, told of a reset when its process dies (network.go).
	senders []bool
	// hostDown: the node lost power; its host answers nothing, not even a
	// reset, until it restarts.
	hostDown bool
	disk     *Disk
	rand     *rand.Rand
	ctx      Context
}

// Context is a node's only window on the world. It is valid only during the
// call it is passed to.
type Context struct {
	w *World
	n *nodeState
}

// ID returns the node's id.
func (c *Context) ID() NodeID { return c.n.id }

// Name returns the node's name.
func (c *Context) Name() string { return c.n.name }

// Incarnation returns which life of the node this is: 0 at the first
// start, bumped by every crash. A process's connections die with it, so a
// node can stamp its requests with it and drop answers meant for an earlier
// life (a restarted Kafka broker never reads the bytes of its old sockets).
func (c *Context) Incarnation() uint32 { return c.n.inc }

// Now returns the node's own clock, which may be skewed and drift.
func (c *Context) Now() Time { return c.n.localTime(c.w.now) }

// Send sends m to node to over the virtual network.
func (c *Context) Send(to NodeID, m Message) { c.w.send(c.n.id, to, m) }

// Refuse resets the connection from peer, as a process that is not
// listening yet (or any more) does: a Disconnectable peer is told, after
// the link's minimum latency (network.go).
func (c *Context) Refuse(peer NodeID) { c.w.reset(c.n.id, peer) }

// SetTimer asks for Timer(name) after d on the node's own clock. A crash
// cancels all of a node's timers.
func (c *Context) SetTimer(d Duration, name string) TimerID {
	return c.w.setTimer(c.n, d, name)
}

// CancelTimer cancels a timer; cancelling one that fired or was cancelled
// does nothing.
func (c *Context) CancelTimer(id TimerID) { c.w.cancelTimer(id) }

// Disk returns the node's disk.
func (c *Context) Disk() *Disk { return c.n.disk }

// Rand returns the node's own random stream, derived from the world's seed,
// the node and its incarnation. Use it for decisions that need not be
// explored (jitter, ids); use Choose for decisions an explorer should branch on.
func (c *Context) Rand() *rand.Rand { return c.n.rand }

// Choose draws an index in [0, n) through the world's chooser, as a
// workload decision.
func (c *Context) Choose(n int) int { return c.w.choose(KindWorkload, n) }

// Chance reports, through the world's chooser, whether an event of
// probability p happens.
func (c *Context) Chance(p float64) bool { return c.w.chance(KindWorkload, p) }

// Log writes a transition to the trace.
func (c *Context) Log(kind string, fields ...Field) {
	c.w.trace.add(c.w.events, c.w.now, c.n.id, c.n.name, kind, fields)
}

// LogFirst is Log(kind, first, fields...) without building that slice:
// for a node that puts the same field first in each of its records.
func (c *Context) LogFirst(kind string, first Field, fields ...Field) {
	c.w.trace.addFirst(c.w.events, c.w.now, c.n.id, c.n.name, kind, first, fields)
}

// Lookup returns the id of the node with that name.
func (c *Context) Lookup(name string) (NodeID, bool) { return c.w.Lookup(name) }

// NameOf returns the name of node id ("" if there is none).
func (c *Context) NameOf(id NodeID) string { return c.w.Name(id) }

// Stop ends the run after the current event.
func (c *Context) Stop() { c.w.Stop() }

func (n *nodeState) localTime(t Time) Time {
	return t + Time(n.opts.Skew) + Time(int64(t)/1000000*n.opts.DriftPPM+int64(t)%1000000*n.opts.DriftPPM/1000000)
}

// globalDelay converts a duration on the node's clock to world time.
func (n *nodeState) globalDelay(d Duration) Duration {
	if n.opts.DriftPPM == 0 || d <= 0 {
		return d
	}
	// d_world = d * 1e6 / (1e6 + ppm), rounded up so a timer never fires
	// early on the node's clock.
	den := 1000000 + n.opts.DriftPPM
	q, r := int64(d)/den, int64(d)%den
	return Duration(q*1000000 + (r*1000000+den-1)/den)
}
