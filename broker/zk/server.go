package zk

// This file is the simulated ZooKeeper server: one standalone server
// (ZooKeeperServer with its request pipeline collapsed into one handler),
// assumed correct. It keeps the znode tree, the sessions and the watches,
// logs every write to its disk before answering, and recovers the tree and
// the sessions from that log when it restarts.
// Simplifications vs ZooKeeper, and why:
//   - One server, no quorum (ZAB): the issue asks for a correct ZooKeeper,
//     and Kafka's faults of interest are on the broker side.
//   - Session ids count from 1 instead of ZooKeeper's time-based ids, so
//     traces stay readable; ids never repeat because the counter is
//     recovered from the log.
//   - Sessions expire in tickTime buckets exactly as ZooKeeper's
//     SessionTrackerImpl rounds them, checked by one timer per tick.
//   - Watches belong to (session, connection): a new connection starts with
//     none and the client sets its watches again (SetWatches), as in
//     ZooKeeper, where watches belong to the server-side connection object.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/sim"
)

// ServerConfig holds the server's settings, with ZooKeeper's property names.
type ServerConfig struct {
	// TickTime is tickTime: the session-expiry granularity. Default 2000 ms.
	TickTime sim.Duration
	// MinSessionTimeout is minSessionTimeout: requested timeouts below it
	// are raised to it. Default 2 × TickTime.
	MinSessionTimeout sim.Duration
	// MaxSessionTimeout is maxSessionTimeout: requested timeouts above it
	// are lowered to it. Default 20 × TickTime.
	MaxSessionTimeout sim.Duration
	// DataDir is dataDir: the directory of the transaction log on the
	// server's sim disk. Default "zookeeper".
	DataDir string
}

// DefaultTickTime is ZooKeeper's default tickTime.
const DefaultTickTime = 2000 * sim.Millisecond

func (c ServerConfig) withDefaults() ServerConfig {
	if c.TickTime == 0 {
		c.TickTime = DefaultTickTime
	}
	if c.MinSessionTimeout == 0 {
		c.MinSessionTimeout = 2 * c.TickTime
	}
	if c.MaxSessionTimeout == 0 {
		c.MaxSessionTimeout = 20 * c.TickTime
	}
	if c.DataDir == "" {
		c.DataDir = "zookeeper"
	}
	return c
}

// Validate reports the first setting outside its allowed range, after
// defaults are filled in.
func (c ServerConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.TickTime < sim.Millisecond:
		return fmt.Errorf("zookeeper tickTime %v: must be >= 1ms (0 = default %v)", c.TickTime, DefaultTickTime)
	case c.MinSessionTimeout < 0 || c.MaxSessionTimeout < 0:
		return fmt.Errorf("zookeeper minSessionTimeout %v / maxSessionTimeout %v: must be >= 0 (0 = 2 and 20 ticks)", c.MinSessionTimeout, c.MaxSessionTimeout)
	case c.MinSessionTimeout > c.MaxSessionTimeout:
		return fmt.Errorf("zookeeper minSessionTimeout %v: must not be larger than maxSessionTimeout %v", c.MinSessionTimeout, c.MaxSessionTimeout)
	}
	return nil
}

// session is a client session.
// Invariant: conn == 0 or conn names the session's current connection, on
// which the server has sent seq messages and received nextXid-1 requests.
type session struct {
	id       int64
	timeout  sim.Duration
	deadline sim.Time
	conn     uint64
	node     sim.NodeID
	nextXid  int32
	seq      uint64
}

// watch is one registered watch: the session and the connection it was set on.
type watch struct {
	session int64
	conn    uint64
}

// Server is a ZooKeeper server node. Make it with NewServer and add it to
// a world; it recovers from its disk at every start.
type Server struct {
	cfg         ServerConfig
	tree        *tree
	log         *txnLog
	zxid        int64
	boot        int64
	nextConn    uint64
	nextSession int64
	sessions    map[int64]*session
	dataWatches map[string][]watch // getData, exists (also on missing znodes)
	childWatch  map[string][]watch // getChildren
	evs         []event            // scratch for apply
}

// NewServer returns a server with cfg. It panics if cfg does not validate:
// call cfg.Validate first to report bad settings.
func NewServer(cfg ServerConfig) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Server{cfg: cfg.withDefaults()}
}

