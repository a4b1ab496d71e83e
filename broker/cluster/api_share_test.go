package cluster

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareCluster is a 4.2 KRaft cluster with share groups on, and the id of
// topic t.
func shareCluster(t *testing.T, props map[string]string) (*apiCluster, [16]byte) {
	base := map[string]string{"inter.broker.protocol.version": "4.2", "offsets.topic.num.partitions": "3", "share.coordinator.state.topic.num.partitions": "3"}
	for k, v := range props {
		base[k] = v
	}
	a := newAPICluster(t, base, func(s *Spec) { s.OffsetsTopic = true })
	mreq := kmsg.NewPtrMetadataRequest()
	name := "t"
	mreq.Version, mreq.Topics = 12, []kmsg.MetadataRequestTopic{{Topic: &name}}
	md := a.call(0, mreq).(*kmsg.MetadataResponse)
	return a, md.Topics[0].TopicID
}

func (a *apiCluster) shareHeartbeat(coord int, group, member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	a.t.Helper()
	var hb *kmsg.ShareGroupHeartbeatResponse
	for range 50 {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.Version, req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = 1, group, member, epoch, topics
		hb = a.call(coord, req).(*kmsg.ShareGroupHeartbeatResponse)
		if hb.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
			break
		}
		a.run(200 * sim.Millisecond)
	}
	return hb
}

type ack struct {
	first, last int64
	typ         int8
}

func (a *apiCluster) shareFetch(leader int, group, member string, epoch int32, id [16]byte, p int32, acks ...ack) *kmsg.ShareFetchResponse {
	a.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.Version, req.GroupID, req.MemberID, req.ShareSessionEpoch = 2, &group, &member, epoch
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = 2000, 1, 1<<20, 500, 500
	tp := kmsg.ShareFetchRequestTopicPartition{Partition: p, PartitionMaxBytes: 1 << 20}
	for _, k := range acks {
		tp.AcknowledgementBatches = append(tp.AcknowledgementBatches, kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch{
			FirstOffset: k.first, LastOffset: k.last, AcknowledgeTypes: []int8{k.typ}})
	}
	req.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: id, Partitions: []kmsg.ShareFetchRequestTopicPartition{tp}}}
	return a.call(leader, req).(*kmsg.ShareFetchResponse)
}

func (a *apiCluster) shareAck(leader int, group, member string, epoch int32, id [16]byte, p int32, acks ...ack) *kmsg.ShareAcknowledgeResponse {
	a.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version, req.GroupID, req.MemberID, req.ShareSessionEpoch = 2, &group, &member, epoch
	tp := kmsg.ShareAcknowledgeRequestTopicPartition{Partition: p}
	for _, k := range acks {
		tp.AcknowledgementBatches = append(tp.AcknowledgementBatches, kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{
			FirstOffset: k.first, LastOffset: k.last, AcknowledgeTypes: []int8{k.typ}})
	}
	req.Topics = []kmsg.ShareAcknowledgeRequestTopic{{TopicID: id, Partitions: []kmsg.ShareAcknowledgeRequestTopicPartition{tp}}}
	return a.call(leader, req).(*kmsg.ShareAcknowledgeResponse)
}

// acquired renders a ShareFetch's acquired ranges of its first partition.
func acquired(r *kmsg.ShareFetchResponse) []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord {
	var out []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			out = append(out, p.AcquiredRecords...)
		}
	}
	return out
}

