package serve

// This file is the world's side of serve mode. Every client connection is
// a node of the world that forwards the connection's requests to its
// broker and hands the answers back as frames. It runs
// only on the world's goroutine: inside the runner's steps and the
// pacer's calls, never beside them, so a served run is as deterministic
// as any other given the same inputs (tape.go).
//
// Ordering: Kafka reads a connection's next request only once it sent the
// answer to the previous one (the SocketServer mutes the channel), so
// responses leave in request order. The connection node does the same: it
// sends its broker one request at a time, the next once the previous one
// is answered (or at once after an acks=0 produce, which has no answer).
//
// Nodes are reused: a closed connection's node (crashed when it closed)
// is started again, a new incarnation, for the next connection accepted,
// so the world holds as many connection nodes as were ever open at once
// (slots conn1, conn2, ...), not one per connection ever accepted. The
// world's link matrix grows with the square of its nodes, and a client
// suite opens thousands of connections: one node each took gigabytes.
// An answer to the previous incarnation is dropped on the way (sim
// delivers a message to the incarnation it was sent to) or, sent after
// the restart, by its wire.Response.Connection.
//
// A broker that crashes takes its sockets with it: at the next step every
// connection to it is closed, as the client would see its TCP connection
// reset, and its listener is closed, so that a new connection is refused
// (a crashed, shut down or halted Kafka process listens on nothing); the
// listener opens again once the restarted broker serves (it registered:
// before, a Kafka broker processes no request, and the simulated one
// refuses it, which closes the connection). A paused broker keeps them
// (it answers late).

