package cluster

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func clamp(v, lo, hi int16) int16 { return max(lo, min(v, hi)) }

// retriable reports the coordinator errors a client retries after a pause.
func retriable(code int16) bool {
	return code == kerr.CoordinatorLoadInProgress.Code || code == kerr.CoordinatorNotAvailable.Code ||
		code == kerr.NotCoordinator.Code || code == kerr.ConcurrentTransactions.Code
}

// findCoordinator asks broker 0 for key's coordinator (type 0 group, 1
// transactional id) at version v until it answers one.
func (a *apiCluster) findCoordinator(key string, typ int8, v int16) int {
	a.t.Helper()
	for range 100 {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType = v, typ
		var code int16
		var node int32
		var host string
		var port int32
		resp := (*kmsg.FindCoordinatorResponse)(nil)
		if v >= 4 {
			req.CoordinatorKeys = []string{key, key + "-other"}
			resp = a.call(0, req).(*kmsg.FindCoordinatorResponse)
			if len(resp.Coordinators) != 2 || resp.Coordinators[0].Key != key {
				a.t.Fatalf("FindCoordinator v%d: %+v", v, resp.Coordinators)
			}
			c := resp.Coordinators[0]
			code, node, host, port = c.ErrorCode, c.NodeID, c.Host, c.Port
		} else {
			req.CoordinatorKey = key
			resp = a.call(0, req).(*kmsg.FindCoordinatorResponse)
			code, node, host, port = resp.ErrorCode, resp.NodeID, resp.Host, resp.Port
		}
		if code == 0 {
			if host != fmt.Sprintf("b%d", node) || port != 9092 {
				a.t.Fatalf("FindCoordinator v%d: %d at %s:%d", v, node, host, port)
			}
			return int(node)
		}
		if !retriable(code) {
			a.t.Fatalf("FindCoordinator v%d %s: %s", v, key, errName(code))
		}
		a.run(500 * sim.Millisecond)
	}
	a.t.Fatalf("FindCoordinator v%d %s: no coordinator", v, key)
	return -1
}

// The group APIs at every advertised version, each request at the
// version of its own range nearest v: FindCoordinator (v4+ batched),
// JoinGroup (v4+ MEMBER_ID_REQUIRED first, KIP-394), SyncGroup (v5
// protocol type and name), Heartbeat, OffsetCommit (v0 kept in
// ZooKeeper), OffsetFetch (v8+ batched groups), LeaveGroup (v3+ members),
// with the errors a client must see for bad input.
func TestGroupAPIsEveryVersion(t *testing.T) {
	for _, ibp := range []string{"3.9", "4.0", "4.1"} {
		t.Run(ibp, func(t *testing.T) { testGroupAPIsEveryVersion(t, ibp) })
	}
}

