package assignor

// This file is the uniform assignor for members with different
// subscriptions: Kafka's UniformHeterogeneousAssignmentBuilder (4.0). A
// member keeps every partition of a topic it still subscribes to; the
// unowned partitions go, topic by topic, to the least-loaded subscriber;
// then, for up to 16 rounds, each topic with two or more subscribers moves
// partitions from its most-loaded to its least-loaded subscribers until
// their loads differ by at most one. Topics are taken in the order of
// topicComparator: most partitions per subscriber first, then fewest
// subscribers, then Uuid order. Members are numbered in the order given.

import (
	"cmp"
	"slices"
)

const heteroMaxIterations = 16 // MAX_ITERATION_COUNT

type hetero struct {
	byName      map[string]ServerTopic
	members     []ServerMember
	subscribers map[string][]int // topic -> member indices, in member order
	owners      map[string][]int // topic -> partition -> member index or -1
	sizes       []int            // partitions assigned per member
	assigned    []map[TopicPartition]bool
}

func uniformHeterogeneous(members []ServerMember, byName map[string]ServerTopic) Assignment {
	h := &hetero{byName: byName, members: members, subscribers: map[string][]int{}, owners: map[string][]int{},
		sizes: make([]int, len(members)), assigned: make([]map[TopicPartition]bool, len(members))}
	var topics []string
	for i, m := range members {
		h.assigned[i] = map[TopicPartition]bool{}
		for _, t := range m.Topics {
			if _, ok := h.subscribers[t]; !ok {
				topics = append(topics, t)
			}
			if !slices.Contains(h.subscribers[t], i) {
				h.subscribers[t] = append(h.subscribers[t], i)
			}
		}
	}
	if len(topics) == 0 {
		return Assignment{}
	}
	for _, t := range topics {
		o := make([]int, byName[t].Partitions)
		for p := range o {
			o[p] = -1
		}
		h.owners[t] = o
	}
	// maybeRevokePartitions: keep the partitions of subscribed topics.
	for i, m := range members {
		for _, tp := range m.Assigned {
			if slices.Contains(m.Topics, tp.Topic) && int(tp.Partition) < len(h.owners[tp.Topic]) {
				h.assigned[i][tp] = true
				h.sizes[i]++
				h.owners[tp.Topic][tp.Partition] = i
			}
		}
	}
	// assignRemainingPartitions.
	var withUnassigned []string
	for _, t := range topics {
		if slices.Contains(h.owners[t], -1) {
			withUnassigned = append(withUnassigned, t)
		}
	}
	b := &balancer{h: h}
	for _, t := range h.sortTopics(withUnassigned) {
		b.initialize(h.subscribers[t])
		for p, o := range h.owners[t] {
			if o == -1 {
				h.assign(t, p, b.nextLeastLoaded())
			}
		}
	}
	// balance.
	var multi []string
	for _, t := range topics {
		if len(h.subscribers[t]) >= 2 {
			multi = append(multi, t)
		}
	}
	if len(multi) > 0 {
		h.balanceTopics(h.sortTopics(multi), b)
	}
	out := Assignment{}
	for i, m := range members {
		l := []TopicPartition{}
		for tp := range h.assigned[i] {
			l = append(l, tp)
		}
		out[m.ID] = l
	}
	return out.sort()
}

// sortTopics orders topics by topicComparator.
func (h *hetero) sortTopics(topics []string) []string {
	out := slices.Clone(topics)
	slices.SortFunc(out, func(a, b string) int {
		pa, pb := float64(h.byName[a].Partitions), float64(h.byName[b].Partitions)
		sa, sb := len(h.subscribers[a]), len(h.subscribers[b])
		if c := cmp.Compare(pb/float64(sb), pa/float64(sa)); c != 0 {
			return c
		}
		if c := cmp.Compare(sa, sb); c != 0 {
			return c
		}
		return CompareTopicIDs(h.byName[a].ID, h.byName[b].ID)
	})
	return out
}

