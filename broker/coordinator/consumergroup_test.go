package coordinator

import (
	"bytes"
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var topicT = assignor.ServerTopic{Name: "t", ID: assignor.TopicID{1: 0xaa, 15: 1}, Partitions: 4}

func newConsumerHarness(t *testing.T, mut func(*Config)) (*harness, int32) {
	cfg := DefaultConfig(0)
	cfg.NumPartitions = 1
	cfg.Consumer.Enabled = true
	if mut != nil {
		mut(&cfg)
	}
	h := newHarness(t, cfg)
	h.c.env.Topics = func() []assignor.ServerTopic { return []assignor.ServerTopic{topicT} }
	h.lead(0)
	return h, 0
}

type hb struct {
	member   string
	epoch    int32
	owned    []int32 // partitions of t; nil: not sent
	instance string
	join     bool
}

func (h *harness) cgHeartbeat(t *testing.T, x hb) *kmsg.ConsumerGroupHeartbeatResponse {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = "g", x.member, x.epoch
	if x.epoch == 0 {
		req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 30000, []string{"t"}
	}
	if x.instance != "" {
		inst := x.instance
		req.InstanceID = &inst
	}
	if x.owned != nil {
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{TopicID: topicT.ID, Partitions: x.owned}}
		if len(x.owned) == 0 {
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
	}
	var resp *kmsg.ConsumerGroupHeartbeatResponse
	h.c.ConsumerGroupHeartbeat(h.now, req, func(r *kmsg.ConsumerGroupHeartbeatResponse) { resp = r })
	if resp == nil {
		t.Fatalf("heartbeat %+v: no answer", x)
	}
	return resp
}

func assigned(r *kmsg.ConsumerGroupHeartbeatResponse) []int32 {
	if r.Assignment == nil {
		return nil
	}
	var out []int32
	for _, tp := range r.Assignment.Topics {
		out = append(out, tp.Partitions...)
	}
	slices.Sort(out)
	return out
}

// checkHeldOnce asserts the reconciliation invariant: no partition is held
// (assigned or pending revocation) by two members, and none is held at an
// epoch other than its member's.
func checkHeldOnce(t *testing.T, h *harness) {
	t.Helper()
	_, _, _, members, _ := h.c.ConsumerGroupState("g")
	seen := map[TopicPartition]string{}
	for _, m := range members {
		for _, tp := range append(slices.Clone(m.Assigned), m.Pending...) {
			if o, ok := seen[tp]; ok {
				t.Fatalf("%v held by %s and %s", tp, o, m.ID)
			}
			seen[tp] = m.ID
		}
	}
}

// TestKIP848RevokeBeforeAssign: a partition moves to a new member only
// after its owner's heartbeat no longer lists it (KIP-848 "Reconciliation").
func TestKIP848RevokeBeforeAssign(t *testing.T) {
	h, _ := newConsumerHarness(t, nil)
	a := h.cgHeartbeat(t, hb{member: "A", epoch: 0})
	if a.ErrorCode != 0 || a.MemberEpoch != 1 || !slices.Equal(assigned(a), []int32{0, 1, 2, 3}) {
		t.Fatalf("A joins: %+v %v, want epoch 1 with t-0..3", a, assigned(a))
	}
	b := h.cgHeartbeat(t, hb{member: "B", epoch: 0})
	if b.MemberEpoch != 2 || len(assigned(b)) != 0 {
		t.Fatalf("B joins: epoch %d %v, want epoch 2 and nothing yet (A still owns all)", b.MemberEpoch, assigned(b))
	}
	checkHeldOnce(t, h)
	a = h.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1, 2, 3}})
	if a.MemberEpoch != 1 || !slices.Equal(assigned(a), []int32{0, 1}) {
		t.Fatalf("A asked to revoke: epoch %d %v, want epoch 1 keeping t-0,1", a.MemberEpoch, assigned(a))
	}
	b = h.cgHeartbeat(t, hb{member: "B", epoch: 2, owned: []int32{}})
	if len(assigned(b)) != 0 {
		t.Fatalf("B got %v before A acknowledged the revocation", assigned(b))
	}
	checkHeldOnce(t, h)
	a = h.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1}})
	if a.MemberEpoch != 2 {
		t.Fatalf("A acknowledged: epoch %d, want 2", a.MemberEpoch)
	}
	b = h.cgHeartbeat(t, hb{member: "B", epoch: 2, owned: []int32{}})
	if !slices.Equal(assigned(b), []int32{2, 3}) {
		t.Fatalf("B after the revocation: %v, want t-2,3", assigned(b))
	}
	checkHeldOnce(t, h)
	state, epoch, aepoch, _, _ := h.c.ConsumerGroupState("g")
	if state != "Stable" || epoch != 2 || aepoch != 2 {
		t.Fatalf("group %s epoch %d assignment epoch %d, want Stable 2 2", state, epoch, aepoch)
	}
}