// TestAPIShareGroupsCoreKIP932 drives a 4.2 cluster's share groups
// through the wire, as a share consumer does: a member joins with
// ShareGroupHeartbeat (all three partitions: the only member), opens a
// share session on the leader of t-0 (share.auto.offset.reset=latest:
// the SPSO is the HW, so nothing yet), then acquires the ten records
// produced after (delivery count 1), accepts 0-4, releases 5-6, rejects
// 7; the next fetch acquires 5-6 again at delivery count 2 while 8-9 stay
// held; another member's acknowledgement of 8 is INVALID_RECORD_STATE;
// once the 30s acquisition locks expire, 5-6 and 8-9 are delivered again.
func TestAPIShareGroupsCoreKIP932(t *testing.T) {
	a, id := shareCluster(t, nil)
	if lo, hi := a.versions(78); lo != 1 || hi != 2 {
		t.Fatalf("ShareFetch advertised %d-%d, want 1-2", lo, hi)
	}
	coord := a.findCoordinator("sg", 0, 3)
	hb := a.shareHeartbeat(coord, "sg", "m1", 0, "t")
	if hb.ErrorCode != 0 || hb.MemberEpoch != 1 || hb.Assignment == nil || len(hb.Assignment.TopicPartitions) != 1 ||
		len(hb.Assignment.TopicPartitions[0].Partitions) != 3 || hb.Assignment.TopicPartitions[0].TopicID != id {
		t.Fatalf("join: %s %+v", errName(hb.ErrorCode), hb)
	}
	if hb2 := a.shareHeartbeat(coord, "sg", "m1", 7); hb2.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Fatalf("heartbeat at epoch 7: %s, want FENCED_MEMBER_EPOCH", errName(hb2.ErrorCode))
	}
	l := a.leader("t", 0)
	if r := a.shareFetch(l, "sg", "m1", 1, id, 0); r.ErrorCode != kerr.ShareSessionNotFound.Code {
		t.Fatalf("fetch at epoch 1 without a session: %s", errName(r.ErrorCode))
	}
	r := a.shareFetch(l, "sg", "m1", 0, id, 0)
	if r.ErrorCode != 0 || len(acquired(r)) != 0 || r.AcquisitionLockTimeoutMillis != 30000 {
		t.Fatalf("initial fetch: %s %+v", errName(r.ErrorCode), r)
	}
	if pr := a.produce("t", 0, 9, "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"); pr.ErrorCode != 0 {
		t.Fatalf("produce: %s", errName(pr.ErrorCode))
	}
	if r := a.shareFetch(l, "sg", "m1", 3, id, 0); r.ErrorCode != kerr.InvalidShareSessionEpoch.Code {
		t.Fatalf("fetch at epoch 3: %s, want INVALID_SHARE_SESSION_EPOCH", errName(r.ErrorCode))
	}
	r = a.shareFetch(l, "sg", "m1", 1, id, 0)
	if got := acquired(r); len(got) != 1 || got[0].FirstOffset != 0 || got[0].LastOffset != 9 || got[0].DeliveryCount != 1 || len(r.Topics[0].Partitions[0].Records) == 0 {
		t.Fatalf("fetch: %+v", got)
	}
	ar := a.shareAck(l, "sg", "m1", 2, id, 0, ack{0, 4, 1}, ack{5, 6, 2}, ack{7, 7, 3})
	if ar.ErrorCode != 0 || ar.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("acknowledge: %+v", ar)
	}
	r = a.shareFetch(l, "sg", "m1", 3, id, 0)
	if got := acquired(r); len(got) != 1 || got[0].FirstOffset != 5 || got[0].LastOffset != 6 || got[0].DeliveryCount != 2 {
		t.Fatalf("fetch after release: %+v", got)
	}
	if r := a.shareFetch(l, "sg", "m2", 0, id, 0); r.ErrorCode != 0 || len(acquired(r)) != 0 {
		t.Fatalf("m2 opens a session: %s %+v", errName(r.ErrorCode), acquired(r))
	}
	if ar := a.shareAck(l, "sg", "m2", 1, id, 0, ack{8, 8, 1}); ar.Topics[0].Partitions[0].ErrorCode != kerr.InvalidRecordState.Code {
		t.Fatalf("m2 accepts m1's record: %s, want INVALID_RECORD_STATE", errName(ar.Topics[0].Partitions[0].ErrorCode))
	}
	a.run(31 * sim.Second)
	r = a.shareFetch(l, "sg", "m2", 2, id, 0)
	want := []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord{{FirstOffset: 5, LastOffset: 6, DeliveryCount: 3}, {FirstOffset: 8, LastOffset: 9, DeliveryCount: 2}}
	if got := acquired(r); len(got) != 2 || got[0].FirstOffset != want[0].FirstOffset || got[0].LastOffset != want[0].LastOffset ||
		got[0].DeliveryCount != want[0].DeliveryCount || got[1].FirstOffset != want[1].FirstOffset || got[1].LastOffset != want[1].LastOffset ||
		got[1].DeliveryCount != want[1].DeliveryCount {
		t.Fatalf("after the locks expired: %+v, want %+v", got, want)
	}
	// m1's session still runs (epoch 4); its stale accept of 5 fails.
	if ar := a.shareAck(l, "sg", "m1", 4, id, 0, ack{5, 5, 1}); ar.Topics[0].Partitions[0].ErrorCode != kerr.InvalidRecordState.Code {
		t.Fatalf("m1 accepts after its lock expired: %s", errName(ar.Topics[0].Partitions[0].ErrorCode))
	}
	desc := kmsg.NewPtrShareGroupDescribeRequest()
	desc.Version, desc.GroupIDs = 1, []string{"sg"}
	dr := a.call(coord, desc).(*kmsg.ShareGroupDescribeResponse)
	if len(dr.Groups) != 1 || dr.Groups[0].ErrorCode != 0 || len(dr.Groups[0].Members) != 1 || dr.Groups[0].GroupState != "Stable" {
		t.Fatalf("describe: %+v", dr.Groups)
	}
	for _, types := range [][]string{{"share"}, {"classic"}} {
		lg := kmsg.NewPtrListGroupsRequest()
		lg.Version, lg.TypesFilter = 5, types
		lr := a.call(coord, lg).(*kmsg.ListGroupsResponse)
		found := len(lr.Groups) == 1 && lr.Groups[0].Group == "sg" && lr.Groups[0].GroupType == "share" && lr.Groups[0].ProtocolType == "share" && lr.Groups[0].GroupState == "Stable"
		if found != (types[0] == "share") {
			t.Fatalf("ListGroups types %v: %+v", types, lr.Groups)
		}
	}
}

