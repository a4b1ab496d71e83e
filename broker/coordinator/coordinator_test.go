package coordinator

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCoordinatorPartition pins partitionFor against Java's String.hashCode
// and Utils.abs, including Integer.MIN_VALUE ("polygenelubricants") and
// characters outside the BMP (two UTF-16 code units).
func TestCoordinatorPartition(t *testing.T) {
	cases := []struct {
		group string
		hash  int32
		p50   int
	}{
		{"", 0, 0}, {"a", 97, 47}, {"group", 98629247, 47}, {"my-group", -1906497762, 12},
		{"polygenelubricants", -2147483648, 0}, {"test-consumer-group", -1793216381, 31},
		{"héllo", 103094734, 34}, {"😀g", 54959972, 22},
	}
	for _, c := range cases {
		if h := assignor.JavaStringHashCode(c.group); h != c.hash {
			t.Errorf("hashCode(%q) = %d, want %d", c.group, h, c.hash)
		}
		if p := CoordinatorPartition(c.group, 50); p != c.p50 {
			t.Errorf("CoordinatorPartition(%q, 50) = %d, want %d", c.group, p, c.p50)
		}
	}
}

// tb is what the harness needs of *testing.T and *rapid.T.
type tb interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// harness is a coordinator whose appends are queued until commit() (or,
// with auto, committed at once) into an in-memory log per partition.
type harness struct {
	t       tb
	now     sim.Time
	c       *Coordinator
	auto    bool
	log     map[int32][]storage.Record
	waiting []func()
	fail    *kerr.Error // the next appends fail with it
}

func newHarness(t tb, cfg Config) *harness {
	h := &harness{t: t, auto: true, log: map[int32][]storage.Record{}}
	h.c = New(cfg, Env{Append: h.append})
	return h
}

func (h *harness) append(p int32, recs []storage.Record, done func(sim.Time, *kerr.Error)) {
	if h.fail != nil {
		err := h.fail
		h.waiting = append(h.waiting, func() { done(h.now, err) })
	} else {
		h.waiting = append(h.waiting, func() {
			for _, r := range recs {
				r.Offset = int64(len(h.log[p]))
				h.log[p] = append(h.log[p], r)
			}
			done(h.now, nil)
		})
	}
	if h.auto {
		h.commit()
	}
}

func (h *harness) commit() {
	for len(h.waiting) > 0 {
		f := h.waiting[0]
		h.waiting = h.waiting[1:]
		f()
	}
}

func (h *harness) lead(p int32) {
	h.c.BecomeLeader(h.now, p)
	if err := h.c.Load(h.now, p, h.log[p]); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) advance(d sim.Duration) {
	end := h.now.Add(d)
	for {
		at, ok := h.c.NextDeadline()
		if !ok || at > end {
			break
		}
		h.now = max(h.now, at)
		h.c.Tick(h.now)
	}
	h.now = end
	h.c.Tick(h.now)
}

type joinResult struct{ resp *kmsg.JoinGroupResponse }

func (h *harness) join(group, member string, topics ...string) *joinResult {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID, req.ProtocolType = 5, group, member, "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 5000
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: assignor.EncodeSubscription(topics, nil)}}
	r := &joinResult{}
	h.c.JoinGroup(h.now, req, func(resp *kmsg.JoinGroupResponse) {
		if r.resp != nil {
			h.t.Fatalf("JoinGroup of %s answered twice", member)
		}
		r.resp = resp
	})
	return r
}

// joinFully joins without an id, takes the MEMBER_ID_REQUIRED id and joins
// again with it.
func (h *harness) joinFully(group string, topics ...string) (string, *joinResult) {
	first := h.join(group, "", topics...)
	if first.resp == nil || first.resp.ErrorCode != kerr.MemberIDRequired.Code {
		h.t.Fatalf("first join: %+v, want MEMBER_ID_REQUIRED", first.resp)
	}
	return first.resp.MemberID, h.join(group, first.resp.MemberID, topics...)
}

