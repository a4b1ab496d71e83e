package zk

// This file is the ZooKeeper client a broker embeds (ZooKeeper's ClientCnxn
// with Kafka's ZooKeeperClient on top): it connects, pings, detects a lost
// connection, reconnects with the same session and its watches, and when
// the server says the session has expired it reports Expired and opens a new
// session, as Kafka's ZooKeeperClient.reinitialize does.
// Simplifications vs ZooKeeper, and why:
//   - The client pings every timeout/3 whether or not it is idle
//     (ZooKeeper pings after readTimeout/2 = timeout/3 of idleness): the
//     same detection bound with one periodic timer.
//   - One watcher (OnWatch) receives every watch event; ZooKeeper allows a
//     watcher per call. Kafka's ZooKeeperClient also funnels all events
//     into one handler and dispatches by path.
//   - The connection is declared lost when nothing arrives for
//     readTimeout = 2/3 × the negotiated timeout (as ClientCnxn does), when
//     a message is missing from the server's sequence, or on a
//     ConnectionReset. Requests already sent then fail with ConnectionLoss;
//     requests made while disconnected wait and are sent on reconnection.
//   - The client itself never decides that its session expired: only the
//     server does, when the client reaches it again (ZooKeeper's rule).

import (
	"slices"

	"github.com/kafkasim/kafkasim/sim"
)

// KeeperState is the state of a client's session (Watcher.Event.KeeperState).
type KeeperState int32

// The session states reported to OnSession.
const (
	Disconnected  KeeperState = 0
	SyncConnected KeeperState = 3
	Closed        KeeperState = 7
	Expired       KeeperState = -112
)

// String returns ZooKeeper's name of the state.
func (s KeeperState) String() string {
	switch s {
	case Disconnected:
		return "Disconnected"
	case SyncConnected:
		return "SyncConnected"
	case Closed:
		return "Closed"
	case Expired:
		return "Expired"
	}
	return "KeeperState(?)"
}

// SessionEvent reports a change of session state. Session is the session
// the event is about: the new one for SyncConnected, the lost one for Expired.
type SessionEvent struct {
	State   KeeperState
	Session int64
	Timeout sim.Duration // negotiated, for SyncConnected
}

// WatchEvent reports that a watched znode changed.
type WatchEvent struct {
	Type EventType
	Path string
}

// Callback receives the outcome of an operation: r.Code, and per operation
// r.Path (create), r.Data (getData), r.Stat, r.Children (getChildren) or
// r.Results (multi). r must not be modified.
type Callback func(ctx *sim.Context, r *Response)

// TimerName is the name of the client's timer; a node routes timers whose
// name has the prefix "zk-" to HandleTimer.
const TimerName = "zk-client-tick"

// call is one operation waiting to be sent or answered.
type call struct {
	req *Request
	cb  Callback
}

// Client is a ZooKeeper client embedded in a node. The node calls Start
// from its own Start, and forwards its messages and timers to HandleMessage
// and HandleTimer. Operations answer through callbacks run inside
// HandleMessage (or HandleTimer, for ConnectionLoss).
type Client struct {
	// OnSession, if set, is called on every session state change.
	OnSession func(ctx *sim.Context, ev SessionEvent)
	// OnWatch, if set, is called for every watch event.
	OnWatch func(ctx *sim.Context, ev WatchEvent)

	server     sim.NodeID
	requested  sim.Duration
	negotiated sim.Duration
	state      KeeperState
	session    int64
	conn       uint64
	attempt    uint64
	nextXid    int32
	nextSeq    uint64
	lastZxid   int64
	lastRecv   sim.Time
	timer      sim.TimerID
	interval   sim.Duration
	pending    []call // sent on conn, in xid order
	queued     []call // waiting for a connection
	dataW      map[string]bool
	existW     map[string]bool
	childW     map[string]bool
}

// NewClient returns a client of the server node with the requested session
// timeout (Kafka's zookeeper.session.timeout.ms); the server clamps it to
// [minSessionTimeout, maxSessionTimeout]. It panics if the timeout is not
// positive.
func NewClient(server sim.NodeID, sessionTimeout sim.Duration) *Client {
	if sessionTimeout <= 0 {
		panic("zk.NewClient: session timeout must be > 0")
	}
	return &Client{server: server, requested: sessionTimeout, state: Disconnected,
		dataW: map[string]bool{}, existW: map[string]bool{}, childW: map[string]bool{}}
}

