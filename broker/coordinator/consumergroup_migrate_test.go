package coordinator

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// classicPair is a Stable classic group "g" of two members a and b, range
// over t's 4 partitions (a: t-0 t-1, b: t-2 t-3), at generation 1.
func classicPair(t *testing.T, policy string) (*harness, string, string) {
	h, _ := newConsumerHarness(t, func(c *Config) {
		c.Consumer.MigrationPolicy = policy
		c.InitialRebalanceDelay = 3 * sim.Second
		c.MinSessionTimeout, c.MaxSessionTimeout = sim.Second, 300*sim.Second
	})
	a, ja := h.joinFully("g", "t")
	b, jb := h.joinFully("g", "t")
	h.advance(6 * sim.Second)
	if ja.resp == nil || jb.resp == nil || ja.resp.Generation != jb.resp.Generation {
		t.Fatalf("classic joins: %+v %+v", ja.resp, jb.resp)
	}
	leader, lead := a, ja
	if jb.resp.LeaderID == b {
		leader, lead = b, jb
	}
	assign := rangeAssign(t, lead.resp, map[string]int32{"t": 4})
	other := a
	if leader == a {
		other = b
	}
	gen := ja.resp.Generation
	// The follower's sync parks until the leader's.
	var follower *kmsg.SyncGroupResponse
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = "g", other, gen
	h.c.SyncGroup(h.now, req, func(r *kmsg.SyncGroupResponse) { follower = r })
	if s := h.sync("g", leader, gen, assign); s.ErrorCode != 0 || follower == nil || follower.ErrorCode != 0 {
		t.Fatalf("syncs: %+v %+v", s, follower)
	}
	return h, a, b
}

// TestKIP848UpgradeAndClassicMembers (KIP-848 online upgrade,
// group.consumer.migration.policy=bidirectional): a consumer-protocol
// member joining a classic group converts it; the classic members keep
// their partitions at the classic generation, are asked to rejoin
// (REBALANCE_IN_PROGRESS), rejoin through JoinGroup into the consumer
// group and are handed their new partitions by SyncGroup; no partition is
// ever held twice.
func TestKIP848UpgradeAndClassicMembers(t *testing.T) {
	h, a, b := classicPair(t, MigrationBidirectional)
	_, gen, _, _, _ := h.c.Group("g")
	r := h.cgHeartbeat(t, hb{member: "C", epoch: 0})
	if r.ErrorCode != 0 {
		t.Fatalf("consumer member joining the classic group: error %d", r.ErrorCode)
	}
	st, epoch, _, ms, ok := h.c.ConsumerGroupState("g")
	if !ok || len(ms) != 3 || epoch != gen+1 {
		t.Fatalf("after the upgrade: %s epoch %d (classic generation %d), %d members", st, epoch, gen, len(ms))
	}
	checkHeldOnce(t, h)
	if cst, _, _, members, _ := h.c.Group("g"); cst != Empty || len(members) != 0 {
		t.Fatalf("the classic group after the upgrade: %v %v", cst, members)
	}
	// A classic member's heartbeat: behind the group epoch, rejoin.
	if code := h.heartbeat("g", a, gen); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("classic heartbeat after the upgrade: %d, want REBALANCE_IN_PROGRESS", code)
	}
	if code := h.heartbeat("g", a, gen+5); code != kerr.IllegalGeneration.Code {
		t.Fatalf("classic heartbeat at a wrong generation: %d, want ILLEGAL_GENERATION", code)
	}
	// Eager rejoins (owning nothing): each gets its target minus what
	// another still holds.
	for _, id := range []string{a, b} {
		j := h.join("g", id, "t")
		if j.resp == nil || j.resp.ErrorCode != 0 || j.resp.LeaderID != "" || j.resp.MemberID != id {
			t.Fatalf("classic rejoin of %s: %+v", id, j.resp)
		}
		s := h.sync("g", id, j.resp.Generation, nil)
		if s.ErrorCode != 0 {
			t.Fatalf("classic sync of %s: error %d", id, s.ErrorCode)
		}
		checkHeldOnce(t, h)
	}
	// The consumer member acknowledges (owns nothing yet), gets the rest.
	r = h.cgHeartbeat(t, hb{member: "C", epoch: r.MemberEpoch, owned: assigned(r)})
	if r.ErrorCode != 0 {
		t.Fatalf("consumer member heartbeat: %d", r.ErrorCode)
	}
	checkHeldOnce(t, h)
	// OffsetCommit of a classic member: by generation, v8 accepted.
	_, _, _, ms, _ = h.c.ConsumerGroupState("g")
	i := slices.IndexFunc(ms, func(m ConsumerMember) bool { return m.ID == a })
	if code, _ := h.commitOffset("g", a, ms[i].Epoch, "t", 0, 7); code != 0 {
		t.Fatalf("classic member's commit at its epoch: %d", code)
	}
	if code, _ := h.commitOffset("g", a, ms[i].Epoch-1, "t", 0, 7); code != kerr.IllegalGeneration.Code {
		t.Fatalf("classic member's commit at an old epoch: %d, want ILLEGAL_GENERATION", code)
	}
	// A failover keeps the classic members classic (ClassicMemberMetadata).
	h.c.Resign(h.now, 0)
	h.lead(0)
	if code := h.heartbeat("g", b, ms[slices.IndexFunc(ms, func(m ConsumerMember) bool { return m.ID == b })].Epoch); code == kerr.UnknownMemberID.Code {
		t.Fatalf("classic member after a failover: UNKNOWN_MEMBER_ID (its classic metadata was not replayed)")
	}
}

