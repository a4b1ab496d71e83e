package zk

// This file defines what a ZooKeeper client and server exchange, after
// ZooKeeper's jute records (ConnectRequest, ConnectResponse, RequestHeader,
// ReplyHeader, WatcherEvent, the per-op requests and MultiResponse).
// Simplifications vs ZooKeeper, and why:
//   - One Request type carries every operation (Op says which) and one
//     Response type every reply: the simulation needs no wire encoding.
//   - SetWatches rides in ConnectRequest instead of being the first request
//     on a new connection; the server treats it the same way.
//   - A connection is explicit: the server names it (Conn) in its
//     ConnectResponse, and every message on it carries Conn and a sequence
//     number (Xid from the client, Seq from the server). The simulated
//     network can drop and reorder messages, which a TCP stream cannot; a
//     gap in a sequence is therefore treated as a reset connection, and the
//     client reconnects exactly as ZooKeeper's client does after a socket
//     error. ConnectionReset stands for the TCP RST a ZooKeeper server's
//     closed socket would produce.
//   - No ACLs, authentication, chroot, read-only mode, containers, TTLs or
//     four-letter words: Kafka's ZooKeeper usage needs none of them.

import (
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// OpCode names an operation, with ZooKeeper's numbers (ZooDefs.OpCode).
type OpCode int32

// The operations the simulated server implements, plus OpError, the type of
// a multi result that carries an error.
const (
	OpCreate        OpCode = 1
	OpDelete        OpCode = 2
	OpExists        OpCode = 3
	OpGetData       OpCode = 4
	OpSetData       OpCode = 5
	OpGetChildren   OpCode = 8
	OpPing          OpCode = 11
	OpCheck         OpCode = 13
	OpMulti         OpCode = 14
	OpCreateSession OpCode = -10
	OpCloseSession  OpCode = -11
	OpError         OpCode = -1
)

type opNames struct{ name, req, resp string }

var opTable = map[OpCode]opNames{
	OpCreate:        {"create", "ZkCreateRequest", "ZkCreateResponse"},
	OpDelete:        {"delete", "ZkDeleteRequest", "ZkDeleteResponse"},
	OpExists:        {"exists", "ZkExistsRequest", "ZkExistsResponse"},
	OpGetData:       {"getData", "ZkGetDataRequest", "ZkGetDataResponse"},
	OpSetData:       {"setData", "ZkSetDataRequest", "ZkSetDataResponse"},
	OpGetChildren:   {"getChildren", "ZkGetChildrenRequest", "ZkGetChildrenResponse"},
	OpPing:          {"ping", "ZkPingRequest", "ZkPingResponse"},
	OpCheck:         {"check", "ZkCheckRequest", "ZkCheckResponse"},
	OpMulti:         {"multi", "ZkMultiRequest", "ZkMultiResponse"},
	OpCreateSession: {"createSession", "ZkCreateSessionRequest", "ZkCreateSessionResponse"},
	OpCloseSession:  {"closeSession", "ZkCloseSessionRequest", "ZkCloseSessionResponse"},
	OpError:         {"error", "ZkErrorRequest", "ZkErrorResponse"},
}

// String returns ZooKeeper's name of the operation, e.g. "getData".
func (o OpCode) String() string {
	if n, ok := opTable[o]; ok {
		return n.name
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// CreateMode says whether a znode outlives its creator's session and
// whether the server appends a sequence number to its name. The values are
// ZooKeeper's CreateMode flags.
type CreateMode int32

// The create modes Kafka uses.
const (
	Persistent           CreateMode = 0
	Ephemeral            CreateMode = 1
	PersistentSequential CreateMode = 2
	EphemeralSequential  CreateMode = 3
)

// IsEphemeral reports whether the znode dies with its session.
func (m CreateMode) IsEphemeral() bool { return m == Ephemeral || m == EphemeralSequential }

// IsSequential reports whether the server appends a 10-digit counter.
func (m CreateMode) IsSequential() bool { return m == PersistentSequential || m == EphemeralSequential }

// EventType is the type of a watch notification (Watcher.Event.EventType).
type EventType int32

// The watch event types.
const (
	EventNone                EventType = -1
	EventNodeCreated         EventType = 1
	EventNodeDeleted         EventType = 2
	EventNodeDataChanged     EventType = 3
	EventNodeChildrenChanged EventType = 4
)

// String returns ZooKeeper's name of the event type, e.g. "NodeCreated".
func (e EventType) String() string {
	switch e {
	case EventNone:
		return "None"
	case EventNodeCreated:
		return "NodeCreated"
	case EventNodeDeleted:
		return "NodeDeleted"
	case EventNodeDataChanged:
		return "NodeDataChanged"
	case EventNodeChildrenChanged:
		return "NodeChildrenChanged"
	}
	return "EventType(" + strconv.Itoa(int(e)) + ")"
}

// Stat is a znode's metadata, as ZooKeeper's Stat record. Times are
// milliseconds on the server's clock.
type Stat struct {
	Czxid          int64 // zxid of the create
	Mzxid          int64 // zxid of the last data change
	Ctime          int64
	Mtime          int64
	Version        int32 // data version: number of setData since create
	Cversion       int32 // child version: number of child creates and deletes
	Aversion       int32 // ACL version, always 0 (no ACLs)
	EphemeralOwner int64 // owning session id, 0 for a persistent znode
	DataLength     int32
	NumChildren    int32
	Pzxid          int64 // zxid of the last child create or delete
}

// AnyVersion in a conditional write (delete, setData, check) matches every version.
const AnyVersion int32 = -1

// Op is one operation of a multi. Build it with CreateOp, DeleteOp,
// SetDataOp or CheckOp.
type Op struct {
	Type    OpCode
	Path    string
	Data    []byte
	Version int32
	Mode    CreateMode
}

// CreateOp creates path with data in the given mode.
func CreateOp(path string, data []byte, mode CreateMode) Op {
	return Op{Type: OpCreate, Path: path, Data: data, Mode: mode}
}

// DeleteOp deletes path if its version matches (AnyVersion for any).
func DeleteOp(path string, version int32) Op {
	return Op{Type: OpDelete, Path: path, Version: version}
}

// SetDataOp sets path's data if its version matches (AnyVersion for any).
func SetDataOp(path string, data []byte, version int32) Op {
	return Op{Type: OpSetData, Path: path, Data: data, Version: version}
}

// CheckOp fails the multi unless path exists with that version. Kafka's
// controller puts CheckOp(/controller_epoch, its zkVersion) in front of its
// writes so a deposed controller's writes fail (KAFKA-7165's fencing).
func CheckOp(path string, version int32) Op {
	return Op{Type: OpCheck, Path: path, Version: version}
}

// OpResult is the outcome of one operation of a multi. When the multi
// fails, every result has Type OpError: Code is Ok for the operations before
// the failing one, the failure for it, and RuntimeInconsistency after it,
// as ZooKeeper reports them.
type OpResult struct {
	Type OpCode
	Code Code
	Path string // create: the name created (with its sequence suffix)
	Stat Stat   // create, setData: the znode's new Stat
}

// ConnectRequest opens a connection, for a new session (Session 0) or to
// resume one. Watches lists the client's watches to set again on the new
// connection; the server fires at once those whose znode changed after
// LastZxid (ZooKeeper's SetWatches).
type ConnectRequest struct {
	Attempt  uint64 // the client's attempt number, echoed in the response
	Session  int64
	Timeout  sim.Duration // requested session timeout
	LastZxid int64        // last zxid the client has seen
	Watches  SetWatches
}

// SetWatches lists a client's outstanding watches by kind: data watches
// (getData, exists on a znode), exist watches (exists on a missing znode)
// and child watches (getChildren).
type SetWatches struct {
	Data, Exist, Child []string
}

// ConnectResponse answers a ConnectRequest. A Timeout of 0 means the
// session has expired (as in ZooKeeper): the client must start a new one.
type ConnectResponse struct {
	Attempt uint64
	Session int64
	Timeout sim.Duration // negotiated session timeout
	Conn    uint64       // the connection's id, named in all later messages
}

// Request is one operation on a connection. Xid counts the connection's
// requests from 1; the server answers them in order.
type Request struct {
	Session int64
	Conn    uint64
	Xid     int32
	Op      OpCode
	Path    string
	Data    []byte
	Version int32
	Mode    CreateMode
	Watch   bool
	Ops     []Op // multi
}

// Response answers a Request. Seq counts the server's messages on the
// connection (responses and watch events) from 1. Zxid is the server's last
// committed zxid when it answered.
type Response struct {
	Conn     uint64
	Seq      uint64
	Xid      int32
	Zxid     int64
	Op       OpCode
	Code     Code
	Path     string   // create: the name created
	Data     []byte   // getData
	Stat     Stat     // create, exists, getData, setData, getChildren
	Children []string // getChildren, sorted
	Results  []OpResult
}

// WatcherEvent notifies a client that a watched znode changed. A watch
// fires once; set it again to keep watching.
type WatcherEvent struct {
	Conn uint64
	Seq  uint64
	Type EventType
	Path string
}

// ConnectionReset tells a client the server has no such connection any
// more (the TCP reset of a closed ZooKeeper socket). Expired says the
// session is gone too.
type ConnectionReset struct {
	Conn    uint64
	Expired bool
}

// Kind implements sim.Message.
func (*ConnectRequest) Kind() string { return "ZkConnectRequest" }

// Kind implements sim.Message.
func (*ConnectResponse) Kind() string { return "ZkConnectResponse" }

// Kind implements sim.Message.
func (*WatcherEvent) Kind() string { return "ZkWatcherEvent" }

// Kind implements sim.Message.
func (*ConnectionReset) Kind() string { return "ZkConnectionReset" }

// Kind implements sim.Message, naming the operation, e.g. "ZkCreateRequest".
func (r *Request) Kind() string {
	if n, ok := opTable[r.Op]; ok {
		return n.req
	}
	return "ZkRequest"
}

// Kind implements sim.Message, naming the operation, e.g. "ZkCreateResponse".
func (r *Response) Kind() string {
	if n, ok := opTable[r.Op]; ok {
		return n.resp
	}
	return "ZkResponse"
}

func stringsSize(ss []string) int {
	n := 4
	for _, s := range ss {
		n += 4 + len(s)
	}
	return n
}

// Size implements sim.Message.
func (m *ConnectRequest) Size() int {
	return 44 + stringsSize(m.Watches.Data) + stringsSize(m.Watches.Exist) + stringsSize(m.Watches.Child)
}

// Size implements sim.Message.
func (*ConnectResponse) Size() int { return 36 }

// Size implements sim.Message.
func (m *WatcherEvent) Size() int { return 16 + 4 + len(m.Path) }

// Size implements sim.Message.
func (*ConnectionReset) Size() int { return 16 }

// Size implements sim.Message.
func (r *Request) Size() int {
	n := 16 + 4 + len(r.Path) + 4 + len(r.Data) + 9
	for _, op := range r.Ops {
		n += 16 + len(op.Path) + len(op.Data)
	}
	return n
}

// Size implements sim.Message.
func (r *Response) Size() int {
	n := 16 + 4 + len(r.Path) + 4 + len(r.Data) + 68 + stringsSize(r.Children)
	for _, res := range r.Results {
		n += 8 + len(res.Path) + 68
	}
	return n
}

// Clone implements sim.Cloner.
func (m *ConnectRequest) Clone() sim.Message {
	c := *m
	c.Watches = SetWatches{Data: cloneStrings(m.Watches.Data), Exist: cloneStrings(m.Watches.Exist), Child: cloneStrings(m.Watches.Child)}
	return &c
}

// Clone implements sim.Cloner.
func (r *Request) Clone() sim.Message {
	c := *r
	c.Data = cloneBytes(r.Data)
	if r.Ops != nil {
		c.Ops = make([]Op, len(r.Ops))
		for i, op := range r.Ops {
			op.Data = cloneBytes(op.Data)
			c.Ops[i] = op
		}
	}
	return &c
}

// Clone implements sim.Cloner.
func (r *Response) Clone() sim.Message {
	c := *r
	c.Data = cloneBytes(r.Data)
	c.Children = cloneStrings(r.Children)
	if r.Results != nil {
		c.Results = append([]OpResult(nil), r.Results...)
	}
	return &c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s...)
}