func testGroupAPIsEveryVersion(t *testing.T, ibp string) {
	a := newAPICluster(t, map[string]string{"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3",
		"inter.broker.protocol.version": ibp}, func(s *Spec) { s.OffsetsTopic = true })
	a.waitLeaders("__consumer_offsets", 3)
	keys := []int16{10, 11, 14, 12, 8, 9, 13}
	top := int16(0)
	rng := map[int16][2]int16{}
	for _, k := range keys {
		lo, hi := a.versions(k)
		rng[k] = [2]int16{lo, hi}
		top = max(top, hi)
	}
	at := func(k, v int16) int16 { return clamp(v, rng[k][0], rng[k][1]) }
	for v := int16(0); v <= top; v++ {
		group := fmt.Sprintf("g-v%d", v)
		coord := a.findCoordinator(group, 0, at(10, v))

		// JoinGroup.
		jv := at(11, v)
		join := func(member string) *kmsg.JoinGroupResponse {
			for range 20 {
				req := kmsg.NewPtrJoinGroupRequest()
				req.Version, req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = jv, group, 10000, 10000
				req.MemberID, req.ProtocolType = member, "consumer"
				req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 1}}}
				resp := a.call(coord, req).(*kmsg.JoinGroupResponse)
				if !retriable(resp.ErrorCode) {
					return resp
				}
				a.run(500 * sim.Millisecond)
			}
			t.Fatalf("JoinGroup v%d: coordinator never ready", jv)
			return nil
		}
		jr := join("")
		if jv >= 4 {
			if jr.ErrorCode != kerr.MemberIDRequired.Code || jr.MemberID == "" {
				t.Fatalf("JoinGroup v%d without a member id: %s %q, want MEMBER_ID_REQUIRED with an id", jv, errName(jr.ErrorCode), jr.MemberID)
			}
			jr = join(jr.MemberID)
		}
		if jr.ErrorCode != 0 || jr.Generation != 1 || jr.LeaderID != jr.MemberID || len(jr.Members) != 1 || jr.Protocol == nil || *jr.Protocol != "range" {
			t.Fatalf("JoinGroup v%d: %s generation %d leader %q member %q members %d", jv, errName(jr.ErrorCode), jr.Generation, jr.LeaderID, jr.MemberID, len(jr.Members))
		}
		member, gen := jr.MemberID, jr.Generation

		// SyncGroup.
		sv := at(14, v)
		sync := func(proto string) *kmsg.SyncGroupResponse {
			req := kmsg.NewPtrSyncGroupRequest()
			req.Version, req.Group, req.Generation, req.MemberID = sv, group, gen, member
			pt := "consumer"
			req.ProtocolType, req.Protocol = &pt, &proto
			req.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: member, MemberAssignment: []byte("asg")}}
			return a.call(coord, req).(*kmsg.SyncGroupResponse)
		}
		if sv >= 5 {
			if r := sync("roundrobin"); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
				t.Fatalf("SyncGroup v%d with another protocol: %s, want INCONSISTENT_GROUP_PROTOCOL", sv, errName(r.ErrorCode))
			}
		}
		sr := sync("range")
		if sr.ErrorCode != 0 || string(sr.MemberAssignment) != "asg" {
			t.Fatalf("SyncGroup v%d: %s %q", sv, errName(sr.ErrorCode), sr.MemberAssignment)
		}
		if sv >= 5 && (sr.Protocol == nil || *sr.Protocol != "range" || sr.ProtocolType == nil || *sr.ProtocolType != "consumer") {
			t.Fatalf("SyncGroup v%d: protocol %v type %v", sv, sr.Protocol, sr.ProtocolType)
		}

		// Heartbeat.
		hv := at(12, v)
		heartbeat := func(g int32) int16 {
			req := kmsg.NewPtrHeartbeatRequest()
			req.Version, req.Group, req.Generation, req.MemberID = hv, group, g, member
			return a.call(coord, req).(*kmsg.HeartbeatResponse).ErrorCode
		}
		if c := heartbeat(gen); c != 0 {
			t.Fatalf("Heartbeat v%d: %s", hv, errName(c))
		}
		if c := heartbeat(gen + 1); c != kerr.IllegalGeneration.Code {
			t.Fatalf("Heartbeat v%d, wrong generation: %s", hv, errName(c))
		}

		// OffsetCommit and OffsetFetch.
		cv, fv := at(8, v), at(9, v)
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version, oc.Group, oc.Generation, oc.MemberID = cv, group, gen, member
		md := "m"
		oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5, Metadata: &md, LeaderEpoch: -1}}}}
		if r := a.call(coord, oc).(*kmsg.OffsetCommitResponse); r.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("OffsetCommit v%d: %s", cv, errName(r.Topics[0].Partitions[0].ErrorCode))
		}
		of := kmsg.NewPtrOffsetFetchRequest()
		of.Version = fv
		var off int64 = -9
		if fv >= 8 {
			of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: group, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0, 1}}}}}
			r := a.call(coord, of).(*kmsg.OffsetFetchResponse)
			if len(r.Groups) != 1 || r.Groups[0].ErrorCode != 0 || len(r.Groups[0].Topics) != 1 || len(r.Groups[0].Topics[0].Partitions) != 2 {
				t.Fatalf("OffsetFetch v%d: %+v", fv, r.Groups)
			}
			off = r.Groups[0].Topics[0].Partitions[0].Offset
			if p1 := r.Groups[0].Topics[0].Partitions[1]; p1.Offset != -1 {
				t.Fatalf("OffsetFetch v%d: uncommitted partition at %d", fv, p1.Offset)
			}
		} else {
			of.Group = group
			of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
			r := a.call(coord, of).(*kmsg.OffsetFetchResponse)
			if r.ErrorCode != 0 || len(r.Topics) != 1 || r.Topics[0].Partitions[0].ErrorCode != 0 {
				t.Fatalf("OffsetFetch v%d: %s %+v", fv, errName(r.ErrorCode), r.Topics)
			}
			off = r.Topics[0].Partitions[0].Offset
		}
		if off != 5 {
			t.Fatalf("OffsetFetch v%d after OffsetCommit v%d: offset %d, want 5", fv, cv, off)
		}

		// LeaveGroup.
		lv := at(13, v)
		leave := func(id string) int16 {
			req := kmsg.NewPtrLeaveGroupRequest()
			req.Version, req.Group = lv, group
			if lv >= 3 {
				req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: id}}
				r := a.call(coord, req).(*kmsg.LeaveGroupResponse)
				if r.ErrorCode != 0 || len(r.Members) != 1 || r.Members[0].MemberID != id {
					t.Fatalf("LeaveGroup v%d: %s %+v", lv, errName(r.ErrorCode), r.Members)
				}
				return r.Members[0].ErrorCode
			}
			req.MemberID = id
			return a.call(coord, req).(*kmsg.LeaveGroupResponse).ErrorCode
		}
		if c := leave(member); c != 0 {
			t.Fatalf("LeaveGroup v%d: %s", lv, errName(c))
		}
		if c := leave(member); c != kerr.UnknownMemberID.Code {
			t.Fatalf("LeaveGroup v%d again: %s, want UNKNOWN_MEMBER_ID", lv, errName(c))
		}
		if c := heartbeat(gen); c != kerr.UnknownMemberID.Code {
			t.Fatalf("Heartbeat v%d after leaving: %s", hv, errName(c))
		}
		// A request to a broker that is not the coordinator.
		req := kmsg.NewPtrHeartbeatRequest()
		req.Version, req.Group, req.Generation, req.MemberID = hv, group, gen, member
		if c := a.call((coord+1)%3, req).(*kmsg.HeartbeatResponse).ErrorCode; c != kerr.NotCoordinator.Code {
			t.Fatalf("Heartbeat v%d to another broker: %s, want NOT_COORDINATOR", hv, errName(c))
		}
	}
}

