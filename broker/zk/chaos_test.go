package zk_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

var lossy = sim.LinkConfig{
	MinLatency: 100 * sim.Microsecond, MaxLatency: 3 * sim.Millisecond, LatencyStep: sim.Microsecond,
	DropProbability: 0.02, DuplicateProbability: 0.05, ReorderProbability: 0.05,
	DelayProbability: 0.05, Delay: 20 * sim.Millisecond,
}

// counterStats counts a client's increments of /counter: acknowledged, and
// unknown (ConnectionLoss: the write may or may not have happened).
type counterStats struct{ acked, unknown int }

// chaosWorld builds three brokers that register ephemerally on every new
// session and keep incrementing /counter with version-checked writes, over
// lossy links, with a broker crash, a ZooKeeper power loss and a partition.
// At 40s the links become clean; the run ends at 60s.
func chaosWorld(t testing.TB, seed uint64) (*harness, []sim.NodeID, []*counterStats) {
	h := newHarness(t, seed, lossy)
	var ids []sim.NodeID
	var stats []*counterStats
	for i := int32(1); i <= 3; i++ {
		st := &counterStats{}
		stats = append(stats, st)
		var incr func(n *client, ctx *sim.Context)
		incr = func(n *client, ctx *sim.Context) {
			n.looping = true
			if ctx.Now() > sim.Time(55*sim.Second) {
				return
			}
			again := func(ctx *sim.Context) { ctx.SetTimer(sim.Ms(100), "step-0") }
			n.c.GetData(ctx, "/counter", false, func(ctx *sim.Context, r *zk.Response) {
				if r.Code != zk.Ok {
					again(ctx)
					return
				}
				v, _ := strconv.Atoi(string(r.Data))
				n.c.SetData(ctx, "/counter", []byte(strconv.Itoa(v+1)), r.Stat.Version, func(ctx *sim.Context, r *zk.Response) {
					switch r.Code {
					case zk.Ok:
						st.acked++
					case zk.ConnectionLoss, zk.SessionExpired:
						st.unknown++
					}
					again(ctx)
				})
			})
		}
		id, _ := h.addClientWith(fmt.Sprintf("b%d", i), sim.Ms(6000), func(n *client) {
			n.onSession = func(n *client, ctx *sim.Context, ev zk.SessionEvent) {
				if ev.State == zk.SyncConnected {
					n.c.CreateRecursive(ctx, zk.BrokerIDsPath, nil, nil)
					n.c.Create(ctx, zk.BrokerIDPath(i), nil, zk.Ephemeral, nil)
					n.c.Create(ctx, "/counter", []byte("0"), zk.Persistent, nil)
				}
			}
		}, at(500, incr), at(9500, func(n *client, ctx *sim.Context) {
			if !n.looping { // b1's restarted incarnation
				incr(n, ctx)
			}
		}))
		ids = append(ids, id)
	}
	h.injectAt(5000, sim.Crash{Node: ids[0]})
	h.injectAt(9000, sim.Restart{Node: ids[0]})
	h.injectAt(15000, sim.Crash{Node: h.zk, LoseUnsynced: true})
	h.injectAt(17000, sim.Restart{Node: h.zk})
	h.injectAt(22000, sim.Partition{Groups: [][]sim.NodeID{{h.zk, ids[0], ids[1]}, {ids[2]}}})
	h.injectAt(32000, sim.Heal{})
	h.w.At(sim.Time(40*sim.Second), "clean links", func(w *sim.World) {
		if err := w.SetAllLinks(sim.DefaultLink); err != nil {
			panic(err)
		}
	})
	return h, ids, stats
}

// TestChaosRecovers checks that after crashes, a ZooKeeper power loss, a
// partition longer than the session timeout and lossy links, every broker is
// connected with one live session, registered under that session, and that
// /counter counts every acknowledged increment (and at most the unknown ones
// besides): no acknowledged write is lost and none is applied twice.
func TestChaosRecovers(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			h, ids, stats := chaosWorld(t, seed)
			h.runUntil(60000)
			var want []int64
			for i, id := range ids {
				c := h.w.Node(id).(*client).c
				if c.State() != zk.SyncConnected {
					t.Errorf("b%d: state %v, want SyncConnected", i+1, c.State())
				}
				_, st, ok := h.server().Get(zk.BrokerIDPath(int32(i + 1)))
				if !ok || st.EphemeralOwner != c.SessionID() {
					t.Errorf("b%d: registration exists=%v owner=%d, want owned by its session %d", i+1, ok, st.EphemeralOwner, c.SessionID())
				}
				want = append(want, c.SessionID())
			}
			if len(h.grep("b3 session Expired")) == 0 {
				t.Errorf("b3 was cut off for 10s with a 6s session: it must have seen Expired")
			}
			got := h.server().Sessions()
			if fmt.Sprint(got) != fmt.Sprint(sortedIDs(want)) {
				t.Errorf("live sessions %v, want the brokers' %v", got, sortedIDs(want))
			}
			data, _, _ := h.server().Get("/counter")
			v, _ := strconv.Atoi(string(data))
			acked, unknown := 0, 0
			for i, s := range stats {
				acked += s.acked
				unknown += s.unknown
				if s.acked < 50 {
					t.Errorf("b%d: only %d increments acknowledged in 55s: its client stalled", i+1, s.acked)
				}
			}
			if v < acked || v > acked+unknown {
				t.Errorf("/counter = %d, want between %d acknowledged and %d (+%d unknown)", v, acked, acked+unknown, unknown)
			}
		})
	}
}

func sortedIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// TestDeterminism runs the chaos world twice per seed: the trace hashes
// must match; two seeds must give different traces.
func TestDeterminism(t *testing.T) {
	hashes := map[uint64]uint64{}
	for _, seed := range []uint64{7, 8} {
		var first uint64
		for run := 0; run < 2; run++ {
			h, _, _ := chaosWorld(t, seed)
			h.runUntil(60000)
			hash := h.w.Trace().Hash()
			if run == 0 {
				first = hash
			} else if hash != first {
				t.Fatalf("seed %d: trace hash %x then %x", seed, first, hash)
			}
		}
		hashes[seed] = first
	}
	if hashes[7] == hashes[8] {
		t.Errorf("seeds 7 and 8 gave the same trace hash %x", hashes[7])
	}
}
