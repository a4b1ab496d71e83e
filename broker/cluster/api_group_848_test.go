package cluster

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAPIConsumerGroupProtocol drives a 4.0 KRaft cluster's coordinator
// through the wire: ConsumerGroupHeartbeat joins (topic ids from the
// metadata image), ConsumerGroupDescribe shows the member Stable with the
// topic's three partitions, a classic JoinGroup for the group is refused
// (INCONSISTENT_GROUP_PROTOCOL: no online migration), and an OffsetCommit
// v9 at a stale member epoch gets STALE_MEMBER_EPOCH.
func TestAPIConsumerGroupProtocol(t *testing.T) {
	a := newAPICluster(t, map[string]string{"inter.broker.protocol.version": "4.0", "offsets.topic.num.partitions": "3"},
		func(s *Spec) { s.OffsetsTopic = true })
	coord := a.findCoordinator("g", 0, 3)
	var hb *kmsg.ConsumerGroupHeartbeatResponse
	for range 50 {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.RebalanceTimeoutMillis, req.SubscribedTopicNames = "g", 30000, []string{"t"}
		hb = a.call(coord, req).(*kmsg.ConsumerGroupHeartbeatResponse)
		if hb.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
			break
		}
		a.run(200 * 1e6)
	}
	if hb.ErrorCode != 0 || hb.MemberID == nil || hb.MemberEpoch != 1 || hb.Assignment == nil || len(hb.Assignment.Topics) != 1 ||
		len(hb.Assignment.Topics[0].Partitions) != 3 {
		t.Fatalf("join: %+v", hb)
	}
	if !a.c.Broker(coord).Coordinator().ConsumerGroupHasMembers("g") {
		t.Fatal("the coordinator has no consumer group g")
	}
	mreq := kmsg.NewPtrMetadataRequest()
	name := "t"
	mreq.Version, mreq.Topics = 12, []kmsg.MetadataRequestTopic{{Topic: &name}}
	md := a.call(0, mreq).(*kmsg.MetadataResponse)
	if md.Topics[0].TopicID != hb.Assignment.Topics[0].TopicID || md.Topics[0].TopicID == (assignor.TopicID{}) {
		t.Fatalf("assignment topic id %x, Metadata says %x", hb.Assignment.Topics[0].TopicID, md.Topics[0].TopicID)
	}
	desc := kmsg.NewPtrConsumerGroupDescribeRequest()
	desc.Groups = []string{"g", "nope"}
	dr := a.call(coord, desc).(*kmsg.ConsumerGroupDescribeResponse)
	// "nope" lives on another __consumer_offsets partition, or nowhere.
	if nope := dr.Groups[1].ErrorCode; len(dr.Groups) != 2 || dr.Groups[0].State != "Stable" || len(dr.Groups[0].Members) != 1 ||
		len(dr.Groups[0].Members[0].Assignment.TopicPartitions) != 1 || (nope != kerr.GroupIDNotFound.Code && nope != kerr.NotCoordinator.Code) {
		t.Fatalf("describe: %+v", dr.Groups)
	}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 4, "g", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: assignor.EncodeSubscription([]string{"t"}, nil)}}
	// A classic member joins the consumer group (KIP-848's online
	// migration): MEMBER_ID_REQUIRED, then a member at its member epoch.
	jr := a.call(coord, join).(*kmsg.JoinGroupResponse)
	if jr.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("classic JoinGroup into a consumer group: %s, want MEMBER_ID_REQUIRED", errName(jr.ErrorCode))
	}
	join.MemberID = jr.MemberID
	if jr = a.call(coord, join).(*kmsg.JoinGroupResponse); jr.ErrorCode != 0 || jr.LeaderID != "" || jr.Generation < 1 {
		t.Fatalf("classic JoinGroup with its member id: %s %+v", errName(jr.ErrorCode), jr)
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.MemberID, commit.Generation = 9, "g", *hb.MemberID, 0
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	if cr := a.call(coord, commit).(*kmsg.OffsetCommitResponse); cr.Topics[0].Partitions[0].ErrorCode != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit at epoch 0: %s, want STALE_MEMBER_EPOCH", errName(cr.Topics[0].Partitions[0].ErrorCode))
	}
	commit.Generation = 1
	if cr := a.call(coord, commit).(*kmsg.OffsetCommitResponse); cr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit at epoch 1: %s", errName(cr.Topics[0].Partitions[0].ErrorCode))
	}
}