// The first FindCoordinator of a group creates __consumer_offsets with
// offsets.topic.num.partitions and offsets.topic.replication.factor
// (COORDINATOR_NOT_AVAILABLE meanwhile), in ZooKeeper and KRaft mode; so
// does a transactional id's for __transaction_state. A replication factor
// above the live brokers (0.11+) leaves it uncreated.
func TestFindCoordinatorCreatesInternalTopics(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			props := map[string]string{"offsets.topic.num.partitions": "4", "transaction.state.log.num.partitions": "2"}
			if mode == "kraft" {
				props["inter.broker.protocol.version"] = "4.0"
			}
			a := newAPICluster(t, props, nil)
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.Version, req.CoordinatorKey = 2, "g"
			if r := a.call(1, req).(*kmsg.FindCoordinatorResponse); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
				t.Fatalf("first FindCoordinator: %s, want COORDINATOR_NOT_AVAILABLE", errName(r.ErrorCode))
			}
			a.waitLeaders("__consumer_offsets", 4)
			if md := a.metadata(0, "__consumer_offsets"); len(md.Topics[0].Partitions) != 4 || len(md.Topics[0].Partitions[0].Replicas) != 3 || !md.Topics[0].IsInternal {
				t.Fatalf("__consumer_offsets: %+v", md.Topics[0])
			}
			a.findCoordinator("g", 0, 2)
			a.findCoordinator("tx", 1, 3)
			if md := a.metadata(0, "__transaction_state"); len(md.Topics[0].Partitions) != 2 {
				t.Fatalf("__transaction_state: %+v", md.Topics[0])
			}
		})
	}
	// offsets.topic.replication.factor 4 with 3 brokers: never created.
	a := newAPICluster(t, map[string]string{"offsets.topic.replication.factor": "4"}, nil)
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKey = 1, "g"
	for range 3 {
		if r := a.call(0, req).(*kmsg.FindCoordinatorResponse); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
			t.Fatalf("FindCoordinator: %s", errName(r.ErrorCode))
		}
		a.run(sim.Second)
	}
	if md := a.metadata(0, "__consumer_offsets"); md.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("__consumer_offsets with too few brokers: %s", errName(md.Topics[0].ErrorCode))
	}
}

