package raft_test

// KIP-853's dynamic voters against KAFKA-14077: a voter that comes back
// with a blank disk. Under a static quorum (kraft.version 0) it votes with
// an empty log and helps elect a leader that lacks a committed record;
// with directory ids (kraft.version 1) it is another replica, an observer,
// and the quorum waits for the voter it replaced, or for an operator's
// RemoveRaftVoter + AddRaftVoter.

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// blankDiskRun plays KAFKA-14077 on three voters: a record is committed by
// the leader L and voter A while voter B is cut off; A's disk is wiped and
// A restarts; L crashes; B is reconnected. It returns the world and L, A,
// B; committed is the record's batch as L wrote it.
func blankDiskRun(t *testing.T, seed uint64, kraftVersion int16, opts ...func(*raft.Config)) (h *world, l, a, b *node, committed raft.Entry) {
	t.Helper()
	cfg := testConfig([]int32{0, 1, 2})
	cfg.KRaftVersion = kraftVersion
	for _, o := range opts {
		o(&cfg)
	}
	h = newWorld(t, seed, cfg, 0, 0)
	h.run(5 * sim.Second)
	l = h.leader()
	if l == nil {
		t.Fatal("no leader after 5s")
	}
	a, b = h.nodes[(l.id+1)%3], h.nodes[(l.id+2)%3]
	must(t, h.w.Inject(sim.Partition{Groups: [][]sim.NodeID{{sim.NodeID(l.id), sim.NodeID(a.id)}, {sim.NodeID(b.id)}}}))
	h.run(100 * sim.Millisecond)
	var last int64
	must(t, h.w.Act(sim.NodeID(l.id), func(ctx *sim.Context) {
		var err error
		last, err = l.c.Append(ctx, [][]byte{[]byte("committed")})
		must(t, err)
	}))
	h.run(2 * sim.Second)
	if l.c.HighWatermark() <= last || h.nodes[a.id].c.LogEndOffset() <= last {
		t.Fatalf("the record at %d is not committed by L and A (hw %d)", last, l.c.HighWatermark())
	}
	if b.c.LogEndOffset() > last {
		t.Fatalf("B holds offset %d: it was cut off", last)
	}
	for _, e := range l.c.Entries() {
		if e.BaseOffset == last {
			committed = e
		}
	}
	must(t, h.w.Inject(sim.Crash{Node: sim.NodeID(a.id)}))
	must(t, h.w.Inject(sim.WipeDisk{Node: sim.NodeID(a.id)}))
	must(t, h.w.Inject(sim.Restart{Node: sim.NodeID(a.id)}))
	must(t, h.w.Inject(sim.Crash{Node: sim.NodeID(l.id)}))
	must(t, h.w.Inject(sim.Heal{}))
	h.run(20 * sim.Second)
	return h, l, h.nodes[a.id], b, committed
}

// holds reports whether n's log holds batch e.
func holds(n *node, e raft.Entry) bool {
	for _, x := range n.c.Entries() {
		if x == e {
			return true
		}
	}
	return false
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestKAFKA14077StaticQuorumLosesCommittedRecord: the hazard, reproduced.
func TestKAFKA14077StaticQuorumLosesCommittedRecord(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		h, _, a, b, rec := blankDiskRun(t, seed, 0)
		if !a.c.IsVoter() {
			t.Fatalf("seed %d: the blank static voter is no voter", seed)
		}
		if !b.c.IsLeader() || holds(b, rec) {
			t.Fatalf("seed %d: want B (%s) elected with the blank voter's vote, without the committed batch %+v (violation %q)", seed, b.c.State(), rec, h.violation)
		}
	}
}

// TestKIP853BlankVoterIsAnObserver: with kraft.version 1 the wiped voter
// comes back with another directory id; it neither votes nor stands, B
// cannot win alone, and once L returns the quorum recovers with the
// committed record.
func TestKIP853BlankVoterIsAnObserver(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		h, l, a, b, rec := blankDiskRun(t, seed, 1)
		if h.violation != "" {
			t.Fatalf("seed %d: %s", seed, h.violation)
		}
		if a.c.IsVoter() {
			t.Fatalf("seed %d: the wiped voter %d (directory %x) counts as a voter of %s", seed, a.id, a.c.DirectoryID(), a.c.Voters())
		}
		if got := h.leader(); got != nil {
			t.Fatalf("seed %d: node %d leads epoch %d without L: the blank voter must not be counted", seed, got.id, got.c.Leader().Epoch)
		}
		if b.c.State() == "leader" {
			t.Fatalf("seed %d: B leads", seed)
		}
		must(t, h.w.Inject(sim.Restart{Node: sim.NodeID(l.id)}))
		h.run(20 * sim.Second)
		if h.violation != "" {
			t.Fatalf("seed %d: after L's return: %s", seed, h.violation)
		}
		if h.leader() == nil {
			t.Fatalf("seed %d: no leader after L returned", seed)
		}
		for _, n := range []*node{h.nodes[l.id], a, b} {
			if !holds(n, rec) {
				t.Fatalf("seed %d: node %d lacks the committed batch %+v", seed, n.id, rec)
			}
		}
		if a.c.IsVoter() || a.c.LogEndOffset() < h.leader().c.HighWatermark() {
			t.Fatalf("seed %d: the observer A (voter %v) should fetch the log: end %d, hw %d", seed, a.c.IsVoter(), a.c.LogEndOffset(), h.leader().c.HighWatermark())
		}
	}
}