// setGroupConfig sets share group configs through IncrementalAlterConfigs
// (resource type GROUP) and runs until broker i's DescribeConfigs shows
// them, as kgo's setShareGroupConfigs does.
func (a *apiCluster) setGroupConfig(i int, group string, kv ...string) {
	a.t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version = 1
	res := kmsg.IncrementalAlterConfigsRequestResource{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: group}
	for j := 0; j < len(kv); j += 2 {
		v := kv[j+1]
		res.Configs = append(res.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: kv[j], Op: kmsg.IncrementalAlterConfigOpSet, Value: &v})
	}
	req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{res}
	r := a.call(i, req).(*kmsg.IncrementalAlterConfigsResponse)
	if r.Resources[0].ErrorCode != 0 {
		a.t.Fatalf("IncrementalAlterConfigs: %s %v", errName(r.Resources[0].ErrorCode), r.Resources[0].ErrorMessage)
	}
	for range 100 {
		d := kmsg.NewPtrDescribeConfigsRequest()
		d.Version = 4
		d.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: group}}
		dr := a.call(i, d).(*kmsg.DescribeConfigsResponse)
		ok := dr.Resources[0].ErrorCode == 0
		for j := 0; ok && j < len(kv); j += 2 {
			found := false
			for _, c := range dr.Resources[0].Configs {
				if c.Name == kv[j] && c.Value != nil && *c.Value == kv[j+1] && c.Source == kmsg.ConfigSourceGroupConfig {
					found = true
				}
			}
			ok = found
		}
		if ok {
			return
		}
		a.run(100 * sim.Millisecond)
	}
	a.t.Fatalf("group %s configs %v not applied", group, kv)
}

// TestAPIShareGroupConfigsKIP932: share.auto.offset.reset=earliest set on
// the group (resource type 32) starts the share-partition at the log
// start, so records produced before the first fetch are delivered;
// share.record.lock.duration.ms is the AcquisitionLockTimeoutMillis; an
// out-of-range value is INVALID_CONFIG; a delivery count limit of 2
// archives a record released twice.
func TestAPIShareGroupConfigsKIP932(t *testing.T) {
	a, id := shareCluster(t, nil)
	if pr := a.produce("t", 1, 9, "a", "b"); pr.ErrorCode != 0 {
		t.Fatalf("produce: %s", errName(pr.ErrorCode))
	}
	bad := kmsg.NewPtrIncrementalAlterConfigsRequest()
	v := "500"
	bad.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: "g2",
		Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "share.record.lock.duration.ms", Value: &v}}}}
	if r := a.call(0, bad).(*kmsg.IncrementalAlterConfigsResponse); r.Resources[0].ErrorCode != kerr.InvalidConfig.Code {
		t.Fatalf("lock duration 500: %s, want INVALID_CONFIG", errName(r.Resources[0].ErrorCode))
	}
	a.setGroupConfig(0, "g2", "share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "15000", "share.delivery.count.limit", "2")
	l := a.leader("t", 1)
	a.setGroupConfig(l, "g2", "share.auto.offset.reset", "earliest")
	r := a.shareFetch(l, "g2", "m", 0, id, 1)
	if got := acquired(r); len(got) != 1 || got[0].FirstOffset != 0 || got[0].LastOffset != 1 || r.AcquisitionLockTimeoutMillis != 15000 {
		t.Fatalf("earliest: %+v lock %d", got, r.AcquisitionLockTimeoutMillis)
	}
	r = a.shareFetch(l, "g2", "m", 1, id, 1, ack{0, 1, 2})
	if got := acquired(r); len(got) != 1 || got[0].DeliveryCount != 2 || r.Topics[0].Partitions[0].AcknowledgeErrorCode != 0 {
		t.Fatalf("after release: %+v", r.Topics)
	}
	r = a.shareFetch(l, "g2", "m", 2, id, 1, ack{0, 1, 2})
	if got := acquired(r); len(got) != 0 {
		t.Fatalf("released at the limit of 2: acquired again %+v", got)
	}
}

