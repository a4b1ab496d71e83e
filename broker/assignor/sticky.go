package assignor

// This file is the Sticky assignor: a port of Kafka's AbstractStickyAssignor
// (clients/.../consumer/internals/AbstractStickyAssignor.java, checked line
// by line against the 3.9 release branch (no 3.9.0 tag in the mirror; 3.8
// is the same without racks): ConstrainedAssignmentBuilder and
// GeneralAssignmentBuilder, run
// without rack information) and StickyAssignor (KIP-54; KIP-341 for the
// generation in StickyAssignorUserData v1). The cooperative variant is in
// cooperative.go, the general (unequal subscriptions) path in
// sticky_general.go, Java's hash iteration order in javahash.go.
//
// Kafka's assign splits on allSubscriptionsEqual. With identical
// subscriptions, constrainedAssign lets each member keep its previous
// partitions (in partition-then-topic order, KAFKA-16277) up to minQuota,
// or maxQuota for the first totalPartitions%members members that owned at
// least that many; the rest are revoked, and the unassigned partitions
// (sorted by topic, partition) are dealt round-robin to the members under
// minQuota (sorted by id), then one each to members at minQuota. Otherwise
// generalAssign keeps every valid previous owner, gives each unassigned
// partition to the least-loaded member subscribed to it, then moves
// partitions (performReassignments, PartitionMovements) until isBalanced,
// and reverts to the pre-balance assignment if that did not lower the
// balance score. A partition claimed by several members stays with the
// highest generation; one claimed twice in the same generation is taken
// from both.
//
// Where Kafka's result depends on the iteration order of a Java HashMap
// or HashSet (the subscriptions map in allSubscriptionsEqual and
// assignOwnedPartitions, which decides who keeps maxQuota and who wins a
// claim; the tie in updatePrevAssignment; the HashSet in
// getTheActualPartitionToBeMoved), javahash.go reproduces Java's order from
// String.hashCode / TopicPartition.hashCode and the members' order in
// JoinGroup, so results match Kafka's and Kafka's own test expectations
// hold. Everything else is sorted as Kafka sorts it. As in Kafka's leader,
// only topics some member subscribes to take part.
//
// NB: a claim conflict compares the claimant's MemberData generation with
// the earlier claimant's Subscription.generationId (Member.Generation), not
// with that member's MemberData generation, as Kafka's
// allSubscriptionsEqual does. The two differ for "sticky" when the user
// data names another generation than the subscription (a member whose
// generation was reset sends its last assignment and generation in user
// data, and generation -1 in the subscription), and for
// "cooperative-sticky" with a v0/v1 subscription.
//
// Deviations from Kafka:
//   - maxGeneration is computed per call (Kafka keeps it in an instance
//     field that never resets).
//   - An owned partition beyond the topic's partition count is dropped like
//     one of a missing topic (Kafka checks only the topic).
//   - The "previous owner" move of performReassignments is skipped when the
//     previous owner is fixed or no longer subscribes to the topic (Kafka
//     would throw a NullPointerException or give the partition to a member
//     that does not subscribe to it).
//   - (Not a deviation, NB:) eager Sticky reads the previous assignment
//     only from UserData (StickyAssignorUserData), as Kafka's
//     StickyAssignor.memberData does: a member without user data (a first
//     assignment, or one that upgraded from another assignor and sends its
//     owned partitions in the subscription only) has no previous
//     partitions and no generation.
//   - A subscription generation of 0 counts as unknown (Member.Generation's
//     zero value; Kafka reads 0 as a generation, but no group reaches a
//     consumer at generation 0: the first is 1).
//   - Java HashMap tree bins (8+ colliding member ids) are not modelled.
// A broken internal invariant (Kafka's IllegalStateException) panics.

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultGeneration is AbstractStickyAssignor.DEFAULT_GENERATION: the
// generation of a member whose generation is unknown.
const DefaultGeneration int32 = -1

// Sticky is the sticky assignor (Kafka's StickyAssignor).
type Sticky struct {
	// Cooperative makes it the cooperative-sticky assignor (it then
	// behaves exactly as CooperativeSticky).
	Cooperative bool
}

// Name implements Assignor.
func (s Sticky) Name() string {
	if s.Cooperative {
		return CooperativeSticky{}.Name()
	}
	return "sticky"
}

// Assign implements Assignor.
func (s Sticky) Assign(members []Member, partitions map[string]int32) Assignment {
	if s.Cooperative {
		return CooperativeSticky{}.Assign(members, partitions)
	}
	out, _ := stickyAssign(members, partitions, stickyMemberData)
	return out
}

