// invariants_kip848.go: the invariants monitor's live checks of the
// consumer group protocol (KIP-848), after Vanlightly's TLA+ specification
// (kafka-tlaplus, groupprotocol/consumer_group_protocol_kip_848_v2.tla).
// The monitor is fed, after every event of a run with a group.protocol=
// consumer member, each serving coordinator's consumer groups
// (GroupSnapshot) and each running consumer's own view (ClientSnapshot).
//
// The spec's invariants, and what is checked of each (docs/kip848.md):
//   - LegalTargetAssignment (kip848-legal-target-assignment): once the
//     target is computed for the group's epoch (target epoch = group
//     epoch), every partition of a topic some member subscribes to is in
//     exactly one member's target, and only to a member subscribed to its
//     topic. Between a bump and the assignor's run (Kafka's Assigning
//     state) the old target is allowed to be stale, as in Kafka.
//   - NoDoubleClientAssignment (kip848-double-client-assignment): no two
//     clients that are both members of the group (their member id is in a
//     serving coordinator's group) believe they own one partition; classic
//     members inside a consumer group count too (and for ValidMemberEpoch,
//     their generation is their member epoch).
//   - ValidMemberEpoch (kip848-member-epoch): a client that is a member and
//     at the target's epoch owns no partition the target gives another
//     member. NB: the spec quantifies over every client; here only members,
//     since a fenced client keeps its last epoch until it hears of it.
//   - ValidStableGroupState (kip848-stable-group-state): a Stable group's
//     members are all STABLE at the group epoch, revoking nothing, owning
//     exactly their target.
//   - ValidPartitionEpoch (kip848-partition-epoch): the coordinator's
//     partition owners agree with its members (every partition a member
//     holds, assigned or pending revocation, is held by it alone).
//   - ClientSideMemberEpochIsMonotonic (kip848-client-epoch-decreased): a
//     client process's member epoch decreases only to 0 or below (joining,
//     leaving).
//   - GcSideMemberEpochIsMonotonic (kip848-member-epoch-decreased): a
//     member's epoch at a coordinator decreases only to a leave epoch (-2,
//     a static member's temporary leave); counted per coordinator process
//     life and load, since a new coordinator replays only what committed.
//   - TypeOK: Go's types; EventuallyConverges: the liveness checker's
//     group-unstable after healing (liveness.go); not repeated here.
//
// Every break is a violation: none of them is a loss Kafka's contract
// permits. A break that persists is reported once, at its first event.

package checkers

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// The KIP-848 anomaly kinds of the invariants monitor.
const (
	KindKIP848LegalTarget      = "kip848-legal-target-assignment"
	KindKIP848DoubleAssignment = "kip848-double-client-assignment"
	KindKIP848MemberEpoch      = "kip848-member-epoch"
	KindKIP848StableGroup      = "kip848-stable-group-state"
	KindKIP848PartitionEpoch   = "kip848-partition-epoch"
	KindKIP848ClientEpochDown  = "kip848-client-epoch-decreased"
	KindKIP848MemberEpochDown  = "kip848-member-epoch-decreased"
)

// GroupSnapshot is one coordinator's consumer group after an event.
type GroupSnapshot struct {
	Coordinator int32
	// Life counts the coordinator's loads of the group's partition (and
	// its process restarts): epochs are compared within one life.
	Life            int64
	Group           string
	State           string // Empty, Assigning, Reconciling, Stable
	Epoch           int32  // group epoch
	AssignmentEpoch int32  // target assignment epoch
	// Partitions is each subscribed topic's partition count.
	Partitions map[string]int32
	Members    []GroupMemberSnapshot
}

// GroupMemberSnapshot is a member as its coordinator holds it.
type GroupMemberSnapshot struct {
	ID         string
	Epoch      int32
	Stable     bool // MemberState STABLE
	Subscribed []string
	// Assigned, Pending and Target are "topic-partition" strings, sorted.
	Assigned, Pending, Target []string
	// Held is what the coordinator's partition-owner map gives this
	// member, sorted.
	Held []string
}