import (
	"bytes"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// frameOut is a response frame (or a close) for one connection.
type frameOut struct {
	conn  int
	frame []byte // nil: close the connection
	why   string // for a close
}

// listenerChange opens (open) or closes a broker's listener.
type listenerChange struct {
	broker int32
	open   bool
}

// gateway holds the world's connection nodes.
type gateway struct {
	r *harness.Runner
	// apis are the versions each broker advertises (server.SupportedAPIs),
	// by broker index; the gateway refuses any other request.
	apis [][]server.APIRange
	// addrs are the brokers' listener addresses, by broker index.
	addrs []*net.TCPAddr
	// accepted counts the connections accepted; open holds the open ones
	// by number, and order the same in number order (sync's order).
	accepted int
	open     map[int]*connNode
	order    []*connNode
	// slots are the connection nodes, free those of closed connections,
	// lowest first, for the next connections to reuse.
	slots []*slot
	free  []*slot
	// out is what the socket layer must write or close, in order.
	out []frameOut
	// listening is whether each broker's listener is open, as the socket
	// layer was last told, and relisten what it must open or close now;
	// listen is set once the cluster is ready (the listeners stay open
	// through its start, whose inputs wait for ready anyway).
	listening []bool
	relisten  []listenerChange
	listen    bool
	// logf reports what a client did wrong (a malformed frame).
	logf func(format string, args ...any)
	hist historian
}

// slot is a connection node of the world: the connection it serves now
// (its factory's answer at each start).
type slot struct {
	id   sim.NodeID
	name string
	cur  *connNode
}

// connNode is one client connection inside the world.
type connNode struct {
	g      *gateway
	num    int
	name   string // connN, N its number (its node's is its slot's)
	slot   *slot
	id     sim.NodeID
	broker int32
	to     sim.NodeID
	queue  []*call // waiting behind the one in flight
	flight *call
	closed bool
	// refused: the broker reset the connection (it was not serving yet);
	// the next sync closes it.
	refused bool
	enc     wire.Encoder
}

// call is one request of a connection.
type call struct {
	h   Header
	req kmsg.Request
	rec recorded // the history operations it opened (history.go)
}

// accept adds connection num to broker (index), on a free node of the
// world or, when none is, a new one.
func (g *gateway) accept(num int, broker int32) error {
	if num != g.accepted+1 {
		return fmt.Errorf("connection %d accepted after %d", num, g.accepted)
	}
	if broker < 0 || int(broker) >= len(g.r.Cluster.Brokers) {
		return fmt.Errorf("connection %d: no broker %d", num, broker)
	}
	g.accepted = num
	c := &connNode{g: g, num: num, name: "conn" + strconv.Itoa(num), broker: broker, to: g.r.Cluster.Brokers[broker]}
	var sl *slot
	reused := len(g.free) > 0
	if reused {
		sl = g.free[0]
		g.free = g.free[1:]
	} else {
		sl = &slot{name: "conn" + strconv.Itoa(len(g.slots)+1)}
		id, err := g.r.World.AddNode(sl.name, func() sim.Node { return sl.cur }, sim.NodeOptions{})
		if err != nil {
			return err
		}
		sl.id = id
		g.slots = append(g.slots, sl)
	}
	sl.cur, c.slot, c.id = c, sl, sl.id
	if g.open == nil {
		g.open = map[int]*connNode{}
	}
	g.open[num] = c
	g.order = append(g.order, c)
	var start sim.Fault = sim.Start{Node: c.id}
	if reused {
		start = sim.Restart{Node: c.id}
	}
	if err := g.r.World.Inject(start); err != nil {
		return err
	}
	if !g.running(broker) {
		g.close(c, fmt.Sprintf("b%d is down", broker))
	}
	return nil
}

// running reports whether broker (index) is a running process: up, and
// not halted (a halted Kafka process has exited).
func (g *gateway) running(broker int32) bool {
	if !g.r.World.Up(g.r.Cluster.Brokers[broker]) {
		return false
	}
	b := g.r.Cluster.Broker(int(broker))
	return b == nil || !b.Halted()
}

// listens reports whether broker's socket server listens: it runs and has
// started up (server.Broker.Serving).
func (g *gateway) listens(broker int32) bool {
	b := g.r.Cluster.Broker(int(broker))
	return g.running(broker) && (b == nil || b.Serving())
}

// conn returns open connection num, or nil.
func (g *gateway) conn(num int) *connNode {
	return g.open[num]
}

// request takes one frame a client sent on connection num.
func (g *gateway) request(num int, frame []byte) {
	c := g.conn(num)
	if c == nil {
		return // closed meanwhile: the frame was in flight
	}
	h, body, err := ParseHeader(frame)
	if err != nil {
		g.malformed(c, err.Error())
		return
	}
	min, max, ok := g.versionsOf(c.broker, h.Key)
	if h.Key == int16(kmsg.ApiVersions) && (!ok || h.Version < min || h.Version > max) {
		// KIP-511: an ApiVersions request the broker cannot parse is
		// answered at v0 with UNSUPPORTED_VERSION and its ApiVersions
		// range, so the client can retry at a version both know.
		resp := g.apiVersionsV0(c.broker)
		g.out = append(g.out, frameOut{conn: num, frame: AppendResponse(nil, h, resp)})
		return
	}
	if !ok || h.Version < min || h.Version > max {
		if resp := unsupportedAnswer(h); resp != nil {
			// An API or version the broker does not advertise, whose
			// answer has a top-level error code: UNSUPPORTED_VERSION
			// there, and the connection serves on. (Kafka's broker has
			// every API of its release; serve leaves some out, and says
			// why in broker/server/api_versions.go. A client that read
			// ApiVersions does not send them.)
			g.logf("%s (to b%d): %s v%d is not served: answered UNSUPPORTED_VERSION", c.name, c.broker, apiName(h.Key), h.Version)
			g.out = append(g.out, frameOut{conn: num, frame: AppendResponse(nil, h, resp)})
			return
		}
		// Otherwise the connection closes, as Kafka's SocketServer closes
		// that of a request whose api or version it has not enabled
		// (InvalidRequestException).
		supported := "none"
		if ok {
			supported = fmt.Sprintf("v%d to v%d", min, max)
		}
		g.malformed(c, fmt.Sprintf("%s v%d is not supported (this broker serves %s)", apiName(h.Key), h.Version, supported))
		return
	}
	req, err := ParseBody(h, body)
	if err != nil {
		g.malformed(c, err.Error())
		return
	}
	c.queue = append(c.queue, &call{h: h, req: req})
	if c.flight == nil {
		c.sendNext()
	}
}

// unsupportedAnswer returns the answer, at the request's version, to a
// request the broker does not serve: its response with the top-level
// error code UNSUPPORTED_VERSION. Nil when kmsg does not know the api or
// version, or the response has no top-level error code (its errors are
// per topic or partition, which a request serve did not parse cannot
// name), or not at this version.
func unsupportedAnswer(h Header) kmsg.Response {
	resp := kmsg.ResponseForKey(h.Key)
	if resp == nil || h.Version < 0 || h.Version > resp.MaxVersion() {
		return nil
	}
	resp.SetVersion(h.Version)
	v := reflect.ValueOf(resp).Elem()
	code := v.FieldByName("ErrorCode")
	if !code.IsValid() || code.Kind() != reflect.Int16 {
		return nil
	}
	// The struct has the field at every version; the wire has it only at
	// some (FetchResponse's from v7): an encoding that does not change
	// with the code has no room for it.
	empty := resp.AppendTo(nil)
	code.SetInt(int64(kerr.UnsupportedVersion.Code))
	if bytes.Equal(empty, resp.AppendTo(nil)) {
		return nil
	}
	if m := v.FieldByName("ErrorMessage"); m.IsValid() && m.Type() == reflect.TypeFor[*string]() {
		msg := fmt.Sprintf("%s v%d is not served by kafkasim (see ApiVersions)", apiName(h.Key), h.Version)
		m.Set(reflect.ValueOf(&msg))
	}
	return resp
}

// apiVersionsV0 is the v0 answer to an ApiVersions request the broker
// cannot parse: the broker's own (server.UnsupportedAPIVersionsResponse).
func (g *gateway) apiVersionsV0(broker int32) *kmsg.ApiVersionsResponse {
	return server.UnsupportedAPIVersionsResponse(g.r.Cluster.BrokerConfig(int(broker)))
}

// versionsOf returns the versions of key that broker serves.
func (g *gateway) versionsOf(broker int32, key int16) (min, max int16, ok bool) {
	for _, a := range g.apis[broker] {
		if a.Key == key {
			return a.Min, a.Max, true
		}
	}
	return 0, 0, false
}

func apiName(key int16) string {
	if n := kmsg.NameForKey(key); n != "" {
		return n
	}
	return "api key " + strconv.Itoa(int(key))
}

// malformed closes a connection whose client broke the protocol; the rest
// keep working.
func (g *gateway) malformed(c *connNode, why string) {
	g.logf("%s (to b%d): %s: closing the connection", c.name, c.broker, why)
	g.close(c, why)
}

// close ends a connection: its node goes down (answers on their way to it
// are dropped) and the operations it left open are unknown.
func (g *gateway) close(c *connNode, why string) {
	if c.closed {
		return
	}
	c.closed = true
	now := g.r.World.Now()
	if c.flight != nil {
		g.hist.unknown(c.flight, now, "connection closed: "+why)
	}
	for _, q := range c.queue {
		g.hist.unknown(q, now, "connection closed: "+why)
	}
	c.flight, c.queue = nil, nil
	if g.r.World.Up(c.id) {
		_ = g.r.World.Inject(sim.Crash{Node: c.id})
	}
	g.out = append(g.out, frameOut{conn: c.num, why: why})
	delete(g.open, c.num)
	if i := slices.Index(g.order, c); i >= 0 {
		g.order = slices.Delete(g.order, i, i+1)
	}
	// The node is free once down; the lowest free slot is reused first.
	if !g.r.World.Up(c.id) {
		i, _ := slices.BinarySearchFunc(g.free, c.slot.id, func(s *slot, id sim.NodeID) int { return int(s.id) - int(id) })
		g.free = slices.Insert(g.free, i, c.slot)
	}
}

// sync closes the connections of brokers that went down (and those a
// broker refused), closes the listeners of brokers that stopped serving
// and opens those of brokers that serve again: the socket layer's view of
// a crash and a restart. It runs before every step of the world and after
// every command.
func (g *gateway) sync() {
	if g.listening == nil {
		g.listening = make([]bool, len(g.r.Cluster.Brokers))
		for i := range g.listening {
			g.listening[i] = true // Start opened them all
		}
	}
	for i, was := range g.listening {
		if up := g.listens(int32(i)); g.listen && up != was {
			g.listening[i] = up
			g.relisten = append(g.relisten, listenerChange{broker: int32(i), open: up})
		}
	}
	// NB: by index, without a copy (sync runs before every event): close
	// removes the connection from g.order, so the next one takes its index.
	for i := 0; i < len(g.order); i++ {
		c := g.order[i]
		switch {
		case !g.running(c.broker):
			g.close(c, fmt.Sprintf("b%d went down", c.broker))
		case c.refused:
			g.close(c, fmt.Sprintf("b%d refused it: not serving yet (starting up)", c.broker))
		default:
			continue
		}
		i--
	}
}

// sendNext sends the connection's next request to its broker.
func (c *connNode) sendNext() {
	if c.flight != nil || len(c.queue) == 0 || c.closed {
		return
	}
	next := c.queue[0]
	c.queue = c.queue[1:]
	w := c.g.r.World
	_ = w.Act(c.id, func(ctx *sim.Context) {
		c.g.hist.sent(c, next, ctx.Now())
		ctx.Send(c.to, c.enc.Request(next.h.Correlation, next.req))
	})
	if p, ok := next.req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		// No answer comes: the broker reads the next request at once.
		c.g.hist.unknown(next, w.Now(), "acks=0: no response")
		c.sendNext()
		return
	}
	c.flight = next
}