// Start connects, opening a new session.
func (c *Client) Start(ctx *sim.Context) {
	c.connect(ctx)
}

// State returns the session state: Disconnected (connecting), SyncConnected or Closed.
func (c *Client) State() KeeperState { return c.state }

// SessionID returns the current session id, 0 before the first connection.
func (c *Client) SessionID() int64 { return c.session }

// SessionTimeout returns the negotiated session timeout (the requested one
// before the first connection).
func (c *Client) SessionTimeout() sim.Duration {
	if c.negotiated > 0 {
		return c.negotiated
	}
	return c.requested
}

// HandleMessage processes m if it is for the client and reports whether it was.
func (c *Client) HandleMessage(ctx *sim.Context, from sim.NodeID, m sim.Message) bool {
	if from != c.server {
		return false
	}
	switch m := m.(type) {
	case *ConnectResponse:
		c.connected(ctx, m)
	case *Response:
		if c.accept(ctx, m.Conn, m.Seq) {
			c.lastZxid = max(c.lastZxid, m.Zxid)
			c.response(ctx, m)
		}
	case *WatcherEvent:
		if c.accept(ctx, m.Conn, m.Seq) {
			c.watchEvent(ctx, m)
		}
	case *ConnectionReset:
		if c.state == SyncConnected && m.Conn == c.conn {
			if m.Expired {
				c.expired(ctx)
			} else {
				c.lost(ctx, "reset")
			}
		}
	default:
		return false
	}
	return true
}

// HandleTimer processes the client's timer and reports whether id was it.
func (c *Client) HandleTimer(ctx *sim.Context, id sim.TimerID, name string) bool {
	if id != c.timer || c.timer == 0 {
		return false
	}
	c.timer = 0
	switch c.state {
	case SyncConnected:
		if ctx.Now().Sub(c.lastRecv) >= c.negotiated*2/3 {
			c.lost(ctx, "timeout")
			return true
		}
		c.send(ctx, call{req: &Request{Op: OpPing}})
	case Disconnected:
		c.connect(ctx) // the previous attempt went unanswered
		return true
	case Closed:
		return true
	}
	c.arm(ctx)
	return true
}

// Close closes the session (Kafka closes its ZooKeeper client on a
// controlled shutdown, which deletes the broker's ephemeral znodes at once).
// Queued and later operations fail with SessionExpired. A client that is
// not connected leaves its session to expire on the server.
func (c *Client) Close(ctx *sim.Context) {
	if c.state == Closed {
		return
	}
	if c.state == SyncConnected {
		c.send(ctx, call{req: &Request{Op: OpCloseSession}})
	}
	c.state = Closed
	ctx.CancelTimer(c.timer)
	c.timer = 0
	c.failAll(ctx, SessionExpired)
	ctx.Log("zk-client", sim.S("state", "closed"), sim.I("session", c.session))
	if c.OnSession != nil {
		c.OnSession(ctx, SessionEvent{State: Closed, Session: c.session})
	}
}

// Create creates path with data in mode; r.Path is the name created.
func (c *Client) Create(ctx *sim.Context, path string, data []byte, mode CreateMode, cb Callback) {
	c.do(ctx, &Request{Op: OpCreate, Path: path, Data: data, Mode: mode}, cb)
}

// Delete deletes path if its version matches (AnyVersion for any).
func (c *Client) Delete(ctx *sim.Context, path string, version int32, cb Callback) {
	c.do(ctx, &Request{Op: OpDelete, Path: path, Version: version}, cb)
}

// SetData sets path's data if its version matches (AnyVersion for any);
// r.Stat is the new Stat.
func (c *Client) SetData(ctx *sim.Context, path string, data []byte, version int32, cb Callback) {
	c.do(ctx, &Request{Op: OpSetData, Path: path, Data: data, Version: version}, cb)
}

// GetData reads path; with watch set, a data watch fires on its next
// change or deletion.
func (c *Client) GetData(ctx *sim.Context, path string, watch bool, cb Callback) {
	c.do(ctx, &Request{Op: OpGetData, Path: path, Watch: watch}, cb)
}

