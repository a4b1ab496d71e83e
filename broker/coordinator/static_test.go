package coordinator

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// joinStatic joins with a group.instance.id (JoinGroup version v).
func (h *harness) joinStatic(group, member, instance string, v int16, topics ...string) *joinResult {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID, req.ProtocolType = v, group, member, "consumer"
	req.InstanceID = &instance
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 5000
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: assignor.EncodeSubscription(topics, nil)}}
	r := &joinResult{}
	h.c.JoinGroup(h.now, req, func(resp *kmsg.JoinGroupResponse) {
		if r.resp != nil {
			h.t.Fatalf("JoinGroup of %s/%s answered twice", instance, member)
		}
		r.resp = resp
	})
	return r
}

func (h *harness) heartbeatStatic(group, member, instance string, gen int32) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.Generation, req.InstanceID = 3, group, member, gen, &instance
	return h.c.Heartbeat(h.now, req).ErrorCode
}

func (h *harness) syncStatic(group, member, instance string, gen int32, assign map[string][]byte) *kmsg.SyncGroupResponse {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version, req.Group, req.MemberID, req.Generation, req.InstanceID = 3, group, member, gen, &instance
	for _, id := range sortedKeys(assign) {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: assign[id]})
	}
	var got *kmsg.SyncGroupResponse
	h.c.SyncGroup(h.now, req, func(r *kmsg.SyncGroupResponse) { got = r })
	return got
}

// staticGroup brings two static members (instances i1, i2) of group g to
// Stable at generation 1 and returns their member ids and assignments.
func staticGroup(t *testing.T, h *harness) (ids [2]string, assigned [2][]byte) {
	t.Helper()
	h.lead(h.c.PartitionFor("g"))
	j1 := h.joinStatic("g", "", "i1", 5, "t")
	j2 := h.joinStatic("g", "", "i2", 5, "t")
	if j1.resp != nil || j2.resp != nil {
		t.Fatalf("a static member without a member id is admitted at once, not told MEMBER_ID_REQUIRED: %+v %+v", j1.resp, j2.resp)
	}
	h.advance(3 * sim.Second)
	if j1.resp == nil || j2.resp == nil || j1.resp.ErrorCode != 0 || j2.resp.ErrorCode != 0 || j1.resp.Generation != 1 {
		t.Fatalf("joins: %+v %+v", j1.resp, j2.resp)
	}
	leader := j1
	if j2.resp.LeaderID == j2.resp.MemberID {
		leader = j2
	}
	for _, m := range leader.resp.Members {
		if m.InstanceID == nil {
			t.Fatalf("JoinGroup v5 lists member %s without its group.instance.id", m.MemberID)
		}
	}
	plan := rangeAssign(t, leader.resp, map[string]int32{"t": 2})
	ids = [2]string{j1.resp.MemberID, j2.resp.MemberID}
	other := ids[0]
	if other == leader.resp.MemberID {
		other = ids[1]
	}
	h.syncStatic("g", other, map[string]string{ids[0]: "i1", ids[1]: "i2"}[other], 1, nil)
	h.syncStatic("g", leader.resp.MemberID, map[string]string{ids[0]: "i1", ids[1]: "i2"}[leader.resp.MemberID], 1, plan)
	if st, gen, _, _, _ := h.c.Group("g"); st != Stable || gen != 1 {
		t.Fatalf("group %v gen %d, want Stable 1", st, gen)
	}
	return ids, [2][]byte{plan[ids[0]], plan[ids[1]]}
}

