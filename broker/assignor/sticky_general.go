package assignor

// This file is the general path of the sticky assignor (Kafka's
// AbstractStickyAssignor.GeneralAssignmentBuilder, without racks): used
// when the members' subscriptions differ. Members and partitions are
// numbered: member i is the i-th by id, partition p the p-th by (topic,
// partition), so comparing numbers orders them as Kafka's comparators do.

import (
	"cmp"
	"slices"
)

// general is GeneralAssignmentBuilder's state.
type general struct {
	in                 *stickyInput
	pidx               map[TopicPartition]int
	topicNames         []string // sorted
	topicOf            []int    // partition -> topic number
	topicFirst         []int    // topic -> its partition 0's number
	topicCount         []int    // topic -> partition count
	topicCons          [][]int  // topic2AllPotentialConsumers
	consTopics         [][]int  // consumer2AllPotentialTopics
	subscribes         [][]bool // member, topic
	maxSize            []int    // getMaxAssignmentSize per member
	owner              []int    // currentPartitionConsumer; -1 if none
	count              []int    // currentAssignment sizes
	present            []bool   // still in currentAssignment (not fixed)
	sorted             []int    // sortedCurrentSubscriptions: by (count, id)
	sortedAll          []int    // sortedAllPartitions
	prev               map[int]prevOwner
	moves              movements
	revocationRequired bool
}

// prevOwner is ConsumerGenerationPair.
type prevOwner struct {
	member int
	gen    int32
}

func newGeneral(in *stickyInput) *general {
	g := &general{in: in, pidx: map[TopicPartition]int{}, prev: map[int]prevOwner{}}
	for t := range in.parts {
		g.topicNames = append(g.topicNames, t)
	}
	slices.Sort(g.topicNames)
	tidx := map[string]int{}
	for i, t := range g.topicNames {
		tidx[t] = i
		g.topicFirst = append(g.topicFirst, len(g.topicOf))
		g.topicCount = append(g.topicCount, int(in.parts[t]))
		for p := 0; p < int(in.parts[t]); p++ {
			g.pidx[TopicPartition{t, int32(p)}] = len(g.topicOf)
			g.topicOf = append(g.topicOf, i)
		}
	}
	n, nt := len(in.ms), len(g.topicNames)
	g.topicCons = make([][]int, nt)
	g.consTopics = make([][]int, n)
	g.subscribes = make([][]bool, n)
	g.maxSize = make([]int, n)
	for i := range in.ms {
		g.subscribes[i] = make([]bool, nt)
		for _, t := range in.topics[i] {
			if ti, ok := tidx[t]; ok {
				g.subscribes[i][ti] = true
				g.consTopics[i] = append(g.consTopics[i], ti)
				g.topicCons[ti] = append(g.topicCons[ti], i)
				g.maxSize[i] += g.topicCount[ti]
			}
		}
	}
	g.owner = make([]int, len(g.topicOf))
	for p := range g.owner {
		g.owner[p] = -1
	}
	g.count = make([]int, n)
	g.present = make([]bool, n)
	// sortedAllTopics: by number of potential consumers, then name.
	topics := make([]int, nt)
	for i := range topics {
		topics[i] = i
	}
	slices.SortStableFunc(topics, func(a, b int) int { return cmp.Compare(len(g.topicCons[a]), len(g.topicCons[b])) })
	for _, t := range topics {
		for p := 0; p < g.topicCount[t]; p++ {
			g.sortedAll = append(g.sortedAll, g.topicFirst[t]+p)
		}
	}
	g.moves = movements{all: in.all, byTopic: map[int]map[pair]*javaTPSet{}, of: map[int]pair{}}
	return g
}

// assign is GeneralAssignmentBuilder.build.
func (g *general) assign() [][]TopicPartition {
	g.prepopulateCurrentAssignments()
	g.assignOwnedPartitions()
	var unassigned []int
	for _, p := range g.sortedAll {
		if g.owner[p] < 0 {
			unassigned = append(unassigned, p)
		}
	}
	for i := range g.in.ms {
		g.present[i] = true
		g.sorted = append(g.sorted, i)
	}
	slices.SortFunc(g.sorted, g.cmpMember)
	g.balance(unassigned)
	out := make([][]TopicPartition, len(g.in.ms))
	for p, c := range g.owner {
		if c >= 0 {
			out[c] = append(out[c], g.in.all[p])
		}
	}
	return out
}