// voterChange sends req to the leader and runs until it is answered.
func voterChange(t *testing.T, h *world, ld *node, req kmsg.Request) (int16, string) {
	t.Helper()
	var got kmsg.Response
	must(t, h.w.Act(sim.NodeID(ld.id), func(ctx *sim.Context) {
		ld.c.Handle(ctx, -1, req, func(r kmsg.Response) { got = r })
	}))
	for i := 0; i < 100 && got == nil; i++ {
		h.run(100 * sim.Millisecond)
	}
	switch r := got.(type) {
	case *kmsg.AddRaftVoterResponse:
		return r.ErrorCode, str(r.ErrorMessage)
	case *kmsg.RemoveRaftVoterResponse:
		return r.ErrorCode, str(r.ErrorMessage)
	}
	t.Fatalf("no answer to %T", req)
	return 0, ""
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func removeReq(id int32, dir [16]byte) *kmsg.RemoveRaftVoterRequest {
	r := kmsg.NewPtrRemoveRaftVoterRequest()
	r.VoterID, r.VoterDirectoryID = id, dir
	return r
}

func addReq(id int32, dir [16]byte) *kmsg.AddRaftVoterRequest {
	r := kmsg.NewPtrAddRaftVoterRequest()
	r.VoterID, r.VoterDirectoryID = id, dir
	return r
}

// TestKIP853ReplaceWipedVoter: RemoveRaftVoter of the old (id, directory
// id), then AddRaftVoter of the new one, makes the wiped node a voter
// again; the leader refuses what KIP-853 refuses.
func TestKIP853ReplaceWipedVoter(t *testing.T) {
	h, l, a, _, _ := blankDiskRun(t, 1, 1)
	must(t, h.w.Inject(sim.Restart{Node: sim.NodeID(l.id)}))
	h.run(20 * sim.Second)
	ld := h.leader()
	if ld == nil {
		t.Fatal("no leader")
	}
	old := raft.InitialDirectoryID("kafkasim-raft", a.id)
	if code, _ := voterChange(t, h, ld, addReq(a.id, a.c.DirectoryID())); code != kerr.DuplicateVoter.Code {
		t.Fatalf("adding voter id %d while it is in the set: code %d, want DUPLICATE_VOTER", a.id, code)
	}
	if code, _ := voterChange(t, h, ld, removeReq(a.id, a.c.DirectoryID())); code != kerr.VoterNotFound.Code {
		t.Fatalf("removing (%d, its new directory): code %d, want VOTER_NOT_FOUND", a.id, code)
	}
	if code, msg := voterChange(t, h, ld, removeReq(a.id, old)); code != 0 {
		t.Fatalf("RemoveRaftVoter(%d, old directory): code %d %s", a.id, code, msg)
	}
	if strings.Contains(ld.c.Voters(), "1:") && a.id == 1 || len(strings.Split(ld.c.Voters(), ",")) != 2 {
		t.Fatalf("voters after the removal: %s", ld.c.Voters())
	}
	h.run(2 * sim.Second)
	if code, msg := voterChange(t, h, ld, addReq(a.id, a.c.DirectoryID())); code != 0 {
		t.Fatalf("AddRaftVoter(%d, new directory): code %d %s", a.id, code, msg)
	}
	h.run(2 * sim.Second)
	if !a.c.IsVoter() {
		t.Fatalf("node %d is no voter after AddRaftVoter; voters %s", a.id, a.c.Voters())
	}
	if h.violation != "" {
		t.Fatal(h.violation)
	}
}

// TestKIP853OneVoterChangeAtATime: a second change while the first is
// uncommitted is refused with REQUEST_TIMED_OUT; a static quorum refuses
// any with UNSUPPORTED_VERSION.
func TestKIP853OneVoterChangeAtATime(t *testing.T) {
	cfg := testConfig([]int32{0, 1, 2})
	cfg.KRaftVersion = 1
	h := newWorld(t, 1, cfg, 0, 0)
	h.run(5 * sim.Second)
	ld := h.leader()
	other := h.nodes[(ld.id+1)%3]
	third := h.nodes[(ld.id+2)%3]
	// Cut the leader off from both followers: its change cannot commit.
	must(t, h.w.Inject(sim.Partition{Groups: [][]sim.NodeID{{sim.NodeID(ld.id)}, {sim.NodeID(other.id), sim.NodeID(third.id)}}}))
	var first, second kmsg.Response
	must(t, h.w.Act(sim.NodeID(ld.id), func(ctx *sim.Context) {
		ld.c.Handle(ctx, -1, removeReq(other.id, other.c.DirectoryID()), func(r kmsg.Response) { first = r })
		ld.c.Handle(ctx, -1, removeReq(third.id, third.c.DirectoryID()), func(r kmsg.Response) { second = r })
	}))
	if first != nil {
		t.Fatalf("the first change was answered before it could commit: %+v", first)
	}
	r, ok := second.(*kmsg.RemoveRaftVoterResponse)
	if !ok || r.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("second change while the first is uncommitted: %+v, want REQUEST_TIMED_OUT", second)
	}
	if n := len(strings.Split(ld.c.Voters(), ",")); n != 2 {
		t.Fatalf("the leader's set after its uncommitted removal: %s, want 2 voters (a change counts once appended)", ld.c.Voters())
	}
	// The others elect a leader; back, the old one truncates its
	// uncommitted change, and its set with it.
	h.run(10 * sim.Second)
	must(t, h.w.Inject(sim.Heal{}))
	h.run(10 * sim.Second)
	if fr, ok := first.(*kmsg.RemoveRaftVoterResponse); !ok || fr.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("the uncommitted change of a deposed leader: %+v, want NOT_LEADER_OR_FOLLOWER", first)
	}
	if n := len(strings.Split(ld.c.Voters(), ",")); n != 3 || !ld.c.IsVoter() || h.violation != "" {
		t.Fatalf("the old leader after the truncation: voters %s (voter %v), violation %q; want the three voters back", ld.c.Voters(), ld.c.IsVoter(), h.violation)
	}

	s := newWorld(t, 1, testConfig([]int32{0, 1, 2}), 0, 0)
	s.run(5 * sim.Second)
	if code, _ := voterChange(t, s, s.leader(), removeReq(1, [16]byte{})); code != kerr.UnsupportedVersion.Code {
		t.Fatalf("a static quorum's RemoveRaftVoter: code %d, want UNSUPPORTED_VERSION", code)
	}
}