// Start implements sim.Node: it replays the transaction log, restores the
// sessions with fresh timeouts (as ZooKeeper does after a restart) and
// starts the expiry tick.
func (s *Server) Start(ctx *sim.Context) {
	s.tree = newTree()
	s.sessions = map[int64]*session{}
	s.dataWatches = map[string][]watch{}
	s.childWatch = map[string][]watch{}
	s.nextSession = 1
	var txns []txn
	var cut int
	s.log, txns, cut = openLog(ctx.Disk(), s.cfg.DataDir)
	for i := range txns {
		s.applyTxn(&txns[i])
		s.zxid = max(s.zxid, txns[i].Zxid)
	}
	s.commit(ctx, &txn{Type: opBoot, Boot: s.boot + 1})
	now := ctx.Now()
	for _, sess := range s.sessions {
		s.touch(sess, now)
	}
	ctx.Log("zk-recovered", sim.I("txns", int64(len(txns))), sim.I("zxid", s.zxid),
		sim.I("sessions", int64(len(s.sessions))), sim.I("cut-bytes", int64(cut)))
	s.armTick(ctx)
}

// Receive implements sim.Node.
func (s *Server) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *ConnectRequest:
		s.connect(ctx, from, m)
	case *Request:
		s.request(ctx, from, m)
	default:
		panic(fmt.Sprintf("zk server: unexpected message %s from node %d", m.Kind(), from))
	}
}

// Timer implements sim.Node: the expiry tick.
func (s *Server) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	now := ctx.Now()
	var expired []int64
	for id, sess := range s.sessions {
		if sess.deadline <= now {
			expired = append(expired, id)
		}
	}
	slices.Sort(expired)
	for _, id := range expired {
		n := len(s.tree.ephemerals[id])
		s.fire(ctx, s.commit(ctx, &txn{Type: OpCloseSession, Session: id}))
		ctx.Log("zk-session-expire", sim.I("session", id), sim.I("ephemerals", int64(n)))
	}
	s.armTick(ctx)
}

func (s *Server) armTick(ctx *sim.Context) {
	now := ctx.Now()
	ctx.SetTimer(s.bucket(now).Sub(now), "zk-server-tick")
}

// bucket rounds t up to the next tick boundary, as ZooKeeper's ExpiryQueue
// rounds expiration times.
func (s *Server) bucket(t sim.Time) sim.Time {
	tick := sim.Time(s.cfg.TickTime)
	return (t/tick + 1) * tick
}

func (s *Server) touch(sess *session, now sim.Time) {
	sess.deadline = s.bucket(now.Add(sess.timeout))
}

// commit logs tx (synced) and applies it; it returns the events to fire.
func (s *Server) commit(ctx *sim.Context, tx *txn) []event {
	if tx.Type != opBoot {
		s.zxid++
		tx.Zxid = s.zxid
	}
	tx.Time = int64(ctx.Now()) / int64(sim.Millisecond)
	s.log.append(ctx.Disk(), tx)
	return s.applyTxn(tx)
}

// applyTxn applies a committed txn to the sessions and the tree; Start
// uses it to replay the log.
func (s *Server) applyTxn(tx *txn) []event {
	s.evs = s.evs[:0]
	switch tx.Type {
	case opBoot:
		s.boot = tx.Boot
		return nil
	case OpCreateSession:
		s.sessions[tx.Session] = &session{id: tx.Session, timeout: sim.Ms(tx.Timeout)}
		s.nextSession = max(s.nextSession, tx.Session+1)
		return nil
	case OpCloseSession:
		delete(s.sessions, tx.Session)
	}
	s.evs = s.tree.apply(tx, tx.Zxid, tx.Time, s.evs)
	return s.evs
}

func (s *Server) connect(ctx *sim.Context, from sim.NodeID, m *ConnectRequest) {
	now := ctx.Now()
	var sess *session
	if m.Session != 0 {
		if sess = s.sessions[m.Session]; sess == nil {
			ctx.Log("zk-connect-expired", sim.I("session", m.Session))
			ctx.Send(from, &ConnectResponse{Attempt: m.Attempt, Session: m.Session})
			return
		}
	} else {
		timeout := min(max(m.Timeout, s.cfg.MinSessionTimeout), s.cfg.MaxSessionTimeout)
		id := s.nextSession
		s.commit(ctx, &txn{Type: OpCreateSession, Session: id, Timeout: timeout.Milliseconds()})
		sess = s.sessions[id]
		ctx.Log("zk-session-create", sim.I("session", id), sim.I("timeout-ms", timeout.Milliseconds()))
	}
	s.nextConn++
	sess.conn = uint64(s.boot)<<32 | s.nextConn
	sess.node, sess.nextXid, sess.seq = from, 1, 0
	s.touch(sess, now)
	ctx.Send(from, &ConnectResponse{Attempt: m.Attempt, Session: sess.id, Timeout: sess.timeout, Conn: sess.conn})
	s.setWatches(ctx, sess, m.Watches, m.LastZxid)
}