// ClientSnapshot is a running consumer's own view of its membership.
type ClientSnapshot struct {
	Process string
	Life    int // the process's restarts: a new process starts at epoch 0
	Group   string
	Member  string
	Epoch   int32
	Owned   []string // the partitions it believes it owns, sorted
	// Classic: the consumer runs the classic protocol (a classic member
	// inside a consumer group, KIP-848's migration): its generation is
	// its member epoch there, but its epoch is not judged on its own.
	Classic bool
}

type kip848Watch struct {
	clientEpoch map[string]clientEpochSeen
	memberEpoch map[memberKey]int32
	active      map[string]bool // breaks ongoing, by key
	seen        map[string]bool // breaks ongoing at the last observation
}

type clientEpochSeen struct {
	life  int
	epoch int32
}

type memberKey struct {
	coordinator int32
	life        int64
	group, id   string
}

// ObserveGroups checks the consumer groups and clients seen after trace
// step step at time t. Call it after every event that may have changed
// them, in order.
func (m *Monitor) ObserveGroups(step uint64, t sim.Time, groups []GroupSnapshot, clients []ClientSnapshot) {
	w := m.kip848
	if w == nil {
		w = &kip848Watch{clientEpoch: map[string]clientEpochSeen{}, memberEpoch: map[memberKey]int32{}, active: map[string]bool{}}
		m.kip848 = w
	}
	m.steps++
	w.seen = map[string]bool{}
	report := func(kind, key, desc string) {
		k := kind + "|" + key
		w.seen[k] = true
		if w.active[k] {
			return
		}
		w.active[k] = true
		m.add(Anomaly{Kind: kind, Times: []sim.Time{t}, Description: "step " + strconv.FormatUint(step, 10) + ": " + desc})
	}
	for _, g := range groups {
		checkGroupSnapshot(g, report)
		for _, mb := range g.Members {
			k := memberKey{g.Coordinator, g.Life, g.Group, mb.ID}
			if prev, ok := w.memberEpoch[k]; ok && mb.Epoch < prev && mb.Epoch > 0 { // NB: a join (0) or a static leave (-2) may lower it
				report(KindKIP848MemberEpochDown, g.Group+"|"+mb.ID+"|"+strconv.Itoa(int(prev)),
					"coordinator b"+strconv.Itoa(int(g.Coordinator))+": member "+mb.ID+" of "+g.Group+" went from epoch "+
						strconv.Itoa(int(prev))+" to "+strconv.Itoa(int(mb.Epoch))+" (GcSideMemberEpochIsMonotonic)")
			}
			w.memberEpoch[k] = mb.Epoch
		}
	}
	checkClients(groups, clients, report)
	for _, c := range clients {
		prev, ok := w.clientEpoch[c.Process]
		if ok && prev.life == c.Life && c.Epoch < prev.epoch && c.Epoch > 0 && !c.Classic {
			report(KindKIP848ClientEpochDown, c.Process+"|"+strconv.Itoa(int(prev.epoch)),
				c.Process+" went from member epoch "+strconv.Itoa(int(prev.epoch))+" to "+strconv.Itoa(int(c.Epoch))+
					" (ClientSideMemberEpochIsMonotonic: only a join or a leave lowers it)")
		}
		w.clientEpoch[c.Process] = clientEpochSeen{c.Life, c.Epoch}
	}
	for k := range w.active { // NB: deleting only; order does not matter
		if !w.seen[k] {
			delete(w.active, k)
		}
	}
}