// prepopulateCurrentAssignments fills prev: for each partition, the
// claimant with the highest generation below the maximum.
func (g *general) prepopulateCurrentAssignments() {
	maxGen := DefaultGeneration
	for _, gen := range g.in.gens {
		maxGen = max(maxGen, gen)
	}
	for _, i := range g.in.order {
		tps, gen := g.in.data(g.in.ms[i])
		if gen >= maxGen {
			continue
		}
		for _, tp := range tps {
			p, ok := g.pidx[tp]
			if !ok {
				continue
			}
			if old, ok := g.prev[p]; !ok || gen > old.gen {
				g.prev[p] = prevOwner{i, gen}
			}
		}
	}
}

// assignOwnedPartitions keeps every resolved previous partition whose
// topic still exists and the member still subscribes to.
func (g *general) assignOwnedPartitions() {
	for i := range g.in.ms {
		for _, tp := range g.in.owned[i] {
			p, ok := g.pidx[tp]
			if !ok {
				continue
			}
			if !g.subscribes[i][g.topicOf[p]] {
				g.revocationRequired = true
				continue
			}
			g.owner[p] = i
			g.count[i]++
		}
	}
}

// cmpMember is SubscriptionComparator: by partition count, then id.
func (g *general) cmpMember(a, b int) int {
	if c := cmp.Compare(g.count[a], g.count[b]); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// unsort removes c from sorted; call it before changing count[c].
func (g *general) unsort(c int) {
	if i, ok := slices.BinarySearchFunc(g.sorted, c, g.cmpMember); ok {
		g.sorted = slices.Delete(g.sorted, i, i+1)
	}
}

// resort puts c back into sorted.
func (g *general) resort(c int) {
	i, ok := slices.BinarySearchFunc(g.sorted, c, g.cmpMember)
	if !ok {
		g.sorted = slices.Insert(g.sorted, i, c)
	}
}

// balance is GeneralAssignmentBuilder.balance.
func (g *general) balance(unassigned []int) {
	initializing := g.count[g.sorted[len(g.sorted)-1]] == 0

	// maybeAssign: each unassigned partition to the least-loaded member
	// subscribed to its topic.
	for _, p := range unassigned {
		t := g.topicOf[p]
		for _, c := range g.sorted {
			if g.subscribes[c][t] {
				g.unsort(c)
				g.owner[p] = c
				g.count[c]++
				g.resort(c)
				break
			}
		}
	}

	// Narrow the scope to partitions and members that can move.
	fixedTopic := func(p int) bool { return len(g.topicCons[g.topicOf[p]]) < 2 }
	g.sortedAll = slices.DeleteFunc(g.sortedAll, fixedTopic)
	unassigned = slices.DeleteFunc(unassigned, fixedTopic)
	for c := range g.in.ms {
		if !g.canConsumerParticipate(c) {
			g.unsort(c)
			g.present[c] = false
		}
	}

	preOwner, preCount := slices.Clone(g.owner), slices.Clone(g.count)
	if !g.revocationRequired {
		g.performReassignments(unassigned)
	}
	performed := g.performReassignments(g.sortedAll)
	if !initializing && performed && g.balanceScore(g.count) >= g.balanceScore(preCount) {
		copy(g.owner, preOwner)
		copy(g.count, preCount)
	}
}

// canConsumerParticipate is canConsumerParticipateInReassignment: a
// member can take part unless it has every partition it could have and
// none of them has another potential consumer.
func (g *general) canConsumerParticipate(c int) bool {
	if g.count[c] < g.maxSize[c] {
		return true
	}
	for _, t := range g.consTopics[c] {
		if len(g.topicCons[t]) < 2 {
			continue
		}
		for p := g.topicFirst[t]; p < g.topicFirst[t]+g.topicCount[t]; p++ {
			if g.owner[p] == c {
				return true
			}
		}
	}
	return false
}

// balanceScore is getBalanceScore over the members taking part: the sum
// of |count(a) - count(b)| over all pairs.
func (g *general) balanceScore(count []int) int {
	var cs []int
	for c, ok := range g.present {
		if ok {
			cs = append(cs, count[c])
		}
	}
	slices.Sort(cs)
	score, prefix := 0, 0
	for i, x := range cs {
		score += i*x - prefix
		prefix += x
	}
	return score
}

// isBalanced: counts differ by at most one, or no member could take a
// partition from one with at least two more.
func (g *general) isBalanced() bool {
	if len(g.sorted) == 0 || g.count[g.sorted[0]] >= g.count[g.sorted[len(g.sorted)-1]]-1 {
		return true
	}
	for _, c := range g.sorted {
		n := g.count[c]
		if n == g.maxSize[c] {
			continue
		}
		for _, t := range g.consTopics[c] {
			for p := g.topicFirst[t]; p < g.topicFirst[t]+g.topicCount[t]; p++ {
				if o := g.owner[p]; o != c && n+1 < g.count[o] {
					return false
				}
			}
		}
	}
	return true
}

// performReassignments moves partitions, in the given order, from a member
// with at least two more partitions than another potential consumer, until
// the assignment is balanced or a whole pass moves nothing.
func (g *general) performReassignments(partitions []int) bool {
	performed := false
	for modified := true; modified; {
		modified = false
		for _, p := range partitions {
			if g.isBalanced() {
				break
			}
			c := g.owner[p]
			if pr, ok := g.prev[p]; ok && g.present[pr.member] && g.subscribes[pr.member][g.topicOf[p]] &&
				g.count[c] > g.count[pr.member]+1 {
				g.reassign(p, pr.member)
				performed, modified = true, true
				continue
			}
			for _, o := range g.topicCons[g.topicOf[p]] {
				if g.count[c] > g.count[o]+1 {
					g.reassignToLeastLoaded(p)
					performed, modified = true, true
					break
				}
			}
		}
	}
	return performed
}

func (g *general) reassignToLeastLoaded(p int) {
	t := g.topicOf[p]
	for _, c := range g.sorted {
		if g.subscribes[c][t] {
			g.reassign(p, c)
			return
		}
	}
	panic("sticky assignor: no member to reassign " + g.in.all[p].String() + " to")
}

// reassign moves p, or the partition PartitionMovements picks in its
// place to keep stickiness, to to.
func (g *general) reassign(p, to int) {
	q := g.moves.actualToMove(g.topicOf[p], p, g.owner[p], to)
	from := g.owner[q]
	g.unsort(from)
	g.unsort(to)
	g.moves.move(g.topicOf[q], q, from, to)
	g.owner[q] = to
	g.count[from]--
	g.count[to]++
	g.resort(to)
	g.resort(from)
}

// pair is ConsumerPair: a partition moved from src to dst.
type pair struct{ src, dst int }

// movements is PartitionMovements: the net move of each moved partition,
// and per topic the partitions moved between each pair of members.
type movements struct {
	all     []TopicPartition
	byTopic map[int]map[pair]*javaTPSet
	of      map[int]pair
}

func (m *movements) remove(t, p int) pair {
	pr := m.of[p]
	delete(m.of, p)
	m.byTopic[t][pr].remove(p)
	if len(m.byTopic[t][pr].items) == 0 {
		delete(m.byTopic[t], pr)
	}
	if len(m.byTopic[t]) == 0 {
		delete(m.byTopic, t)
	}
	return pr
}

func (m *movements) add(t, p int, pr pair) {
	m.of[p] = pr
	if m.byTopic[t] == nil {
		m.byTopic[t] = map[pair]*javaTPSet{}
	}
	if m.byTopic[t][pr] == nil {
		m.byTopic[t][pr] = newJavaTPSet()
	}
	m.byTopic[t][pr].add(p)
}

func (m *movements) move(t, p, from, to int) {
	if _, ok := m.of[p]; !ok {
		m.add(t, p, pair{from, to})
		return
	}
	if old := m.remove(t, p); old.src != to {
		m.add(t, p, pair{old.src, to})
	}
}

// actualToMove is getTheActualPartitionToBeMoved: if a partition of the
// topic already moved the other way (to -> from), move that one back
// instead: the first in the HashSet's iteration order.
func (m *movements) actualToMove(t, p, from, to int) int {
	if m.byTopic[t] == nil {
		return p
	}
	if pr, ok := m.of[p]; ok {
		from = pr.src
	}
	set := m.byTopic[t][pair{to, from}]
	if set == nil || len(set.items) == 0 {
		return p
	}
	return set.first(m.all)
}
