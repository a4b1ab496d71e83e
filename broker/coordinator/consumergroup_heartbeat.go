package coordinator

// This file serves ConsumerGroupHeartbeat (api key 68, v0-v1) for the
// consumer group protocol (KIP-848): Kafka 4.0's
// GroupMetadataManager.consumerGroupHeartbeat and consumerGroupLeave, and
// the member timers (session timeout: group.consumer.session.timeout.ms;
// rebalance timeout: the member's RebalanceTimeoutMs, counted from the
// revocation it was asked for). Every state change is written to
// __consumer_offsets (consumergroup_records.go) and the heartbeat is
// answered once the records are committed.
//
// Simplifications vs Kafka:
//   - The in-memory state changes at once; Kafka's timeline state would be
//     reverted if the append failed. Here a failed append is answered with
//     its error and the change stays (the usual cause, a lost leadership,
//     unloads the group anyway).
//   - Regular-expression subscriptions: consumergroup_regex.go. No racks.
//     Classic members in a consumer group, the upgrade and the downgrade
//     (group.consumer.migration.policy): consumergroup_migrate.go.
//   - Static members (InstanceId) as Kafka 4.1's
//     getOrMaybeSubscribeStaticConsumerGroupMember: a successor joins only
//     once its predecessor left with epoch -2 (else UNRELEASED_INSTANCE_ID)
//     and takes its place at epoch 0 with its partitions; a request of the
//     replaced member id is FENCED_INSTANCE_ID.
//   - A member that rejoins with epoch 0 under an id the group still has
//     (its join response was lost) restarts from an empty assignment.
//   - Member ids the coordinator generates are "<group>-<n>" with a
//     per-coordinator counter stamped with the broker id (Kafka: a random
//     Uuid; from 4.0 the client generates them, KIP-1082).