func (h *hetero) assign(topic string, p, member int) {
	tp := TopicPartition{topic, int32(p)}
	if old := h.owners[topic][p]; old != -1 {
		delete(h.assigned[old], tp)
		h.sizes[old]--
	}
	h.assigned[member][tp] = true
	h.sizes[member]++
	h.owners[topic][p] = member
}

func (h *hetero) balanceTopics(sorted []string, b *balancer) {
	last := -1
	for range heteroMaxIterations {
		for ti, t := range sorted {
			if ti == last {
				return
			}
			if n := h.balanceTopic(t, b); n > 0 || last == -1 {
				last = ti
			}
		}
	}
}

// balanceTopic moves partitions of topic from its most-loaded subscribers
// to its least-loaded ones, the highest-numbered partitions first.
func (h *hetero) balanceTopic(topic string, b *balancer) int {
	moved := 0
	owners := h.owners[topic]
	if b.initialize(h.subscribers[topic]) <= 1 {
		return 0
	}
	parts := make([]int, len(owners))
	for p := range parts {
		parts[p] = p
	}
	slices.SortStableFunc(parts, func(a, c int) int { return cmp.Compare(owners[a], owners[c]) })
	start, end := map[int]int{}, map[int]int{}
	for i, p := range parts {
		if _, ok := start[owners[p]]; !ok {
			start[owners[p]] = i
		}
		end[owners[p]] = i + 1
	}
	for !b.balanced() {
		most := -1
		for {
			most = b.nextMostLoaded()
			if most == -1 {
				break
			}
			if e, ok := end[most]; !ok || e-start[most] <= 0 {
				b.excludeMostLoaded()
				continue
			}
			break
		}
		if most == -1 {
			break
		}
		p := parts[end[most]-1]
		end[most]--
		least := b.nextLeastLoaded()
		if b.balanced() {
			break
		}
		h.assign(topic, p, least)
		moved++
	}
	return moved
}

// balancer is MemberAssignmentBalancer: a topic's subscribers sorted by
// load, handing out least-loaded members from the front and most-loaded
// ones from the back, a band of equal load at a time.
type balancer struct {
	h                           *hetero
	sorted                      []int
	leastEnd, leastCount, nextL int
	mostStart, mostEnd          int
	mostCount, nextM            int
}

func (b *balancer) initialize(members []int) int {
	b.sorted = slices.Clone(members)
	sizes := b.h.sizes
	slices.SortFunc(b.sorted, func(x, y int) int {
		if c := cmp.Compare(sizes[x], sizes[y]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	n := len(b.sorted)
	b.leastEnd, b.leastCount, b.nextL = 0, sizes[b.sorted[0]]-1, 0
	b.mostStart, b.mostEnd, b.mostCount, b.nextM = n, n, sizes[b.sorted[n-1]]+1, n-1
	return sizes[b.sorted[n-1]] - sizes[b.sorted[0]]
}

func (b *balancer) nextLeastLoaded() int {
	sizes := b.h.sizes
	if b.nextL >= b.leastEnd {
		b.leastCount++
		for b.leastEnd < len(b.sorted) && sizes[b.sorted[b.leastEnd]] == b.leastCount {
			b.leastEnd++
		}
		b.nextL = 0
	}
	m := b.sorted[b.nextL]
	b.nextL++
	return m
}

func (b *balancer) nextMostLoaded() int {
	sizes := b.h.sizes
	if b.nextM < b.mostStart {
		if b.mostEnd <= b.mostStart && b.mostStart > 0 {
			b.mostCount = sizes[b.sorted[b.mostStart-1]]
		} else {
			b.mostCount--
		}
		for b.mostStart > 0 && sizes[b.sorted[b.mostStart-1]] == b.mostCount {
			b.mostStart--
		}
		b.nextM = b.mostEnd - 1
	}
	if b.nextM < 0 {
		return -1
	}
	m := b.sorted[b.nextM]
	b.nextM--
	return m
}

func (b *balancer) excludeMostLoaded() {
	m := b.sorted[b.nextM+1]
	b.sorted[b.nextM+1] = b.sorted[b.mostEnd-1]
	b.sorted[b.mostEnd-1] = m
	b.mostEnd--
}

func (b *balancer) balanced() bool { return b.mostCount-b.leastCount <= 1 }