func (h *harness) sync(group, member string, gen int32, assign map[string][]byte) *kmsg.SyncGroupResponse {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = group, member, gen
	ids := make([]string, 0, len(assign))
	for id := range assign {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: assign[id]})
	}
	var got *kmsg.SyncGroupResponse
	h.c.SyncGroup(h.now, req, func(r *kmsg.SyncGroupResponse) { got = r })
	return got
}

func (h *harness) heartbeat(group, member string, gen int32) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = group, member, gen
	return h.c.Heartbeat(h.now, req).ErrorCode
}

func (h *harness) commitOffset(group, member string, gen int32, topic string, p int32, off int64) (int16, bool) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 7, group, member, gen
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: p, Offset: off, LeaderEpoch: -1}}}}
	code, answered := int16(-1), false
	h.c.OffsetCommit(h.now, req, func(r *kmsg.OffsetCommitResponse) { code, answered = r.Topics[0].Partitions[0].ErrorCode, true })
	return code, answered
}

func (h *harness) fetchOffset(group, topic string, p int32) (int64, int16) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 5, group
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{p}}}
	resp := h.c.OffsetFetch(h.now, req)
	if resp.ErrorCode != 0 {
		return -1, resp.ErrorCode
	}
	return resp.Topics[0].Partitions[0].Offset, 0
}

func testConfig() Config {
	cfg := DefaultConfig(1)
	cfg.NumPartitions = 4
	return cfg
}

func rangeAssign(t tb, resp *kmsg.JoinGroupResponse, parts map[string]int32) map[string][]byte {
	var ms []assignor.Member
	for _, m := range resp.Members {
		am, err := assignor.DecodeSubscription(m.MemberID, m.ProtocolMetadata)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, am)
	}
	out := map[string][]byte{}
	for id, tps := range (assignor.Range{}).Assign(ms, parts) {
		out[id] = assignor.EncodeAssignment(tps)
	}
	return out
}