import (
	"fmt"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"math"
	"regexp"
	"slices"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerConfig is the coordinator's configuration of the consumer group
// protocol.
type ConsumerConfig struct {
	// Enabled is whether group.coordinator.rebalance.protocols lists
	// "consumer" and the group.version feature is at least 1 (Kafka 4.0's
	// defaults: classic,consumer and 1). Otherwise ConsumerGroupHeartbeat
	// answers UNSUPPORTED_VERSION.
	Enabled bool
	// SessionTimeout is group.consumer.session.timeout.ms (45000).
	SessionTimeout sim.Duration
	// HeartbeatInterval is group.consumer.heartbeat.interval.ms (5000).
	HeartbeatInterval sim.Duration
	// MaxSize is group.consumer.max.size (Integer.MAX_VALUE).
	MaxSize int
	// Assignors is group.consumer.assignors by name; the first is the
	// default (uniform, range).
	Assignors []string
	// MigrationPolicy is group.consumer.migration.policy: bidirectional
	// (Kafka 4.0's default; "" counts as it), upgrade, downgrade, disabled.
	MigrationPolicy string
}

// DefaultConsumerConfig returns Kafka 4.0's defaults, the protocol off.
func DefaultConsumerConfig() ConsumerConfig {
	return ConsumerConfig{SessionTimeout: 45 * sim.Second, HeartbeatInterval: 5 * sim.Second,
		MaxSize: math.MaxInt32, Assignors: []string{"uniform", "range"}, MigrationPolicy: MigrationBidirectional}
}

// Validate reports the first setting outside its range.
func (c ConsumerConfig) Validate() error {
	switch {
	case c.SessionTimeout <= 0:
		return fmt.Errorf("group.consumer.session.timeout.ms %d: must be > 0", c.SessionTimeout.Milliseconds())
	case c.HeartbeatInterval <= 0 || c.HeartbeatInterval >= c.SessionTimeout:
		return fmt.Errorf("group.consumer.heartbeat.interval.ms %d: must be > 0 and below group.consumer.session.timeout.ms %d",
			c.HeartbeatInterval.Milliseconds(), c.SessionTimeout.Milliseconds())
	case c.MaxSize < 1:
		return fmt.Errorf("group.consumer.max.size %d: must be >= 1", c.MaxSize)
	case len(c.Assignors) == 0:
		return fmt.Errorf("group.consumer.assignors: empty (allowed: uniform, range)")
	case !slices.Contains([]string{"", MigrationBidirectional, MigrationUpgrade, MigrationDowngrade, MigrationDisabled}, c.MigrationPolicy):
		return fmt.Errorf("group.consumer.migration.policy %q: allowed: bidirectional, upgrade, downgrade, disabled", c.MigrationPolicy)
	}
	for _, a := range c.Assignors {
		if _, err := assignor.ServerAssignorByName(a); err != nil {
			return fmt.Errorf("group.consumer.assignors: %w", err)
		}
	}
	return nil
}

// ConsumerGroupHeartbeat handles a ConsumerGroupHeartbeat request; reply
// runs once, now or when the records it wrote are committed.
func (c *Coordinator) ConsumerGroupHeartbeat(now sim.Time, req *kmsg.ConsumerGroupHeartbeatRequest, reply func(*kmsg.ConsumerGroupHeartbeatResponse)) {
	fail := func(err *kerr.Error, msg string) {
		resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
		resp.ErrorCode = err.Code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		reply(resp)
	}
	if !c.cfg.Consumer.Enabled {
		fail(kerr.UnsupportedVersion, "the consumer group protocol is not enabled (group.coordinator.rebalance.protocols)")
		return
	}
	if err := c.checkGroup(req.Group); err != nil {
		fail(err, "")
		return
	}
	if msg := validateHeartbeat(req); msg != "" {
		fail(kerr.InvalidRequest, msg)
		return
	}
	var recs []ConsumerRecord
	if cl := c.groups[req.Group]; cl != nil && len(cl.members) > 0 {
		// A classic group with members: KIP-848's online upgrade, when a
		// member joins and the policy lets it (consumergroup_migrate.go).
		why, ok := c.validateOnlineUpgrade(cl)
		if req.MemberEpoch != joinEpoch {
			why, ok = "only a joining member (epoch 0) converts it", false
		}
		if !ok {
			fail(kerr.GroupIDNotFound, notConsumerGroup(req.Group, why))
			return
		}
		_, recs = c.convertToConsumerGroup(now, cl)
	}
	if req.MemberEpoch == leaveEpoch || req.MemberEpoch == leaveStaticEpoch {
		c.consumerGroupLeave(now, req, reply, fail)
		return
	}
	g := c.cgroups[req.Group]
	if g == nil {
		if req.MemberEpoch != joinEpoch {
			fail(kerr.GroupIDNotFound, fmt.Sprintf("Consumer group %s not found.", req.Group))
			return
		}
		g = newConsumerGroup(req.Group, c.PartitionFor(req.Group))
		if cl := c.groups[req.Group]; cl != nil && cl.generation > 0 {
			// An empty classic group gives way (maybeDeleteEmptyClassicGroup):
			// its tombstone, and the generations start over.
			recs = append(recs, ConsumerRecord{Type: classicGroupType, Group: req.Group, Tombstone: true})
			cl.generation, cl.protocolType, cl.protocol, cl.leader = 0, "", "", ""
		}
		c.env.Log(KindGenerationsRestart, sim.S("group", req.Group), sim.S("protocol", "consumer"))
		g.assignBeforeRevoke = c.cfg.Mutants.On(mutant.AssignBeforeRevoke)
		c.cgroups[req.Group] = g
	}
	bumped := false
	m := g.members[req.MemberID]
	if m != nil && m.classic != nil {
		fail(kerr.UnknownMemberID, fmt.Sprintf("Member %s uses the classic protocol.", req.MemberID))
		return
	}
	if req.InstanceID != nil {
		// A static member (KIP-345 under KIP-848) is found by its instance
		// id (getOrMaybeSubscribeStaticConsumerGroupMember).
		old := g.staticMember(*req.InstanceID)
		switch {
		case req.MemberEpoch == joinEpoch && old != nil:
			if old.epoch != leaveStaticEpoch {
				fail(kerr.UnreleasedInstanceID, fmt.Sprintf("Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.",
					req.MemberID, *req.InstanceID, old.id))
				return
			}
			// The successor takes over the departed instance: its
			// subscription, target and assigned partitions, under its
			// own member id at epoch 0 (replaceMember).
			recs = append(recs, c.removeConsumerMember(g, old, false)...)
			nm := *old
			nm.id = req.MemberID
			if nm.id == "" {
				nm.id = c.newConsumerMemberID(g, now)
			}
			nm.epoch, nm.previousEpoch, nm.state, nm.pending = 0, 0, MemberStable, nil
			g.members[nm.id] = &nm
			g.hold(&nm)
			m = &nm
			ids := c.topicIDs(g)
			recs = append(recs, m.metadataRecord(g.id), g.targetRecord(m, ids), g.currentRecord(m, ids))
			c.env.Log("consumer-static-member-replaced", sim.S("group", g.id), sim.S("instance", *req.InstanceID), sim.S("old", old.id), sim.S("member", m.id))
		case req.MemberEpoch != joinEpoch && old == nil:
			fail(kerr.UnknownMemberID, fmt.Sprintf("Instance id %s is unknown.", *req.InstanceID))
			return
		case req.MemberEpoch != joinEpoch && old.id != req.MemberID:
			fail(kerr.FencedInstanceID, fmt.Sprintf("Static member %s with instance id %s was fenced by member %s.", req.MemberID, *req.InstanceID, old.id))
			return
		}
	}
	switch {
	case req.MemberEpoch == joinEpoch:
		if m != nil && m.instanceID == "" {
			// A rejoin under a known id: start over from nothing.
			g.release(m)
			m.assigned, m.pending, m.state, m.epoch, m.previousEpoch = nil, nil, MemberStable, 0, 0
		}
		if m == nil {
			if len(g.members) >= c.cfg.Consumer.MaxSize {
				fail(kerr.GroupMaxSizeReached, fmt.Sprintf("The consumer group has reached its maximum capacity of %d members.", c.cfg.Consumer.MaxSize))
				return
			}
			id := req.MemberID
			if id == "" {
				id = c.newConsumerMemberID(g, now)
			}
			m = &cgMember{id: id}
			g.members[id] = m
			bumped = true
		}
	case m == nil:
		fail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group))
		return
	case req.MemberEpoch != m.epoch:
		// A heartbeat whose previous response was lost: the member may
		// still be at the previous epoch, owning no more than it has.
		// (Kafka's throwIfMemberEpochIsInvalid: owned partitions not sent
		// count as not a subset.)
		if req.MemberEpoch > m.epoch || req.MemberEpoch != m.previousEpoch || req.Topics == nil || !subset(ownedOf(req, g), m.assigned) {
			fail(kerr.FencedMemberEpoch, fmt.Sprintf("The consumer group member has a greater member epoch (%d) than the one known by the member (%d).", m.epoch, req.MemberEpoch))
			return
		}
	}
	// Update the member's metadata.
	changedMeta := false
	if req.MemberEpoch == joinEpoch {
		changedMeta = true
		m.clientID = "consumer"
		if req.InstanceID != nil {
			m.instanceID = *req.InstanceID
		}
	}
	if req.RackID != nil && *req.RackID != m.rackID {
		m.rackID, changedMeta = *req.RackID, true
	}
	if req.RebalanceTimeoutMillis > 0 && sim.Ms(int64(req.RebalanceTimeoutMillis)) != m.rebalanceTimeout {
		m.rebalanceTimeout, changedMeta = sim.Ms(int64(req.RebalanceTimeoutMillis)), true
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != m.serverAssignor {
		if _, err := assignor.ServerAssignorByName(*req.ServerAssignor); err != nil || !slices.Contains(c.cfg.Consumer.Assignors, *req.ServerAssignor) {
			fail(kerr.UnsupportedAssignor, fmt.Sprintf("ServerAssignor %s is not supported. Supported assignors: %v.", *req.ServerAssignor, c.cfg.Consumer.Assignors))
			return
		}
		m.serverAssignor, changedMeta, bumped = *req.ServerAssignor, true, true
	}
	if req.SubscribedTopicNames != nil {
		names := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(names)
		if names = slices.Compact(names); !slices.Equal(names, m.names) {
			m.names, changedMeta = names, true
		}
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != m.regex {
		if _, err := regexp.Compile(*req.SubscribedTopicRegex); err != nil {
			fail(kerr.InvalidRegularExpression, fmt.Sprintf("SubscribedTopicRegex %q does not compile: %v.", *req.SubscribedTopicRegex, err))
			return
		}
		m.regex, changedMeta = *req.SubscribedTopicRegex, true
	}
	if topics := c.resolveSubscription(m.names, m.regex); !slices.Equal(topics, m.topics) {
		m.topics, bumped = topics, true
	}
	if c.refreshRegexes(g) {
		bumped = true // another member's expression matches other topics now
	}
	if changedMeta {
		recs = append(recs, m.metadataRecord(g.id))
	}
	// The subscribed topics' metadata: a change bumps the group epoch.
	if meta := c.subscribedMetadata(g); !slices.Equal(meta, g.topics) {
		g.topics, bumped = meta, true
		recs = append(recs, ConsumerRecord{Type: cgPartitionMetadata, Group: g.id, Topics: meta})
	}
	if bumped {
		g.epoch++
		recs = append(recs, ConsumerRecord{Type: cgMetadataKey, Group: g.id, Epoch: g.epoch})
		c.env.Log("consumer-group-epoch", sim.S("group", g.id), sim.I("epoch", int64(g.epoch)), sim.S("member", m.id))
	}
	ids := c.topicIDs(g)
	if g.epoch > g.assignmentEpoch {
		recs = append(recs, c.assignTarget(g, ids)...)
	}
	// Reconcile the member.
	owned, sent := ownedOf(req, g), req.Topics != nil
	before := slices.Clone(m.assigned)
	if g.reconcile(m, owned, sent) {
		recs = append(recs, g.currentRecord(m, ids))
		c.env.Log("consumer-member-reconciled", sim.S("group", g.id), sim.S("member", m.id), sim.I("epoch", int64(m.epoch)),
			sim.S("state", m.state.String()), sim.I("assigned", int64(len(m.assigned))), sim.I("revoking", int64(len(m.pending))))
	}
	m.sessionDeadline = now.Add(c.cfg.Consumer.SessionTimeout)
	switch {
	case m.state != MemberUnrevokedPartitions:
		m.rebalanceDeadline = 0
	case m.rebalanceDeadline == 0:
		m.rebalanceDeadline = now.Add(m.rebalanceTimeout)
	}
	resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	id := m.id
	resp.MemberID, resp.MemberEpoch = &id, m.epoch
	resp.HeartbeatIntervalMillis = int32(c.cfg.Consumer.HeartbeatInterval.Milliseconds())
	if req.MemberEpoch == joinEpoch || !slices.Equal(before, m.assigned) || (sent && !slices.Equal(owned, m.assigned)) {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, p := range toIDPartitions(m.assigned, ids) {
			a.Topics = append(a.Topics, kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{TopicID: p.ID, Partitions: p.Partitions})
		}
		resp.Assignment = &a
	}
	c.appendConsumerRecords(g, recs, func(err *kerr.Error) {
		if err != nil {
			fail(err, "")
			return
		}
		reply(resp)
	})
}

// validateHeartbeat is throwIfConsumerGroupHeartbeatRequestIsInvalid.
func validateHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) string {
	switch {
	case req.Group == "":
		return "GroupId can't be empty."
	case req.MemberEpoch == joinEpoch && req.RebalanceTimeoutMillis == -1:
		return "RebalanceTimeoutMs must be provided in first request."
	case req.MemberEpoch == joinEpoch && len(req.Topics) > 0:
		return "TopicPartitions must be empty when (re-)joining."
	case req.MemberEpoch == joinEpoch && len(req.SubscribedTopicNames) == 0 && (req.SubscribedTopicRegex == nil || *req.SubscribedTopicRegex == ""):
		return "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null in first request."
	case req.MemberEpoch != joinEpoch && req.MemberID == "":
		return "MemberId can't be empty."
	case req.MemberEpoch < leaveStaticEpoch:
		return fmt.Sprintf("MemberEpoch %d is invalid (allowed: -2, -1, 0 or the member's epoch).", req.MemberEpoch)
	case req.MemberEpoch == leaveStaticEpoch && req.InstanceID == nil:
		return "InstanceId can't be null when leaving a static member (MemberEpoch -2)."
	}
	return ""
}

