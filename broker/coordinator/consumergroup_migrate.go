package coordinator

// This file is KIP-848's online migration between the two group protocols
// (Kafka 4.0's GroupMetadataManager: validateOnlineUpgrade,
// convertToConsumerGroup, classicGroupJoinToConsumerGroup,
// classicGroupSyncToConsumerGroup, classicGroupHeartbeatToConsumerGroup,
// classicGroupLeaveToConsumerGroup, validateOnlineDowngradeWithFencedMember,
// convertToClassicGroup), under group.consumer.migration.policy
// (bidirectional, Kafka 4.0's default; upgrade; downgrade; disabled).
//
//   - Upgrade: a ConsumerGroupHeartbeat joining (epoch 0) a non-empty
//     classic group of protocol type "consumer" converts it: each classic
//     member becomes a consumer group member that uses the classic
//     protocol, at the classic generation (the group epoch and target
//     epoch too), its last assignment its target and its partitions. The
//     classic group's GroupMetadata tombstone and the consumer group's
//     records are written with the joining member's. Parked JoinGroup and
//     SyncGroup requests are answered REBALANCE_IN_PROGRESS.
//   - Classic members inside a consumer group: JoinGroup runs the member
//     through the consumer group's heartbeat logic (its subscription and
//     owned partitions come from the embedded consumer protocol) and
//     answers at its member epoch, with no leader; SyncGroup answers its
//     current partitions; Heartbeat answers REBALANCE_IN_PROGRESS while its
//     epoch is behind the group's, it has partitions to revoke, or a
//     partition it waits for was released (so it rejoins); LeaveGroup
//     removes it. Their session timeout is their own (JoinGroup's).
//   - Downgrade: when the last member using the consumer protocol leaves or
//     is fenced and members remain, all classic, the group converts back: the
//     consumer group's tombstones, a GroupMetadata record at generation =
//     group epoch with each member's partitions as its assignment, and a
//     rebalance (PreparingRebalance) the members join with the classic
//     protocol.
//
// Simplifications vs Kafka: no join or sync timeouts for classic members
// (a member asked to rejoin that does not is fenced by its session or
// rebalance timeout); the downgrade by a static member's replacement
// (validateOnlineDowngradeWithReplacedMemberId) is not modelled; the
// classic group's max size is not checked; a classic member's partitions
// that another classic member also claims at the upgrade (a malformed
// classic group) go to the first in member-id order.

