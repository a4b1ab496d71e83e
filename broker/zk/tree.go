package zk

// This file is the znode tree (ZooKeeper's DataTree) and the two steps every
// write goes through, as in ZooKeeper's request pipeline: prep checks an
// operation against the tree plus the changes of the operations before it in
// the same request (PrepRequestProcessor's outstanding ChangeRecords) and
// turns it into a txn; apply changes the tree (FinalRequestProcessor) and
// reports the watch events it triggers. Simplifications vs ZooKeeper, and why:
//   - Children are kept sorted and returned sorted (ZooKeeper returns a hash
//     set's order), so that outputs are deterministic.
//   - A failed write consumes no zxid and is not logged (ZooKeeper logs an
//     ErrorTxn); nothing visible to Kafka depends on it.
//   - No ACLs, quotas, containers or TTL nodes.

import (
	"fmt"
	"sort"
	"strings"
)

// MaxDataSize is the largest znode data accepted, ZooKeeper's default
// jute.maxbuffer (1 MiB).
const MaxDataSize = 1 << 20

// znode is one node of the tree.
// Invariant: stat.NumChildren == len(children), stat.DataLength == len(data).
type znode struct {
	data     []byte
	stat     Stat
	children []string // names, sorted
}

// tree is the whole namespace plus the ephemerals of each session.
type tree struct {
	nodes      map[string]*znode
	ephemerals map[int64][]string // session -> paths, sorted
}

func newTree() *tree {
	return &tree{nodes: map[string]*znode{"/": {}}, ephemerals: map[int64][]string{}}
}

// txn is one committed change, as logged. A multi is a txn whose Ops are
// the changes of its operations, applied with one zxid.
type txn struct {
	Type           OpCode `json:"type"`
	Zxid           int64  `json:"zxid"`
	Time           int64  `json:"time"`
	Session        int64  `json:"session,omitempty"` // createSession, closeSession
	Timeout        int64  `json:"timeout,omitempty"` // createSession, in ms
	Path           string `json:"path,omitempty"`
	Data           []byte `json:"data,omitempty"`
	Version        int32  `json:"version,omitempty"`   // setData: the new version
	Owner          int64  `json:"owner,omitempty"`     // create: ephemeral owner
	ParentCversion int32  `json:"pcversion,omitempty"` // create: parent's new cversion
	Ops            []txn  `json:"ops,omitempty"`
	Boot           int64  `json:"boot,omitempty"` // opBoot
}

// opBoot is the type of the record a server logs at every start, so that
// connection ids never repeat across restarts. It is not a ZooKeeper op.
const opBoot OpCode = -1000

// event is a change that may fire watches.
type event struct {
	Type EventType
	Path string
}

// validPath reports whether p is a ZooKeeper path (PathUtils.validatePath,
// minus the character checks): absolute, no empty, "." or ".." component,
// no trailing slash.
func validPath(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return false
	}
	for _, c := range strings.Split(p[1:], "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}

func splitPath(p string) (parent, name string) {
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/", p[1:]
	}
	return p[:i], p[i+1:]
}

// get returns the znode at path, or nil.
func (t *tree) get(path string) *znode { return t.nodes[path] }

// record is what prep knows of a znode: its Stat, or that it is gone.
type record struct {
	exists bool
	stat   Stat
}

// prep validates the operations of one request against the tree plus the
// changes of the operations already prepared.
type prep struct {
	t       *tree
	session int64
	changes map[string]record
}

func newPrep(t *tree, session int64) *prep {
	return &prep{t: t, session: session, changes: map[string]record{}}
}

func (p *prep) lookup(path string) record {
	if r, ok := p.changes[path]; ok {
		return r
	}
	if n := p.t.get(path); n != nil {
		return record{exists: true, stat: n.stat}
	}
	return record{}
}

func versionOK(want, have int32) bool { return want == AnyVersion || want == have }

// op prepares one operation and returns its txn (nil for a check) or the
// error code ZooKeeper gives, checked in ZooKeeper's order.
func (p *prep) op(o Op) (*txn, Code) {
	if !validPath(o.Path) {
		return nil, BadArguments
	}
	switch o.Type {
	case OpCreate:
		if o.Path == "/" {
			return nil, NodeExists
		}
		if len(o.Data) > MaxDataSize {
			return nil, BadArguments
		}
		parentPath, _ := splitPath(o.Path)
		parent := p.lookup(parentPath)
		if !parent.exists {
			return nil, NoNode
		}
		if parent.stat.EphemeralOwner != 0 {
			return nil, NoChildrenForEphemerals
		}
		path := o.Path
		if o.Mode.IsSequential() {
			path += fmt.Sprintf("%010d", parent.stat.Cversion)
		}
		if p.lookup(path).exists {
			return nil, NodeExists
		}
		var owner int64
		if o.Mode.IsEphemeral() {
			owner = p.session
		}
		parent.stat.Cversion++
		parent.stat.NumChildren++
		p.changes[parentPath] = parent
		p.changes[path] = record{exists: true, stat: Stat{EphemeralOwner: owner}}
		return &txn{Type: OpCreate, Path: path, Data: o.Data, Owner: owner, ParentCversion: parent.stat.Cversion}, Ok
	case OpDelete:
		if o.Path == "/" {
			return nil, BadArguments
		}
		r := p.lookup(o.Path)
		switch {
		case !r.exists:
			return nil, NoNode
		case !versionOK(o.Version, r.stat.Version):
			return nil, BadVersion
		case r.stat.NumChildren > 0:
			return nil, NotEmpty
		}
		parentPath, _ := splitPath(o.Path)
		parent := p.lookup(parentPath)
		parent.stat.Cversion++
		parent.stat.NumChildren--
		p.changes[parentPath] = parent
		p.changes[o.Path] = record{}
		return &txn{Type: OpDelete, Path: o.Path}, Ok
	case OpSetData:
		if len(o.Data) > MaxDataSize {
			return nil, BadArguments
		}
		r := p.lookup(o.Path)
		switch {
		case !r.exists:
			return nil, NoNode
		case !versionOK(o.Version, r.stat.Version):
			return nil, BadVersion
		}
		r.stat.Version++
		p.changes[o.Path] = r
		return &txn{Type: OpSetData, Path: o.Path, Data: o.Data, Version: r.stat.Version}, Ok
	case OpCheck:
		r := p.lookup(o.Path)
		switch {
		case !r.exists:
			return nil, NoNode
		case !versionOK(o.Version, r.stat.Version):
			return nil, BadVersion
		}
		return nil, Ok
	}
	return nil, Unimplemented
}