// ownedOf returns the heartbeat's owned partitions by name, sorted.
func ownedOf(req *kmsg.ConsumerGroupHeartbeatRequest, g *consumerGroup) []TopicPartition {
	names := map[assignor.TopicID]string{}
	for _, t := range g.topics {
		names[t.ID] = t.Name
	}
	var ps []idPartitions
	for _, t := range req.Topics {
		ps = append(ps, idPartitions{ID: t.TopicID, Partitions: t.Partitions})
	}
	return fromIDPartitions(ps, names)
}

func subset(a, b []TopicPartition) bool {
	for _, tp := range a {
		if !slices.Contains(b, tp) {
			return false
		}
	}
	return true
}

func (g *consumerGroup) staticMember(instance string) *cgMember {
	for _, id := range g.memberIDs() {
		if g.members[id].instanceID == instance {
			return g.members[id]
		}
	}
	return nil
}

func (c *Coordinator) newConsumerMemberID(g *consumerGroup, now sim.Time) string {
	c.seq++
	return fmt.Sprintf("%s-%d.%d.%d", g.id, c.cfg.BrokerID, ms(now), c.seq)
}

// subscribedMetadata is the metadata of the topics the group subscribes to
// that exist, in name order.
func (c *Coordinator) subscribedMetadata(g *consumerGroup) []assignor.ServerTopic {
	if c.env.Topics == nil {
		return nil
	}
	want := g.subscribedTopics()
	var out []assignor.ServerTopic
	for _, t := range c.env.Topics() {
		if slices.Contains(want, t.Name) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b assignor.ServerTopic) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// topicIDs maps the group's topics' names to ids.
func (c *Coordinator) topicIDs(g *consumerGroup) map[string]assignor.TopicID {
	ids := map[string]assignor.TopicID{}
	for _, t := range g.topics {
		ids[t.Name] = t.ID
	}
	return ids
}

// assignTarget computes the group's new target assignment and returns its
// records: each member's target, then the target's epoch.
func (c *Coordinator) assignTarget(g *consumerGroup, ids map[string]assignor.TopicID) []ConsumerRecord {
	name := c.cfg.Consumer.Assignors[0]
	// The most used preferred assignor of the members wins, ties to the
	// configured order (ConsumerGroup.computePreferredServerAssignor).
	votes := map[string]int{}
	for _, m := range g.members {
		if m.serverAssignor != "" {
			votes[m.serverAssignor]++
		}
	}
	best := 0
	for _, a := range c.cfg.Consumer.Assignors {
		if votes[a] > best {
			name, best = a, votes[a]
		}
	}
	a, _ := assignor.ServerAssignorByName(name)
	old := map[string][]TopicPartition{}
	for id, m := range g.members {
		old[id] = m.target
	}
	if err := g.computeTarget(a); err != nil {
		// Kafka fails the heartbeat with UNKNOWN_SERVER_ERROR; here the
		// topics come from the metadata image, so it cannot happen.
		panic("coordinator: " + err.Error())
	}
	var recs []ConsumerRecord
	for _, id := range g.memberIDs() {
		if !slices.Equal(old[id], g.members[id].target) || old[id] == nil {
			recs = append(recs, g.targetRecord(g.members[id], ids))
		}
	}
	c.env.Log("consumer-target-assignment", sim.S("group", g.id), sim.I("epoch", int64(g.assignmentEpoch)), sim.S("assignor", name))
	return append(recs, ConsumerRecord{Type: cgTargetMetadata, Group: g.id, Epoch: g.assignmentEpoch})
}

// consumerGroupLeave removes a member (epoch -1) or, for a static member
// leaving with epoch -2, keeps it and its partitions until its session
// times out or a successor takes its instance id.
func (c *Coordinator) consumerGroupLeave(now sim.Time, req *kmsg.ConsumerGroupHeartbeatRequest, reply func(*kmsg.ConsumerGroupHeartbeatResponse), fail func(*kerr.Error, string)) {
	g := c.cgroups[req.Group]
	if g == nil {
		fail(kerr.GroupIDNotFound, fmt.Sprintf("Consumer group %s not found.", req.Group))
		return
	}
	m := g.members[req.MemberID]
	if req.InstanceID != nil {
		// consumerGroupLeave: a static member is found by its instance id.
		switch m = g.staticMember(*req.InstanceID); {
		case m == nil:
			fail(kerr.UnknownMemberID, fmt.Sprintf("Instance id %s is unknown.", *req.InstanceID))
			return
		case m.id != req.MemberID:
			fail(kerr.FencedInstanceID, fmt.Sprintf("Static member %s with instance id %s was fenced by member %s.", req.MemberID, *req.InstanceID, m.id))
			return
		}
	}
	if m == nil {
		fail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group))
		return
	}
	resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	id := m.id
	resp.MemberID, resp.MemberEpoch = &id, req.MemberEpoch
	var recs []ConsumerRecord
	if req.MemberEpoch == leaveStaticEpoch {
		// Its partitions pending revocation are let go at once; the
		// assigned ones wait for a successor or the session timeout
		// (consumerGroupStaticMemberGroupLeave).
		g.release(m)
		m.epoch, m.pending = leaveStaticEpoch, nil
		g.hold(m)
		recs = append(recs, g.currentRecord(m, c.topicIDs(g)))
		c.env.Log("consumer-member-left-static", sim.S("group", g.id), sim.S("member", m.id))
	} else {
		recs = c.removeConsumerMember(g, m, true)
		c.env.Log("consumer-member-left", sim.S("group", g.id), sim.S("member", m.id), sim.I("group-epoch", int64(g.epoch)))
		if d := c.maybeDowngrade(now, g, m); d != nil {
			recs = d
		}
	}
	c.appendConsumerRecords(g, recs, func(err *kerr.Error) {
		if err != nil {
			fail(err, "")
			return
		}
		reply(resp)
	})
}

