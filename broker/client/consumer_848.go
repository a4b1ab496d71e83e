package client

// This file is the consumer's membership under group.protocol=consumer
// (KIP-848, Kafka 4.0's AsyncKafkaConsumer with its
// ConsumerMembershipManager and ConsumerHeartbeatRequestManager): no
// JoinGroup or SyncGroup; the member sends ConsumerGroupHeartbeat every
// heartbeat interval the coordinator gives, carrying its subscription and
// the partitions it owns, and the answer carries its member epoch and,
// when it changed, its target assignment. The member reconciles towards
// the target inside Poll (the application's thread, where Kafka runs the
// rebalance callbacks):
//
//  1. partitions no longer assigned stop being fetched; with
//     enable.auto.commit their positions are committed, and the
//     reconciliation waits for the commit (autoCommitSyncBeforeRevocation);
//  2. OnRevoked runs with them (the place for the application's own commit:
//     the reconciliation waits for commits started there too);
//  3. the assignment becomes the target and OnAssigned runs with the
//     partitions added;
//  4. a heartbeat goes out at once: its owned partitions acknowledge the
//     revocation, and the coordinator hands the partitions to their next
//     owners only then.
//
// Partitions the member keeps are fetched and polled throughout: there is
// no stop-the-world rebalance.
//
// Errors: FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID lose the partitions
// (OnLost) and rejoin at epoch 0; NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE and a lost answer find the coordinator again;
// COORDINATOR_LOAD_IN_PROGRESS retries after retry.backoff.ms;
// GROUP_MAX_SIZE_REACHED, UNRELEASED_INSTANCE_ID, UNSUPPORTED_ASSIGNOR,
// UNSUPPORTED_VERSION and INVALID_REQUEST are fatal (returned by Poll).
// max.poll.interval.ms passed: the member leaves (epoch -1), its
// partitions lost, and rejoins at the next Poll. Close leaves with epoch -1
// after the auto-commit.
//
// Simplifications vs Kafka: the member id is the coordinator's (Kafka 4.0
// clients generate a Uuid, KIP-1082; the v0 protocol lets the coordinator
// do it); every heartbeat carries the full subscription and owned
// partitions (Kafka sends them only when they changed); no regular
// expression subscriptions, no rack.
//
// Static membership (group.instance.id, KIP-345 under KIP-848): every
// heartbeat carries the instance id; Close and max.poll.interval.ms leave
// with epoch -2 (ConsumerMembershipManager.leaveGroupEpoch), so the
// coordinator keeps the member's partitions for its successor until the
// session times out; a restarted process joins at epoch 0 with the instance
// id and takes its predecessor's place and assignment. FENCED_INSTANCE_ID
// (a successor took the instance over) is fatal, as under the classic
// protocol (consumer_static.go); so is UNRELEASED_INSTANCE_ID (the instance
// id is still held by a member that did not leave), as Kafka's
// AsyncKafkaConsumer has it.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// state848 is the member's KIP-848 state.
type state848 struct {
	epoch       int32 // 0 before joining; -1 after leaving
	interval    sim.Duration
	inflight    bool
	nextAt      sim.Time
	target      []TopicPartition // the last assignment the coordinator gave, sorted
	hasTarget   bool
	reconciling bool // revocation started: waiting for commits
	revoking    []TopicPartition
	resets      int // fencings and leaves: a heartbeat answered after one is stale
}

// consumerProtocol reports whether the consumer runs group.protocol=consumer.
func (c *Consumer) consumerProtocol() bool {
	return c.cfg.GroupProtocol == config.GroupProtocolConsumer
}

// runGroup848 does what KIP-848 membership needs now.
func (c *Consumer) runGroup848(ctx *sim.Context) {
	g, s := &c.group, &c.g848
	now := ctx.Now()
	if g.memberID != "" && s.epoch > 0 && now.Sub(c.lastPoll) > c.cfg.MaxPollInterval && !c.pollExpiry {
		ctx.Log("consumer-poll-timeout", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID))
		c.pollExpiry = true
		c.leave848(ctx, "max.poll.interval.ms", true)
		return
	}
	if c.pollExpiry || g.instanceFenced {
		return
	}
	if c.polling {
		c.reconcile848(ctx)
	}
	if !c.ensureCoordinator(ctx) || s.inflight || now < s.nextAt || now < g.retryAt {
		return
	}
	c.heartbeat848(ctx)
}

