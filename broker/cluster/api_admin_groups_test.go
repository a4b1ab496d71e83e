package cluster

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitOffset commits offset for group's topic-p at coord as a client
// outside group management does (generation -1), retrying while the
// coordinator loads.
func (a *apiCluster) commitOffset(coord int, group, topic string, p int32, offset int64) {
	a.t.Helper()
	for range 20 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation = 2, group, -1
		req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: p, Offset: offset}}}}
		code := a.call(coord, req).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
		if code == 0 {
			return
		}
		if !retriable(code) {
			a.t.Fatalf("OffsetCommit %s: %s", group, errName(code))
		}
		a.run(500 * sim.Millisecond)
	}
	a.t.Fatalf("OffsetCommit %s: coordinator never ready", group)
}

// committed returns group's committed offset of topic-p (-1 for none).
func (a *apiCluster) committed(coord int, group, topic string, p int32) int64 {
	a.t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 3, group
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{p}}}
	resp := a.call(coord, req).(*kmsg.OffsetFetchResponse)
	if resp.ErrorCode != 0 {
		a.t.Fatalf("OffsetFetch %s: %s", group, errName(resp.ErrorCode))
	}
	return resp.Topics[0].Partitions[0].Offset
}

func deleteGroupsReq(v int16, groups ...string) *kmsg.DeleteGroupsRequest {
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Version, req.Groups = v, groups
	return req
}

func offsetDeleteReq(group string, tps ...any) *kmsg.OffsetDeleteRequest {
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = group
	for i := 0; i+1 < len(tps); i += 2 {
		req.Topics = append(req.Topics, kmsg.OffsetDeleteRequestTopic{Topic: tps[i].(string), Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: tps[i+1].(int32)}}})
	}
	return req
}

// DeleteGroups (every advertised version) and OffsetDelete, in both
// modes: an empty group and its offsets go; one with a member is
// NON_EMPTY_GROUP, and its subscribed topics' offsets stay
// (GROUP_SUBSCRIBED_TO_TOPIC); unknown groups, the wrong coordinator and
// an empty id are refused as Kafka refuses them.
func TestDeleteGroupsAndOffsetDelete(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, map[string]string{"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1"}),
				func(s *Spec) {
					s.OffsetsTopic = true
					s.Topics = append(s.Topics, Topic{Name: "o", Partitions: 1, ReplicationFactor: 3})
				})
			a.waitLeaders("__consumer_offsets", 1)
			coord := a.findCoordinator("g", 0, 3)
			other := (coord + 1) % 3

			// OffsetDelete of an empty group.
			a.commitOffset(coord, "g", "t", 0, 5)
			a.commitOffset(coord, "g", "t", 1, 7)
			resp := a.call(coord, offsetDeleteReq("g", "t", int32(0), "nope", int32(0))).(*kmsg.OffsetDeleteResponse)
			if resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 || resp.Topics[1].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
				t.Fatalf("OffsetDelete: %+v", resp)
			}
			if got := a.committed(coord, "g", "t", 0); got != -1 {
				t.Errorf("t-0 after OffsetDelete: %d", got)
			}
			if got := a.committed(coord, "g", "t", 1); got != 7 {
				t.Errorf("t-1 after OffsetDelete of t-0: %d", got)
			}
			for _, c := range []struct {
				name  string
				to    int
				group string
				want  *kerr.Error
			}{
				{"unknown group", coord, "nope", kerr.GroupIDNotFound},
				{"not the coordinator", other, "g", kerr.NotCoordinator},
				{"empty id", coord, "", kerr.InvalidGroupID},
			} {
				if r := a.call(c.to, offsetDeleteReq(c.group, "t", int32(1))).(*kmsg.OffsetDeleteResponse); r.ErrorCode != c.want.Code {
					t.Errorf("OffsetDelete %s: %s", c.name, errName(r.ErrorCode))
				}
			}

			// DeleteGroups at every version.
			lo, hi := a.versions(42)
			if lo != 0 || hi != 2 {
				t.Fatalf("DeleteGroups advertised v%d-v%d", lo, hi)
			}
			for v := lo; v <= hi; v++ {
				g := fmt.Sprintf("g-v%d", v)
				gc := a.findCoordinator(g, 0, 3)
				a.commitOffset(gc, g, "t", 0, 3)
				r := a.call(gc, deleteGroupsReq(v, g, "unknown-"+g)).(*kmsg.DeleteGroupsResponse)
				if len(r.Groups) != 2 || r.Groups[0].Group != g || r.Groups[0].ErrorCode != 0 || r.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
					t.Fatalf("DeleteGroups v%d: %+v", v, r.Groups)
				}
				if got := a.committed(gc, g, "t", 0); got != -1 {
					t.Fatalf("v%d: the deleted group's offset: %d", v, got)
				}
				if r := a.call(gc, deleteGroupsReq(v, g)).(*kmsg.DeleteGroupsResponse); r.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code {
					t.Fatalf("v%d: deleting again: %s", v, errName(r.Groups[0].ErrorCode))
				}
			}
			if r := a.call(other, deleteGroupsReq(2, "g")).(*kmsg.DeleteGroupsResponse); r.Groups[0].ErrorCode != kerr.NotCoordinator.Code {
				t.Errorf("DeleteGroups not the coordinator: %s", errName(r.Groups[0].ErrorCode))
			}

			// A group with a member subscribed to t.
			a.commitOffset(coord, "busy", "t", 0, 1)
			a.commitOffset(coord, "busy", "o", 0, 1)
			sub := (&kmsg.ConsumerMemberMetadata{Topics: []string{"t"}}).AppendTo(nil)
			join := kmsg.NewPtrJoinGroupRequest()
			join.Version, join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 3, "busy", 30000, 30000
			join.ProtocolType = "consumer"
			join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: sub}}
			jr := a.call(coord, join).(*kmsg.JoinGroupResponse)
			if jr.ErrorCode != 0 {
				t.Fatalf("JoinGroup: %s", errName(jr.ErrorCode))
			}
			if r := a.call(coord, deleteGroupsReq(2, "busy")).(*kmsg.DeleteGroupsResponse); r.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code {
				t.Errorf("DeleteGroups of a group with a member: %s", errName(r.Groups[0].ErrorCode))
			}
			r := a.call(coord, offsetDeleteReq("busy", "t", int32(0), "o", int32(0))).(*kmsg.OffsetDeleteResponse)
			if r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code || r.Topics[1].Partitions[0].ErrorCode != 0 {
				t.Errorf("OffsetDelete of a subscribed group: %+v", r)
			}
			if a.committed(coord, "busy", "t", 0) != 1 || a.committed(coord, "busy", "o", 0) != -1 {
				t.Errorf("busy's offsets: t-0 %d o-0 %d", a.committed(coord, "busy", "t", 0), a.committed(coord, "busy", "o", 0))
			}
		})
	}
}