// removeConsumerMember drops m from g, releasing its partitions, and
// returns the tombstones (and, with bump, the group epoch's bump).
func (c *Coordinator) removeConsumerMember(g *consumerGroup, m *cgMember, bump bool) []ConsumerRecord {
	g.release(m)
	delete(g.members, m.id)
	recs := []ConsumerRecord{
		{Type: cgCurrentAssignmentKy, Group: g.id, Member: m.id, Tombstone: true},
		{Type: cgTargetMember, Group: g.id, Member: m.id, Tombstone: true},
		{Type: cgMemberMetadata, Group: g.id, Member: m.id, Tombstone: true},
	}
	if bump {
		g.epoch++
		recs = append(recs, ConsumerRecord{Type: cgMetadataKey, Group: g.id, Epoch: g.epoch})
	}
	return recs
}

// fenceConsumerMember removes a member whose session or rebalance timed out.
func (c *Coordinator) fenceConsumerMember(now sim.Time, g *consumerGroup, m *cgMember, why string) {
	c.env.Log("consumer-member-fenced", sim.S("group", g.id), sim.S("member", m.id), sim.S("reason", why), sim.I("epoch", int64(m.epoch)))
	recs := c.removeConsumerMember(g, m, true)
	if d := c.maybeDowngrade(now, g, m); d != nil {
		recs = d
	}
	c.appendConsumerRecords(g, recs, func(*kerr.Error) {})
}