// reconcile848 moves the assignment towards the target (see the file
// comment); it runs inside Poll only.
func (c *Consumer) reconcile848(ctx *sim.Context) {
	s := &c.g848
	if !s.hasTarget {
		return
	}
	owned := c.Assignment()
	if !s.reconciling {
		var revoked []TopicPartition
		for _, tp := range owned {
			if !slices.Contains(s.target, tp) {
				revoked = append(revoked, tp)
			}
		}
		if len(revoked) > 0 {
			s.reconciling, s.revoking = true, revoked
			ctx.Log("consumer-revoke", sim.S("client-id", c.cfg.ClientID), sim.I("partitions", int64(len(revoked))), sim.S("lost", "false"),
				sim.S("protocol", "consumer"), sim.I("epoch", int64(s.epoch)))
			if c.cfg.EnableAutoCommit {
				var offs []TopicPartitionOffset
				for _, o := range c.positions() {
					if slices.Contains(revoked, o.TopicPartition) {
						offs = append(offs, o)
					}
				}
				if len(offs) > 0 {
					c.commit(ctx, offs, true, nil)
				}
			}
			if c.listener.OnRevoked != nil {
				c.listener.OnRevoked(ctx, revoked)
			}
			// The revoked partitions are fetched and polled no more; the
			// heartbeats keep listing them as owned (s.revoking) until the
			// commits started above have landed.
			var kept []TopicPartition
			for _, tp := range owned {
				if !slices.Contains(revoked, tp) {
					kept = append(kept, tp)
				}
			}
			c.setAssignment(kept)
		}
	}
	if len(c.commits) > 0 {
		return // the revoked partitions' commits must land while they are still owned
	}
	var added []TopicPartition
	for _, tp := range s.target {
		if !slices.Contains(owned, tp) && !slices.Contains(s.revoking, tp) {
			added = append(added, tp)
		}
	}
	changed := s.reconciling || len(added) > 0
	s.reconciling, s.revoking = false, nil
	for _, tp := range c.Assignment() {
		if !slices.Contains(s.target, tp) {
			// The target changed while the last revocation was under way:
			// revoke these too before taking the rest.
			c.reconcile848(ctx)
			return
		}
	}
	s.hasTarget = false
	if !changed {
		return
	}
	c.setAssignment(s.target)
	ctx.Log("consumer-assigned", sim.S("client-id", c.cfg.ClientID), sim.S("member", c.group.memberID), sim.I("generation", int64(s.epoch)),
		sim.S("partitions", tpList(s.target)), sim.S("protocol", "consumer"))
	if c.listener.OnAssigned != nil {
		c.listener.OnAssigned(ctx, added)
	}
	s.nextAt = 0 // acknowledge at once
}

// heartbeat848 sends ConsumerGroupHeartbeat.
func (c *Consumer) heartbeat848(ctx *sim.Context) {
	g, s := &c.group, &c.g848
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = c.cfg.GroupID, g.memberID, s.epoch
	req.RebalanceTimeoutMillis = int32(c.cfg.RebalanceTimeout.Milliseconds())
	req.InstanceID = c.instanceID()
	req.SubscribedTopicNames = slices.Clone(c.topics)
	if a := string(c.cfg.GroupRemoteAssignor); a != "" {
		req.ServerAssignor = &a
	}
	if s.epoch > 0 {
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		owned := append(c.Assignment(), s.revoking...)
		slices.SortFunc(owned, compareTP)
		for _, tp := range owned {
			t := c.meta.topics[tp.Topic]
			if t == nil {
				continue
			}
			if n := len(req.Topics); n == 0 || req.Topics[n-1].TopicID != t.id {
				req.Topics = append(req.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t.id})
			}
			req.Topics[len(req.Topics)-1].Partitions = append(req.Topics[len(req.Topics)-1].Partitions, tp.Partition)
		}
	}
	if s.epoch == 0 {
		ctx.Log("consumer-join", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID), sim.I("coordinator", int64(g.coordinator)), sim.S("protocol", "consumer"))
	}
	s.inflight = true
	s.nextAt = ctx.Now().Add(max(s.interval, c.cfg.RetryBackoff))
	resets, sentEpoch := s.resets, s.epoch
	c.call(ctx, g.coordinator, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
		s.inflight = false
		if s.resets != resets {
			return
		}
		r, _ := resp.(*kmsg.ConsumerGroupHeartbeatResponse)
		if err != nil || r == nil {
			c.coordinatorLost(ctx, "ConsumerGroupHeartbeat: no answer")
			return
		}
		c.heartbeat848Done(ctx, sentEpoch, r)
	})
}