// Exists reads path's Stat (r.Code is NoNode if it is missing); with watch
// set, a watch fires on its creation, change or deletion.
func (c *Client) Exists(ctx *sim.Context, path string, watch bool, cb Callback) {
	c.do(ctx, &Request{Op: OpExists, Path: path, Watch: watch}, cb)
}

// GetChildren lists path's children, sorted; with watch set, a child watch
// fires on the next child creation or deletion, or path's deletion.
func (c *Client) GetChildren(ctx *sim.Context, path string, watch bool, cb Callback) {
	c.do(ctx, &Request{Op: OpGetChildren, Path: path, Watch: watch}, cb)
}

// Multi applies ops atomically: all of them or none. r.Code is the first
// failure; r.Results has one entry per op.
func (c *Client) Multi(ctx *sim.Context, ops []Op, cb Callback) {
	c.do(ctx, &Request{Op: OpMulti, Ops: slices.Clone(ops)}, cb)
}

// CreateRecursive creates path as a persistent znode, creating missing
// parents with no data first (Kafka's KafkaZkClient.createRecursive). A
// path that already exists answers NodeExists.
func (c *Client) CreateRecursive(ctx *sim.Context, path string, data []byte, cb Callback) {
	c.Create(ctx, path, data, Persistent, func(ctx *sim.Context, r *Response) {
		if r.Code != NoNode || path == "/" {
			if cb != nil {
				cb(ctx, r)
			}
			return
		}
		parent, _ := splitPath(path)
		c.CreateRecursive(ctx, parent, nil, func(ctx *sim.Context, pr *Response) {
			if pr.Code != Ok && pr.Code != NodeExists {
				if cb != nil {
					cb(ctx, pr)
				}
				return
			}
			c.Create(ctx, path, data, Persistent, cb)
		})
	})
}

func (c *Client) do(ctx *sim.Context, req *Request, cb Callback) {
	switch c.state {
	case Closed:
		if cb != nil {
			cb(ctx, &Response{Op: req.Op, Code: SessionExpired})
		}
	case SyncConnected:
		c.send(ctx, call{req: req, cb: cb})
	default:
		c.queued = append(c.queued, call{req: req, cb: cb})
	}
}

func (c *Client) send(ctx *sim.Context, cl call) {
	cl.req.Session, cl.req.Conn, cl.req.Xid = c.session, c.conn, c.nextXid
	c.nextXid++
	c.pending = append(c.pending, cl)
	ctx.Send(c.server, cl.req)
}

func (c *Client) arm(ctx *sim.Context) {
	if c.timer != 0 {
		ctx.CancelTimer(c.timer)
	}
	c.timer = ctx.SetTimer(c.interval, TimerName)
}

// connect sends a ConnectRequest for the current session (0 for a new one)
// with the client's watches.
func (c *Client) connect(ctx *sim.Context) {
	c.attempt++
	c.interval = c.SessionTimeout() / 3
	ctx.Send(c.server, &ConnectRequest{Attempt: c.attempt, Session: c.session, Timeout: c.requested,
		LastZxid: c.lastZxid, Watches: SetWatches{Data: keys(c.dataW), Exist: keys(c.existW), Child: keys(c.childW)}})
	c.arm(ctx)
}

func keys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (c *Client) connected(ctx *sim.Context, m *ConnectResponse) {
	if c.state != Disconnected || m.Attempt != c.attempt {
		return // a stale or duplicated answer
	}
	if m.Timeout <= 0 {
		c.expired(ctx)
		return
	}
	c.state, c.session, c.negotiated, c.conn = SyncConnected, m.Session, m.Timeout, m.Conn
	c.nextXid, c.nextSeq, c.lastRecv = 1, 1, ctx.Now()
	c.interval = c.negotiated / 3
	c.arm(ctx)
	queued := c.queued
	c.queued = nil
	for _, cl := range queued {
		c.send(ctx, cl)
	}
	ctx.Log("zk-client", sim.S("state", "connected"), sim.I("session", c.session), sim.I("timeout-ms", c.negotiated.Milliseconds()))
	if c.OnSession != nil {
		c.OnSession(ctx, SessionEvent{State: SyncConnected, Session: c.session, Timeout: c.negotiated})
	}
}