// TestKIP853DescribeQuorumListsTheWipedNodeAsObserver: the leader's
// DescribeQuorum lists the wiped node among the observers, with its new
// directory id, and keeps its old key among the voters.
func TestKIP853DescribeQuorumListsTheWipedNodeAsObserver(t *testing.T) {
	h, l, a, _, _ := blankDiskRun(t, 1, 1)
	must(t, h.w.Inject(sim.Restart{Node: sim.NodeID(l.id)}))
	h.run(20 * sim.Second)
	ld := h.leader()
	var got *kmsg.DescribeQuorumResponse
	must(t, h.w.Act(sim.NodeID(ld.id), func(ctx *sim.Context) {
		ld.c.Handle(ctx, -1, kmsg.NewPtrDescribeQuorumRequest(), func(r kmsg.Response) { got = r.(*kmsg.DescribeQuorumResponse) })
	}))
	p := got.Topics[0].Partitions[0]
	voter, observer := false, false
	for _, s := range p.CurrentVoters {
		voter = voter || s.ReplicaID == a.id
	}
	for _, s := range p.Observers {
		observer = observer || s.ReplicaID == a.id && s.ReplicaDirectoryID == a.c.DirectoryID()
	}
	if !voter || !observer {
		t.Fatalf("DescribeQuorum: voters %+v, observers %+v; want %d among the voters (its old key) and, with directory %x, among the observers", p.CurrentVoters, p.Observers, a.id, a.c.DirectoryID())
	}
}

// TestKIP853AutoJoinReplacesWipedVoter: with auto-join (Kafka 4.2) the
// wiped controller removes its stale voter key and adds itself once a
// leader is back; without it, it stays an observer.
func TestKIP853AutoJoinReplacesWipedVoter(t *testing.T) {
	for _, auto := range []bool{true, false} {
		h, l, a, _, rec := blankDiskRun(t, 2, 1, func(c *raft.Config) { c.AutoJoin = auto })
		if a.c.IsVoter() {
			t.Fatalf("auto-join %v: the wiped node is a voter before a leader could commit its change", auto)
		}
		must(t, h.w.Inject(sim.Restart{Node: sim.NodeID(l.id)}))
		h.run(30 * sim.Second)
		if h.violation != "" {
			t.Fatal(h.violation)
		}
		want := raft.InitialDirectoryID("kafkasim-raft", a.id)
		stale := strings.Contains(h.leader().c.Voters(), strings.TrimRight(base64url(want), "="))
		if auto && (!a.c.IsVoter() || stale) {
			t.Fatalf("auto-join: node %d voter %v, leader's voters %s; want it a voter with its new directory id", a.id, a.c.IsVoter(), h.leader().c.Voters())
		}
		if !auto && (a.c.IsVoter() || !stale) {
			t.Fatalf("no auto-join: node %d voter %v, voters %s; want the old key kept", a.id, a.c.IsVoter(), h.leader().c.Voters())
		}
		if !holds(a, rec) {
			t.Fatalf("auto-join %v: node %d lacks the committed batch", auto, a.id)
		}
	}
}