// TestKIP848FencedMemberEpoch: a heartbeat at a wrong epoch is fenced,
// except at the previous epoch owning no more than the member has (a lost
// response).
func TestKIP848FencedMemberEpoch(t *testing.T) {
	h, _ := newConsumerHarness(t, nil)
	h.cgHeartbeat(t, hb{member: "A", epoch: 0})
	if r := h.cgHeartbeat(t, hb{member: "A", epoch: 7, owned: []int32{0}}); r.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Fatalf("epoch 7: error %d, want FENCED_MEMBER_EPOCH (110)", r.ErrorCode)
	}
	if r := h.cgHeartbeat(t, hb{member: "Z", epoch: 1}); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: error %d, want UNKNOWN_MEMBER_ID", r.ErrorCode)
	}
	h.cgHeartbeat(t, hb{member: "B", epoch: 0})
	h.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1, 2, 3}})
	h.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1}}) // A now at 2
	if r := h.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1}}); r.ErrorCode != 0 || r.MemberEpoch != 2 {
		t.Fatalf("previous epoch, owned a subset: %+v, want accepted at epoch 2", r)
	}
	if r := h.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1, 2}}); r.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Fatalf("previous epoch owning t-2 it gave up: error %d, want FENCED_MEMBER_EPOCH", r.ErrorCode)
	}
}

// TestKIP848SessionTimeout: a member silent for
// group.consumer.session.timeout.ms is removed and its partitions move.
func TestKIP848SessionTimeout(t *testing.T) {
	h, _ := newConsumerHarness(t, nil)
	h.cgHeartbeat(t, hb{member: "A", epoch: 0})
	h.cgHeartbeat(t, hb{member: "B", epoch: 0})
	for i := 0; i < 10; i++ { // B keeps heartbeating, A goes silent
		h.advance(5 * sim.Second)
		h.cgHeartbeat(t, hb{member: "B", epoch: 2, owned: []int32{}})
	}
	_, epoch, _, members, _ := h.c.ConsumerGroupState("g")
	if len(members) != 1 || members[0].ID != "B" || epoch != 3 {
		t.Fatalf("after 50s: epoch %d members %+v, want only B at group epoch 3", epoch, members)
	}
	r := h.cgHeartbeat(t, hb{member: "B", epoch: 2, owned: []int32{}})
	if r.MemberEpoch != 3 || !slices.Equal(assigned(r), []int32{0, 1, 2, 3}) {
		t.Fatalf("B after A's session expired: epoch %d %v, want 3 with all", r.MemberEpoch, assigned(r))
	}
}

// TestKIP848RebalanceTimeout: a member that does not revoke within its
// rebalance timeout is fenced, and the partitions go to the others.
func TestKIP848RebalanceTimeout(t *testing.T) {
	h, _ := newConsumerHarness(t, nil)
	h.cgHeartbeat(t, hb{member: "A", epoch: 0})
	h.cgHeartbeat(t, hb{member: "B", epoch: 0})
	h.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1, 2, 3}}) // revocation asked
	for i := 0; i < 7; i++ {                                                // 35s > 30s
		h.advance(5 * sim.Second)
		h.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1, 2, 3}})
		h.cgHeartbeat(t, hb{member: "B", epoch: 2, owned: []int32{}})
	}
	if r := h.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1, 2, 3}}); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("A after its rebalance timeout: error %d, want UNKNOWN_MEMBER_ID (fenced, removed)", r.ErrorCode)
	}
	if r := h.cgHeartbeat(t, hb{member: "B", epoch: 2, owned: []int32{}}); !slices.Equal(assigned(r), []int32{0, 1, 2, 3}) {
		t.Fatalf("B: %v, want all four", assigned(r))
	}
}

