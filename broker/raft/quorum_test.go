package raft_test

// Spec-claim tests on small worlds (KIP-595, KIP-996) and the randomized
// quorum test in the style of Kafka's RaftEventSimulationTest: random
// crashes (with and without power loss), restarts, partitions and heals
// over many seeds, checking Election Safety, Log Matching, Leader
// Completeness and State Machine Safety; and the planted bug
// (VoteCheckLog=false) must break one of them on some seed.

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

func TestElectsOneLeaderAndCommits(t *testing.T) {
	h := newWorld(t, 1, testConfig([]int32{0, 1, 2}), 1, sim.Ms(100))
	h.run(sim.Ms(10000))
	l := h.leader()
	if l == nil {
		t.Fatal("no leader after 10s")
	}
	if l.c.HighWatermark() < 10 {
		t.Fatalf("leader HW %d: want >= 10 after 10s of appends", l.c.HighWatermark())
	}
	obs := h.nodes[3]
	if obs.c.IsVoter() || obs.c.Leader().Leader != l.id {
		t.Fatalf("observer follows %v, want leader %d", obs.c.Leader(), l.id)
	}
	if len(obs.state) == 0 {
		t.Fatal("observer applied nothing")
	}
	h.checkLogMatching()
	if h.violation != "" {
		t.Fatal(h.violation)
	}
}

func TestRestartReplaysCommittedBatches(t *testing.T) {
	h := newWorld(t, 2, testConfig([]int32{0, 1, 2}), 0, sim.Ms(100))
	h.run(sim.Ms(5000))
	l := h.leader()
	f := h.nodes[(l.id+1)%3]
	before := len(f.state)
	if err := h.w.Inject(sim.Crash{Node: sim.NodeID(f.id), LoseUnsynced: true}); err != nil {
		t.Fatal(err)
	}
	if err := h.w.Inject(sim.Restart{Node: sim.NodeID(f.id)}); err != nil {
		t.Fatal(err)
	}
	h.run(sim.Ms(3000))
	f = h.nodes[f.id]
	if len(f.state) < before {
		t.Fatalf("restarted follower applied %d values, had %d before the crash", len(f.state), before)
	}
	if h.violation != "" {
		t.Fatal(h.violation)
	}
}

// TestSnapshotsAndFetchSnapshot: with snapshots on, a follower kept away
// while the leader deletes its log prefix catches up by FetchSnapshot.
func TestSnapshotsAndFetchSnapshot(t *testing.T) {
	cfg := testConfig([]int32{0, 1, 2})
	cfg.SnapshotBytes = 300
	cfg.SegmentBytes = 512
	h := newWorld(t, 3, cfg, 0, sim.Ms(50))
	h.run(sim.Ms(3000))
	l := h.leader()
	f := h.nodes[(l.id+1)%3]
	if err := h.w.Inject(sim.Crash{Node: sim.NodeID(f.id)}); err != nil {
		t.Fatal(err)
	}
	h.run(sim.Ms(10000))
	if l.c.LogStartOffset() == 0 {
		t.Fatal("the leader never deleted its log prefix")
	}
	if err := h.w.Inject(sim.Restart{Node: sim.NodeID(f.id)}); err != nil {
		t.Fatal(err)
	}
	h.run(sim.Ms(5000))
	f = h.nodes[f.id]
	l = h.leader()
	if end, _ := f.c.SnapshotID(); end < 0 {
		t.Fatal("the follower holds no snapshot")
	}
	if got, want := f.c.HighWatermark(), l.c.HighWatermark(); got < want-20 {
		t.Fatalf("follower HW %d, leader HW %d: not caught up", got, want)
	}
	if len(f.state) != int(len(l.state)) && absDiff(len(f.state), len(l.state)) > 20 {
		t.Fatalf("follower state %d values, leader %d", len(f.state), len(l.state))
	}
	if h.violation != "" {
		t.Fatal(h.violation)
	}
}

func absDiff(a, b int) int {
	if a > b {
		return a - b
	}
	return b - a
}

// disruption isolates a follower for a while, heals, and reports how many
// epochs the quorum went through.
func disruption(t *testing.T, preVote, checkQuorum bool) (epochBefore, epochAfter int32) {
	cfg := testConfig([]int32{0, 1, 2})
	cfg.PreVote, cfg.CheckQuorum = preVote, checkQuorum
	h := newWorld(t, 4, cfg, 0, sim.Ms(100))
	h.run(sim.Ms(5000))
	l := h.leader()
	epochBefore = l.c.Leader().Epoch
	iso := sim.NodeID((l.id + 1) % 3)
	var rest []sim.NodeID
	for i := sim.NodeID(0); i < 3; i++ {
		if i != iso {
			rest = append(rest, i)
		}
	}
	if err := h.w.Inject(sim.Partition{Groups: [][]sim.NodeID{{iso}, rest}}); err != nil {
		t.Fatal(err)
	}
	h.run(sim.Ms(10000))
	if err := h.w.Inject(sim.Heal{}); err != nil {
		t.Fatal(err)
	}
	h.run(sim.Ms(5000))
	if h.violation != "" {
		t.Fatal(h.violation)
	}
	return epochBefore, h.leader().c.Leader().Epoch
}