// memberData is AbstractStickyAssignor.memberData: a member's previous
// partitions and their generation (DefaultGeneration if unknown).
type memberData func(Member) ([]TopicPartition, int32)

// stickyMemberData is StickyAssignor.memberData: the previous partitions
// and generation from the user data; none without it (Member.Owned is
// ignored, as Kafka ignores the subscription's ownedPartitions here).
func stickyMemberData(m Member) ([]TopicPartition, int32) {
	if len(m.UserData) == 0 {
		return nil, DefaultGeneration
	}
	tps, gen, err := DecodeStickyUserData(m.UserData)
	if err != nil {
		return nil, DefaultGeneration
	}
	return tps, gen
}

// generation is the member's generation, DefaultGeneration if unknown.
func (m Member) generation() int32 {
	if m.Generation <= 0 {
		return DefaultGeneration
	}
	return m.Generation
}

// stickyInput is what both paths start from: the members sorted by id,
// their resolved previous partitions, and the partitions of the subscribed
// topics.
type stickyInput struct {
	ms     []Member           // sorted by id; index = member number
	order  []int              // member numbers in Java HashMap order
	topics [][]string         // per member: subscribed topics, deduplicated
	parts  map[string]int32   // subscribed topics that exist
	all    []TopicPartition   // every partition of parts, sorted by Compare
	owned  [][]TopicPartition // per member: previous partitions after conflict resolution
	gens   []int32            // per member: memberData generation
	multi  map[TopicPartition]bool
	data   memberData
}

// stickyAssign runs AbstractStickyAssignor.assign. transferring is
// partitionsTransferringOwnership of the constrained path (partition ->
// member taking it over), nil after the general path.
func stickyAssign(members []Member, partitions map[string]int32, md memberData) (Assignment, map[TopicPartition]string) {
	out := newAssignment(members)
	ms := sortedMembers(members)
	if len(ms) == 0 {
		return out, nil
	}
	in := &stickyInput{ms: ms, order: hashMapOrder(ms, members), parts: map[string]int32{}, multi: map[TopicPartition]bool{}, data: md}
	for _, m := range ms {
		var ts []string
		seen := make(map[string]bool, len(m.Topics))
		for _, t := range m.Topics {
			if !seen[t] {
				seen[t] = true
				ts = append(ts, t)
			}
			if n, ok := partitions[t]; ok && n > 0 {
				in.parts[t] = n
			}
		}
		in.topics = append(in.topics, ts)
	}
	in.all = allPartitions(ms, in.parts)
	var lists [][]TopicPartition
	var transferring map[TopicPartition]string
	if in.allSubscriptionsEqual() {
		var tr map[TopicPartition]int
		lists, tr = in.constrainedAssign()
		transferring = map[TopicPartition]string{}
		for tp, i := range tr {
			transferring[tp] = ms[i].ID
		}
	} else {
		lists = newGeneral(in).assign()
	}
	for i, m := range ms {
		out[m.ID] = append(out[m.ID], lists[i]...)
	}
	return out.sort(), transferring
}

func (in *stickyInput) valid(tp TopicPartition) bool {
	n, ok := in.parts[tp.Topic]
	return ok && tp.Partition >= 0 && tp.Partition < n
}

// allSubscriptionsEqual reports whether every member subscribes to the same
// topics, and resolves the previous owners: a partition claimed by members
// of different generations stays with the highest generation; one claimed
// twice in the same generation is taken from both (multi).
func (in *stickyInput) allSubscriptionsEqual() bool {
	equal := true
	subscribed := map[string]bool{}
	prevOwner := map[TopicPartition]int{}
	in.owned = make([][]TopicPartition, len(in.ms))
	in.gens = make([]int32, len(in.ms))
	for _, i := range in.order {
		m := in.ms[i]
		ts := in.topics[i]
		if len(subscribed) == 0 {
			for _, t := range ts {
				subscribed[t] = true
			}
		} else if equal && !(len(ts) == len(subscribed) && allIn(ts, subscribed)) {
			equal = false
		}
		tps, gen := in.data(m)
		in.gens[i] = gen
		for _, tp := range tps {
			if !in.valid(tp) {
				continue
			}
			other, ok := prevOwner[tp]
			switch {
			case !ok:
				in.owned[i] = append(in.owned[i], tp)
				prevOwner[tp] = i
			case gen == in.ms[other].generation():
				in.multi[tp] = true
				in.owned[other] = removeTP(in.owned[other], tp)
				prevOwner[tp] = i
			case gen > in.ms[other].generation():
				in.owned[i] = append(in.owned[i], tp)
				in.owned[other] = removeTP(in.owned[other], tp)
				prevOwner[tp] = i
			}
		}
	}
	return equal
}