// apply applies a committed txn and appends the events it triggers, in
// the order ZooKeeper triggers them. A txn that does not fit the tree is a
// broken invariant (prep checked it) and panics.
func (t *tree) apply(tx *txn, zxid, now int64, evs []event) []event {
	switch tx.Type {
	case OpCreate:
		parentPath, name := splitPath(tx.Path)
		parent := t.nodes[parentPath]
		if parent == nil || t.nodes[tx.Path] != nil {
			panic(fmt.Sprintf("zk: create %s at zxid %d does not fit the tree", tx.Path, zxid))
		}
		t.nodes[tx.Path] = &znode{data: tx.Data, stat: Stat{
			Czxid: zxid, Mzxid: zxid, Pzxid: zxid, Ctime: now, Mtime: now,
			EphemeralOwner: tx.Owner, DataLength: int32(len(tx.Data)),
		}}
		parent.children = insertSorted(parent.children, name)
		parent.stat.NumChildren = int32(len(parent.children))
		parent.stat.Cversion = tx.ParentCversion
		parent.stat.Pzxid = zxid
		if tx.Owner != 0 {
			t.ephemerals[tx.Owner] = insertSorted(t.ephemerals[tx.Owner], tx.Path)
		}
		evs = append(evs, event{EventNodeCreated, tx.Path}, event{EventNodeChildrenChanged, parentPath})
	case OpDelete:
		evs = t.delete(tx.Path, zxid, evs)
	case OpSetData:
		n := t.nodes[tx.Path]
		if n == nil {
			panic(fmt.Sprintf("zk: setData %s at zxid %d: no such znode", tx.Path, zxid))
		}
		n.data = tx.Data
		n.stat.Version = tx.Version
		n.stat.Mzxid = zxid
		n.stat.Mtime = now
		n.stat.DataLength = int32(len(tx.Data))
		evs = append(evs, event{EventNodeDataChanged, tx.Path})
	case OpMulti:
		for i := range tx.Ops {
			evs = t.apply(&tx.Ops[i], zxid, now, evs)
		}
	case OpCloseSession:
		paths := t.ephemerals[tx.Session]
		delete(t.ephemerals, tx.Session)
		for _, p := range paths {
			evs = t.delete(p, zxid, evs)
		}
	}
	return evs
}

func (t *tree) delete(path string, zxid int64, evs []event) []event {
	n := t.nodes[path]
	parentPath, name := splitPath(path)
	parent := t.nodes[parentPath]
	if n == nil || parent == nil || len(n.children) > 0 {
		panic(fmt.Sprintf("zk: delete %s at zxid %d does not fit the tree", path, zxid))
	}
	delete(t.nodes, path)
	parent.children = removeSorted(parent.children, name)
	parent.stat.NumChildren = int32(len(parent.children))
	parent.stat.Cversion++
	parent.stat.Pzxid = zxid
	if o := n.stat.EphemeralOwner; o != 0 {
		if rest := removeSorted(t.ephemerals[o], path); len(rest) > 0 {
			t.ephemerals[o] = rest
		} else {
			delete(t.ephemerals, o)
		}
	}
	return append(evs, event{EventNodeDeleted, path}, event{EventNodeChildrenChanged, parentPath})
}

func insertSorted(s []string, v string) []string {
	i := sort.SearchStrings(s, v)
	if i < len(s) && s[i] == v {
		return s
	}
	s = append(s, "")
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

func removeSorted(s []string, v string) []string {
	i := sort.SearchStrings(s, v)
	if i == len(s) || s[i] != v {
		return s
	}
	return append(s[:i], s[i+1:]...)
}

// dump renders the tree, one znode per line in path order, with data and
// the Stat fields that tests and golden files compare.
func (t *tree) dump() string {
	var b strings.Builder
	var walk func(path string)
	walk = func(path string) {
		n := t.nodes[path]
		fmt.Fprintf(&b, "%s data=%q version=%d cversion=%d czxid=%d mzxid=%d pzxid=%d owner=%d\n",
			path, n.data, n.stat.Version, n.stat.Cversion, n.stat.Czxid, n.stat.Mzxid, n.stat.Pzxid, n.stat.EphemeralOwner)
		for _, c := range n.children {
			if path == "/" {
				walk("/" + c)
			} else {
				walk(path + "/" + c)
			}
		}
	}
	walk("/")
	return b.String()
}
