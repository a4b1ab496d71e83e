package coordinator

// This file is a consumer group of the consumer group protocol (KIP-848,
// Kafka 4.0's ConsumerGroup and ConsumerGroupMember): three epochs and the
// reconciliation of each member towards its target assignment
// (CurrentAssignmentBuilder).
//
//   - The group epoch bumps whenever the group's membership, a member's
//     subscription or the subscribed topics' metadata change.
//   - The target assignment epoch catches up with the group epoch when the
//     server-side assignor computes a new target assignment.
//   - Each member's epoch catches up with the target assignment epoch as it
//     reconciles: a partition it must give up is first only revoked (it
//     stays at its epoch, UNREVOKED_PARTITIONS) until a heartbeat's owned
//     partitions no longer list it; a partition the target gives it that
//     another member still holds (at any epoch) is withheld
//     (UNRELEASED_PARTITIONS) until that member lets it go.
//
// Invariant: a partition is held (assigned or pending revocation) by at
// most one member (partitionOwner); a member holds its partitions at its
// current member epoch.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/sim"
)

// MemberState is ConsumerGroupMember's state (MemberState.java).
type MemberState int8

// The member states, with Kafka's record values.
const (
	MemberStable               MemberState = 0
	MemberUnrevokedPartitions  MemberState = 1
	MemberUnreleasedPartitions MemberState = 2
)

func (s MemberState) String() string {
	switch s {
	case MemberStable:
		return "STABLE"
	case MemberUnrevokedPartitions:
		return "UNREVOKED_PARTITIONS"
	case MemberUnreleasedPartitions:
		return "UNRELEASED_PARTITIONS"
	}
	return "UNKNOWN"
}

// The special member epochs of ConsumerGroupHeartbeat.
const (
	joinEpoch        = 0
	leaveEpoch       = -1 // LEAVE_GROUP_MEMBER_EPOCH
	leaveStaticEpoch = -2 // LEAVE_GROUP_STATIC_MEMBER_EPOCH
)

type cgMember struct {
	id, instanceID, rackID, clientID string
	epoch, previousEpoch             int32
	state                            MemberState
	topics                           []string // effective subscription: names and regex matches, sorted
	names                            []string // SubscribedTopicNames, sorted
	regex                            string   // SubscribedTopicRegex; "" for none (consumergroup_regex.go)
	rebalanceTimeout                 sim.Duration
	serverAssignor                   string           // "" for the group's default
	assigned                         []TopicPartition // owned at epoch, sorted
	pending                          []TopicPartition // pending revocation, sorted
	target                           []TopicPartition // target assignment, sorted
	sessionDeadline                  sim.Time
	// rebalanceDeadline is when a member asked to revoke partitions is
	// fenced if it has not; 0 when no revocation is outstanding.
	rebalanceDeadline sim.Time
	// classic is set for a member that uses the classic protocol
	// (consumergroup_migrate.go).
	classic *classicMeta
}

type consumerGroup struct {
	id              string
	partition       int32
	epoch           int32
	assignmentEpoch int32
	members         map[string]*cgMember
	// topics is the subscribed topics' metadata the target was computed
	// from (ConsumerGroupPartitionMetadata).
	topics []assignor.ServerTopic
	// owner maps each held partition to its member (assigned or pending
	// revocation); the partition's epoch is that member's epoch.
	owner map[TopicPartition]string
	// assignBeforeRevoke is mutant.AssignBeforeRevoke: a partition is
	// handed out while its owner still holds it (NOT Kafka).
	assignBeforeRevoke bool
}

func newConsumerGroup(id string, partition int32) *consumerGroup {
	return &consumerGroup{id: id, partition: partition, members: map[string]*cgMember{}, owner: map[TopicPartition]string{}}
}

func (g *consumerGroup) memberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// state is the group's state as ConsumerGroupDescribe names it.
func (g *consumerGroup) state() string {
	switch {
	case len(g.members) == 0:
		return "Empty"
	case g.epoch != g.assignmentEpoch:
		return "Assigning"
	}
	for _, m := range g.members {
		if m.epoch != g.assignmentEpoch || m.state != MemberStable {
			return "Reconciling" // NB: an any-of check, map order does not matter
		}
	}
	return "Stable"
}