// TestStaticMemberRestartKeepsAssignment is KIP-345's promise: a static
// member that restarts (joins with its group.instance.id and no member id)
// within session.timeout.ms takes over its member — a new member id, the
// same generation, the same assignment — and the group does not rebalance
// (GroupCoordinator.updateStaticMemberAndRebalance, Stable case). The old
// member id is a zombie from then on: FENCED_INSTANCE_ID on Heartbeat,
// SyncGroup, OffsetCommit, JoinGroup and LeaveGroup.
func TestStaticMemberRestartKeepsAssignment(t *testing.T) {
	h := newHarness(t, testConfig())
	ids, assigned := staticGroup(t, h)
	h.advance(2 * sim.Second) // within the 10s session
	rj := h.joinStatic("g", "", "i1", 5, "t")
	if rj.resp == nil || rj.resp.ErrorCode != 0 {
		t.Fatalf("restart join: %+v", rj.resp)
	}
	if rj.resp.Generation != 1 || rj.resp.MemberID == ids[0] || len(rj.resp.Members) != 0 {
		t.Fatalf("restart join: generation %d member %q members %d; want generation 1, a new member id, no members",
			rj.resp.Generation, rj.resp.MemberID, len(rj.resp.Members))
	}
	if rj.resp.LeaderID == rj.resp.MemberID {
		t.Fatalf("before v9 the restarted member is never told it leads (it would assign while the group is Stable)")
	}
	if st, gen, _, members, _ := h.c.Group("g"); st != Stable || gen != 1 || len(members) != 2 {
		t.Fatalf("after the restart: %v gen %d members %v; want Stable, 1, two members (no rebalance)", st, gen, members)
	}
	newID := rj.resp.MemberID
	s := h.syncStatic("g", newID, "i1", 1, nil)
	if s == nil || s.ErrorCode != 0 || string(s.MemberAssignment) != string(assigned[0]) {
		t.Fatalf("sync after the restart: %+v, want the old assignment", s)
	}
	if code := h.heartbeatStatic("g", ids[0], "i1", 1); code != kerr.FencedInstanceID.Code {
		t.Fatalf("zombie heartbeat: %d, want FENCED_INSTANCE_ID (82)", code)
	}
	if s := h.syncStatic("g", ids[0], "i1", 1, nil); s == nil || s.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("zombie sync: %+v, want FENCED_INSTANCE_ID", s)
	}
	inst := "i1"
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.MemberID, req.Generation, req.InstanceID = 7, "g", ids[0], 1, &inst
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 9, LeaderEpoch: -1}}}}
	var code int16 = -1
	h.c.OffsetCommit(h.now, req, func(r *kmsg.OffsetCommitResponse) { code = r.Topics[0].Partitions[0].ErrorCode })
	if code != kerr.FencedInstanceID.Code {
		t.Fatalf("zombie commit: %d, want FENCED_INSTANCE_ID", code)
	}
	if zj := h.joinStatic("g", ids[0], "i1", 5, "t"); zj.resp == nil || zj.resp.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("zombie join: %+v, want FENCED_INSTANCE_ID", zj.resp)
	}
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group = 3, "g"
	lv.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[0], InstanceID: &inst}}
	if r := h.c.LeaveGroup(h.now, lv); r.Members[0].ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("zombie leave: %d, want FENCED_INSTANCE_ID", r.Members[0].ErrorCode)
	}
	if code := h.heartbeatStatic("g", newID, "i1", 1); code != 0 {
		t.Fatalf("new member's heartbeat: %d", code)
	}
	if st, gen, _, _, _ := h.c.Group("g"); st != Stable || gen != 1 {
		t.Fatalf("the zombie's requests moved the group: %v gen %d", st, gen)
	}
}

// TestStaticMemberSurvivesFailover: the group metadata record carries each
// member's group.instance.id (GroupMetadataValue v3), so a coordinator
// that loads the partition after a fail-over still knows the instance:
// its restart keeps the assignment and the old id is fenced.
func TestStaticMemberSurvivesFailover(t *testing.T) {
	h := newHarness(t, testConfig())
	ids, assigned := staticGroup(t, h)
	// The same log, loaded by another coordinator.
	h2 := &harness{t: t, auto: true, log: h.log, now: h.now}
	h2.c = New(testConfig(), Env{Append: h2.append})
	h2.lead(h2.c.PartitionFor("g"))
	rj := h2.joinStatic("g", "", "i2", 5, "t")
	if rj.resp == nil || rj.resp.ErrorCode != 0 || rj.resp.Generation != 1 {
		t.Fatalf("restart join after fail-over: %+v", rj.resp)
	}
	if s := h2.syncStatic("g", rj.resp.MemberID, "i2", 1, nil); s == nil || s.ErrorCode != 0 || string(s.MemberAssignment) != string(assigned[1]) {
		t.Fatalf("sync after fail-over: %+v, want i2's old assignment", s)
	}
	if code := h2.heartbeatStatic("g", ids[1], "i2", 1); code != kerr.FencedInstanceID.Code {
		t.Fatalf("old member id after fail-over: %d, want FENCED_INSTANCE_ID", code)
	}
	d := h2.c.DescribeGroup("g", false)
	for _, m := range d.Members {
		if m.InstanceID == nil {
			t.Fatalf("DescribeGroups lists %s without its instance id", m.MemberID)
		}
	}
}