import (
	"fmt"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"slices"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Migration policies (group.consumer.migration.policy).
const (
	MigrationBidirectional = "bidirectional"
	MigrationUpgrade       = "upgrade"
	MigrationDowngrade     = "downgrade"
	MigrationDisabled      = "disabled"
)

// KindGenerationsRestart is the trace kind the coordinator logs when a
// group's generations start over: a group of the other protocol replaces
// an empty one (maybeDeleteEmptyClassicGroup, maybeDeleteEmptyConsumerGroup),
// and its epoch or generation counts from 0 again. The harness hands it to
// the group checker, which keys generations by it.
const KindGenerationsRestart = "group-generations-restart"

// classicGroupType is the record type of a classic GroupMetadata record
// written among a consumer group's (encodeConsumerRecord).
const classicGroupType int16 = -2

// classicMeta is a consumer group member's classic protocol metadata
// (ConsumerGroupMemberMetadataValue.ClassicMemberMetadata): nil for a
// member of the consumer protocol.
type classicMeta struct {
	sessionTimeout sim.Duration
	protocols      []kmsg.JoinGroupRequestProtocol
}

func (c ConsumerConfig) upgradeEnabled() bool {
	return c.MigrationPolicy == MigrationBidirectional || c.MigrationPolicy == MigrationUpgrade || c.MigrationPolicy == ""
}

func (c ConsumerConfig) downgradeEnabled() bool {
	return c.MigrationPolicy == MigrationBidirectional || c.MigrationPolicy == MigrationDowngrade || c.MigrationPolicy == ""
}

// validateOnlineUpgrade reports whether cl may become a consumer group.
func (c *Coordinator) validateOnlineUpgrade(cl *group) (string, bool) {
	switch {
	case !c.cfg.Consumer.upgradeEnabled():
		return "the online upgrade is disabled (group.consumer.migration.policy=" + c.cfg.Consumer.MigrationPolicy + ")", false
	case cl.protocolType != "consumer":
		return "the group does not use the consumer embedded protocol", false
	case len(cl.members) > c.cfg.Consumer.MaxSize:
		return "the group size exceeds the consumer group maximum size", false
	}
	return "", true
}

// subscriptionOf decodes a classic member's embedded consumer protocol
// subscription: its topics (sorted) and owned partitions.
func subscriptionOf(metadata []byte) (topics []string, owned []TopicPartition, version int16) {
	var s kmsg.ConsumerMemberMetadata
	if err := s.ReadFrom(metadata); err != nil {
		return nil, nil, 0
	}
	topics = slices.Clone(s.Topics)
	slices.Sort(topics)
	for _, t := range s.OwnedPartitions {
		for _, p := range t.Partitions {
			owned = append(owned, TopicPartition{t.Topic, p})
		}
	}
	sortTPs(owned)
	return slices.Compact(topics), owned, s.Version
}

// assignmentOf decodes a classic member's assignment.
func assignmentOf(b []byte) []TopicPartition {
	var a kmsg.ConsumerMemberAssignment
	if len(b) == 0 || a.ReadFrom(b) != nil {
		return nil
	}
	var out []TopicPartition
	for _, t := range a.Topics {
		for _, p := range t.Partitions {
			out = append(out, TopicPartition{t.Topic, p})
		}
	}
	sortTPs(out)
	return out
}

// encodeAssignment is ConsumerProtocol.serializeAssignment at version.
func encodeAssignment(tps []TopicPartition, version int16) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Version = min(max(version, 0), 3)
	for i, tp := range tps {
		if i == 0 || tps[i-1].Topic != tp.Topic {
			a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: tp.Topic})
		}
		a.Topics[len(a.Topics)-1].Partitions = append(a.Topics[len(a.Topics)-1].Partitions, tp.Partition)
	}
	return a.AppendTo(nil)
}

// convertToConsumerGroup turns the classic group cl into a consumer group
// and returns it with the conversion's records.
func (c *Coordinator) convertToConsumerGroup(now sim.Time, cl *group) (*consumerGroup, []ConsumerRecord) {
	g := newConsumerGroup(cl.id, cl.partition)
	g.assignBeforeRevoke = c.cfg.Mutants.On(mutant.AssignBeforeRevoke)
	g.epoch, g.assignmentEpoch = cl.generation, cl.generation
	for _, id := range cl.memberIDs() {
		m := cl.members[id]
		if r := m.joinReply; r != nil {
			m.joinReply = nil
			r(joinError(kerr.RebalanceInProgress, id))
		}
		if r := m.syncReply; r != nil {
			m.syncReply = nil
			r(&kmsg.SyncGroupResponse{ErrorCode: kerr.RebalanceInProgress.Code})
		}
		names, _, _ := subscriptionOf(m.metadataFor(cl.protocol))
		var assigned []TopicPartition
		for _, tp := range assignmentOf(m.assignment) {
			if _, held := g.owner[tp]; !held {
				assigned = append(assigned, tp)
			}
		}
		nm := &cgMember{id: id, instanceID: m.instanceID, clientID: m.clientID, epoch: cl.generation, previousEpoch: cl.generation,
			names: names, rebalanceTimeout: m.rebalanceTimeout, assigned: assigned, target: slices.Clone(assigned),
			sessionDeadline: now.Add(m.sessionTimeout), classic: &classicMeta{sessionTimeout: m.sessionTimeout, protocols: slices.Clone(m.protocols)}}
		nm.topics = c.resolveSubscription(nm.names, "")
		g.members[id] = nm
		g.hold(nm)
	}
	g.topics = c.subscribedMetadata(g)
	ids := c.topicIDs(g)
	recs := []ConsumerRecord{{Type: classicGroupType, Group: g.id, Tombstone: true}}
	for _, id := range g.memberIDs() {
		recs = append(recs, g.members[id].metadataRecord(g.id))
	}
	recs = append(recs, ConsumerRecord{Type: cgPartitionMetadata, Group: g.id, Topics: g.topics}, ConsumerRecord{Type: cgMetadataKey, Group: g.id, Epoch: g.epoch})
	for _, id := range g.memberIDs() {
		recs = append(recs, g.targetRecord(g.members[id], ids))
	}
	recs = append(recs, ConsumerRecord{Type: cgTargetMetadata, Group: g.id, Epoch: g.assignmentEpoch})
	for _, id := range g.memberIDs() {
		recs = append(recs, g.currentRecord(g.members[id], ids))
	}
	// The classic group is gone; its offsets stay (here: in the memberless
	// group that holds them, as for every consumer group).
	cl.members, cl.static, cl.pending = map[string]*member{}, map[string]string{}, map[string]sim.Time{}
	cl.state, cl.generation, cl.protocolType, cl.protocol, cl.leader = Empty, 0, "", "", ""
	c.cgroups[g.id] = g
	c.env.Log("consumer-group-upgraded", sim.S("group", g.id), sim.I("epoch", int64(g.epoch)), sim.I("members", int64(len(g.members))))
	return g, recs
}

