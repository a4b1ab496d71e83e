package kraft

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestBootstrapWritesMetadataVersion(t *testing.T) {
	h := newHarness(t, nil)
	if got := h.c.Image().Feature(metadata.MetadataVersionFeature); got != 25 {
		t.Fatalf("metadata.version %d, want 25 (4.0-IV3)", got)
	}
}

// TestRegistrationHeartbeatUnfence: KIP-631 — a broker registers fenced,
// with its epoch the RegisterBrokerRecord's offset, and is unfenced once it
// has caught up with that offset.
func TestRegistrationHeartbeatUnfence(t *testing.T) {
	h := newHarness(t, nil)
	r := h.register(1, 1, "r1")
	if r.ErrorCode != 0 || r.BrokerEpoch != 1 {
		t.Fatalf("registration %+v: want epoch 1 (offset after the bootstrap record)", r)
	}
	if b, _ := h.c.Image().Broker(1); !b.Fenced || b.Rack != "r1" {
		t.Fatalf("registered broker %+v: want fenced", b)
	}
	hb := h.heartbeat(1, 1, 0, false, false)
	if hb.ErrorCode != 0 || hb.IsCaughtUp || !hb.IsFenced {
		t.Fatalf("heartbeat behind: %+v", hb)
	}
	if hb = h.heartbeat(1, 7, 5, false, false); hb.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("wrong epoch: %+v", hb)
	}
	hb = h.heartbeat(1, 1, 1, false, false)
	if !hb.IsCaughtUp || hb.IsFenced {
		t.Fatalf("heartbeat caught up: %+v", hb)
	}
	if b, _ := h.c.Image().Broker(1); b.Fenced {
		t.Fatal("not unfenced in the image")
	}
	// The same incarnation keeps its epoch; another one while the session
	// lives is a duplicate.
	if r := h.register(1, 1, "r1"); r.BrokerEpoch != 1 {
		t.Fatalf("re-registration: %+v", r)
	}
	if r := h.register(1, 2, "r1"); r.ErrorCode != kerr.DuplicateBrokerRegistration.Code {
		t.Fatalf("other incarnation: %+v", r)
	}
	if b, _ := h.c.Image().Broker(1); b.Fenced {
		t.Fatal("same-incarnation re-registration fenced the broker")
	}
}

// TestSessionExpiryFencesAndMovesLeadership: a broker silent for
// broker.session.timeout.ms is fenced, leaves the ISRs, and the next ISR
// member leads with a bumped leader epoch.
func TestSessionExpiryFencesAndMovesLeadership(t *testing.T) {
	h := newHarness(t, nil)
	ep := h.up(1, 2, 3)
	if r := h.createTopic("t", []int32{1, 2, 3}, []int32{2, 1, 3}); r.ErrorCode != 0 {
		t.Fatalf("create: %+v", r)
	}
	for range 4 { // 12s: 2 and 3 keep their sessions, 1 does not
		h.w.RunFor(3 * sim.Second)
		h.heartbeat(2, ep[2], h.q.hw, false, false)
		h.heartbeat(3, ep[3], h.q.hw, false, false)
	}
	if b, _ := h.c.Image().Broker(1); !b.Fenced {
		t.Fatal("broker 1 not fenced")
	}
	for _, b := range []int32{2, 3} {
		if s, _ := h.c.Image().Broker(b); s.Fenced {
			t.Fatalf("broker %d fenced", b)
		}
	}
	p := h.partition("t", 0)
	if p.Leader != 2 || !slices.Equal(p.ISR, []int32{2, 3}) || p.LeaderEpoch != 1 || p.PartitionEpoch != 1 {
		t.Fatalf("t-0 after fencing 1: %+v", p)
	}
	p = h.partition("t", 1)
	if p.Leader != 2 || !slices.Equal(p.ISR, []int32{2, 3}) || p.LeaderEpoch != 0 || p.PartitionEpoch != 1 {
		t.Fatalf("t-1 after fencing 1 (ISR shrink only, no epoch bump since 3.6-IV0): %+v", p)
	}
	// When it comes back, it is unfenced; it is not re-added to ISRs.
	if hb := h.heartbeat(1, ep[1], h.q.hw, false, false); hb.IsFenced {
		t.Fatalf("broker 1 not unfenced: %+v", hb)
	}
}

// TestLastISRMemberStaysAndUncleanElection: the last ISR member stays when
// fenced (leader -1); with unclean election the first live replica leads,
// ISR = [it], RECOVERING (KIP-704).
func TestLastISRMemberStaysAndUncleanElection(t *testing.T) {
	for _, unclean := range []bool{false, true} {
		h := newHarness(t, func(c *Config) { c.Unclean = func(string) bool { return unclean } })
		ep := h.up(1, 2)
		h.createTopic("t", []int32{1, 2})
		if r := h.alter(1, ep[1], "t", 0, []int32{1}, 0, 0); r.ErrorCode != 0 {
			t.Fatalf("shrink: %+v", r)
		}
		h.heartbeat(1, ep[1], h.q.hw, true, false) // WantFence
		p := h.partition("t", 0)
		if !unclean && (p.Leader != -1 || !slices.Equal(p.ISR, []int32{1})) {
			t.Fatalf("clean: %+v", p)
		}
		if unclean && (p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) || p.LeaderRecoveryState != metadata.Recovering) {
			t.Fatalf("unclean: %+v", p)
		}
		if unclean {
			continue
		}
		// Unfencing 1 again elects it, the ISR's only member.
		h.heartbeat(1, ep[1], h.q.hw, false, false)
		if p := h.partition("t", 0); p.Leader != 1 {
			t.Fatalf("after unfence: %+v", p)
		}
	}
}