// TestKIP848StaticMember: a static member's successor is refused
// (UNRELEASED_INSTANCE_ID) until the member leaves with epoch -2, then
// takes over its partitions without a rebalance.
func TestKIP848StaticMember(t *testing.T) {
	h, _ := newConsumerHarness(t, nil)
	h.cgHeartbeat(t, hb{member: "A", epoch: 0, instance: "i1"})
	if r := h.cgHeartbeat(t, hb{member: "A2", epoch: 0, instance: "i1"}); r.ErrorCode != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("second member with instance i1: error %d, want UNRELEASED_INSTANCE_ID", r.ErrorCode)
	}
	if r := h.cgHeartbeat(t, hb{member: "A", epoch: -2, instance: "i1"}); r.ErrorCode != 0 || r.MemberEpoch != -2 {
		t.Fatalf("static leave: %+v", r)
	}
	_, epoch, _, _, _ := h.c.ConsumerGroupState("g")
	r := h.cgHeartbeat(t, hb{member: "A2", epoch: 0, instance: "i1"})
	_, epoch2, _, _, _ := h.c.ConsumerGroupState("g")
	if r.ErrorCode != 0 || !slices.Equal(assigned(r), []int32{0, 1, 2, 3}) || epoch2 != epoch {
		t.Fatalf("successor: %+v %v, group epoch %d -> %d; want all partitions, no bump", r, assigned(r), epoch, epoch2)
	}
}

func TestKIP848GroupMaxSizeAndDisabled(t *testing.T) {
	h, _ := newConsumerHarness(t, func(c *Config) { c.Consumer.MaxSize = 1 })
	h.cgHeartbeat(t, hb{member: "A", epoch: 0})
	if r := h.cgHeartbeat(t, hb{member: "B", epoch: 0}); r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("second member of a group of max size 1: error %d, want GROUP_MAX_SIZE_REACHED", r.ErrorCode)
	}
	h, _ = newConsumerHarness(t, func(c *Config) { c.Consumer.Enabled = false })
	if r := h.cgHeartbeat(t, hb{member: "A", epoch: 0}); r.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("protocol disabled: error %d, want UNSUPPORTED_VERSION", r.ErrorCode)
	}
}

// TestKIP848OffsetCommitStaleMemberEpoch: OffsetCommit v9 to a consumer
// group is checked against the member's epoch.
func TestKIP848OffsetCommitStaleMemberEpoch(t *testing.T) {
	h, _ := newConsumerHarness(t, nil)
	h.cgHeartbeat(t, hb{member: "A", epoch: 0})
	commit := func(member string, epoch int32, version int16) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.MemberID, req.Generation = version, "g", member, epoch
		req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5}}}}
		var code int16 = -99
		h.c.OffsetCommit(h.now, req, func(r *kmsg.OffsetCommitResponse) { code = r.Topics[0].Partitions[0].ErrorCode })
		return code
	}
	for _, c := range []struct {
		member  string
		epoch   int32
		version int16
		want    int16
	}{{"A", 1, 9, 0}, {"A", 0, 9, kerr.StaleMemberEpoch.Code}, {"Z", 1, 9, kerr.UnknownMemberID.Code}, {"A", 1, 8, kerr.UnsupportedVersion.Code}} {
		if got := commit(c.member, c.epoch, c.version); got != c.want {
			t.Errorf("commit by %s at epoch %d v%d: error %d, want %d", c.member, c.epoch, c.version, got, c.want)
		}
	}
	if o, ok := h.c.Committed("g", "t", 0); !ok || o.Offset != 5 {
		t.Fatalf("committed %+v %v, want 5", o, ok)
	}
}