// setWatches sets a reconnecting client's watches again, firing at once
// those whose znode changed after relZxid (DataTree.setWatches).
func (s *Server) setWatches(ctx *sim.Context, sess *session, w SetWatches, relZxid int64) {
	for _, p := range w.Data {
		switch n := s.tree.get(p); {
		case n == nil:
			s.send(ctx, sess, event{EventNodeDeleted, p})
		case n.stat.Mzxid > relZxid:
			s.send(ctx, sess, event{EventNodeDataChanged, p})
		default:
			s.addWatch(s.dataWatches, p, sess)
		}
	}
	for _, p := range w.Exist {
		if s.tree.get(p) != nil {
			s.send(ctx, sess, event{EventNodeCreated, p})
		} else {
			s.addWatch(s.dataWatches, p, sess)
		}
	}
	for _, p := range w.Child {
		switch n := s.tree.get(p); {
		case n == nil:
			s.send(ctx, sess, event{EventNodeDeleted, p})
		case n.stat.Pzxid > relZxid:
			s.send(ctx, sess, event{EventNodeChildrenChanged, p})
		default:
			s.addWatch(s.childWatch, p, sess)
		}
	}
}

func (s *Server) request(ctx *sim.Context, from sim.NodeID, m *Request) {
	sess := s.sessions[m.Session]
	if sess == nil {
		ctx.Send(from, &ConnectionReset{Conn: m.Conn, Expired: true})
		return
	}
	if sess.conn == 0 || sess.conn != m.Conn {
		ctx.Send(from, &ConnectionReset{Conn: m.Conn})
		return
	}
	switch {
	case m.Xid < sess.nextXid:
		return // a duplicate of a request already served
	case m.Xid > sess.nextXid:
		// A request was lost: a TCP stream would have reset.
		ctx.Log("zk-connection-gap", sim.I("session", sess.id), sim.I("xid", int64(m.Xid)), sim.I("want", int64(sess.nextXid)))
		sess.conn = 0
		ctx.Send(from, &ConnectionReset{Conn: m.Conn})
		return
	}
	sess.nextXid++
	s.touch(sess, ctx.Now())
	resp := &Response{Xid: m.Xid, Op: m.Op}
	switch m.Op {
	case OpPing:
	case OpExists, OpGetData, OpGetChildren:
		s.read(sess, m, resp)
	case OpCreate, OpDelete, OpSetData, OpCheck, OpMulti:
		s.fire(ctx, s.write(ctx, sess, m, resp))
	case OpCloseSession:
		n := len(s.tree.ephemerals[sess.id])
		s.fire(ctx, s.commit(ctx, &txn{Type: OpCloseSession, Session: sess.id}))
		ctx.Log("zk-session-close", sim.I("session", sess.id), sim.I("ephemerals", int64(n)))
	default:
		resp.Code = Unimplemented
	}
	s.send(ctx, sess, resp)
	if m.Op == OpCloseSession {
		sess.conn = 0
	}
}

func (s *Server) read(sess *session, m *Request, resp *Response) {
	if !validPath(m.Path) {
		resp.Code = BadArguments
		return
	}
	n := s.tree.get(m.Path)
	if m.Op == OpExists && m.Watch {
		s.addWatch(s.dataWatches, m.Path, sess) // on a missing znode too: fires on create
	}
	if n == nil {
		resp.Code = NoNode
		return
	}
	resp.Stat = n.stat
	switch m.Op {
	case OpGetData:
		resp.Data = n.data
		if m.Watch {
			s.addWatch(s.dataWatches, m.Path, sess)
		}
	case OpGetChildren:
		resp.Children = append([]string{}, n.children...)
		if m.Watch {
			s.addWatch(s.childWatch, m.Path, sess)
		}
	}
}