// checkGroupSnapshot checks one coordinator's group on its own.
func checkGroupSnapshot(g GroupSnapshot, report func(kind, key, desc string)) {
	where := "coordinator b" + strconv.Itoa(int(g.Coordinator)) + ", group " + g.Group + ": "
	// ValidPartitionEpoch: holders agree with the members.
	holder := map[string]string{}
	for _, mb := range g.Members {
		for _, p := range append(slices.Clone(mb.Assigned), mb.Pending...) {
			if o, ok := holder[p]; ok && o != mb.ID {
				report(KindKIP848PartitionEpoch, g.Group+"|"+p, where+p+" is held by both "+o+" and "+mb.ID)
			}
			holder[p] = mb.ID
			if !slices.Contains(mb.Held, p) {
				report(KindKIP848PartitionEpoch, g.Group+"|"+p+"|owner", where+mb.ID+" holds "+p+" but the partition epochs give it to no one (ValidPartitionEpoch)")
			}
		}
	}
	// ValidStableGroupState.
	if g.State == "Stable" {
		for _, mb := range g.Members {
			if !mb.Stable || mb.Epoch != g.Epoch || len(mb.Pending) > 0 || !slices.Equal(mb.Assigned, mb.Target) {
				report(KindKIP848StableGroup, g.Group+"|"+mb.ID, where+"Stable at epoch "+strconv.Itoa(int(g.Epoch))+", but member "+mb.ID+
					" is at epoch "+strconv.Itoa(int(mb.Epoch))+" owning "+tpsText(mb.Assigned)+" revoking "+tpsText(mb.Pending)+
					" with target "+tpsText(mb.Target)+" (ValidStableGroupState)")
			}
		}
	}
	// LegalTargetAssignment, once the target is the group epoch's.
	if g.Epoch != g.AssignmentEpoch || len(g.Members) == 0 {
		return
	}
	target := map[string]string{}
	for _, mb := range g.Members {
		for _, p := range mb.Target {
			if o, ok := target[p]; ok {
				report(KindKIP848LegalTarget, g.Group+"|"+p+"|twice", where+"the target of epoch "+strconv.Itoa(int(g.AssignmentEpoch))+" gives "+p+" to both "+o+" and "+mb.ID)
			}
			target[p] = mb.ID
			if topic := p[:strings.LastIndexByte(p, '-')]; !slices.Contains(mb.Subscribed, topic) {
				report(KindKIP848LegalTarget, g.Group+"|"+p+"|unsubscribed", where+"the target gives "+p+" to "+mb.ID+", which does not subscribe to "+topic)
			}
		}
	}
	var topics []string
	for _, mb := range g.Members {
		topics = append(topics, mb.Subscribed...)
	}
	slices.Sort(topics)
	for _, topic := range slices.Compact(topics) {
		n, ok := g.Partitions[topic]
		if !ok {
			continue // not created yet: nothing to assign
		}
		for p := int32(0); p < n; p++ {
			tp := topic + "-" + strconv.Itoa(int(p))
			if _, ok := target[tp]; !ok {
				report(KindKIP848LegalTarget, g.Group+"|"+tp+"|missing", where+"the target of epoch "+strconv.Itoa(int(g.AssignmentEpoch))+" leaves "+tp+" out (LegalTargetAssignment)")
			}
		}
	}
}

// checkClients checks the clients against the serving coordinators'
// groups: NoDoubleClientAssignment and ValidMemberEpoch.
func checkClients(groups []GroupSnapshot, clients []ClientSnapshot, report func(kind, key, desc string)) {
	for _, g := range groups {
		members := map[string]GroupMemberSnapshot{}
		for _, mb := range g.Members {
			members[mb.ID] = mb
		}
		owner := map[string]string{}
		for _, c := range clients {
			if c.Group != g.Group || c.Member == "" {
				continue
			}
			if _, in := members[c.Member]; !in {
				continue
			}
			for _, p := range c.Owned {
				if o, ok := owner[p]; ok {
					report(KindKIP848DoubleAssignment, g.Group+"|"+p, "group "+g.Group+": "+o+" and "+c.Process+
						", both members at coordinator b"+strconv.Itoa(int(g.Coordinator))+", believe they own "+p+" (NoDoubleClientAssignment)")
				}
				owner[p] = c.Process
			}
			if c.Epoch != g.AssignmentEpoch {
				continue
			}
			for _, mb := range g.Members {
				if mb.ID == c.Member {
					continue
				}
				for _, p := range c.Owned {
					if slices.Contains(mb.Target, p) {
						report(KindKIP848MemberEpoch, g.Group+"|"+c.Process+"|"+p, "group "+g.Group+": "+c.Process+" is at the target epoch "+
							strconv.Itoa(int(c.Epoch))+" and owns "+p+", which the target gives "+mb.ID+" (ValidMemberEpoch)")
					}
				}
			}
		}
	}
}

func tpsText(ps []string) string { return "[" + strings.Join(ps, " ") + "]" }