// maybeDowngrade converts g back to a classic group when leaving (a
// member of the consumer protocol, already removed) was the last such
// member and classic members remain (validateOnlineDowngradeWithFencedMember);
// it returns the conversion's records, or nil.
func (c *Coordinator) maybeDowngrade(now sim.Time, g *consumerGroup, leaving *cgMember) []ConsumerRecord {
	if leaving.classic != nil || len(g.members) == 0 || !c.cfg.Consumer.downgradeEnabled() {
		return nil
	}
	for _, m := range g.members {
		if m.classic == nil {
			return nil // NB: an any-of check, map order does not matter
		}
	}
	ids := g.memberIDs()
	// The protocol every member supports, in the first member's order.
	proto := ""
	for _, p := range g.members[ids[0]].classic.protocols {
		all := true
		for _, id := range ids {
			all = all && slices.ContainsFunc(g.members[id].classic.protocols, func(q kmsg.JoinGroupRequestProtocol) bool { return q.Name == p.Name })
		}
		if all {
			proto = p.Name
			break
		}
	}
	if proto == "" {
		return nil // Kafka fails to parse the protocol and keeps the consumer group
	}
	recs := []ConsumerRecord{{Type: cgCurrentAssignmentKy, Group: g.id, Member: leaving.id, Tombstone: true},
		{Type: cgTargetMember, Group: g.id, Member: leaving.id, Tombstone: true},
		{Type: cgMemberMetadata, Group: g.id, Member: leaving.id, Tombstone: true}}
	cl := c.groups[g.id]
	if cl == nil {
		cl = newGroup(g.id, g.partition)
		c.groups[g.id] = cl
	}
	cl.generation, cl.protocolType, cl.protocol, cl.leader = g.epoch, "consumer", proto, ids[0]
	assignments := map[string][]byte{}
	for _, id := range ids {
		m := g.members[id]
		recs = append(recs, ConsumerRecord{Type: cgCurrentAssignmentKy, Group: g.id, Member: id, Tombstone: true},
			ConsumerRecord{Type: cgTargetMember, Group: g.id, Member: id, Tombstone: true},
			ConsumerRecord{Type: cgMemberMetadata, Group: g.id, Member: id, Tombstone: true})
		var meta []byte
		for _, p := range m.classic.protocols {
			if p.Name == proto {
				meta = p.Metadata
			}
		}
		_, _, version := subscriptionOf(meta)
		assignments[id] = encodeAssignment(append(slices.Clone(m.assigned), m.pending...), version)
		cm := &member{id: id, instanceID: m.instanceID, clientID: m.clientID, sessionTimeout: m.classic.sessionTimeout,
			rebalanceTimeout: m.rebalanceTimeout, protocols: slices.Clone(m.classic.protocols), assignment: assignments[id], lastHeartbeat: now}
		cl.addMember(cm)
	}
	recs = append(recs, ConsumerRecord{Type: cgTargetMetadata, Group: g.id, Tombstone: true},
		ConsumerRecord{Type: cgPartitionMetadata, Group: g.id, Tombstone: true},
		ConsumerRecord{Type: cgMetadataKey, Group: g.id, Tombstone: true},
		ConsumerRecord{Type: classicGroupType, Group: g.id, ClassicGroup: cl.metadataValue(now, assignments)})
	delete(c.cgroups, g.id)
	cl.state = Stable
	c.env.Log("consumer-group-downgraded", sim.S("group", g.id), sim.I("generation", int64(cl.generation)), sim.I("members", int64(len(cl.members))))
	c.prepareRebalance(now, cl, "downgrade from consumer to classic")
	return recs
}

