package assignor

// This file holds the types shared by the assignors, and Range and
// RoundRobin (Kafka's RangeAssignor and RoundRobinAssignor, 2.x-3.x,
// without static members).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// Compare orders partitions by topic, then partition id.
func Compare(a, b TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition) - int(b.Partition)
}

// Member is one group member as the leader sees it in JoinGroup: its id,
// its subscription, and (for Sticky) the partitions it owned in the
// previous generation.
type Member struct {
	ID     string
	Topics []string
	// Owned is the subscription's owned partitions (ConsumerProtocol v1+).
	Owned []TopicPartition
	// Generation is the generation Owned is from (ConsumerProtocol v2+);
	// 0 or less means unknown (Kafka's DEFAULT_GENERATION, -1).
	Generation int32
	// UserData is the subscription's assignor user data: for "sticky",
	// StickyAssignorUserData (EncodeStickyUserData), which then takes the
	// place of Owned and Generation.
	UserData []byte
}

func (m Member) subscribes(topic string) bool { return slices.Contains(m.Topics, topic) }

// Assignment maps a member id to its partitions, each list sorted. Every
// member given to Assign has an entry, possibly empty.
type Assignment map[string][]TopicPartition

// Assignor is a partition assignment strategy. partitions gives each topic's
// partition count; topics a member subscribes to that are missing from it
// are ignored (they do not exist yet).
type Assignor interface {
	// Name is the protocol name JoinGroup carries ("range", ...).
	Name() string
	Assign(members []Member, partitions map[string]int32) Assignment
}

// ByName returns the assignor with protocol name name.
func ByName(name string) (Assignor, error) {
	switch name {
	case "range":
		return Range{}, nil
	case "roundrobin":
		return RoundRobin{}, nil
	case "sticky":
		return Sticky{}, nil
	case "cooperative-sticky":
		return CooperativeSticky{}, nil
	}
	return nil, fmt.Errorf("assignor %q: unknown (allowed: range, roundrobin, sticky, cooperative-sticky)", name)
}

// sortedMembers returns the members sorted by id (Kafka sorts member ids
// lexicographically: Utils.sorted / Collections.sort on the ids).
func sortedMembers(members []Member) []Member {
	out := slices.Clone(members)
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func newAssignment(members []Member) Assignment {
	a := Assignment{}
	for _, m := range members {
		a[m.ID] = []TopicPartition{}
	}
	return a
}

func (a Assignment) sort() Assignment {
	for _, l := range a {
		slices.SortFunc(l, Compare)
	}
	return a
}

// Range is Kafka's RangeAssignor: per topic, the subscribed members sorted
// by id; with P partitions and C members, n = P/C and extra = P%C, member i
// gets the n (+1 if i < extra) consecutive partitions from n*i + min(i, extra).
type Range struct{}

// Name implements Assignor.
func (Range) Name() string { return "range" }

// Assign implements Assignor.
func (Range) Assign(members []Member, partitions map[string]int32) Assignment {
	out := newAssignment(members)
	ms := sortedMembers(members)
	topics := map[string][]string{} // topic -> sorted subscribed member ids
	for _, m := range ms {
		for _, t := range m.Topics {
			if _, ok := partitions[t]; ok && !slices.Contains(topics[t], m.ID) {
				topics[t] = append(topics[t], m.ID)
			}
		}
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		consumers := topics[t]
		p, c := int(partitions[t]), len(consumers)
		n, extra := p/c, p%c
		for i, id := range consumers {
			start := n*i + min(i, extra)
			length := n
			if i < extra {
				length++
			}
			for j := start; j < start+length; j++ {
				out[id] = append(out[id], TopicPartition{t, int32(j)})
			}
		}
	}
	return out.sort()
}

// RoundRobin is Kafka's RoundRobinAssignor: all partitions of all
// subscribed topics sorted by topic then partition, handed out one by one
// by a circular iterator over the members sorted by id, skipping members
// not subscribed to the partition's topic.
type RoundRobin struct{}

// Name implements Assignor.
func (RoundRobin) Name() string { return "roundrobin" }

// Assign implements Assignor.
func (RoundRobin) Assign(members []Member, partitions map[string]int32) Assignment {
	out := newAssignment(members)
	ms := sortedMembers(members)
	if len(ms) == 0 {
		return out
	}
	all := allPartitions(ms, partitions)
	cur := 0
	for _, tp := range all {
		for !ms[cur%len(ms)].subscribes(tp.Topic) {
			cur++
		}
		id := ms[cur%len(ms)].ID
		out[id] = append(out[id], tp)
		cur++
	}
	return out.sort()
}

// allPartitions returns every partition of a topic some member subscribes
// to, sorted by topic then partition.
func allPartitions(members []Member, partitions map[string]int32) []TopicPartition {
	seen := map[string]bool{}
	var topics []string
	for _, m := range members {
		for _, t := range m.Topics {
			if _, ok := partitions[t]; ok && !seen[t] {
				seen[t] = true
				topics = append(topics, t)
			}
		}
	}
	slices.Sort(topics)
	var out []TopicPartition
	for _, t := range topics {
		for p := int32(0); p < partitions[t]; p++ {
			out = append(out, TopicPartition{t, p})
		}
	}
	return out
}