// TestPreVotePreventsDisruption (KIP-996): without pre-vote, a voter cut
// off bumps its epoch and, when it comes back, forces a new election;
// with pre-vote, the epoch does not move.
func TestPreVotePreventsDisruption(t *testing.T) {
	b, a := disruption(t, false, false)
	if a == b {
		t.Fatalf("without pre-vote: epoch stayed %d: the returning voter should disrupt", b)
	}
	b, a = disruption(t, true, true)
	if a != b {
		t.Fatalf("with pre-vote: epoch went %d -> %d: the returning voter disrupted the leader", b, a)
	}
}

// TestCheckQuorumResigns (KIP-996): a leader cut off from the voters
// resigns within the check-quorum timeout; without check-quorum it stays.
func TestCheckQuorumResigns(t *testing.T) {
	for _, cq := range []bool{false, true} {
		cfg := testConfig([]int32{0, 1, 2})
		cfg.PreVote, cfg.CheckQuorum = true, cq
		h := newWorld(t, 5, cfg, 0, 0)
		h.run(sim.Ms(5000))
		l := h.leader()
		var rest []sim.NodeID
		for i := sim.NodeID(0); i < 3; i++ {
			if int32(i) != l.id {
				rest = append(rest, i)
			}
		}
		if err := h.w.Inject(sim.Partition{Groups: [][]sim.NodeID{{sim.NodeID(l.id)}, rest}}); err != nil {
			t.Fatal(err)
		}
		h.run(sim.Ms(6000))
		if got := l.c.IsLeader(); got == cq {
			t.Fatalf("check-quorum=%v: cut-off leader still leader = %v", cq, got)
		}
	}
}

// randomRun is one RaftEventSimulationTest-style run.
func randomRun(t *testing.T, seed uint64, voters int, checkLog, preVote bool) string {
	var vs []int32
	for i := 0; i < voters; i++ {
		vs = append(vs, int32(i))
	}
	cfg := testConfig(vs)
	cfg.VoteCheckLog, cfg.PreVote, cfg.CheckQuorum = checkLog, preVote, preVote
	cfg.SnapshotBytes = 2000
	h := newWorld(t, seed, cfg, 1, sim.Ms(50))
	r := sim.NewRandom(seed ^ 0x9e3779b97f4a7c15)
	total := voters + 1
	for step := 0; step < 40 && h.violation == ""; step++ {
		h.run(sim.Ms(int64(200 + r.Choose(sim.KindFault, 1500))))
		id := sim.NodeID(r.Choose(sim.KindFault, total))
		switch r.Choose(sim.KindFault, 6) {
		case 0, 1:
			if h.w.Up(id) {
				_ = h.w.Inject(sim.Crash{Node: id, LoseUnsynced: r.Choose(sim.KindFault, 2) == 0})
			}
		case 2:
			for i := sim.NodeID(0); i < sim.NodeID(total); i++ {
				if !h.w.Up(i) {
					_ = h.w.Inject(sim.Restart{Node: i})
				}
			}
		case 3, 4:
			var a, b []sim.NodeID
			for i := sim.NodeID(0); i < sim.NodeID(total); i++ {
				if r.Choose(sim.KindFault, 2) == 0 {
					a = append(a, i)
				} else {
					b = append(b, i)
				}
			}
			_ = h.w.Inject(sim.Partition{Groups: [][]sim.NodeID{a, b}})
		case 5:
			_ = h.w.Inject(sim.Heal{})
		}
		h.checkLogMatching()
	}
	// Liveness after healing: a leader, and every node catches up.
	_ = h.w.Inject(sim.Heal{})
	for i := sim.NodeID(0); i < sim.NodeID(total); i++ {
		if !h.w.Up(i) {
			_ = h.w.Inject(sim.Restart{Node: i})
		}
	}
	h.run(sim.Ms(15000))
	h.checkLogMatching()
	if l := h.leader(); h.violation == "" && checkLog {
		if l == nil {
			h.fail("liveness: no leader 15s after healing")
		} else {
			for _, n := range h.nodes {
				if n.c.HighWatermark() < l.c.HighWatermark()-40 {
					h.fail("liveness: node %d HW %d, leader HW %d", n.id, n.c.HighWatermark(), l.c.HighWatermark())
				}
			}
		}
	}
	return h.violation
}

func TestRandomQuorumSafety(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	var all []uint64
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		all = append(all, seed)
	}
	// Regressions: seeds that broke State Machine Safety before the fixes
	// for an old-epoch fetch past a snapshot (validFetchPosition) and
	// late pre-vote grants counted as votes.
	all = append(all, 105, 116, 135, 202, 207)
	for _, seed := range all {
		for _, pv := range []bool{false, true} {
			voters := 3 + 2*int(seed%2)
			if v := randomRun(t, seed, voters, true, pv); v != "" {
				t.Errorf("seed %d voters %d prevote %v: %s", seed, voters, pv, v)
			}
		}
	}
}

// TestPlantedVoteBugIsFound: granting votes without Raft's log check must
// lose committed data on some seed.
func TestPlantedVoteBugIsFound(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		if v := randomRun(t, seed, 3, false, false); v != "" {
			// A truncation below the HW is how Kafka itself would stop
			// (a fatal KafkaException): the invariant catches it first.
			if !strings.Contains(v, "Completeness") && !strings.Contains(v, "Safety") && !strings.Contains(v, "Matching") &&
				!strings.Contains(v, "below its high watermark") {
				t.Fatalf("seed %d: unexpected violation %s", seed, v)
			}
			t.Logf("seed %d: %s", seed, v)
			return
		}
	}
	t.Fatal("VoteCheckLog=false broke no invariant in 60 seeds")
}
