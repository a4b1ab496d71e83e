package zk_test

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

var lan = sim.DefaultLink

// TestEphemeralRemovedAfterSessionTimeout checks that a crashed client's
// ephemeral znode lives until its session expires (timeout after the last
// request, rounded up to a tick, as ZooKeeper's expiry buckets do) and no
// longer, and that the deletion fires a child watch.
func TestEphemeralRemovedAfterSessionTimeout(t *testing.T) {
	h := newHarness(t, 1, lan)
	_, _ = h.addClient("b1", sim.Ms(6000),
		at(100, func(n *client, ctx *sim.Context) {
			n.c.CreateRecursive(ctx, zk.BrokerIDsPath, nil, func(ctx *sim.Context, r *zk.Response) {
				n.rec("mkdir")(ctx, r)
				n.c.Create(ctx, zk.BrokerIDPath(1), []byte("b1"), zk.Ephemeral, n.rec("register"))
			})
		}))
	_, _ = h.addClient("watcher", sim.Ms(6000),
		at(200, func(n *client, ctx *sim.Context) {
			n.c.GetChildren(ctx, zk.BrokerIDsPath, true, n.rec("ids"))
		}))
	b1 := sim.NodeID(1)
	h.injectAt(1000, sim.Crash{Node: b1})
	h.runUntil(7900)
	if !h.exists("/brokers/ids/1") {
		t.Fatalf("at 7.9s /brokers/ids/1 is gone; the session (last request at 0.1s, timeout 6s) must live until 8s\n%s", h.server().Dump())
	}
	h.runUntil(8100)
	if h.exists("/brokers/ids/1") {
		t.Fatalf("at 8.1s /brokers/ids/1 still exists; the session expired at 8s")
	}
	if got := h.server().Sessions(); len(got) != 1 || got[0] != 2 {
		t.Errorf("live sessions %v, want [2] (the watcher's)", got)
	}
	equalLines(t, "log", h.lines, []string{
		"b1 session SyncConnected 1",
		"watcher session SyncConnected 2",
		"b1 mkdir OK path=/brokers/ids",
		"b1 register OK path=/brokers/ids/1",
		"watcher ids OK children=[1]",
		"watcher watch NodeChildrenChanged /brokers/ids",
	})
	if at, _ := h.when("watch NodeChildrenChanged"); at < sim.Time(8*sim.Second) || at > sim.Time(8*sim.Second+sim.Ms(2)) {
		t.Errorf("child watch fired at %v, want just after 8s", at)
	}
}