// TestClassicRebalance walks the protocol: MEMBER_ID_REQUIRED, the initial
// delay, the leader's sync, a second member forcing a rebalance
// (REBALANCE_IN_PROGRESS on heartbeat), ILLEGAL_GENERATION for the old
// generation, session expiry, and commits validated by generation.
func TestClassicRebalance(t *testing.T) {
	h := newHarness(t, testConfig())
	g := "g"
	h.lead(h.c.PartitionFor(g))
	a, ja := h.joinFully(g, "t")
	if ja.resp != nil {
		t.Fatalf("join answered before group.initial.rebalance.delay.ms: %+v", ja.resp)
	}
	h.advance(3 * sim.Second)
	if ja.resp == nil || ja.resp.ErrorCode != 0 || ja.resp.Generation != 1 || ja.resp.LeaderID != a || len(ja.resp.Members) != 1 {
		t.Fatalf("join: %+v", ja.resp)
	}
	if code := h.heartbeat(g, a, 1); code != 0 {
		t.Fatalf("heartbeat in CompletingRebalance: %d", code)
	}
	if code, _ := h.commitOffset(g, a, 1, "t", 0, 5); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("commit in CompletingRebalance: %d", code)
	}
	if s := h.sync(g, a, 1, rangeAssign(t, ja.resp, map[string]int32{"t": 2})); s == nil || s.ErrorCode != 0 || len(s.MemberAssignment) == 0 {
		t.Fatalf("sync: %+v", s)
	}
	if st, _, _, _, _ := h.c.Group(g); st != Stable {
		t.Fatalf("state %v, want Stable", st)
	}
	if code, ok := h.commitOffset(g, a, 1, "t", 0, 5); !ok || code != 0 {
		t.Fatalf("commit: %d %v", code, ok)
	}
	if off, _ := h.fetchOffset(g, "t", 0); off != 5 {
		t.Fatalf("fetched offset %d, want 5", off)
	}
	// A second member: a rebalance.
	b, jb := h.joinFully(g, "t")
	if code := h.heartbeat(g, a, 1); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat during rebalance: %d, want REBALANCE_IN_PROGRESS", code)
	}
	ja2 := h.join(g, a, "t")
	if ja2.resp == nil || jb.resp == nil || ja2.resp.Generation != 2 || jb.resp.Generation != 2 {
		t.Fatalf("rejoin: %+v %+v", ja2.resp, jb.resp)
	}
	if len(jb.resp.Members) != 0 || len(ja2.resp.Members) != 2 {
		t.Fatalf("only the leader gets the members: leader %d, follower %d", len(ja2.resp.Members), len(jb.resp.Members))
	}
	if code := h.heartbeat(g, a, 1); code != kerr.IllegalGeneration.Code {
		t.Fatalf("old-generation heartbeat: %d, want ILLEGAL_GENERATION", code)
	}
	if code, _ := h.commitOffset(g, a, 1, "t", 0, 6); code != kerr.IllegalGeneration.Code {
		t.Fatalf("old-generation commit: %d, want ILLEGAL_GENERATION", code)
	}
	sb := h.sync(g, b, 2, nil) // follower parks
	if sb != nil {
		t.Fatalf("follower sync answered before the leader's: %+v", sb)
	}
	h.sync(g, a, 2, rangeAssign(t, ja2.resp, map[string]int32{"t": 2}))
	// b goes silent: its session expires and a must rejoin.
	for i := 0; i < 20; i++ {
		h.advance(sim.Second)
		if _, _, _, members, _ := h.c.Group(g); len(members) == 1 {
			break
		}
		h.heartbeat(g, a, 2)
	}
	if _, gen, _, members, _ := h.c.Group(g); !slices.Equal(members, []string{a}) || gen != 2 {
		t.Fatalf("after b's session expired: gen %d members %v", gen, members)
	}
	if code := h.heartbeat(g, a, 2); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat after expiry: %d, want REBALANCE_IN_PROGRESS", code)
	}
	if code := h.heartbeat(g, b, 2); code != kerr.UnknownMemberID.Code {
		t.Fatalf("expired member heartbeat: %d, want UNKNOWN_MEMBER_ID", code)
	}
	// a does not rejoin within rebalance.timeout.ms: removed, the group empties.
	h.advance(6 * sim.Second)
	if st, gen, _, members, _ := h.c.Group(g); st != Empty || gen != 3 || len(members) != 0 {
		t.Fatalf("after the rebalance timeout: %v gen %d members %v, want Empty gen 3", st, gen, members)
	}
	// A new member, then leave: the group empties once the rebalance completes.
	c, jc := h.joinFully(g, "t")
	h.advance(3 * sim.Second)
	if jc.resp == nil || jc.resp.Generation != 4 {
		t.Fatalf("join after empty: %+v", jc.resp)
	}
	a = c
	resp := h.c.LeaveGroup(h.now, &kmsg.LeaveGroupRequest{Version: 3, Group: g, Members: []kmsg.LeaveGroupRequestMember{{MemberID: a}}})
	if resp.Members[0].ErrorCode != 0 {
		t.Fatalf("leave: %+v", resp)
	}
	if st, gen, _, _, _ := h.c.Group(g); st != Empty || gen != 5 {
		t.Fatalf("after leave: %v gen %d, want Empty gen 5", st, gen)
	}
}