// TestKIP848UpgradeRefused: a policy without the upgrade (disabled,
// downgrade) keeps the classic group: GROUP_ID_NOT_FOUND.
func TestKIP848UpgradeRefused(t *testing.T) {
	for _, p := range []string{MigrationDisabled, MigrationDowngrade} {
		h, _, _ := classicPair(t, p)
		if r := h.cgHeartbeat(t, hb{member: "C", epoch: 0}); r.ErrorCode != kerr.GroupIDNotFound.Code {
			t.Errorf("policy %s: error %d, want GROUP_ID_NOT_FOUND", p, r.ErrorCode)
		}
	}
}

// TestKIP848Downgrade: when the last consumer-protocol member leaves a
// group whose other members use the classic protocol, the group becomes
// classic again at generation = group epoch, the members keep their
// partitions as their assignment, and it rebalances; under
// policy=upgrade it stays a consumer group.
func TestKIP848Downgrade(t *testing.T) {
	for _, p := range []string{MigrationBidirectional, MigrationUpgrade} {
		h, a, _ := classicPair(t, p)
		r := h.cgHeartbeat(t, hb{member: "C", epoch: 0})
		_, epoch, _, _, _ := h.c.ConsumerGroupState("g")
		if l := h.cgHeartbeat(t, hb{member: "C", epoch: -1}); l.ErrorCode != 0 {
			t.Fatalf("policy %s: leave: %d", p, l.ErrorCode)
		}
		_ = r
		_, _, _, _, isConsumer := h.c.ConsumerGroupState("g")
		st, gen, _, members, _ := h.c.Group("g")
		if p == MigrationUpgrade {
			if !isConsumer {
				t.Fatalf("policy upgrade: downgraded")
			}
			continue
		}
		if isConsumer || st != PreparingRebalance || len(members) != 2 || gen < epoch {
			t.Fatalf("policy %s after the leave: consumer group %v, classic %v gen %d (epoch was %d) members %v", p, isConsumer, st, gen, epoch, members)
		}
		// The classic members rejoin the classic group.
		if code := h.heartbeat("g", a, gen); code != kerr.RebalanceInProgress.Code {
			t.Fatalf("classic heartbeat after the downgrade: %d, want REBALANCE_IN_PROGRESS", code)
		}
		// The records: consumer tombstones, then a GroupMetadata value.
		log := h.log[0]
		d, err := Decode(log[len(log)-1])
		if err != nil || d.GroupValue == nil || d.GroupValue.Generation != gen || len(d.GroupValue.Members) != 2 {
			t.Fatalf("last record: %+v %v", d, err)
		}
		// A new coordinator loads a classic group.
		h.c.Resign(h.now, 0)
		h.lead(0)
		if _, _, _, _, ok := h.c.ConsumerGroupState("g"); ok {
			t.Fatalf("after a failover: still a consumer group")
		}
		if st, _, _, members, _ := h.c.Group("g"); st == Dead || len(members) != 2 {
			t.Fatalf("after a failover: %v %v", st, members)
		}
	}
}

// TestClassicMemberMetadataRecord: the ClassicMemberMetadata tag round-trips.
func TestClassicMemberMetadataRecord(t *testing.T) {
	cm := &ClassicMemberMetadata{SessionTimeoutMillis: 10000, Protocols: []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: assignor.EncodeSubscription([]string{"t"}, nil)}}}
	r := ConsumerRecord{Type: cgMemberMetadata, Group: "g", Member: "m", ClientID: "c", ClientHost: "/c", Subscribed: []string{"t"}, RebalanceMillis: 5000, Classic: cm}
	got, err := decodeConsumerRecord(encodeConsumerRecord(r, 0))
	if err != nil || got.Classic == nil || got.Classic.SessionTimeoutMillis != 10000 || len(got.Classic.Protocols) != 1 ||
		string(got.Classic.Protocols[0].Metadata) != string(cm.Protocols[0].Metadata) || got.RebalanceMillis != 5000 {
		t.Fatalf("round trip: %+v %v", got, err)
	}
}