// TestKIP848FailoverReplay: a coordinator that loads the partition's log
// rebuilds the group mid-reconciliation: epochs, states, partitions.
func TestKIP848FailoverReplay(t *testing.T) {
	h, _ := newConsumerHarness(t, nil)
	h.cgHeartbeat(t, hb{member: "A", epoch: 0})
	h.cgHeartbeat(t, hb{member: "B", epoch: 0})
	h.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1, 2, 3}}) // A revoking t-2,3
	s1, e1, a1, m1, _ := h.c.ConsumerGroupState("g")
	h2 := newHarness(t, h.c.cfg)
	h2.c.env.Topics = h.c.env.Topics
	h2.log = h.log
	h2.lead(0)
	s2, e2, a2, m2, ok := h2.c.ConsumerGroupState("g")
	if !ok || s1 != s2 || e1 != e2 || a1 != a2 || len(m1) != len(m2) {
		t.Fatalf("replayed %s %d %d %d members, want %s %d %d %d", s2, e2, a2, len(m2), s1, e1, a1, len(m1))
	}
	for i := range m1 {
		x, y := m1[i], m2[i]
		if x.ID != y.ID || x.Epoch != y.Epoch || x.PreviousEpoch != y.PreviousEpoch || x.State != y.State ||
			!slices.Equal(x.Assigned, y.Assigned) || !slices.Equal(x.Pending, y.Pending) || !slices.Equal(x.Target, y.Target) {
			t.Fatalf("member replayed as %+v, was %+v", y, x)
		}
	}
	// The replayed group goes on: A acknowledges, B gets its partitions.
	h2.cgHeartbeat(t, hb{member: "A", epoch: 1, owned: []int32{0, 1}})
	if r := h2.cgHeartbeat(t, hb{member: "B", epoch: 2, owned: []int32{}}); !slices.Equal(assigned(r), []int32{2, 3}) {
		t.Fatalf("B after fail-over: %v, want t-2,3", assigned(r))
	}
}

// TestConsumerGroupRecordFormat pins the bytes of two records against
// Kafka's schema (ConsumerGroupMetadataKey v3 / Value v0, and
// ConsumerGroupCurrentMemberAssignmentKey v8) and round-trips every type.
func TestConsumerGroupRecordFormat(t *testing.T) {
	r := encodeConsumerRecord(ConsumerRecord{Type: cgMetadataKey, Group: "g", Epoch: 5}, 0)
	if want := []byte{0, 3, 0, 1, 'g'}; !bytes.Equal(r.Key, want) {
		t.Fatalf("metadata key % x, want % x", r.Key, want)
	}
	if want := []byte{0, 0, 0, 0, 0, 5, 0}; !bytes.Equal(r.Value, want) {
		t.Fatalf("metadata value % x, want % x (version 0, epoch 5, no tags)", r.Value, want)
	}
	inst := "i"
	for _, rec := range []ConsumerRecord{
		{Type: cgMetadataKey, Group: "g", Epoch: 5},
		{Type: cgPartitionMetadata, Group: "g", Topics: []assignor.ServerTopic{topicT}},
		{Type: cgMemberMetadata, Group: "g", Member: "m", InstanceID: &inst, ClientID: "c", ClientHost: "/c", Subscribed: []string{"t", "u"}, RebalanceMillis: 300000},
		{Type: cgTargetMetadata, Group: "g", Epoch: 7},
		{Type: cgTargetMember, Group: "g", Member: "m", Assigned: []idPartitions{{ID: topicT.ID, Partitions: []int32{0, 3}}}},
		{Type: cgCurrentAssignmentKy, Group: "g", Member: "m", Epoch: 4, PreviousEpoch: 3, State: 1,
			Assigned: []idPartitions{{ID: topicT.ID, Partitions: []int32{0}}}, Pending: []idPartitions{{ID: topicT.ID, Partitions: []int32{3}}}},
		{Type: cgCurrentAssignmentKy, Group: "g", Member: "m", Tombstone: true},
	} {
		enc := encodeConsumerRecord(rec, 0)
		if !isConsumerRecord(enc) {
			t.Fatalf("type %d not recognised as a consumer group record", rec.Type)
		}
		got, err := decodeConsumerRecord(enc)
		if err != nil {
			t.Fatalf("type %d: %v", rec.Type, err)
		}
		if again := encodeConsumerRecord(got, 0); !bytes.Equal(again.Key, enc.Key) || !bytes.Equal(again.Value, enc.Value) {
			t.Fatalf("type %d does not round-trip: %+v", rec.Type, got)
		}
	}
	if _, err := decodeConsumerRecord(storageRecord([]byte{0, 3, 0, 1, 'g'}, []byte{0, 0, 0})); err == nil {
		t.Fatal("a truncated value decoded")
	}
}

