package coordinator

// This file is a group's state (Kafka's GroupMetadata and MemberMetadata):
// its state in the classic protocol, generation, selected protocol, leader,
// members, members waiting for a rebalance to register, and committed
// offsets.
//
// Invariant: members awaiting a JoinGroup answer exist only in
// PreparingRebalance (and, for a static member replacing its old member id
// in a Stable group, while that change is stored); members awaiting a
// SyncGroup answer only in CompletingRebalance; an Empty group has no
// members; static maps each group.instance.id to the member that has it,
// and only to a member of the group (KIP-345).

import (
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// State is a group's state in the classic protocol.
type State uint8

// The states (GroupState.scala).
const (
	Empty State = iota
	PreparingRebalance
	CompletingRebalance // AwaitingSync before Kafka 2.0
	Stable
	Dead
)

func (s State) String() string {
	return [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}[s]
}

type member struct {
	id               string
	instanceID       string // group.instance.id (KIP-345); "" for a dynamic member
	clientID         string
	sessionTimeout   sim.Duration
	rebalanceTimeout sim.Duration
	protocols        []kmsg.JoinGroupRequestProtocol
	assignment       []byte
	lastHeartbeat    sim.Time
	joinReply        func(*kmsg.JoinGroupResponse) // parked JoinGroup
	syncReply        func(*kmsg.SyncGroupResponse) // parked SyncGroup
}

func (m *member) awaitingJoin() bool { return m.joinReply != nil }

// metadataFor returns the member's metadata for protocol name.
func (m *member) metadataFor(name string) []byte {
	for _, p := range m.protocols {
		if p.Name == name {
			return p.Metadata
		}
	}
	return nil
}

// TopicPartition names a partition whose offset a group commits.
type TopicPartition struct {
	Topic     string
	Partition int32
}

type group struct {
	id           string
	partition    int32
	state        State
	generation   int32
	protocolType string
	protocol     string // selected protocol; "" when none
	leader       string // "" when none
	members      map[string]*member
	static       map[string]string   // group.instance.id -> member id (GroupMetadata.staticMembers)
	pending      map[string]sim.Time // MEMBER_ID_REQUIRED ids, by expiry
	joinDeadline sim.Time            // PreparingRebalance ends by then
	initialDelay bool                // group.initial.rebalance.delay.ms in force
	delayLimit   sim.Time            // the initial delay never extends past this
	offsets      map[TopicPartition]Offset
	// offsetAt orders each committed offset's record in the partition
	// (txn_offsets.go): a transactional commit replaces it only if its
	// own record is later (Kafka's CommitRecordMetadataAndOffset.olderThan).
	offsetAt map[TopicPartition]int64
	// txnOffsets are the pending transactional offset commits, by
	// producer id (Kafka's pendingTransactionalOffsetCommits).
	txnOffsets map[int64]map[TopicPartition]*pendingOffset
}

func newGroup(id string, partition int32) *group {
	return &group{id: id, partition: partition, members: map[string]*member{}, static: map[string]string{}, pending: map[string]sim.Time{}, offsets: map[TopicPartition]Offset{},
		offsetAt: map[TopicPartition]int64{}, txnOffsets: map[int64]map[TopicPartition]*pendingOffset{}}
}

// addMember puts m in the group, and in the static map when it has a
// group.instance.id.
func (g *group) addMember(m *member) {
	g.members[m.id] = m
	if m.instanceID != "" {
		g.static[m.instanceID] = m.id
	}
}

// removeMember takes member id out of the group and out of the static
// map (GroupMetadata.remove).
func (g *group) removeMember(id string) {
	if m := g.members[id]; m != nil && m.instanceID != "" && g.static[m.instanceID] == id {
		delete(g.static, m.instanceID)
	}
	delete(g.members, id)
}

// validateMember is Kafka's validateCurrentMember: a request naming a
// group.instance.id (instance != "") must come from the member that
// instance id maps to (else FENCED_INSTANCE_ID: an older incarnation of
// the instance, a zombie), or the instance is unknown (UNKNOWN_MEMBER_ID);
// without one, the member id must be in the group.
func (g *group) validateMember(memberID, instance string) *kerr.Error {
	if instance != "" {
		cur, ok := g.static[instance]
		switch {
		case !ok:
			return kerr.UnknownMemberID
		case cur != memberID:
			return kerr.FencedInstanceID
		}
		return nil
	}
	if g.members[memberID] == nil {
		return kerr.UnknownMemberID
	}
	return nil
}

// instanceOf returns a request's group.instance.id, "" when absent.
func instanceOf(id *string) string {
	if id == nil {
		return ""
	}
	return *id
}

// memberIDs returns the member ids sorted, so map order never reaches a
// decision.
func (g *group) memberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (g *group) pendingIDs() []string {
	ids := make([]string, 0, len(g.pending))
	for id := range g.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// candidateProtocols returns the protocols every member supports, in the
// order of the first member's preference list.
func (g *group) candidateProtocols() []string {
	ids := g.memberIDs()
	if len(ids) == 0 {
		return nil
	}
	var out []string
	for _, p := range g.members[ids[0]].protocols {
		all := true
		for _, id := range ids[1:] {
			if g.members[id].metadataFor(p.Name) == nil {
				all = false
				break
			}
		}
		if all {
			out = append(out, p.Name)
		}
	}
	return out
}

// supportsProtocols reports whether a member with these protocols may join
// (Kafka's GroupMetadata.supportsProtocols).
func (g *group) supportsProtocols(protocolType string, protocols []kmsg.JoinGroupRequestProtocol) bool {
	if len(g.members) == 0 {
		return protocolType != "" && len(protocols) > 0
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, c := range g.candidateProtocols() {
		for _, p := range protocols {
			if p.Name == c {
				return true
			}
		}
	}
	return false
}

// selectProtocol picks the protocol every member supports that most members
// prefer (each votes for its first candidate); ties go to the name first in
// sort order (Kafka's choice among equals follows a hash map's order).
func (g *group) selectProtocol() string {
	cands := g.candidateProtocols()
	votes := map[string]int{}
	for _, id := range g.memberIDs() {
		for _, p := range g.members[id].protocols {
			if slices.Contains(cands, p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	sorted := slices.Clone(cands)
	slices.Sort(sorted)
	for _, c := range sorted {
		if best == "" || votes[c] > votes[best] {
			best = c
		}
	}
	return best
}

// rebalanceTimeout is the longest rebalance timeout of the members.
func (g *group) rebalanceTimeout() sim.Duration {
	var d sim.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout) // NB: a maximum, map order does not matter
	}
	return d
}

// allJoined reports whether every member has rejoined and no member id
// handed out with MEMBER_ID_REQUIRED is still expected.
func (g *group) allJoined() bool {
	for _, m := range g.members {
		if !m.awaitingJoin() {
			return false
		}
	}
	return len(g.pending) == 0
}

// metadataValue is the group's record value (GroupMetadataValue v3).
func (g *group) metadataValue(now sim.Time, assignments map[string][]byte) *kmsg.GroupMetadataValue {
	v := kmsg.NewGroupMetadataValue()
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	if g.protocol != "" {
		p := g.protocol
		v.Protocol = &p
	}
	if g.leader != "" {
		l := g.leader
		v.Leader = &l
	}
	v.CurrentStateTimestamp = ms(now)
	for _, id := range g.memberIDs() {
		m := g.members[id]
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID, vm.ClientID, vm.ClientHost = id, m.clientID, "/"+m.clientID
		if m.instanceID != "" {
			inst := m.instanceID
			vm.InstanceID = &inst // v3+: a static member comes back with it after a fail-over
		}
		vm.RebalanceTimeoutMillis = int32(m.rebalanceTimeout.Milliseconds())
		vm.SessionTimeoutMillis = int32(m.sessionTimeout.Milliseconds())
		vm.Subscription = m.metadataFor(g.protocol)
		vm.Assignment = assignments[id]
		v.Members = append(v.Members, vm)
	}
	return &v
}

// describe renders the group for the trace.
func (g *group) describe() string {
	return g.id + " " + g.state.String() + " gen=" + strconv.Itoa(int(g.generation)) + " members=" + strconv.Itoa(len(g.members))
}

func ms(t sim.Time) int64 { return int64(t) / int64(sim.Millisecond) }