// TestFailoverLoadsGroupsAndOffsets: a second coordinator that loads the
// partition's records finds the committed offsets and the Stable group;
// while loading it answers COORDINATOR_LOAD_IN_PROGRESS, and a coordinator
// that does not lead the partition answers NOT_COORDINATOR.
func TestFailoverLoadsGroupsAndOffsets(t *testing.T) {
	h := newHarness(t, testConfig())
	g := "g"
	p := h.c.PartitionFor(g)
	h.lead(p)
	a, ja := h.joinFully(g, "t")
	h.advance(3 * sim.Second)
	h.sync(g, a, ja.resp.Generation, rangeAssign(t, ja.resp, map[string]int32{"t": 1}))
	if code, _ := h.commitOffset(g, a, 1, "t", 0, 42); code != 0 {
		t.Fatalf("commit %d", code)
	}
	h2 := newHarness(t, testConfig())
	h2.now = h.now
	if code := h2.heartbeat(g, a, 1); code != kerr.NotCoordinator.Code {
		t.Fatalf("not leader: %d, want NOT_COORDINATOR", code)
	}
	h2.c.BecomeLeader(h2.now, p)
	if _, code := h2.fetchOffset(g, "t", 0); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("loading: %d, want COORDINATOR_LOAD_IN_PROGRESS", code)
	}
	if err := h2.c.Load(h2.now, p, h.log[p]); err != nil {
		t.Fatal(err)
	}
	if off, _ := h2.fetchOffset(g, "t", 0); off != 42 {
		t.Fatalf("loaded offset %d, want 42", off)
	}
	if st, gen, leader, members, _ := h2.c.Group(g); st != Stable || gen != 1 || leader != a || !slices.Equal(members, []string{a}) {
		t.Fatalf("loaded group %v gen %d leader %s members %v", st, gen, leader, members)
	}
	if code := h2.heartbeat(g, a, 1); code != 0 {
		t.Fatalf("heartbeat after fail-over: %d", code)
	}
	h.c.Resign(h.now, p)
	if code := h.heartbeat(g, a, 1); code != kerr.NotCoordinator.Code {
		t.Fatalf("resigned: %d, want NOT_COORDINATOR", code)
	}
}

// TestCommitAnsweredOnlyWhenCommitted: an offset commit is answered after
// its record is committed, and a failed append is not visible to
// OffsetFetch and maps NOT_ENOUGH_REPLICAS to COORDINATOR_NOT_AVAILABLE.
func TestCommitAnsweredOnlyWhenCommitted(t *testing.T) {
	h := newHarness(t, testConfig())
	h.lead(h.c.PartitionFor("solo"))
	h.auto = false
	code, ok := h.commitOffset("solo", "", -1, "t", 0, 7)
	if ok {
		t.Fatalf("answered (%d) before the append committed", code)
	}
	if off, _ := h.fetchOffset("solo", "t", 0); off != -1 {
		t.Fatalf("uncommitted offset visible: %d", off)
	}
	h.commit()
	if off, _ := h.fetchOffset("solo", "t", 0); off != 7 {
		t.Fatalf("offset %d, want 7", off)
	}
	h.fail = kerr.NotEnoughReplicas
	h.commitOffset("solo", "", -1, "t", 0, 9)
	var got int16
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 7, "solo", -1
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 9}}}}
	h.c.OffsetCommit(h.now, req, func(r *kmsg.OffsetCommitResponse) { got = r.Topics[0].Partitions[0].ErrorCode })
	h.commit()
	if got != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("failed append: %d, want COORDINATOR_NOT_AVAILABLE", got)
	}
	if off, _ := h.fetchOffset("solo", "t", 0); off != 7 {
		t.Fatalf("offset %d after a failed commit, want 7", off)
	}
}

func TestBadInput(t *testing.T) {
	h := newHarness(t, testConfig())
	h.lead(h.c.PartitionFor("g"))
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.ProtocolType, req.SessionTimeoutMillis = 5, "g", "consumer", 1000
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0}}}
	var code int16
	h.c.JoinGroup(h.now, req, func(r *kmsg.JoinGroupResponse) { code = r.ErrorCode })
	if code != kerr.InvalidSessionTimeout.Code {
		t.Errorf("session.timeout.ms 1000: %d, want INVALID_SESSION_TIMEOUT", code)
	}
	if c := h.heartbeat("", "m", 1); c != kerr.InvalidGroupID.Code {
		t.Errorf("empty group id: %d, want INVALID_GROUP_ID", c)
	}
}

func leaveRequest(member string) *kmsg.LeaveGroupRequest {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version, req.Group = 3, smGroup
	req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: member}}
	return req
}
