package zk_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

// elect is Kafka's controller election (KafkaController.elect, simplified):
// create /controller as an ephemeral znode; the winner bumps
// /controller_epoch with a version-checked write; a loser watches
// /controller with exists and runs for election again when it is deleted.
func elect(id int32) func(n *client, ctx *sim.Context) {
	return func(n *client, ctx *sim.Context) {
		data := zk.Encode(zk.NewControllerZNode(id, ctx.Now()))
		n.c.Create(ctx, zk.ControllerPath, data, zk.Ephemeral, func(ctx *sim.Context, r *zk.Response) {
			switch r.Code {
			case zk.Ok:
				n.h.logf(ctx, "elected")
				bumpEpoch(n, ctx)
			case zk.NodeExists:
				n.c.Exists(ctx, zk.ControllerPath, true, func(ctx *sim.Context, r *zk.Response) {
					if r.Code == zk.NoNode {
						elect(id)(n, ctx) // gone meanwhile: run again
					}
				})
			}
		})
	}
}

func bumpEpoch(n *client, ctx *sim.Context) {
	n.c.GetData(ctx, zk.ControllerEpochPath, false, func(ctx *sim.Context, r *zk.Response) {
		if r.Code == zk.NoNode {
			n.c.Create(ctx, zk.ControllerEpochPath, zk.EncodeControllerEpoch(1), zk.Persistent, n.rec("epoch"))
			return
		}
		e, err := zk.DecodeControllerEpoch(r.Data)
		if err != nil {
			panic(err)
		}
		n.c.Multi(ctx, []zk.Op{zk.SetDataOp(zk.ControllerEpochPath, zk.EncodeControllerEpoch(e+1), r.Stat.Version)}, n.rec("epoch"))
	})
}

// TestControllerElection races two brokers for /controller: exactly one
// wins; when the winner crashes and its session expires, the loser's exists
// watch fires and it takes over, bumping the controller epoch to 2.
func TestControllerElection(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			h := newHarness(t, seed, lan)
			rerun := func(id int32) func(*client) {
				return func(n *client) {
					n.onWatch = func(n *client, ctx *sim.Context, ev zk.WatchEvent) {
						if ev.Path == zk.ControllerPath && ev.Type == zk.EventNodeDeleted {
							elect(id)(n, ctx)
						}
					}
				}
			}
			b1, _ := h.addClientWith("b1", sim.Ms(6000), rerun(1), at(100, elect(1)))
			b2, _ := h.addClientWith("b2", sim.Ms(6000), rerun(2), at(100, elect(2)))
			h.runUntil(1000)
			won := h.grep("elected")
			if len(won) != 1 {
				t.Fatalf("after the race: %v, want exactly one elected", won)
			}
			winner, loser, loserID := b1, b2, int32(2)
			if won[0] == "b2 elected" {
				winner, loser, loserID = b2, b1, 1
			}
			h.w.Inject(sim.Crash{Node: winner})
			h.runUntil(20000)
			won = h.grep("elected")
			if len(won) != 2 || won[1] != h.w.Name(loser)+" elected" {
				t.Fatalf("after the winner's crash: %v, want the other broker elected", won)
			}
			if at, _ := h.when(h.w.Name(loser) + " elected"); at < sim.Time(6*sim.Second) || at > sim.Time(9*sim.Second) {
				t.Errorf("took over at %v, want when the winner's 6s session expires (at 8s)", at)
			}
			equalLines(t, "watch", h.grep("watch"), []string{h.w.Name(loser) + " watch NodeDeleted /controller"})
			data, _, _ := h.server().Get(zk.ControllerPath)
			var c zk.ControllerZNode
			if err := zk.Decode(data, &c); err != nil || c.BrokerID != loserID {
				t.Errorf("/controller = %s (%v), want brokerid %d", data, err, loserID)
			}
			epoch, st, _ := h.server().Get(zk.ControllerEpochPath)
			if string(epoch) != "2" || st.Version != 1 {
				t.Errorf("/controller_epoch = %q version %d, want \"2\" version 1", epoch, st.Version)
			}
		})
	}
}

