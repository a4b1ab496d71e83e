package assignor

// This file is the Sticky assignor (Kafka's StickyAssignor, KIP-54, and
// the cooperative variant's protocol name, KIP-429): a balanced assignment
// (partition counts differ by at most one where subscriptions allow) that
// keeps as many partitions with their previous owners as it can.
//
// Simplification: Kafka's AbstractStickyAssignor has a fast path for
// identical subscriptions and a general path that searches for
// balance-improving reassignments; here one greedy procedure serves both:
// keep every valid previous owner, give each unowned partition to the
// least-loaded eligible member, then move single partitions from the most
// loaded member to the least loaded eligible one while that lowers the
// spread. Each move strictly lowers the sum of squared counts, so it ends;
// with identical subscriptions it ends balanced within one, with the
// fewest moves. Ties go to the lower member id and the higher partition, so
// the result is deterministic. Cooperative only changes the name: the
// consumer still revokes everything before a rebalance (eager).

import (
	"slices"
	"strings"
)

// Sticky is the sticky assignor.
type Sticky struct {
	// Cooperative names it cooperative-sticky.
	Cooperative bool
}

// Name implements Assignor.
func (s Sticky) Name() string {
	if s.Cooperative {
		return "cooperative-sticky"
	}
	return "sticky"
}

// Assign implements Assignor.
func (Sticky) Assign(members []Member, partitions map[string]int32) Assignment {
	out := newAssignment(members)
	ms := sortedMembers(members)
	if len(ms) == 0 {
		return out
	}
	all := allPartitions(ms, partitions)
	valid := map[TopicPartition]bool{}
	for _, tp := range all {
		valid[tp] = true
	}
	owner := map[TopicPartition]int{} // index into ms
	count := make([]int, len(ms))
	for i, m := range ms {
		owned := slices.Clone(m.Owned)
		slices.SortFunc(owned, Compare)
		for _, tp := range owned {
			if _, taken := owner[tp]; !taken && valid[tp] && m.subscribes(tp.Topic) {
				owner[tp] = i
				count[i]++
			}
		}
	}
	for _, tp := range all {
		if _, ok := owner[tp]; ok {
			continue
		}
		best := -1
		for i, m := range ms {
			if m.subscribes(tp.Topic) && (best < 0 || count[i] < count[best]) {
				best = i
			}
		}
		owner[tp] = best
		count[best]++
	}
	for moveOne(ms, all, owner, count) {
	}
	for _, tp := range all {
		id := ms[owner[tp]].ID
		out[id] = append(out[id], tp)
	}
	return out.sort()
}

// moveOne moves one partition from a member to an eligible member with at
// least two fewer partitions, preferring the most loaded source and the
// least loaded destination, and reports whether it moved one.
func moveOne(ms []Member, all []TopicPartition, owner map[TopicPartition]int, count []int) bool {
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return count[b] - count[a] }) // most loaded first
	for _, src := range order {
		bestDst, bestTP := -1, -1
		for j := len(all) - 1; j >= 0; j-- {
			tp := all[j]
			if owner[tp] != src {
				continue
			}
			for dst, m := range ms {
				if dst == src || count[dst]+1 >= count[src] || !m.subscribes(tp.Topic) {
					continue
				}
				if bestDst < 0 || count[dst] < count[bestDst] || (count[dst] == count[bestDst] && strings.Compare(m.ID, ms[bestDst].ID) < 0) {
					bestDst, bestTP = dst, j
				}
			}
		}
		if bestDst >= 0 {
			owner[all[bestTP]] = bestDst
			count[src]--
			count[bestDst]++
			return true
		}
	}
	return false
}