func (h *harness) alter(broker int32, epoch int64, topic string, part int32, isr []int32, leaderEpoch, partitionEpoch int32) *kmsg.AlterPartitionResponseTopicPartition {
	h.t.Helper()
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 3
	req.BrokerID, req.BrokerEpoch = broker, epoch
	tt := kmsg.NewAlterPartitionRequestTopic()
	tt.TopicID, _ = h.c.Image().TopicID(topic)
	p := kmsg.NewAlterPartitionRequestTopicPartition()
	p.Partition, p.LeaderEpoch, p.PartitionEpoch = part, leaderEpoch, partitionEpoch
	for _, r := range isr {
		b, _ := h.c.Image().Broker(r)
		p.NewEpochISR = append(p.NewEpochISR, kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{BrokerID: r, BrokerEpoch: b.Epoch})
	}
	tt.Partitions = append(tt.Partitions, p)
	req.Topics = append(req.Topics, tt)
	r := h.call(req).(*kmsg.AlterPartitionResponse)
	if r.ErrorCode != 0 {
		return &kmsg.AlterPartitionResponseTopicPartition{ErrorCode: r.ErrorCode}
	}
	return &r.Topics[0].Partitions[0]
}

// TestAlterPartition follows ReplicationControlManager.alterPartition's checks.
func TestAlterPartition(t *testing.T) {
	h := newHarness(t, nil)
	ep := h.up(1, 2, 3)
	h.createTopic("t", []int32{1, 2, 3})
	if r := h.alter(1, ep[1], "t", 0, []int32{1, 2}, 0, 0); r.ErrorCode != 0 || !slices.Equal(r.ISR, []int32{1, 2}) || r.PartitionEpoch != 1 || r.LeaderEpoch != 0 {
		t.Fatalf("valid shrink: %+v", r)
	}
	if r := h.alter(1, ep[1], "t", 0, []int32{1, 2, 3}, 0, 0); r.ErrorCode != kerr.InvalidUpdateVersion.Code {
		t.Fatalf("stale partition epoch: %+v", r)
	}
	if r := h.alter(1, ep[1]+100, "t", 0, []int32{1, 2, 3}, 0, 1); r.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("stale broker epoch: %+v", r)
	}
	if r := h.alter(2, ep[2], "t", 0, []int32{1, 2, 3}, 0, 1); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("not the leader: %+v", r)
	}
	h.heartbeat(3, ep[3], h.q.hw, true, false) // 3 asks to be fenced
	if r := h.alter(1, ep[1], "t", 0, []int32{1, 2, 3}, 0, 1); r.ErrorCode != kerr.IneligibleReplica.Code {
		t.Fatalf("fenced ISR member: %+v", r)
	}
	if r := h.alter(1, ep[1], "t", 0, []int32{1, 2}, 1, 1); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("leader epoch from the future: %+v", r)
	}
	if r := h.alter(1, ep[1], "t", 0, []int32{1}, 0, 1); r.ErrorCode != 0 || r.PartitionEpoch != 2 {
		t.Fatalf("second shrink: %+v", r)
	}
}

// TestFailoverDiscardsUncommitted: records not committed when leadership
// is lost are gone from the working state and their requests fail with
// NOT_CONTROLLER; a standby answers NOT_CONTROLLER.
func TestFailoverDiscardsUncommitted(t *testing.T) {
	h := newHarness(t, nil)
	h.up(1)
	h.q.auto = false
	if r := h.register(2, 1, ""); r != nil {
		t.Fatalf("replied before commit: %+v", r)
	}
	var late kmsg.Response
	h.act(func(ctx *sim.Context) {
		req := kmsg.NewPtrBrokerRegistrationRequest()
		req.BrokerID, req.IncarnationID = 3, incarnation(3, 1)
		h.c.Handle(ctx, 3, req, func(r kmsg.Response) { late = r })
	})
	h.q.truncate()
	h.q.leader = raft.LeaderAndEpoch{Leader: 5, Epoch: 2}
	h.act(func(ctx *sim.Context) { h.c.HandleLeaderChange(ctx, h.q.leader) })
	if h.c.Active() || h.c.Epoch() != 2 {
		t.Fatal("still active")
	}
	if r, _ := late.(*kmsg.BrokerRegistrationResponse); r == nil || r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("pending request: %+v", late)
	}
	if _, ok := h.c.Image().Broker(2); ok {
		t.Fatal("uncommitted registration in the committed image")
	}
	if r := h.register(4, 1, ""); r == nil || r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("standby: %+v", r)
	}
	// Back as leader: the working image was rebuilt from the committed one.
	h.q.auto = true
	h.q.leader = raft.LeaderAndEpoch{Leader: 0, Epoch: 3}
	h.act(func(ctx *sim.Context) { h.c.HandleLeaderChange(ctx, h.q.leader) })
	if r := h.register(2, 1, ""); r == nil || r.ErrorCode != 0 || r.BrokerEpoch != h.q.hw-1 {
		t.Fatalf("re-register after failover: %+v (hw %d)", r, h.q.hw)
	}
	if _, ok := h.c.Image().Broker(2); !ok {
		t.Fatal("broker 2 missing")
	}
	// Snapshot then replay gives the same image.
	again, _ := New(DefaultConfig(9), &fakeQuorum{})
	h.act(func(ctx *sim.Context) {
		again.HandleLoadSnapshot(ctx, raft.Snapshot{EndOffset: h.q.hw, Records: h.c.Snapshot()})
	})
	if !again.Image().Equal(h.c.Image()) {
		t.Fatal("snapshot image differs")
	}
}