// consumerDeadline reports the consumer groups' earliest timer.
func (c *Coordinator) consumerDeadline(take func(sim.Time)) {
	for _, g := range c.cgroups { // NB: only minima are taken
		for _, m := range g.members {
			take(m.sessionDeadline)
			if m.rebalanceDeadline != 0 {
				take(m.rebalanceDeadline)
			}
		}
	}
}

// tickConsumer fences the members whose session or rebalance timed out.
func (c *Coordinator) tickConsumer(now sim.Time) {
	ids := make([]string, 0, len(c.cgroups))
	for id := range c.cgroups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		g := c.cgroups[id]
		for _, mid := range g.memberIDs() {
			m := g.members[mid]
			switch {
			case m.sessionDeadline <= now:
				c.fenceConsumerMember(now, g, m, "session-timeout")
			case m.rebalanceDeadline != 0 && m.rebalanceDeadline <= now:
				c.fenceConsumerMember(now, g, m, "rebalance-timeout")
			}
		}
	}
}

// appendConsumerRecords writes recs to the group's partition and calls
// done once they are committed (at once when there are none).
func (c *Coordinator) appendConsumerRecords(g *consumerGroup, recs []ConsumerRecord, done func(*kerr.Error)) {
	if len(recs) == 0 {
		done(nil)
		return
	}
	out := make([]storage.Record, len(recs))
	for i, r := range recs {
		out[i] = encodeConsumerRecord(r, 0)
	}
	c.nextAppend(g.partition)
	c.env.Append(g.partition, out, func(now sim.Time, err *kerr.Error) { done(mapAppendError(err)) })
}