// TestStaticMemberNotRejoinedStays: a rebalance that a static member
// sits out (its process is down) does not remove it; only its session
// expiry does (onCompleteJoin removes only dynamic members).
func TestStaticMemberNotRejoinedStays(t *testing.T) {
	h := newHarness(t, testConfig())
	ids, _ := staticGroup(t, h)
	// A dynamic member joins: a rebalance; only i2 rejoins.
	d, jd := h.joinFully("g", "t")
	j2 := h.joinStatic("g", ids[1], "i2", 5, "t")
	h.advance(5 * sim.Second) // the rebalance timeout
	if jd.resp == nil || j2.resp == nil || jd.resp.Generation != 2 {
		t.Fatalf("rebalance: %+v %+v", jd.resp, j2.resp)
	}
	if _, _, _, members, _ := h.c.Group("g"); len(members) != 3 {
		t.Fatalf("members %v: the static member that did not rejoin must stay until its session expires", members)
	}
	_ = d
	h.advance(10 * sim.Second)
	if _, _, _, members, _ := h.c.Group("g"); len(members) == 3 {
		t.Fatalf("members %v: the silent static member's session expired and it is still there", members)
	}
}

// TestStaticLeaveByInstanceID: LeaveGroup v3+ naming only a
// group.instance.id removes that instance's member (the admin client's
// removeMembersFromConsumerGroup), and an unknown instance is
// UNKNOWN_MEMBER_ID.
func TestStaticLeaveByInstanceID(t *testing.T) {
	h := newHarness(t, testConfig())
	staticGroup(t, h)
	i1, nope := "i1", "nope"
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group = 3, "g"
	lv.Members = []kmsg.LeaveGroupRequestMember{{InstanceID: &i1}, {InstanceID: &nope}}
	r := h.c.LeaveGroup(h.now, lv)
	if r.Members[0].ErrorCode != 0 || r.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave by instance id: %+v", r.Members)
	}
	if st, _, _, members, _ := h.c.Group("g"); st != PreparingRebalance || len(members) != 1 {
		t.Fatalf("after i1 left: %v %v, want PreparingRebalance with one member", st, members)
	}
}

// TestStaticLeaderRestartV9 is KIP-814: a static leader restarting in a
// Stable group with JoinGroup v9 is told it leads, with the members, and
// SkipAssignment, so it can watch metadata without reassigning.
func TestStaticLeaderRestartV9(t *testing.T) {
	h := newHarness(t, testConfig())
	staticGroup(t, h)
	_, _, leader, _, _ := h.c.Group("g")
	inst := "i1"
	if d := h.c.DescribeGroup("g", false); d.Members[0].MemberID == leader && d.Members[0].InstanceID != nil {
		inst = *d.Members[0].InstanceID
	} else if d.Members[1].InstanceID != nil {
		inst = *d.Members[1].InstanceID
	}
	rj := h.joinStatic("g", "", inst, 9, "t")
	if rj.resp == nil || rj.resp.ErrorCode != 0 || !rj.resp.SkipAssignment || rj.resp.LeaderID != rj.resp.MemberID || len(rj.resp.Members) != 2 {
		t.Fatalf("v9 static leader restart: %+v", rj.resp)
	}
	if st, gen, _, _, _ := h.c.Group("g"); st != Stable || gen != 1 {
		t.Fatalf("the leader's restart rebalanced: %v gen %d", st, gen)
	}
}

// TestStaticRestartStoreFails: when storing the new member id fails the
// old one is the instance's member again and the restarted member gets
// the error (updateStaticMemberAndRebalance's revert).
func TestStaticRestartStoreFails(t *testing.T) {
	h := newHarness(t, testConfig())
	ids, _ := staticGroup(t, h)
	h.fail = kerr.NotEnoughReplicas
	rj := h.joinStatic("g", "", "i1", 5, "t")
	if rj.resp == nil || rj.resp.ErrorCode != kerr.CoordinatorNotAvailable.Code || rj.resp.MemberID != "" {
		t.Fatalf("restart with a failing store: %+v, want COORDINATOR_NOT_AVAILABLE and no member id", rj.resp)
	}
	h.fail = nil
	if code := h.heartbeatStatic("g", ids[0], "i1", 1); code != 0 {
		t.Fatalf("the old member id after the revert: %d, want accepted", code)
	}
}