// TestWatchesFireOnceInOrder checks ZooKeeper's one-shot watch semantics:
// a data watch fires on the first change only, a child watch on the first
// child change, an exists watch on a missing znode fires on its creation,
// and a deletion fires one NodeDeleted even for a data and a child watch.
func TestWatchesFireOnceInOrder(t *testing.T) {
	h := newHarness(t, 2, lan)
	h.addClient("writer", sim.Ms(6000),
		at(100, func(n *client, ctx *sim.Context) { n.c.Create(ctx, "/a", []byte("x"), zk.Persistent, nil) }),
		at(300, func(n *client, ctx *sim.Context) { n.c.SetData(ctx, "/a", []byte("y"), zk.AnyVersion, nil) }),
		at(400, func(n *client, ctx *sim.Context) { n.c.SetData(ctx, "/a", []byte("z"), zk.AnyVersion, nil) }),
		at(500, func(n *client, ctx *sim.Context) { n.c.Create(ctx, "/a/b", nil, zk.Persistent, nil) }),
		at(600, func(n *client, ctx *sim.Context) { n.c.Create(ctx, "/a/c", nil, zk.Persistent, nil) }),
		at(150, func(n *client, ctx *sim.Context) { n.c.Create(ctx, "/solo", nil, zk.Persistent, nil) }),
		at(650, func(n *client, ctx *sim.Context) { n.c.Delete(ctx, "/solo", zk.AnyVersion, nil) }),
		at(700, func(n *client, ctx *sim.Context) { n.c.Create(ctx, "/missing", nil, zk.Persistent, nil) }),
		at(800, func(n *client, ctx *sim.Context) { n.c.Delete(ctx, "/missing", zk.AnyVersion, nil) }),
		at(1000, func(n *client, ctx *sim.Context) {
			n.c.Delete(ctx, "/a/b", zk.AnyVersion, nil)
			n.c.Delete(ctx, "/a/c", zk.AnyVersion, nil)
			n.c.Delete(ctx, "/a", zk.AnyVersion, n.rec("delete /a"))
		}))
	h.addClient("reader", sim.Ms(6000),
		at(200, func(n *client, ctx *sim.Context) {
			n.c.GetData(ctx, "/a", true, n.rec("get /a"))
			n.c.GetChildren(ctx, "/a", true, n.rec("children /a"))
			n.c.Exists(ctx, "/missing", true, n.rec("exists /missing"))
			n.c.GetData(ctx, "/nowatch", true, n.rec("get /nowatch"))
			n.c.GetChildren(ctx, "/solo", true, n.rec("children /solo"))
		}),
		at(900, func(n *client, ctx *sim.Context) {
			n.c.GetData(ctx, "/a", true, n.rec("get /a"))
			n.c.GetChildren(ctx, "/a", true, n.rec("children /a"))
		}))
	h.runUntil(2000)
	equalLines(t, "reader", h.grep("reader", " /"), []string{
		"reader get /a OK data=x version=0",
		"reader children /a OK children=[]",
		"reader exists /missing NONODE",
		"reader get /nowatch NONODE",
		"reader children /solo OK children=[]",
		"reader watch NodeDataChanged /a",
		"reader watch NodeChildrenChanged /a",
		"reader watch NodeDeleted /solo", // a child watch fires on deletion too
		"reader watch NodeCreated /missing",
		"reader get /a OK data=z version=2",
		"reader children /a OK children=[b c]",
		"reader watch NodeChildrenChanged /a",
		"reader watch NodeDeleted /a",
	})
	equalLines(t, "writer", h.grep("writer", "delete"), []string{"writer delete /a OK"})
}

// TestConditionalWritesAndErrors checks versions (BadVersion on a stale
// one) and ZooKeeper's error codes for the other failed writes.
func TestConditionalWritesAndErrors(t *testing.T) {
	h := newHarness(t, 3, lan)
	h.addClient("c", sim.Ms(6000),
		at(100, func(n *client, ctx *sim.Context) {
			n.c.Create(ctx, "/v", []byte("0"), zk.Persistent, n.rec("create /v"))
			n.c.SetData(ctx, "/v", []byte("1"), 0, n.rec("set v0"))
			n.c.SetData(ctx, "/v", []byte("stale"), 0, n.rec("set v0 again"))
			n.c.Delete(ctx, "/v", 0, n.rec("delete v0"))
			n.c.GetData(ctx, "/v", false, n.rec("get /v"))
			n.c.Delete(ctx, "/v", 1, n.rec("delete v1"))
			n.c.Create(ctx, "/x/y", nil, zk.Persistent, n.rec("create /x/y"))
			n.c.Create(ctx, "/p", nil, zk.Persistent, n.rec("create /p"))
			n.c.Create(ctx, "/p", nil, zk.Persistent, n.rec("create /p again"))
			n.c.Create(ctx, "/p/q", nil, zk.Persistent, n.rec("create /p/q"))
			n.c.Delete(ctx, "/p", zk.AnyVersion, n.rec("delete /p"))
			n.c.Create(ctx, "/e", nil, zk.Ephemeral, n.rec("create /e"))
			n.c.Create(ctx, "/e/child", nil, zk.Persistent, n.rec("create /e/child"))
			n.c.Create(ctx, "/p/n-", nil, zk.PersistentSequential, n.rec("seq"))
			n.c.Create(ctx, "/p/n-", nil, zk.EphemeralSequential, n.rec("seq"))
			n.c.Create(ctx, "bad", nil, zk.Persistent, n.rec("create bad"))
			n.c.SetData(ctx, "/nope", nil, zk.AnyVersion, n.rec("set /nope"))
		}))
	h.runUntil(1000)
	equalLines(t, "log", h.lines[1:], []string{
		"c create /v OK path=/v",
		"c set v0 OK version=1",
		"c set v0 again BADVERSION",
		"c delete v0 BADVERSION",
		"c get /v OK data=1 version=1",
		"c delete v1 OK",
		"c create /x/y NONODE",
		"c create /p OK path=/p",
		"c create /p again NODEEXISTS",
		"c create /p/q OK path=/p/q",
		"c delete /p NOTEMPTY",
		"c create /e OK path=/e",
		"c create /e/child NOCHILDRENFOREPHEMERALS",
		"c seq OK path=/p/n-0000000001",
		"c seq OK path=/p/n-0000000002",
		"c create bad BADARGUMENTS",
		"c set /nope NONODE",
	})
	if _, st, _ := h.server().Get("/p/n-0000000002"); st.EphemeralOwner != 1 {
		t.Errorf("ephemeral sequential owner %d, want session 1", st.EphemeralOwner)
	}
	if _, st, _ := h.server().Get("/p"); st.NumChildren != 3 || st.Cversion != 3 {
		t.Errorf("/p numChildren %d cversion %d, want 3 and 3", st.NumChildren, st.Cversion)
	}
}