func (m *cgMember) metadataRecord(group string) ConsumerRecord {
	r := ConsumerRecord{Type: cgMemberMetadata, Group: group, Member: m.id, ClientID: m.clientID, ClientHost: "/" + m.clientID,
		Subscribed: m.names, RebalanceMillis: int32(m.rebalanceTimeout.Milliseconds())}
	if m.regex != "" {
		r.SubscribedRegex = &m.regex
	}
	if m.instanceID != "" {
		r.InstanceID = &m.instanceID
	}
	if m.rackID != "" {
		r.RackID = &m.rackID
	}
	if m.serverAssignor != "" {
		r.ServerAssignor = &m.serverAssignor
	}
	if m.classic != nil {
		r.Classic = &ClassicMemberMetadata{SessionTimeoutMillis: int32(m.classic.sessionTimeout.Milliseconds()), Protocols: m.classic.protocols}
	}
	return r
}

func (g *consumerGroup) targetRecord(m *cgMember, ids map[string]assignor.TopicID) ConsumerRecord {
	return ConsumerRecord{Type: cgTargetMember, Group: g.id, Member: m.id, Assigned: toIDPartitions(m.target, ids)}
}

func (g *consumerGroup) currentRecord(m *cgMember, ids map[string]assignor.TopicID) ConsumerRecord {
	return ConsumerRecord{Type: cgCurrentAssignmentKy, Group: g.id, Member: m.id, Epoch: m.epoch, PreviousEpoch: m.previousEpoch,
		State: int8(m.state), Assigned: toIDPartitions(m.assigned, ids), Pending: toIDPartitions(m.pending, ids)}
}
