package raft_test

// This file is the test harness: a sim.World of tiny nodes that each host a
// raft.Client and a listener, sending Kafka's requests over the virtual
// network encoded in the wire format (every message is encoded and decoded
// on send, so the fields the client relies on must survive the versions it
// sets), and a global record of what every node committed, so that the
// invariants of RaftEventSimulationTest can be checked as the run goes.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type rpc struct {
	id   uint64
	key  int16
	ver  int16
	resp bool
	data []byte
}

func (m *rpc) Kind() string { return fmt.Sprintf("raft-api-%d", m.key) }
func (m *rpc) Size() int    { return len(m.data) }
func (m *rpc) Clone() sim.Message {
	c := *m
	c.data = append([]byte(nil), m.data...)
	return &c
}

func encodeReq(id uint64, r kmsg.Request) *rpc {
	return &rpc{id: id, key: r.Key(), ver: r.GetVersion(), data: r.AppendTo(nil)}
}

func decodeReq(m *rpc) kmsg.Request {
	r := kmsg.RequestForKey(m.key)
	r.SetVersion(m.ver)
	if err := r.ReadFrom(m.data); err != nil {
		panic(fmt.Sprintf("decode request %d v%d: %v", m.key, m.ver, err))
	}
	return r
}

func decodeResp(m *rpc) kmsg.Response {
	r := kmsg.ResponseForKey(m.key)
	r.SetVersion(m.ver)
	if err := r.ReadFrom(m.data); err != nil {
		panic(fmt.Sprintf("decode response %d v%d: %v", m.key, m.ver, err))
	}
	return r
}

type call struct {
	cb    func(kmsg.Response, error)
	timer sim.TimerID
}

// world is the shared record of a run.
type world struct {
	t           testing.TB
	w           *sim.World
	cfg         raft.Config
	nodes       []*node          // the live instance of each node
	committed   map[int64]string // offset -> "epoch/value" delivered by any node
	leaders     map[int32]int32  // epoch -> leader that took it
	violation   string
	appendEvery sim.Duration
}

func (h *world) fail(format string, args ...any) {
	if h.violation == "" {
		h.violation = fmt.Sprintf("t=%v: ", h.w.Now()) + fmt.Sprintf(format, args...)
	}
}

// node is a test node: a host for one raft.Client.
type node struct {
	h       *world
	id      int32
	ctx     *sim.Context
	c       *raft.Client
	calls   map[uint64]*call
	byTimer map[sim.TimerID]uint64
	nextID  uint64
	state   []string // the listener's state machine: the values applied
	next    int64    // the offset the listener expects next
	seq     int
}

func (n *node) Start(ctx *sim.Context) {
	n.ctx = ctx
	n.calls, n.byTimer = map[uint64]*call{}, map[sim.TimerID]uint64{}
	n.h.nodes[n.id] = n
	cfg := n.h.cfg
	cfg.NodeID = n.id
	c, err := raft.New(cfg, raft.Env{Send: n.send}, n)
	if err != nil {
		panic(err)
	}
	n.c = c
	c.Start(ctx)
	if n.h.appendEvery > 0 {
		ctx.SetTimer(n.h.appendEvery, "app-append")
	}
}

func (n *node) send(to int32, req kmsg.Request, timeout sim.Duration, cb func(kmsg.Response, error)) {
	n.nextID++
	id := n.nextID
	t := n.ctx.SetTimer(timeout, "rpc-timeout")
	n.calls[id] = &call{cb: cb, timer: t}
	n.byTimer[t] = id
	n.ctx.Send(sim.NodeID(to), encodeReq(id, req))
}

func (n *node) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	n.ctx = ctx
	msg, ok := m.(*rpc)
	if !ok {
		return
	}
	if msg.resp {
		cl := n.calls[msg.id]
		if cl == nil {
			return
		}
		delete(n.calls, msg.id)
		delete(n.byTimer, cl.timer)
		ctx.CancelTimer(cl.timer)
		cl.cb(decodeResp(msg), nil)
		return
	}
	req := decodeReq(msg)
	replied := false
	if !n.c.Handle(ctx, int32(from), req, func(r kmsg.Response) {
		if replied {
			panic("reply called twice")
		}
		replied = true
		n.ctx.Send(from, &rpc{id: msg.id, key: r.Key(), ver: r.GetVersion(), resp: true, data: r.AppendTo(nil)})
	}) {
		panic(fmt.Sprintf("request %d not handled", msg.key))
	}
}

func (n *node) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	n.ctx = ctx
	switch name {
	case "rpc-timeout":
		cid, ok := n.byTimer[id]
		if !ok {
			return
		}
		cl := n.calls[cid]
		delete(n.calls, cid)
		delete(n.byTimer, id)
		cl.cb(nil, fmt.Errorf("request timed out"))
	case "app-append":
		if n.c.IsLeader() {
			n.seq++
			if _, err := n.c.Append(ctx, [][]byte{[]byte(fmt.Sprintf("n%d-i%d-%d", n.id, ctx.Incarnation(), n.seq))}); err != nil {
				panic(err)
			}
		}
		ctx.SetTimer(n.h.appendEvery, "app-append")
	default:
		if !n.c.Timer(ctx, id, name) {
			panic("unknown timer " + name)
		}
	}
}

func (n *node) Shutdown(ctx *sim.Context) { n.c.Shutdown(ctx) }