// subscribedTopics is the union of the members' subscriptions, sorted.
func (g *consumerGroup) subscribedTopics() []string {
	var out []string
	for _, m := range g.members {
		out = append(out, m.topics...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// release drops m's hold on its partitions.
func (g *consumerGroup) release(m *cgMember) {
	for _, tp := range m.assigned {
		if g.owner[tp] == m.id {
			delete(g.owner, tp)
		}
	}
	for _, tp := range m.pending {
		if g.owner[tp] == m.id {
			delete(g.owner, tp)
		}
	}
}

// hold records m's hold on its partitions. It panics if another member
// holds one of them: the reconciliation never hands out a held partition.
func (g *consumerGroup) hold(m *cgMember) {
	for _, tp := range append(slices.Clone(m.assigned), m.pending...) {
		if o, ok := g.owner[tp]; ok && o != m.id && !g.assignBeforeRevoke {
			panic("coordinator: consumer group " + g.id + ": partition " + tp.Topic + " held by " + o + " and " + m.id)
		}
		g.owner[tp] = m.id
	}
}

// reconcile is CurrentAssignmentBuilder.build: it moves m towards its
// target at the group's assignment epoch. owned is the heartbeat's owned
// partitions (nil: not sent). It reports whether m changed.
func (g *consumerGroup) reconcile(m *cgMember, owned []TopicPartition, ownedSent bool) bool {
	ownsRevoked := func(pending []TopicPartition) bool {
		if !ownedSent {
			return true
		}
		for _, tp := range owned {
			if slices.Contains(pending, tp) {
				return true
			}
		}
		return false
	}
	switch m.state {
	case MemberStable:
		if m.epoch == g.assignmentEpoch {
			return false
		}
		return g.computeNext(m, m.epoch, ownsRevoked)
	case MemberUnrevokedPartitions:
		if ownsRevoked(m.pending) {
			return false
		}
		return g.computeNext(m, m.epoch+1, ownsRevoked)
	default: // MemberUnreleasedPartitions
		return g.computeNext(m, m.epoch, ownsRevoked)
	}
}

// computeNext is CurrentAssignmentBuilder.computeNextAssignment.
func (g *consumerGroup) computeNext(m *cgMember, epoch int32, ownsRevoked func([]TopicPartition) bool) bool {
	var keep, revoke, add []TopicPartition
	unreleased := false
	for _, tp := range m.assigned {
		if slices.Contains(m.target, tp) {
			keep = append(keep, tp)
		} else {
			revoke = append(revoke, tp)
		}
	}
	for _, tp := range m.target {
		if slices.Contains(keep, tp) {
			continue
		}
		// NB: mutant.AssignBeforeRevoke hands a held partition out at once.
		if o, held := g.owner[tp]; held && o != m.id && !g.assignBeforeRevoke {
			unreleased = true
			continue
		}
		add = append(add, tp)
	}
	before := *m
	g.release(m)
	switch {
	case len(revoke) > 0 && ownsRevoked(revoke):
		m.state = MemberUnrevokedPartitions
		m.setEpoch(epoch)
		m.assigned, m.pending = keep, revoke
	case len(add) > 0:
		m.assigned = append(keep, add...)
		sortTPs(m.assigned)
		m.pending = nil
		m.state = MemberStable
		if unreleased {
			m.state = MemberUnreleasedPartitions
		}
		m.setEpoch(g.assignmentEpoch)
	default:
		m.assigned, m.pending = keep, nil
		m.state = MemberStable
		if unreleased {
			m.state = MemberUnreleasedPartitions
		}
		m.setEpoch(g.assignmentEpoch)
	}
	g.hold(m)
	return m.epoch != before.epoch || m.previousEpoch != before.previousEpoch || m.state != before.state ||
		!slices.Equal(m.assigned, before.assigned) || !slices.Equal(m.pending, before.pending)
}

// setEpoch is ConsumerGroupMember.Builder.updateMemberEpoch: the previous
// epoch becomes the current one even when the epoch does not change.
func (m *cgMember) setEpoch(e int32) {
	m.previousEpoch, m.epoch = m.epoch, e
}

// computeTarget runs the server-side assignor over the members' current
// targets (TargetAssignmentBuilder) and stores the result as the target of
// the group's epoch.
func (g *consumerGroup) computeTarget(a assignor.ServerAssignor) error {
	names := map[string]bool{}
	for _, t := range g.topics {
		names[t.Name] = true
	}
	var ms []assignor.ServerMember
	for _, id := range g.memberIDs() {
		m := g.members[id]
		sm := assignor.ServerMember{ID: id, InstanceID: m.instanceID}
		for _, t := range m.topics {
			if names[t] { // a topic that does not exist yet is not assigned
				sm.Topics = append(sm.Topics, t)
			}
		}
		for _, tp := range m.target {
			sm.Assigned = append(sm.Assigned, assignor.TopicPartition{Topic: tp.Topic, Partition: tp.Partition})
		}
		ms = append(ms, sm)
	}
	out, err := a.Assign(ms, g.topics)
	if err != nil {
		return err
	}
	for _, id := range g.memberIDs() {
		var target []TopicPartition
		for _, tp := range out[id] {
			target = append(target, TopicPartition{tp.Topic, tp.Partition})
		}
		sortTPs(target)
		g.members[id].target = target
	}
	g.assignmentEpoch = g.epoch
	return nil
}