// TestAPIShareStateRecoveredKIP932: a share-partition's state survives
// its leader's crash through __share_group_state. m accepts 0-4, releases
// 5-6 and rejects 7 of ten records and still holds 8-9; the leader of t-2
// crashes; the new leader reads the state (a StateLoad: SPSO 5, 5-6
// available, 7 archived, 8-9 available: a lock does not survive) and
// delivers 5-6 and 8-9 again, never 0-4.
func TestAPIShareStateRecoveredKIP932(t *testing.T) {
	a, id := shareCluster(t, nil)
	l := a.leader("t", 2)
	if r := a.shareFetch(l, "sg", "m", 0, id, 2); r.ErrorCode != 0 {
		t.Fatalf("open: %s", errName(r.ErrorCode))
	}
	if pr := a.produce("t", 2, 9, "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"); pr.ErrorCode != 0 {
		t.Fatalf("produce: %s", errName(pr.ErrorCode))
	}
	if got := acquired(a.shareFetch(l, "sg", "m", 1, id, 2)); len(got) != 1 || got[0].LastOffset != 9 {
		t.Fatalf("fetch: %+v", got)
	}
	ar := a.shareAck(l, "sg", "m", 2, id, 2, ack{0, 4, 1}, ack{5, 6, 2}, ack{7, 7, 3})
	if ar.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("acknowledge: %s", errName(ar.Topics[0].Partitions[0].ErrorCode))
	}
	if err := a.c.World.Inject(sim.Crash{Node: a.c.Brokers[l]}); err != nil {
		t.Fatal(err)
	}
	var nl int
	for range 300 {
		a.run(100 * sim.Millisecond)
		if nl = a.leader("t", 2); nl >= 0 && nl != l {
			break
		}
	}
	if nl < 0 || nl == l {
		t.Fatalf("no new leader of t-2")
	}
	var got []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord
	for i := range 20 {
		r := a.shareFetch(nl, "sg", "m", 0, id, 2)
		if r.ErrorCode != 0 {
			t.Fatalf("fetch from the new leader: %s", errName(r.ErrorCode))
		}
		if got = acquired(r); len(got) > 0 {
			break
		}
		if i == 0 {
			continue
		}
		r = a.shareFetch(nl, "sg", "m", 1, id, 2)
		if got = acquired(r); len(got) > 0 {
			break
		}
	}
	want := "5-6@2 8-9@2 "
	s := ""
	for _, g := range got {
		s += fmt.Sprintf("%d-%d@%d ", g.FirstOffset, g.LastOffset, g.DeliveryCount)
	}
	if s != want {
		t.Fatalf("after the fail-over: %q, want %q", s, want)
	}
	loads := a.c.Broker(nl).TakeShareStateLoads()
	if len(loads) != 1 || loads[0].StartOffset != 5 || loads[0].Group != "sg" || loads[0].Topic != "t" || loads[0].Partition != 2 {
		t.Fatalf("state loads: %+v", loads)
	}
	bs := ""
	for _, x := range loads[0].Batches {
		bs += fmt.Sprintf("%d-%d:%d@%d ", x.FirstOffset, x.LastOffset, x.DeliveryState, x.DeliveryCount)
	}
	if bs != "5-6:0@1 7-7:4@1 8-9:0@1 " {
		t.Fatalf("loaded batches %q", bs)
	}
}