func (c *connNode) Start(ctx *sim.Context) { c.enc.Connection = ctx.Incarnation() }

func (c *connNode) Timer(*sim.Context, sim.TimerID, string) {}

// Disconnected implements sim.Disconnectable: the broker reset the
// connection (a broker that has not started up refuses requests). The
// gateway closes it at its next sync, outside this node's handler.
func (c *connNode) Disconnected(_ *sim.Context, peer sim.NodeID) {
	if peer == c.to {
		c.refused = true
	}
}

// Receive takes the broker's answer to the request in flight.
func (c *connNode) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	resp, ok := m.(*wire.Response)
	if !ok || c.closed || c.flight == nil || from != c.to || resp.Connection != c.enc.Connection || resp.CorrelationID != c.flight.h.Correlation {
		return
	}
	done := c.flight
	c.flight = nil
	c.g.hist.answered(c, done, resp.Body, ctx.Now())
	body := c.g.advertise(resp.Body)
	c.g.out = append(c.g.out, frameOut{conn: c.num, frame: AppendResponse(nil, done.h, body)})
	c.sendNext()
}

// advertise returns resp with the brokers' addresses replaced by their
// listeners' (the simulated brokers call themselves b0:9092...): the
// socket layer's advertised.listeners. It copies what it changes, since
// a message's body is never changed once sent.
func (g *gateway) advertise(resp kmsg.Response) kmsg.Response {
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		cp := *r
		cp.Brokers = append([]kmsg.MetadataResponseBroker(nil), r.Brokers...)
		for i := range cp.Brokers {
			cp.Brokers[i].Host, cp.Brokers[i].Port = g.addr(cp.Brokers[i].NodeID, cp.Brokers[i].Host, cp.Brokers[i].Port)
		}
		return &cp
	case *kmsg.FindCoordinatorResponse:
		cp := *r
		if cp.NodeID >= 0 {
			cp.Host, cp.Port = g.addr(cp.NodeID, cp.Host, cp.Port)
		}
		cp.Coordinators = append([]kmsg.FindCoordinatorResponseCoordinator(nil), r.Coordinators...)
		for i := range cp.Coordinators {
			if cp.Coordinators[i].NodeID >= 0 {
				cp.Coordinators[i].Host, cp.Coordinators[i].Port = g.addr(cp.Coordinators[i].NodeID, cp.Coordinators[i].Host, cp.Coordinators[i].Port)
			}
		}
		return &cp
	case *kmsg.DescribeClusterResponse:
		cp := *r
		cp.Brokers = append([]kmsg.DescribeClusterResponseBroker(nil), r.Brokers...)
		for i := range cp.Brokers {
			cp.Brokers[i].Host, cp.Brokers[i].Port = g.addr(cp.Brokers[i].NodeID, cp.Brokers[i].Host, cp.Brokers[i].Port)
		}
		return &cp
	}
	return resp
}

func (g *gateway) addr(node int32, host string, port int32) (string, int32) {
	if node < 0 || int(node) >= len(g.addrs) || g.addrs[node] == nil {
		return host, port
	}
	return g.addrs[node].IP.String(), int32(g.addrs[node].Port)
}