func allIn(ts []string, set map[string]bool) bool {
	for _, t := range ts {
		if !set[t] {
			return false
		}
	}
	return true
}

// removeTP removes the first tp from l (Java's List.remove(Object)).
func removeTP(l []TopicPartition, tp TopicPartition) []TopicPartition {
	if i := slices.Index(l, tp); i >= 0 {
		return slices.Delete(l, i, i+1)
	}
	return l
}

// constrainedAssign is ConstrainedAssignmentBuilder.build without racks:
// assignOwnedPartitions, then assignRoundRobin, then verifyUnfilledMembers.
// It returns each member's partitions and partitionsTransferringOwnership.
func (in *stickyInput) constrainedAssign() ([][]TopicPartition, map[TopicPartition]int) {
	n, total := len(in.ms), len(in.all)
	minQuota, maxQuota := total/n, (total+n-1)/n
	expectedOver, currentOver := total%n, 0
	assignment := make([][]TopicPartition, n)
	assigned := map[TopicPartition]bool{}
	revoked := map[TopicPartition]int{} // maybeRevokedPartitions: partition -> member that gave it up
	transferring := map[TopicPartition]int{}
	var under, exactly []int // unfilledMembersWith{Under,Exactly}MinQuotaPartitions

	// assignOwnedPartitions.
	for _, i := range in.order {
		owned := slices.Clone(in.owned[i])
		// NB: Kafka sorts owned partitions by partition id, then topic.
		slices.SortFunc(owned, func(a, b TopicPartition) int {
			if a.Partition != b.Partition {
				return int(a.Partition) - int(b.Partition)
			}
			return strings.Compare(a.Topic, b.Topic)
		})
		owned = slices.DeleteFunc(owned, func(tp TopicPartition) bool { return in.multi[tp] })
		keep := func(k int) {
			assignment[i] = append(assignment[i], owned[:k]...)
			for _, tp := range owned[:k] {
				assigned[tp] = true
			}
			for _, tp := range owned[k:] {
				revoked[tp] = i
			}
		}
		switch {
		case len(owned) < minQuota:
			keep(len(owned))
			under = append(under, i)
		case len(owned) >= maxQuota && currentOver < expectedOver:
			currentOver++
			if currentOver == expectedOver {
				exactly = exactly[:0]
			}
			keep(maxQuota)
		default:
			keep(minQuota)
			if currentOver < expectedOver {
				exactly = append(exactly, i)
			}
		}
	}

	// assignRoundRobin over the unassigned partitions, sorted by topic then
	// partition, with under and exactly sorted by member id.
	slices.Sort(under)
	slices.Sort(exactly)
	next := 0 // the under iterator's position
	for _, tp := range in.all {
		if assigned[tp] {
			continue
		}
		var c int
		fromUnder := false
		switch {
		case next < len(under):
			c, fromUnder = under[next], true
			next++
		case len(under) == 0 && len(exactly) == 0:
			panic(fmt.Sprintf("sticky assignor: no more unfilled consumers to be assigned %v", tp))
		case len(under) == 0:
			c, exactly = exactly[0], exactly[1:]
		default:
			c, fromUnder, next = under[0], true, 1
		}
		assignment[c] = append(assignment[c], tp)
		if from, ok := revoked[tp]; (ok && from != c) || in.multi[tp] {
			transferring[tp] = c
		}
		switch count := len(assignment[c]); {
		case count == minQuota:
			if fromUnder {
				next--
				under = slices.Delete(under, next, next+1)
			}
			exactly = append(exactly, c)
		case count == maxQuota:
			currentOver++
		}
	}

	// verifyUnfilledMembers.
	if len(under) > 0 {
		if currentOver != expectedOver {
			panic(fmt.Sprintf("sticky assignor: %d members over minQuota, want %d, and no partitions left", currentOver, expectedOver))
		}
		for _, c := range under {
			if len(assignment[c]) != minQuota {
				panic(fmt.Sprintf("sticky assignor: member %s has %d partitions, under minQuota %d", in.ms[c].ID, len(assignment[c]), minQuota))
			}
		}
	}
	return assignment, transferring
}