// DescribeGroups and ListGroups at every advertised version: a Stable
// group with its member's assignment, an unknown group Dead, the states
// filter (ListGroups v4+), NOT_COORDINATOR elsewhere.
func TestDescribeAndListGroupsEveryVersion(t *testing.T) {
	a := newAPICluster(t, map[string]string{"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1"},
		func(s *Spec) { s.OffsetsTopic = true })
	a.waitLeaders("__consumer_offsets", 1)
	coord := a.findCoordinator("dg", 0, 3)
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis, join.ProtocolType = 3, "dg", 30000, 30000, "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{7}}}
	var jr *kmsg.JoinGroupResponse
	for range 20 {
		if jr = a.call(coord, join).(*kmsg.JoinGroupResponse); !retriable(jr.ErrorCode) {
			break
		}
		a.run(500 * sim.Millisecond)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.Generation, sync.MemberID = 3, "dg", jr.Generation, jr.MemberID
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: jr.MemberID, MemberAssignment: []byte("asg")}}
	if r := a.call(coord, sync).(*kmsg.SyncGroupResponse); jr.ErrorCode != 0 || r.ErrorCode != 0 {
		t.Fatalf("join %s, sync %s", errName(jr.ErrorCode), errName(r.ErrorCode))
	}
	lo, hi := a.versions(15)
	for v := lo; v <= hi; v++ {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Version, req.Groups, req.IncludeAuthorizedOperations = v, []string{"dg", "nobody"}, v >= 3
		r := a.call(coord, req).(*kmsg.DescribeGroupsResponse)
		g, dead := r.Groups[0], r.Groups[1]
		if g.ErrorCode != 0 || g.State != "Stable" || g.Protocol != "range" || g.ProtocolType != "consumer" || len(g.Members) != 1 ||
			g.Members[0].MemberID != jr.MemberID || string(g.Members[0].MemberAssignment) != "asg" || string(g.Members[0].ProtocolMetadata) != "\x07" {
			t.Fatalf("DescribeGroups v%d: %+v", v, g)
		}
		if v >= 3 && g.AuthorizedOperations != 328 {
			t.Fatalf("DescribeGroups v%d: authorized operations %d", v, g.AuthorizedOperations)
		}
		if dead.ErrorCode != 0 || dead.State != "Dead" || len(dead.Members) != 0 {
			t.Fatalf("DescribeGroups v%d, unknown group: %+v", v, dead)
		}
		other := a.call((coord+1)%3, req).(*kmsg.DescribeGroupsResponse)
		if other.Groups[0].ErrorCode != kerr.NotCoordinator.Code {
			t.Fatalf("DescribeGroups v%d elsewhere: %s", v, errName(other.Groups[0].ErrorCode))
		}
	}
	lo, hi = a.versions(16)
	for v := lo; v <= hi; v++ {
		req := kmsg.NewPtrListGroupsRequest()
		req.Version = v
		r := a.call(coord, req).(*kmsg.ListGroupsResponse)
		if r.ErrorCode != 0 || len(r.Groups) != 1 || r.Groups[0].Group != "dg" || r.Groups[0].ProtocolType != "consumer" || v >= 4 && r.Groups[0].GroupState != "Stable" {
			t.Fatalf("ListGroups v%d: %s %+v", v, errName(r.ErrorCode), r.Groups)
		}
		if v >= 4 {
			req.StatesFilter = []string{"empty", "Dead"}
			if r := a.call(coord, req).(*kmsg.ListGroupsResponse); len(r.Groups) != 0 {
				t.Fatalf("ListGroups v%d filtered: %+v", v, r.Groups)
			}
			req.StatesFilter = []string{"stable"}
			if r := a.call(coord, req).(*kmsg.ListGroupsResponse); len(r.Groups) != 1 {
				t.Fatalf("ListGroups v%d, stable: %+v", v, r.Groups)
			}
		}
		if r := a.call((coord+1)%3, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse); len(r.Groups) != 0 {
			t.Fatalf("ListGroups on a broker leading no offsets partition: %+v", r.Groups)
		}
	}
}