// classicMember finds the classic protocol member a classic request
// names (validateConsumerGroupMember, throwIfMemberDoesNotUseClassicProtocol).
func (g *consumerGroup) classicMember(memberID, instance string) (*cgMember, *kerr.Error) {
	var m *cgMember
	if instance == "" {
		m = g.members[memberID]
	} else {
		m = g.staticMember(instance)
		if m != nil && m.id != memberID {
			return nil, kerr.FencedInstanceID
		}
	}
	if m == nil || m.classic == nil {
		return nil, kerr.UnknownMemberID
	}
	return m, nil
}

// classicJoinToConsumerGroup is classicGroupJoinToConsumerGroup.
func (c *Coordinator) classicJoinToConsumerGroup(now sim.Time, g *consumerGroup, req *kmsg.JoinGroupRequest, session, rebalance sim.Duration, reply func(*kmsg.JoinGroupResponse)) {
	memberID := req.MemberID
	unknown := memberID == ""
	if unknown {
		memberID = c.newConsumerMemberID(g, now)
	}
	instance := ""
	if req.Version >= 5 {
		instance = instanceOf(req.InstanceID)
	}
	if g.members[memberID] == nil && len(g.members) >= c.cfg.Consumer.MaxSize {
		reply(joinError(kerr.GroupMaxSizeReached, memberID))
		return
	}
	if req.ProtocolType != "consumer" || len(req.Protocols) == 0 || !g.supportsClassicProtocols(req.Protocols) {
		reply(joinError(kerr.InconsistentGroupProtocol, memberID))
		return
	}
	if unknown && instance == "" && req.Version >= 4 {
		reply(joinError(kerr.MemberIDRequired, memberID))
		return
	}
	var recs []ConsumerRecord
	bumped := false
	m := g.members[memberID]
	if instance != "" {
		old := g.staticMember(instance)
		switch {
		case old != nil && unknown:
			// A classic static member's restart replaces its member
			// (getOrMaybeSubscribeStaticConsumerGroupMember, classic:
			// no UNRELEASED_INSTANCE_ID).
			recs = append(recs, c.removeConsumerMember(g, old, false)...)
			nm := *old
			nm.id, nm.epoch, nm.previousEpoch, nm.state, nm.pending = memberID, 0, 0, MemberStable, nil
			g.members[nm.id] = &nm
			g.hold(&nm)
			m = &nm
			ids := c.topicIDs(g)
			recs = append(recs, g.targetRecord(m, ids), g.currentRecord(m, ids))
		case old != nil && old.id != memberID:
			reply(joinError(kerr.FencedInstanceID, memberID))
			return
		case old == nil && !unknown && m == nil:
			reply(joinError(kerr.UnknownMemberID, memberID))
			return
		}
	}
	if m == nil {
		m = &cgMember{id: memberID}
		g.members[memberID] = m
		bumped = true
	}
	names, owned, _ := subscriptionOf(req.Protocols[0].Metadata)
	m.clientID, m.instanceID, m.rebalanceTimeout = "consumer", instance, rebalance
	m.classic = &classicMeta{sessionTimeout: session, protocols: slices.Clone(req.Protocols)}
	m.names = names
	if topics := c.resolveSubscription(m.names, ""); !slices.Equal(topics, m.topics) {
		m.topics, bumped = topics, true
	}
	recs = append(recs, m.metadataRecord(g.id))
	if meta := c.subscribedMetadata(g); !slices.Equal(meta, g.topics) {
		g.topics, bumped = meta, true
		recs = append(recs, ConsumerRecord{Type: cgPartitionMetadata, Group: g.id, Topics: meta})
	}
	if bumped {
		g.epoch++
		recs = append(recs, ConsumerRecord{Type: cgMetadataKey, Group: g.id, Epoch: g.epoch})
		c.env.Log("consumer-group-epoch", sim.S("group", g.id), sim.I("epoch", int64(g.epoch)), sim.S("member", m.id), sim.S("protocol", "classic"))
	}
	ids := c.topicIDs(g)
	if g.epoch > g.assignmentEpoch {
		recs = append(recs, c.assignTarget(g, ids)...)
	}
	if g.reconcile(m, owned, true) {
		recs = append(recs, g.currentRecord(m, ids))
		c.env.Log("consumer-member-reconciled", sim.S("group", g.id), sim.S("member", m.id), sim.I("epoch", int64(m.epoch)),
			sim.S("state", m.state.String()), sim.I("assigned", int64(len(m.assigned))), sim.I("revoking", int64(len(m.pending))), sim.S("protocol", "classic"))
	}
	m.sessionDeadline = now.Add(session)
	switch {
	case m.state != MemberUnrevokedPartitions:
		m.rebalanceDeadline = 0
	case m.rebalanceDeadline == 0:
		m.rebalanceDeadline = now.Add(m.rebalanceTimeout)
	}
	resp := kmsg.NewPtrJoinGroupResponse()
	pt, pn := "consumer", req.Protocols[0].Name
	resp.MemberID, resp.Generation, resp.ProtocolType, resp.Protocol = m.id, m.epoch, &pt, &pn
	c.appendConsumerRecords(g, recs, func(err *kerr.Error) {
		if err != nil {
			reply(joinError(err, m.id))
			return
		}
		reply(resp)
	})
}