func base64url(u [16]byte) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// TestKIP853VoterSetSurvivesSnapshots: with snapshots deleting the log's
// prefix (and the VotersRecord at offset 0 with it), a restarted voter
// reads the set from its snapshot, and a wiped node learns it from the
// snapshot it fetches: an observer that knows all three voters.
func TestKIP853VoterSetSurvivesSnapshots(t *testing.T) {
	cfg := testConfig([]int32{0, 1, 2})
	cfg.KRaftVersion, cfg.SnapshotBytes = 1, 300
	h := newWorld(t, 3, cfg, 0, 50*sim.Millisecond)
	h.run(20 * sim.Second)
	ld := h.leader()
	if ld == nil || ld.c.LogStartOffset() == 0 {
		t.Fatalf("no leader, or no snapshot took the log's prefix (start %d)", ld.c.LogStartOffset())
	}
	f := h.nodes[(ld.id+1)%3]
	g := h.nodes[(ld.id+2)%3]
	must(t, h.w.Inject(sim.Crash{Node: sim.NodeID(f.id)}))
	must(t, h.w.Inject(sim.Restart{Node: sim.NodeID(f.id)}))
	must(t, h.w.Inject(sim.Crash{Node: sim.NodeID(g.id)}))
	must(t, h.w.Inject(sim.WipeDisk{Node: sim.NodeID(g.id)}))
	must(t, h.w.Inject(sim.Restart{Node: sim.NodeID(g.id)}))
	h.run(10 * sim.Second)
	f, g = h.nodes[f.id], h.nodes[g.id]
	if h.violation != "" {
		t.Fatal(h.violation)
	}
	if !f.c.IsVoter() || f.c.Voters() != ld.c.Voters() {
		t.Fatalf("restarted voter %d: voter %v, voters %q; want %q", f.id, f.c.IsVoter(), f.c.Voters(), ld.c.Voters())
	}
	if g.c.IsVoter() || g.c.Voters() != ld.c.Voters() || g.c.LogStartOffset() == 0 {
		t.Fatalf("wiped node %d: voter %v, voters %q (want %q), log start %d: want an observer that fetched the snapshot", g.id, g.c.IsVoter(), g.c.Voters(), ld.c.Voters(), g.c.LogStartOffset())
	}
}

// TestKIP853LeaderRemovesItself: RemoveRaftVoter of the leader itself is
// served, as Kafka's RemoveVoterHandler serves it: the new set, without
// the leader, commits on a majority of the other voters, the leader
// answers, resigns, and the others elect a leader of a later epoch; the
// old leader, no voter now, follows it as an observer.
func TestKIP853LeaderRemovesItself(t *testing.T) {
	cfg := testConfig([]int32{0, 1, 2})
	cfg.KRaftVersion = 1
	h := newWorld(t, 1, cfg, 0, 500*sim.Millisecond)
	h.run(5 * sim.Second)
	ld := h.leader()
	epoch := ld.c.Leader().Epoch
	if code, msg := voterChange(t, h, ld, removeReq(ld.id, ld.c.DirectoryID())); code != 0 {
		t.Fatalf("the leader's RemoveRaftVoter of itself: code %d %q, want NONE", code, msg)
	}
	h.run(10 * sim.Second)
	next := h.leader()
	if next == nil || next == ld || next.c.Leader().Epoch <= epoch {
		t.Fatalf("after the removal: leader %v; want another node leading an epoch above %d", next, epoch)
	}
	if ld.c.IsVoter() || ld.c.IsLeader() || strings.Contains(next.c.Voters(), strconv.Itoa(int(ld.id))+":") {
		t.Fatalf("the removed leader: voter %v, leader %v, voters %s; want an observer outside the set", ld.c.IsVoter(), ld.c.IsLeader(), next.c.Voters())
	}
	if got := ld.c.Leader(); got.Leader != next.id || got.Epoch != next.c.Leader().Epoch {
		t.Fatalf("the removed leader follows %+v; want %d in epoch %d", got, next.id, next.c.Leader().Epoch)
	}
	if h.violation != "" {
		t.Fatal(h.violation)
	}
}