// accept checks that a server message belongs to the current connection
// and comes next in its sequence; a gap means a message was lost, and the
// connection is treated as reset.
func (c *Client) accept(ctx *sim.Context, conn, seq uint64) bool {
	if c.state != SyncConnected || conn != c.conn || seq < c.nextSeq {
		return false // another connection's, or a duplicate
	}
	if seq > c.nextSeq {
		c.lost(ctx, "gap")
		return false
	}
	c.nextSeq++
	c.lastRecv = ctx.Now()
	return true
}

func (c *Client) response(ctx *sim.Context, m *Response) {
	if len(c.pending) == 0 || c.pending[0].req.Xid != m.Xid {
		c.lost(ctx, "xid") // answers come in order: a request was lost
		return
	}
	cl := c.pending[0]
	c.pending = c.pending[1:]
	if req := cl.req; req.Watch {
		switch {
		case m.Code == Ok && req.Op == OpGetChildren:
			c.childW[req.Path] = true
		case m.Code == Ok:
			c.dataW[req.Path] = true
		case m.Code == NoNode && req.Op == OpExists:
			c.existW[req.Path] = true
		}
	}
	if cl.req.Op == OpCloseSession {
		return
	}
	if cl.cb != nil {
		cl.cb(ctx, m)
	}
}

func (c *Client) watchEvent(ctx *sim.Context, m *WatcherEvent) {
	p := m.Path
	had := false
	switch m.Type {
	case EventNodeCreated, EventNodeDataChanged:
		had = c.dataW[p] || c.existW[p]
		delete(c.dataW, p)
		delete(c.existW, p)
	case EventNodeChildrenChanged:
		had = c.childW[p]
		delete(c.childW, p)
	case EventNodeDeleted:
		had = c.dataW[p] || c.existW[p] || c.childW[p]
		delete(c.dataW, p)
		delete(c.existW, p)
		delete(c.childW, p)
	}
	if had && c.OnWatch != nil {
		c.OnWatch(ctx, WatchEvent{Type: m.Type, Path: p})
	}
}

// lost handles a lost connection: requests in flight fail with
// ConnectionLoss, Disconnected is reported, and the client reconnects to
// the same session.
func (c *Client) lost(ctx *sim.Context, why string) {
	c.state, c.conn = Disconnected, 0
	ctx.Log("zk-client", sim.S("state", "disconnected"), sim.I("session", c.session), sim.S("reason", why))
	pending := c.pending
	c.pending = nil
	for _, cl := range pending {
		if cl.cb != nil {
			cl.cb(ctx, &Response{Op: cl.req.Op, Xid: cl.req.Xid, Code: ConnectionLoss})
		}
	}
	if c.OnSession != nil {
		c.OnSession(ctx, SessionEvent{State: Disconnected, Session: c.session})
	}
	if c.state == Disconnected && c.conn == 0 {
		c.connect(ctx)
	}
}

// expired handles the server's word that the session is gone: everything
// outstanding fails with SessionExpired, watches are forgotten, Expired is
// reported and a new session is opened.
func (c *Client) expired(ctx *sim.Context) {
	old := c.session
	c.state, c.conn, c.session, c.negotiated = Disconnected, 0, 0, 0
	clear(c.dataW)
	clear(c.existW)
	clear(c.childW)
	ctx.Log("zk-client", sim.S("state", "expired"), sim.I("session", old))
	c.failAll(ctx, SessionExpired)
	if c.OnSession != nil {
		c.OnSession(ctx, SessionEvent{State: Expired, Session: old})
	}
	if c.state == Disconnected {
		c.connect(ctx)
	}
}

func (c *Client) failAll(ctx *sim.Context, code Code) {
	calls := append(c.pending, c.queued...)
	c.pending, c.queued = nil, nil
	for _, cl := range calls {
		if cl.cb != nil && cl.req.Op != OpCloseSession && cl.req.Op != OpPing {
			cl.cb(ctx, &Response{Op: cl.req.Op, Xid: cl.req.Xid, Code: code})
		}
	}
}