func (c *Consumer) heartbeat848Done(ctx *sim.Context, sentEpoch int32, r *kmsg.ConsumerGroupHeartbeatResponse) {
	g, s := &c.group, &c.g848
	switch err := kerr.ErrorForCode(r.ErrorCode); err {
	case nil:
	case kerr.FencedMemberEpoch, kerr.UnknownMemberID, kerr.GroupIDNotFound:
		c.fenced848(ctx, "ConsumerGroupHeartbeat: "+err.Error())
		return
	case kerr.NotCoordinator, kerr.CoordinatorNotAvailable:
		c.coordinatorLost(ctx, "ConsumerGroupHeartbeat: "+err.Error())
		return
	case kerr.CoordinatorLoadInProgress:
		g.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
		return
	case kerr.FencedInstanceID:
		c.lose848(ctx)
		c.fencedInstance(ctx, "ConsumerGroupHeartbeat")
		s.epoch = -1
		c.fatal = err
		return
	default: // GROUP_MAX_SIZE_REACHED, UNRELEASED_INSTANCE_ID, UNSUPPORTED_*, INVALID_REQUEST
		if c.fatal == nil {
			ctx.Log("consumer-fatal", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID), sim.S("error", err.Error()))
		}
		c.fatal = err
		g.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
		return
	}
	if r.MemberID != nil {
		g.memberID = *r.MemberID
	}
	if r.MemberEpoch != s.epoch {
		ctx.Log("consumer-member-epoch", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID), sim.I("epoch", int64(r.MemberEpoch)))
	}
	s.epoch = r.MemberEpoch
	g.generation = r.MemberEpoch
	g.synced, g.needRejoin, g.joining = r.MemberEpoch > 0, false, false
	s.interval = sim.Ms(int64(r.HeartbeatIntervalMillis))
	s.nextAt = ctx.Now().Add(s.interval)
	if sentEpoch == 0 {
		c.autoNext = ctx.Now().Add(c.cfg.AutoCommitInterval)
	}
	if r.Assignment == nil {
		return
	}
	var target []TopicPartition
	for _, t := range r.Assignment.Topics {
		name, ok := c.topicName(t.TopicID)
		if !ok {
			c.meta.needUpdate = true // a topic this member does not know yet
			continue
		}
		for _, p := range t.Partitions {
			target = append(target, TopicPartition{Topic: name, Partition: p})
		}
	}
	slices.SortFunc(target, func(a, b TopicPartition) int { return compareTP(a, b) })
	if !slices.Equal(target, s.target) || !s.hasTarget {
		s.target, s.hasTarget = target, true
	}
}

func (c *Consumer) topicName(id [16]byte) (string, bool) {
	for _, name := range c.meta.wanted {
		if t := c.meta.topics[name]; t != nil && t.id == id {
			return name, true
		}
	}
	return "", false
}

// fenced848 handles FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID: the
// partitions are lost and the member rejoins at epoch 0.
func (c *Consumer) fenced848(ctx *sim.Context, why string) {
	g, s := &c.group, &c.g848
	ctx.Log("consumer-fenced", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID), sim.I("generation", int64(s.epoch)), sim.S("reason", why))
	c.lose848(ctx)
	s.epoch, g.generation, g.synced = 0, 0, false
	s.nextAt = 0
}

// lose848 drops the assignment as lost (OnLost), forgetting any target.
func (c *Consumer) lose848(ctx *sim.Context) {
	s := &c.g848
	if tps := c.Assignment(); len(tps) > 0 {
		ctx.Log("consumer-revoke", sim.S("client-id", c.cfg.ClientID), sim.I("partitions", int64(len(tps))), sim.S("lost", "true"), sim.S("protocol", "consumer"))
		if c.listener.OnLost != nil {
			c.listener.OnLost(ctx, tps)
		}
	}
	c.setAssignment(nil)
	s.target, s.hasTarget, s.reconciling, s.revoking = nil, false, false, nil
	s.resets++
	s.inflight = false
}

// leave848 leaves the group with epoch -1: after max.poll.interval.ms
// (lost: the partitions are lost) or at Close (revoked after the
// auto-commit Close made).
func (c *Consumer) leave848(ctx *sim.Context, why string, lost bool) {
	g, s := &c.group, &c.g848
	if g.coordinator >= 0 && g.memberID != "" && s.epoch > 0 {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = c.cfg.GroupID, g.memberID, -1
		if req.InstanceID = c.instanceID(); req.InstanceID != nil {
			req.MemberEpoch = -2 // a static member's temporary leave
		}
		c.call(ctx, g.coordinator, req, func(*sim.Context, kmsg.Response, error) {})
	}
	ctx.Log("consumer-leave", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID), sim.S("reason", why))
	if !lost && c.listener.OnRevoked != nil && len(c.parts) > 0 {
		c.listener.OnRevoked(ctx, c.Assignment())
		c.setAssignment(nil)
	}
	c.lose848(ctx)
	s.epoch, g.generation, g.synced = 0, -1, false
	g.memberID = ""
	s.nextAt = 0
}

func compareTP(a, b TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition - b.Partition)
}