// HandleCommit checks State Machine Safety as it applies.
func (n *node) HandleCommit(ctx *sim.Context, b raft.Batch) {
	if b.BaseOffset < n.next {
		n.h.fail("node %d: batch at %d delivered again (listener at %d)", n.id, b.BaseOffset, n.next)
	}
	for i, r := range b.Records {
		off := b.BaseOffset + int64(i)
		v := fmt.Sprintf("%d/%s", b.Epoch, r)
		if prev, ok := n.h.committed[off]; ok && prev != v {
			n.h.fail("State Machine Safety: node %d applied %q at offset %d, another node applied %q", n.id, v, off, prev)
		}
		n.h.committed[off] = v
		n.state = append(n.state, string(r))
	}
	n.next = b.LastOffset() + 1
}

func (n *node) HandleLoadSnapshot(ctx *sim.Context, s raft.Snapshot) {
	n.state = nil
	for _, r := range s.Records {
		n.state = append(n.state, string(r))
	}
	n.next = s.EndOffset
}

// HandleLeaderChange checks Election Safety and, for this node's own
// leadership, Leader Completeness: every batch committed anywhere is in
// its log.
func (n *node) HandleLeaderChange(ctx *sim.Context, l raft.LeaderAndEpoch) {
	if l.Leader != n.id {
		return
	}
	if prev, ok := n.h.leaders[l.Epoch]; ok && prev != n.id {
		n.h.fail("Election Safety: epoch %d led by %d and %d", l.Epoch, prev, n.id)
	}
	n.h.leaders[l.Epoch] = n.id
	if n.c.LogEndOffset() < n.h.maxCommitted()+1 {
		n.h.fail("Leader Completeness: node %d leads epoch %d with log end %d, but offset %d is committed",
			n.id, l.Epoch, n.c.LogEndOffset(), n.h.maxCommitted())
	}
}

func (n *node) Snapshot() [][]byte {
	out := make([][]byte, len(n.state))
	for i, s := range n.state {
		out[i] = []byte(s)
	}
	return out
}

func (h *world) maxCommitted() int64 {
	m := int64(-1)
	for off := range h.committed {
		m = max(m, off)
	}
	return m
}

// checkLogMatching checks Raft's Log Matching over the live nodes: two
// logs with a batch of the same offset and epoch agree on it (CRC) and on
// every batch before it that both still hold.
func (h *world) checkLogMatching() {
	type key struct {
		off   int64
		epoch int32
	}
	var logs [][]raft.Entry
	for i, n := range h.nodes {
		if n != nil && h.w.Up(sim.NodeID(i)) {
			logs = append(logs, n.c.Entries())
		}
	}
	for i := range logs {
		for j := i + 1; j < len(logs); j++ {
			a, b := logs[i], logs[j]
			bi := map[int64]raft.Entry{}
			for _, e := range b {
				bi[e.BaseOffset] = e
			}
			match := -1
			for k, e := range a {
				if o, ok := bi[e.BaseOffset]; ok && o.Epoch == e.Epoch {
					match = k
				}
			}
			for k := 0; k <= match; k++ {
				o, ok := bi[a[k].BaseOffset]
				if ok && (o.CRC != a[k].CRC || o.Epoch != a[k].Epoch || o.LastOffset != a[k].LastOffset) {
					h.fail("Log Matching: logs agree at offset %d epoch %d but differ at %d: %+v vs %+v",
						a[match].BaseOffset, a[match].Epoch, a[k].BaseOffset, a[k], o)
					return
				}
			}
		}
	}
}

func testConfig(voters []int32) raft.Config {
	return raft.Config{
		Voters: voters, ClusterID: "kafkasim-raft", Dir: "/kraft",
		ElectionTimeout: sim.Ms(1000), FetchTimeout: sim.Ms(2000), ElectionBackoffMax: sim.Ms(1000),
		RequestTimeout: sim.Ms(2000), RetryBackoff: sim.Ms(20), FetchMaxWait: sim.Ms(500),
		SegmentBytes: 4096, VoteCheckLog: true,
	}
}

// newWorld builds a world of len(voters)+observers nodes; node i has raft id i.
func newWorld(t testing.TB, seed uint64, cfg raft.Config, observers int, appendEvery sim.Duration) *world {
	w, err := sim.New(sim.Config{Seed: seed, MaxTime: sim.Time(sim.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	n := len(cfg.Voters) + observers
	h := &world{t: t, w: w, cfg: cfg, nodes: make([]*node, n), committed: map[int64]string{}, leaders: map[int32]int32{}, appendEvery: appendEvery}
	for i := 0; i < n; i++ {
		id := int32(i)
		if _, err := w.AddNode(fmt.Sprintf("n%d", i), func() sim.Node { return &node{h: h, id: id} }, sim.NodeOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := w.Inject(sim.Start{Node: sim.NodeID(i)}); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// run runs the world for d. A broken raft invariant (the client panics
// with "raft: invariant") is a violation of the run; any other panic fails
// the test.
func (h *world) run(d sim.Duration) {
	h.t.Helper()
	if res := h.w.RunFor(d); res.Reason == sim.Panicked {
		if v := fmt.Sprint(res.Panic.Value); strings.HasPrefix(v, "raft: invariant") {
			h.fail("%s", v)
			return
		}
		h.t.Fatalf("run panicked: %v\n%s", res.Panic, res.Panic.Stack)
	}
}

// leader returns the live node that leads the highest epoch, or nil.
func (h *world) leader() *node {
	var best *node
	for i, n := range h.nodes {
		if n != nil && h.w.Up(sim.NodeID(i)) && n.c.IsLeader() && (best == nil || n.c.Leader().Epoch > best.c.Leader().Epoch) {
			best = n
		}
	}
	return best
}