// TestAPIShareGroupOffsetsAdminKIP932 is kgo's TestShareGroupOffsetsAdmin
// on the simulated cluster: AlterShareGroupOffsets creates the empty
// group's state at SPSO 8, DescribeShareGroupOffsets (with topics and
// without) reports it, DeleteShareGroupOffsets removes it; with a member
// in the group an alter is NON_EMPTY_GROUP.
func TestAPIShareGroupOffsetsAdminKIP932(t *testing.T) {
	a, _ := shareCluster(t, nil)
	if pr := a.produce("t", 0, 9, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"); pr.ErrorCode != 0 {
		t.Fatalf("produce: %s", errName(pr.ErrorCode))
	}
	coord := a.findCoordinator("ag", 0, 3)
	alter := func() *kmsg.AlterShareGroupOffsetsResponse {
		req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
		req.GroupID = "ag"
		req.Topics = []kmsg.AlterShareGroupOffsetsRequestTopic{{Topic: "t", Partitions: []kmsg.AlterShareGroupOffsetsRequestTopicPartition{{Partition: 0, StartOffset: 8}}}}
		return a.call(coord, req).(*kmsg.AlterShareGroupOffsetsResponse)
	}
	var ar *kmsg.AlterShareGroupOffsetsResponse
	for range 50 {
		if ar = alter(); ar.ErrorCode == 0 && ar.Topics[0].Partitions[0].ErrorCode == 0 {
			break
		}
		a.run(200 * sim.Millisecond) // __share_group_state is being created
	}
	if ar.ErrorCode != 0 || ar.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("alter: %s %s", errName(ar.ErrorCode), errName(ar.Topics[0].Partitions[0].ErrorCode))
	}
	describe := func(all bool) int64 {
		req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		rg := kmsg.DescribeShareGroupOffsetsRequestGroup{GroupID: "ag"}
		if !all {
			rg.Topics = []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}
		}
		req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{rg}
		r := a.call(coord, req).(*kmsg.DescribeShareGroupOffsetsResponse)
		if len(r.Groups) != 1 || r.Groups[0].ErrorCode != 0 || len(r.Groups[0].Topics) != 1 || r.Groups[0].Topics[0].Topic != "t" {
			t.Fatalf("describe(all=%v): %+v", all, r.Groups)
		}
		return r.Groups[0].Topics[0].Partitions[0].StartOffset
	}
	if got := describe(false); got != 8 {
		t.Fatalf("describe: SPSO %d, want 8", got)
	}
	if got := describe(true); got != 8 {
		t.Fatalf("describe all: SPSO %d, want 8", got)
	}
	del := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	del.GroupID, del.Topics = "ag", []kmsg.DeleteShareGroupOffsetsRequestTopic{{Topic: "t"}}
	if dr := a.call(coord, del).(*kmsg.DeleteShareGroupOffsetsResponse); dr.ErrorCode != 0 || dr.Topics[0].ErrorCode != 0 {
		t.Fatalf("delete: %+v", dr)
	}
	if got := describe(false); got != -1 {
		t.Fatalf("describe after delete: SPSO %d, want -1", got)
	}
	if hb := a.shareHeartbeat(coord, "ag", "m", 0, "t"); hb.ErrorCode != 0 {
		t.Fatalf("join: %s", errName(hb.ErrorCode))
	}
	if ar := alter(); ar.ErrorCode != kerr.NonEmptyGroup.Code {
		t.Fatalf("alter with a member: %s, want NON_EMPTY_GROUP", errName(ar.ErrorCode))
	}
}

// TestAPIFindShareCoordinatorKIP932: FindCoordinator v6 key type 2 names
// the leader of the share-partition's __share_group_state partition (the
// topic is created on first use); a malformed key is INVALID_REQUEST.
func TestAPIFindShareCoordinatorKIP932(t *testing.T) {
	a, _ := shareCluster(t, nil)
	if _, hi := a.versions(10); hi != 6 {
		t.Fatalf("FindCoordinator max %d at 4.2, want 6", hi)
	}
	key := "g:AAAAAAAAAAAAAAAAAAAAAA:0"
	var c kmsg.FindCoordinatorResponseCoordinator
	for range 50 {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKeys = 6, 2, []string{key, "bad-key"}
		r := a.call(0, req).(*kmsg.FindCoordinatorResponse)
		if r.Coordinators[1].ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("bad key: %s", errName(r.Coordinators[1].ErrorCode))
		}
		if c = r.Coordinators[0]; c.ErrorCode == 0 {
			break
		}
		a.run(200 * sim.Millisecond)
	}
	if c.ErrorCode != 0 || c.NodeID < 0 {
		t.Fatalf("share coordinator: %s %+v", errName(c.ErrorCode), c)
	}
}