// supportsClassicProtocols reports whether every classic member supports
// one of protocols (ConsumerGroup.supportsClassicProtocols).
func (g *consumerGroup) supportsClassicProtocols(protocols []kmsg.JoinGroupRequestProtocol) bool {
	for _, p := range protocols {
		all := true
		for _, m := range g.members { // NB: an all-of check, map order does not matter
			if m.classic != nil && !slices.ContainsFunc(m.classic.protocols, func(q kmsg.JoinGroupRequestProtocol) bool { return q.Name == p.Name }) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

// classicSyncToConsumerGroup is classicGroupSyncToConsumerGroup.
func (c *Coordinator) classicSyncToConsumerGroup(now sim.Time, g *consumerGroup, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	fail := func(err *kerr.Error) *kmsg.SyncGroupResponse { return &kmsg.SyncGroupResponse{ErrorCode: err.Code} }
	instance := ""
	if req.Version >= 3 {
		instance = instanceOf(req.InstanceID)
	}
	m, err := g.classicMember(req.MemberID, instance)
	switch {
	case err != nil:
		return fail(err)
	case req.Generation != m.epoch:
		return fail(kerr.IllegalGeneration)
	case req.ProtocolType != nil && *req.ProtocolType != "consumer":
		return fail(kerr.InconsistentGroupProtocol)
	case g.epoch > m.epoch && m.state != MemberUnrevokedPartitions:
		return fail(kerr.RebalanceInProgress)
	}
	m.sessionDeadline = now.Add(m.classic.sessionTimeout)
	_, _, version := subscriptionOf(m.classic.protocols[0].Metadata)
	pt, pn := "consumer", m.classic.protocols[0].Name
	if req.Protocol != nil {
		pn = *req.Protocol
	}
	return &kmsg.SyncGroupResponse{MemberAssignment: encodeAssignment(m.assigned, version), ProtocolType: &pt, Protocol: &pn}
}

// classicHeartbeatToConsumerGroup is classicGroupHeartbeatToConsumerGroup.
func (c *Coordinator) classicHeartbeatToConsumerGroup(now sim.Time, g *consumerGroup, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := kmsg.NewPtrHeartbeatResponse()
	instance := ""
	if req.Version >= 3 {
		instance = instanceOf(req.InstanceID)
	}
	m, err := g.classicMember(req.MemberID, instance)
	switch {
	case err != nil:
		resp.ErrorCode = err.Code
		return resp
	case req.Generation != m.epoch:
		resp.ErrorCode = kerr.IllegalGeneration.Code
		return resp
	}
	m.sessionDeadline = now.Add(m.classic.sessionTimeout)
	if m.epoch < g.epoch || m.state == MemberUnrevokedPartitions || m.state == MemberUnreleasedPartitions && g.unreleasedFree(m) {
		resp.ErrorCode = kerr.RebalanceInProgress.Code
	}
	return resp
}

// unreleasedFree reports whether a partition m's target gives it and it
// waits for is held by no one now (!waitingOnUnreleasedPartition).
func (g *consumerGroup) unreleasedFree(m *cgMember) bool {
	for _, tp := range m.target {
		if _, held := g.owner[tp]; !held {
			return true
		}
	}
	return false
}

// classicLeaveToConsumerGroup is classicGroupLeaveToConsumerGroup: the
// members named leave, and the group epoch bumps.
func (c *Coordinator) classicLeaveToConsumerGroup(now sim.Time, g *consumerGroup, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := kmsg.NewPtrLeaveGroupResponse()
	members := []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	if req.Version >= 3 {
		members = req.Members
	}
	var recs []ConsumerRecord
	for _, lm := range members {
		instance := instanceOf(lm.InstanceID)
		var m *cgMember
		code := int16(0)
		if instance != "" {
			m = g.staticMember(instance)
			switch {
			case m == nil:
				code = kerr.UnknownMemberID.Code
			case lm.MemberID != "" && m.id != lm.MemberID:
				code = kerr.FencedInstanceID.Code
			}
		} else if m = g.members[lm.MemberID]; m == nil {
			code = kerr.UnknownMemberID.Code
		}
		if code == 0 && m.classic == nil {
			code = kerr.UnknownMemberID.Code
		}
		id := lm.MemberID
		if code == 0 {
			id = m.id
			recs = append(recs, c.removeConsumerMember(g, m, false)...)
			c.env.Log("consumer-member-left", sim.S("group", g.id), sim.S("member", m.id), sim.S("protocol", "classic"))
		}
		if req.Version >= 3 {
			resp.Members = append(resp.Members, kmsg.LeaveGroupResponseMember{MemberID: id, InstanceID: lm.InstanceID, ErrorCode: code})
		} else {
			resp.ErrorCode = code
		}
	}
	if len(recs) > 0 {
		if meta := c.subscribedMetadata(g); !slices.Equal(meta, g.topics) {
			g.topics = meta
			recs = append(recs, ConsumerRecord{Type: cgPartitionMetadata, Group: g.id, Topics: meta})
		}
		g.epoch++
		recs = append(recs, ConsumerRecord{Type: cgMetadataKey, Group: g.id, Epoch: g.epoch})
		c.appendConsumerRecords(g, recs, func(*kerr.Error) {})
	}
	return resp
}

// deleteEmptyConsumerGroup drops an empty consumer group a classic member
// joins (maybeDeleteEmptyConsumerGroup), with its tombstones.
func (c *Coordinator) deleteEmptyConsumerGroup(g *consumerGroup) {
	delete(c.cgroups, g.id)
	c.appendConsumerRecords(g, []ConsumerRecord{{Type: cgTargetMetadata, Group: g.id, Tombstone: true},
		{Type: cgPartitionMetadata, Group: g.id, Tombstone: true}, {Type: cgMetadataKey, Group: g.id, Tombstone: true}}, func(*kerr.Error) {})
	c.env.Log("consumer-group-deleted", sim.S("group", g.id), sim.S("reason", "a classic member joins it empty"))
	c.env.Log(KindGenerationsRestart, sim.S("group", g.id), sim.S("protocol", "classic"))
	if cl := c.groups[g.id]; cl != nil && cl.state == Empty {
		cl.generation, cl.protocolType, cl.protocol, cl.leader = 0, "", "", ""
	}
}

// notConsumerGroup is the error message of a heartbeat to a classic group
// that may not be converted.
func notConsumerGroup(group, why string) string {
	return fmt.Sprintf("Group %s is not a consumer group (%s).", group, why)
}