// TestMultiIsAtomic checks that a multi whose check fails applies nothing
// and reports ZooKeeper's per-op results, and that a passing one applies
// all its ops under one zxid (the controller's zkVersion fencing).
func TestMultiIsAtomic(t *testing.T) {
	h := newHarness(t, 4, lan)
	var zxidBefore, zxidAfter int64
	h.addClient("ctl", sim.Ms(6000),
		at(100, func(n *client, ctx *sim.Context) {
			n.c.Create(ctx, zk.ControllerEpochPath, zk.EncodeControllerEpoch(1), zk.Persistent, nil)
			n.c.Create(ctx, "/x", nil, zk.Persistent, nil)
			n.c.Multi(ctx, []zk.Op{
				zk.CheckOp(zk.ControllerEpochPath, 5),
				zk.SetDataOp("/x", []byte("fenced"), zk.AnyVersion),
				zk.CreateOp("/b", nil, zk.Persistent),
			}, n.rec("stale multi"))
			n.c.Multi(ctx, []zk.Op{
				zk.CreateOp("/b", nil, zk.Persistent),
				zk.SetDataOp("/x", []byte("half"), zk.AnyVersion),
				zk.CheckOp(zk.ControllerEpochPath, 5),
			}, n.rec("late check"))
		}),
		at(200, func(n *client, ctx *sim.Context) {
			zxidBefore = n.h.server().Zxid()
			n.c.Multi(ctx, []zk.Op{
				zk.CheckOp(zk.ControllerEpochPath, 0),
				zk.SetDataOp(zk.ControllerEpochPath, zk.EncodeControllerEpoch(2), 0),
				zk.CreateOp("/c", []byte("c"), zk.Persistent),
				zk.CreateOp("/c/d", nil, zk.Persistent),
				zk.DeleteOp("/c/d", 0),
				zk.DeleteOp("/x", 0),
			}, n.rec("good multi"))
		}),
		at(300, func(n *client, ctx *sim.Context) { zxidAfter = n.h.server().Zxid() }))
	h.runUntil(1000)
	equalLines(t, "log", h.lines[1:], []string{
		"ctl stale multi BADVERSION [error BADVERSION] [error RUNTIMEINCONSISTENCY] [error RUNTIMEINCONSISTENCY]",
		"ctl late check BADVERSION [error OK] [error OK] [error BADVERSION]",
		"ctl good multi OK [check OK] [setData OK] [create OK] [create OK] [delete OK] [delete OK]",
	})
	if zxidAfter != zxidBefore+1 {
		t.Errorf("the multi took zxids %d..%d, want exactly one", zxidBefore, zxidAfter)
	}
	// zxid 1 created the session, 2 and 3 the epoch and /x, 4 the multi.
	want := `/ data="" version=0 cversion=4 czxid=0 mzxid=0 pzxid=4 owner=0
/c data="c" version=0 cversion=2 czxid=4 mzxid=4 pzxid=4 owner=0
/controller_epoch data="2" version=1 cversion=0 czxid=2 mzxid=4 pzxid=2 owner=0
`
	if got := h.server().Dump(); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}