// TestCreateTopicsPlacement: the striped placer spreads leaders; ISRs are
// the unfenced replicas; validation errors as Kafka's.
func TestCreateTopicsPlacement(t *testing.T) {
	h := newHarness(t, nil)
	h.up(1, 2, 3)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	for _, tc := range []struct {
		name   string
		np, rf int
	}{{"t", 3, 2}, {"big", 1, 4}, {"bad/name", 1, 1}, {"t", 1, 1}} {
		tt := kmsg.NewCreateTopicsRequestTopic()
		tt.Topic, tt.NumPartitions, tt.ReplicationFactor = tc.name, int32(tc.np), int16(tc.rf)
		req.Topics = append(req.Topics, tt)
	}
	r := h.call(req).(*kmsg.CreateTopicsResponse)
	want := []int16{kerr.InvalidRequest.Code, kerr.InvalidReplicationFactor.Code, kerr.InvalidTopicException.Code, kerr.InvalidRequest.Code}
	for i, tr := range r.Topics {
		if tr.ErrorCode != want[i] {
			t.Errorf("topic %d %s: error %d, want %d", i, tr.Topic, tr.ErrorCode, want[i])
		}
	}
	req.Topics = req.Topics[:1]
	r = h.call(req).(*kmsg.CreateTopicsResponse)
	if r.Topics[0].ErrorCode != 0 || r.Topics[0].NumPartitions != 3 || r.Topics[0].ReplicationFactor != 2 {
		t.Fatalf("create t: %+v", r.Topics[0])
	}
	leaders := map[int32]bool{}
	for p := int32(0); p < 3; p++ {
		s := h.partition("t", p)
		if len(s.Replicas) != 2 || s.Replicas[0] == s.Replicas[1] || s.Leader != s.Replicas[0] || !slices.Equal(s.ISR, s.Replicas) {
			t.Fatalf("t-%d: %+v", p, s)
		}
		leaders[s.Leader] = true
	}
	if len(leaders) != 3 {
		t.Fatalf("leaders not spread: %v", leaders)
	}
	if r = h.call(req).(*kmsg.CreateTopicsResponse); r.Topics[0].ErrorCode != kerr.TopicAlreadyExists.Code {
		t.Fatalf("again: %+v", r.Topics[0])
	}
}

func TestAllocateProducerIDs(t *testing.T) {
	h := newHarness(t, nil)
	ep := h.up(1)
	for i := int64(0); i < 2; i++ {
		req := kmsg.NewPtrAllocateProducerIDsRequest()
		req.BrokerID, req.BrokerEpoch = 1, ep[1]
		r := h.call(req).(*kmsg.AllocateProducerIDsResponse)
		if r.ErrorCode != 0 || r.ProducerIDStart != 1000*i || r.ProducerIDLen != 1000 {
			t.Fatalf("block %d: %+v", i, r)
		}
	}
	if h.c.Image().NextProducerID() != 2000 {
		t.Fatal(h.c.Image().NextProducerID())
	}
}

// TestControlledShutdown: WantShutDown moves leaderships away and drops
// the broker from ISRs; ShouldShutDown once it leads nothing.
func TestControlledShutdown(t *testing.T) {
	h := newHarness(t, nil)
	ep := h.up(1, 2)
	h.createTopic("t", []int32{1, 2})
	hb := h.heartbeat(1, ep[1], h.q.hw, false, true)
	if hb.ShouldShutdown || hb.IsFenced {
		t.Fatalf("first shutdown heartbeat: %+v", hb)
	}
	if p := h.partition("t", 0); p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) {
		t.Fatalf("t-0: %+v", p)
	}
	h.heartbeat(2, ep[2], h.q.hw, false, false)
	if hb = h.heartbeat(1, ep[1], h.q.hw, false, true); !hb.ShouldShutdown {
		t.Fatalf("second shutdown heartbeat: %+v", hb)
	}
}