// TestServerRestartRecoversFromDisk power-fails the server: the tree, the
// zxid and the sessions come back from the synced log, the client
// reconnects to its same session, and its ephemeral znode survives.
func TestServerRestartRecoversFromDisk(t *testing.T) {
	h := newHarness(t, 5, lan)
	h.addClient("c", sim.Ms(6000),
		at(100, func(n *client, ctx *sim.Context) {
			n.c.Create(ctx, "/p", []byte("persistent"), zk.Persistent, nil)
			n.c.Create(ctx, "/p/s-", nil, zk.PersistentSequential, nil)
			n.c.Create(ctx, "/e", []byte("ephemeral"), zk.Ephemeral, nil)
			n.c.SetData(ctx, "/p", []byte("v1"), 0, nil)
			n.c.Exists(ctx, "/later", true, nil)
		}),
		at(3000, func(n *client, ctx *sim.Context) {
			n.c.Create(ctx, "/later", nil, zk.Persistent, n.rec("after restart"))
		}))
	h.runUntil(999)
	before, zxid := h.server().Dump(), h.server().Zxid()
	h.injectAt(1000, sim.Crash{Node: h.zk, LoseUnsynced: true})
	h.injectAt(1500, sim.Restart{Node: h.zk})
	h.runUntil(1501)
	if got := h.server().Dump(); got != before {
		t.Fatalf("tree after restart:\n%s\nbefore:\n%s", got, before)
	}
	if got := h.server().Zxid(); got != zxid {
		t.Errorf("zxid after restart %d, want %d", got, zxid)
	}
	if got := h.server().Sessions(); len(got) != 1 || got[0] != 1 {
		t.Errorf("sessions after restart %v, want [1]", got)
	}
	h.runUntil(20000)
	equalLines(t, "log", h.lines, []string{
		"c session SyncConnected 1",
		"c session Disconnected 1",
		"c session SyncConnected 1",
		"c watch NodeCreated /later", // ZooKeeper fires watches before answering
		"c after restart OK path=/later",
	})
	if !h.exists("/e") {
		t.Errorf("/e is gone: the session survived the restart, so must its ephemeral")
	}
	if !h.exists("/p/s-0000000000") {
		t.Errorf("sequential znode lost:\n%s", h.server().Dump())
	}
}

// TestExpiryDuringPartitionGivesNewSession cuts a broker off ZooKeeper for
// longer than its session timeout: its ephemeral znode is deleted, and when
// the partition heals the client learns the session expired, opens a new
// one, and the broker registers again.
func TestExpiryDuringPartitionGivesNewSession(t *testing.T) {
	h := newHarness(t, 6, lan)
	register := func(n *client, ctx *sim.Context, ev zk.SessionEvent) {
		if ev.State == zk.SyncConnected {
			n.c.Create(ctx, zk.BrokerIDPath(1), nil, zk.Ephemeral, n.rec("register"))
		}
	}
	b, _ := h.addClientWith("b1", sim.Ms(6000), func(n *client) { n.onSession = register },
		at(50, func(n *client, ctx *sim.Context) { n.c.CreateRecursive(ctx, zk.BrokerIDsPath, nil, nil) }))
	h.injectAt(1000, sim.Partition{Groups: [][]sim.NodeID{{h.zk}, {b}}})
	h.injectAt(12000, sim.Heal{})
	h.runUntil(11000)
	if h.exists(zk.BrokerIDPath(1)) {
		t.Errorf("/brokers/ids/1 exists during the partition after the session timeout")
	}
	h.runUntil(20000)
	equalLines(t, "log", h.lines, []string{
		"b1 session SyncConnected 1",
		"b1 register NONODE",
		"b1 session Disconnected 1",
		"b1 session Expired 1",
		"b1 session SyncConnected 2",
		"b1 register OK path=/brokers/ids/1",
	})
	if _, st, ok := h.server().Get(zk.BrokerIDPath(1)); !ok || st.EphemeralOwner != 2 {
		t.Errorf("/brokers/ids/1 owner %d (exists %v), want the new session 2", st.EphemeralOwner, ok)
	}
}

// TestLostWatchEventRecoveredOnReconnect drops a watch event on its way to
// the client (a one-way cut between two pings). The next message from the
// server shows a gap in the connection's sequence, which a TCP stream would
// have turned into a reset: the client reconnects, sets its watches again,
// and the server fires the missed change (SetWatches with the last zxid).
func TestLostWatchEventRecoveredOnReconnect(t *testing.T) {
	h := newHarness(t, 9, lan)
	h.addClient("writer", sim.Ms(6000),
		at(100, func(n *client, ctx *sim.Context) { n.c.Create(ctx, "/a", nil, zk.Persistent, nil) }),
		at(1100, func(n *client, ctx *sim.Context) { n.c.SetData(ctx, "/a", []byte("new"), zk.AnyVersion, nil) }))
	reader, _ := h.addClient("reader", sim.Ms(6000),
		at(200, func(n *client, ctx *sim.Context) { n.c.GetData(ctx, "/a", true, nil) }))
	h.injectAt(1000, sim.Cut{From: h.zk, To: reader})
	h.injectAt(1200, sim.Heal{})
	h.runUntil(5000)
	equalLines(t, "reader watches", h.grep("reader watch"), []string{"reader watch NodeDataChanged /a"})
	if got := h.grep("reader session"); len(got) != 3 || !strings.Contains(got[1], "Disconnected") || got[0] != got[2] {
		t.Errorf("reader sessions %v, want connected, disconnected, reconnected to the same session", got)
	}
	if at, _ := h.when("watch NodeDataChanged"); at > sim.Time(2100*sim.Millisecond) {
		t.Errorf("the lost event was recovered at %v, want at the first ping after the heal (about 2s)", at)
	}
}