// write prepares, commits and applies a write, fills resp and returns the
// events to fire (before resp is sent, as ZooKeeper does).
func (s *Server) write(ctx *sim.Context, sess *session, m *Request, resp *Response) []event {
	ops := m.Ops
	if m.Op != OpMulti {
		ops = []Op{{Type: m.Op, Path: m.Path, Data: m.Data, Version: m.Version, Mode: m.Mode}}
	}
	p := newPrep(s.tree, sess.id)
	txns := make([]*txn, len(ops))
	for i, op := range ops {
		rc := BadArguments
		if op.Type == OpCreate || op.Type == OpDelete || op.Type == OpSetData || op.Type == OpCheck {
			txns[i], rc = p.op(op)
		}
		if rc == Ok {
			continue
		}
		resp.Code = rc
		if m.Op == OpMulti {
			resp.Results = make([]OpResult, len(ops))
			for j := range ops {
				code := Ok
				if j == i {
					code = rc
				} else if j > i {
					code = RuntimeInconsistency
				}
				resp.Results[j] = OpResult{Type: OpError, Code: code}
			}
		}
		return nil
	}
	tx := &txn{Type: OpMulti}
	for _, t := range txns {
		if t != nil {
			tx.Ops = append(tx.Ops, *t)
		}
	}
	if m.Op != OpMulti {
		if len(tx.Ops) == 0 {
			return nil // a lone check
		}
		tx = &tx.Ops[0]
	}
	var evs []event
	if m.Op != OpMulti || len(tx.Ops) > 0 {
		evs = s.commit(ctx, tx)
		ctx.Log("zk-txn", sim.S("op", m.Op.String()), sim.S("path", opPath(m)), sim.I("zxid", s.zxid), sim.I("session", sess.id))
	}
	stat := func(t *txn) Stat {
		if n := s.tree.get(t.Path); n != nil {
			return n.stat
		}
		return Stat{}
	}
	if m.Op != OpMulti {
		switch tx.Type {
		case OpCreate:
			resp.Path, resp.Stat = tx.Path, stat(tx)
		case OpSetData:
			resp.Stat = stat(tx)
		}
		return evs
	}
	resp.Results = make([]OpResult, len(ops))
	for i, op := range ops {
		r := OpResult{Type: op.Type}
		if t := txns[i]; t != nil && op.Type != OpDelete {
			r.Path, r.Stat = t.Path, stat(t)
		}
		resp.Results[i] = r
	}
	return evs
}

func opPath(m *Request) string {
	if m.Op == OpMulti && len(m.Ops) > 0 {
		return m.Ops[0].Path
	}
	return m.Path
}

func (s *Server) addWatch(m map[string][]watch, path string, sess *session) {
	w := watch{sess.id, sess.conn}
	ws := m[path][:0:0]
	for _, old := range m[path] {
		if s.live(old) && old != w {
			ws = append(ws, old)
		}
	}
	m[path] = append(ws, w)
}

func (s *Server) live(w watch) bool {
	sess := s.sessions[w.session]
	return sess != nil && sess.conn != 0 && sess.conn == w.conn
}

// fire delivers the watch events of a committed txn, in order; each watch
// fires once and is removed.
func (s *Server) fire(ctx *sim.Context, evs []event) {
	for _, ev := range evs {
		var ws []watch
		switch ev.Type {
		case EventNodeCreated, EventNodeDataChanged:
			ws = s.dataWatches[ev.Path]
			delete(s.dataWatches, ev.Path)
		case EventNodeChildrenChanged:
			ws = s.childWatch[ev.Path]
			delete(s.childWatch, ev.Path)
		case EventNodeDeleted:
			ws = s.dataWatches[ev.Path]
			for _, w := range s.childWatch[ev.Path] {
				if !slices.Contains(ws, w) {
					ws = append(ws, w)
				}
			}
			delete(s.dataWatches, ev.Path)
			delete(s.childWatch, ev.Path)
		}
		for _, w := range ws {
			if s.live(w) {
				s.send(ctx, s.sessions[w.session], ev)
			}
		}
	}
}

// send sends a response or a watch event on the session's connection.
func (s *Server) send(ctx *sim.Context, sess *session, m any) {
	if sess.conn == 0 {
		return
	}
	sess.seq++
	switch m := m.(type) {
	case *Response:
		m.Conn, m.Seq, m.Zxid = sess.conn, sess.seq, s.zxid
		ctx.Send(sess.node, m)
	case event:
		ctx.Send(sess.node, &WatcherEvent{Conn: sess.conn, Seq: sess.seq, Type: m.Type, Path: m.Path})
	}
}

// Get returns a znode's data and Stat, for tests and checkers.
func (s *Server) Get(path string) (data []byte, stat Stat, ok bool) {
	n := s.tree.get(path)
	if n == nil {
		return nil, Stat{}, false
	}
	return slices.Clone(n.data), n.stat, true
}

// Stat returns a znode's Stat without copying its data, for checkers that
// read a znode again only when it changed.
func (s *Server) Stat(path string) (Stat, bool) {
	if n := s.tree.get(path); n != nil {
		return n.stat, true
	}
	return Stat{}, false
}

// Children returns a znode's children, sorted, or nil if it does not exist.
func (s *Server) Children(path string) []string {
	if n := s.tree.get(path); n != nil {
		return slices.Clone(n.children)
	}
	return nil
}

// Sessions returns the ids of the live sessions, sorted.
func (s *Server) Sessions() []int64 {
	ids := make([]int64, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Zxid returns the last committed zxid.
func (s *Server) Zxid() int64 { return s.zxid }

// Dump renders the tree, one znode per line in path order, for golden
// files and failure messages.
func (s *Server) Dump() string { return s.tree.dump() }