func storageRecord(k, v []byte) storage.Record { return storage.Record{Key: k, Value: v} }

// TestKIP848TxnOffsetCommitStaleMemberEpoch: TxnOffsetCommit v3+ to a
// consumer group is checked against the member's epoch as OffsetCommit is.
func TestKIP848TxnOffsetCommitStaleMemberEpoch(t *testing.T) {
	h, _ := newConsumerHarness(t, nil)
	h.c.env.AppendTxn = func(p int32, _ int64, _ int16, recs []storage.Record, done func(sim.Time, *kerr.Error)) {
		h.append(p, recs, done)
	}
	h.cgHeartbeat(t, hb{member: "A", epoch: 0})
	for _, c := range []struct {
		epoch int32
		want  int16
	}{{1, 0}, {0, kerr.StaleMemberEpoch.Code}} {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.Group, req.MemberID, req.Generation, req.ProducerID = 3, "g", "A", c.epoch, 7
		req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5}}}}
		var code int16 = -99
		h.c.TxnOffsetCommit(h.now, req, func(r *kmsg.TxnOffsetCommitResponse) { code = r.Topics[0].Partitions[0].ErrorCode })
		if code != c.want {
			t.Errorf("TxnOffsetCommit at epoch %d: error %d, want %d", c.epoch, code, c.want)
		}
	}
}

// TestKIP848StaticMemberFencing: a static member's successor fences the
// old member id (FENCED_INSTANCE_ID), an unknown instance id is
// UNKNOWN_MEMBER_ID, and OffsetCommit v9 with the instance id is checked by
// member id and epoch alone (kgo's TestGroupETL sticky/848/static).
func TestKIP848StaticMemberFencing(t *testing.T) {
	h, _ := newConsumerHarness(t, nil)
	r := h.cgHeartbeat(t, hb{member: "A", epoch: 0, instance: "i1"})
	commit := func(member string, epoch int32) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		inst := "i1"
		req.Version, req.Group, req.MemberID, req.Generation, req.InstanceID = 9, "g", member, epoch, &inst
		req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5}}}}
		var code int16 = -99
		h.c.OffsetCommit(h.now, req, func(r *kmsg.OffsetCommitResponse) { code = r.Topics[0].Partitions[0].ErrorCode })
		return code
	}
	if code := commit("A", r.MemberEpoch); code != 0 {
		t.Fatalf("static member's commit: error %d, want none", code)
	}
	h.cgHeartbeat(t, hb{member: "A", epoch: -2, instance: "i1"})
	if r := h.cgHeartbeat(t, hb{member: "B", epoch: 0, instance: "i1"}); r.ErrorCode != 0 || len(assigned(r)) != 4 {
		t.Fatalf("successor B: %+v", r)
	}
	if r := h.cgHeartbeat(t, hb{member: "A", epoch: 1, instance: "i1", owned: []int32{0, 1, 2, 3}}); r.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("zombie A after B took i1: error %d, want FENCED_INSTANCE_ID", r.ErrorCode)
	}
	if r := h.cgHeartbeat(t, hb{member: "A", epoch: -2, instance: "i1"}); r.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("zombie A leaving: error %d, want FENCED_INSTANCE_ID", r.ErrorCode)
	}
	if r := h.cgHeartbeat(t, hb{member: "C", epoch: 1, instance: "i9", owned: []int32{}}); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown instance i9: error %d, want UNKNOWN_MEMBER_ID", r.ErrorCode)
	}
	if code := commit("A", 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("zombie A's commit: error %d, want UNKNOWN_MEMBER_ID", code)
	}
	checkHeldOnce(t, h)
}
