package coordinator

// This file serves ConsumerGroupDescribe (api key 69, v0-v1: KIP-848), the
// member-epoch checks of OffsetCommit for consumer groups
// (ConsumerGroup.validateOffsetCommit: STALE_MEMBER_EPOCH, Kafka 4.0), and
// the observers tests and checkers read the groups through.
//
// Simplifications: authorized operations are not computed (left at
// Kafka's "not requested" value); MemberType (v1) is 1, consumer.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerGroupDescribe handles a ConsumerGroupDescribe request.
func (c *Coordinator) ConsumerGroupDescribe(now sim.Time, req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewConsumerGroupDescribeResponseGroup()
		rg.Group = id
		if err := c.checkGroup(id); err != nil {
			rg.ErrorCode = err.Code
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		g := c.cgroups[id]
		if g == nil {
			rg.ErrorCode = kerr.GroupIDNotFound.Code
			msg := fmt.Sprintf("Group %s not found.", id)
			if cg := c.groups[id]; cg != nil && len(cg.members) > 0 {
				msg = fmt.Sprintf("Group %s is not a consumer group.", id)
			}
			rg.ErrorMessage = &msg
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		rg.State, rg.Epoch, rg.AssignmentEpoch = g.state(), g.epoch, g.assignmentEpoch
		rg.AssignorName = c.cfg.Consumer.Assignors[0]
		ids := c.topicIDs(g)
		for _, mid := range g.memberIDs() {
			m := g.members[mid]
			rm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			rm.MemberID, rm.MemberEpoch, rm.ClientID, rm.ClientHost = mid, m.epoch, m.clientID, "/"+m.clientID
			rm.SubscribedTopics = slices.Clone(m.topics)
			if m.regex != "" {
				re := m.regex
				rm.SubscribedTopicRegex = &re
			}
			if m.instanceID != "" {
				inst := m.instanceID
				rm.InstanceID = &inst
			}
			if m.rackID != "" {
				rack := m.rackID
				rm.RackID = &rack
			}
			for _, p := range toIDPartitions(m.assigned, ids) {
				rm.Assignment.TopicPartitions = append(rm.Assignment.TopicPartitions, kmsg.AssignmentTopicPartition{TopicID: p.ID, Topic: topicName(g, p.ID), Partitions: p.Partitions})
			}
			for _, p := range toIDPartitions(m.target, ids) {
				rm.TargetAssignment.TopicPartitions = append(rm.TargetAssignment.TopicPartitions, kmsg.AssignmentTopicPartition{TopicID: p.ID, Topic: topicName(g, p.ID), Partitions: p.Partitions})
			}
			if req.Version >= 1 {
				rm.MemberType = 1
			}
			rg.Members = append(rg.Members, rm)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func topicName(g *consumerGroup, id [16]byte) string {
	for _, t := range g.topics {
		if t.ID == id {
			return t.Name
		}
	}
	return ""
}

// consumerOffsetCommitError is ConsumerGroup.validateOffsetCommit for a
// commit to a consumer group: nil when it may be stored.
func (c *Coordinator) consumerOffsetCommitError(g *consumerGroup, memberID string, memberEpoch int32, version int16, transactional bool) *kerr.Error {
	if memberEpoch < 0 && len(g.members) == 0 {
		return nil
	}
	m := g.members[memberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID
	case m.classic != nil && memberEpoch != m.epoch:
		return kerr.IllegalGeneration // a classic member (validateMemberEpoch)
	case m.classic != nil:
	case !transactional && version < 9:
		return kerr.UnsupportedVersion
	case memberEpoch != m.epoch:
		return kerr.StaleMemberEpoch
	}
	return nil
}

// ConsumerMember is a consumer group member as an observer sees it.
type ConsumerMember struct {
	ID                   string
	Epoch, PreviousEpoch int32
	State                MemberState
	Assigned, Pending    []TopicPartition
	Target               []TopicPartition
	Subscribed           []string
	SessionDeadline      sim.Time
	RebalanceDeadline    sim.Time
}

// ConsumerGroupState describes a consumer group for observers: its state,
// group epoch, target assignment epoch and members (sorted by id); ok is
// false when no such consumer group is loaded here.
func (c *Coordinator) ConsumerGroupState(id string) (state string, epoch, assignmentEpoch int32, members []ConsumerMember, ok bool) {
	g := c.cgroups[id]
	if g == nil {
		return "Dead", -1, -1, nil, false
	}
	for _, mid := range g.memberIDs() {
		m := g.members[mid]
		members = append(members, ConsumerMember{ID: mid, Epoch: m.epoch, PreviousEpoch: m.previousEpoch, State: m.state,
			Assigned: slices.Clone(m.assigned), Pending: slices.Clone(m.pending), Target: slices.Clone(m.target),
			Subscribed: slices.Clone(m.topics), SessionDeadline: m.sessionDeadline, RebalanceDeadline: m.rebalanceDeadline})
	}
	return g.state(), g.epoch, g.assignmentEpoch, members, true
}

// ConsumerGroupHasMembers reports whether id is a consumer group of the
// KIP-848 protocol with members here (a classic JoinGroup for it is
// refused by the host).
func (c *Coordinator) ConsumerGroupHasMembers(id string) bool {
	g := c.cgroups[id]
	return g != nil && len(g.members) > 0
}

// ConsumerGroupView is a consumer group as the invariants monitor sees it.
type ConsumerGroupView struct {
	State                  string
	Epoch, AssignmentEpoch int32
	Partitions             map[string]int32 // subscribed topics' partition counts
	Members                []ConsumerMember // sorted by id
	// Held is each member's partitions by the partition-owner map.
	Held map[string][]TopicPartition
	// Load counts the coordinator's loads of the group's partition: a
	// new load replays only what was committed.
	Load int64
}

// ConsumerGroupIDs returns the consumer groups this coordinator serves
// (their partition led and loaded), sorted.
func (c *Coordinator) ConsumerGroupIDs() []string {
	var ids []string
	for id, g := range c.cgroups {
		if c.owned[g.partition] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// ConsumerGroupView returns group id's view; false when it is not here.
func (c *Coordinator) ConsumerGroupView(id string) (ConsumerGroupView, bool) {
	state, epoch, aepoch, members, ok := c.ConsumerGroupState(id)
	if !ok {
		return ConsumerGroupView{}, false
	}
	g := c.cgroups[id]
	v := ConsumerGroupView{State: state, Epoch: epoch, AssignmentEpoch: aepoch, Members: members,
		Partitions: map[string]int32{}, Held: map[string][]TopicPartition{}, Load: c.loads[g.partition]}
	for _, t := range g.topics {
		v.Partitions[t.Name] = t.Partitions
	}
	for tp, m := range g.owner { // NB: sorted below
		v.Held[m] = append(v.Held[m], tp)
	}
	for _, ps := range v.Held { // NB: each list sorted on its own
		sortTPs(ps)
	}
	return v, true
}
