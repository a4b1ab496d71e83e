package share

// This file is the share groups' server-side assignor, Kafka's
// SimpleAssignor (group.share.assignors=simple) as Kafka 4.1/4.2 balance
// it (SimpleHomogeneousAssignmentBuilder, SimpleHeterogeneousAssignmentBuilder):
// a share group may hand one partition to several members, since records,
// not partitions, are what members hold. When every member subscribes to
// the same topics (homogeneous), the partitions of those topics, sorted
// by topic name then index, go round robin over the members sorted by id
// when there are at least as many partitions as members; when there are
// more members than partitions, members go round robin over the
// partitions, so each partition has floor or ceil(members/partitions)
// members and each member exactly one partition. Heterogeneous
// subscriptions apply the same rule topic by topic, over the members
// subscribed to the topic.
//
// Simplification: Kafka's builders are sticky (a member keeps the
// partitions it had while its quota allows); this one recomputes from the
// sorted lists, so a membership change may move partitions that Kafka
// would leave in place. For a share group a move costs no revocation
// round (members hold records, not partitions), only a new share session
// partition on the next fetch.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/assignor"
)

// TopicPartition names a partition of an assignment.
type TopicPartition struct {
	Topic     string
	ID        assignor.TopicID
	Partition int32
}

// Assign returns, per member id, the partitions the simple assignor gives
// it. subs holds each member's subscribed topic names; topics the
// cluster's topics (a subscribed topic that does not exist is skipped).
func Assign(subs map[string][]string, topics []assignor.ServerTopic) map[string][]TopicPartition {
	byName := map[string]assignor.ServerTopic{}
	for _, t := range topics {
		byName[t.Name] = t
	}
	members := make([]string, 0, len(subs))
	for m := range subs {
		members = append(members, m)
	}
	slices.Sort(members)
	out := map[string][]TopicPartition{}
	if len(members) == 0 {
		return out
	}
	parts := func(names []string) []TopicPartition {
		names = slices.Clone(names)
		slices.Sort(names)
		names = slices.Compact(names)
		var ps []TopicPartition
		for _, n := range names {
			t, ok := byName[n]
			if !ok {
				continue
			}
			for p := int32(0); p < t.Partitions; p++ {
				ps = append(ps, TopicPartition{Topic: n, ID: t.ID, Partition: p})
			}
		}
		return ps
	}
	homogeneous := true
	for _, m := range members[1:] {
		if !sameSet(subs[m], subs[members[0]]) {
			homogeneous = false
			break
		}
	}
	if homogeneous {
		spread(members, parts(subs[members[0]]), out)
	} else {
		var all []string
		for _, m := range members {
			all = append(all, subs[m]...)
		}
		names := slices.Clone(all)
		slices.Sort(names)
		for _, n := range slices.Compact(names) {
			var who []string
			for _, m := range members {
				if slices.Contains(subs[m], n) {
					who = append(who, m)
				}
			}
			spread(who, parts([]string{n}), out)
		}
	}
	for m := range out {
		slices.SortFunc(out[m], compareTP)
	}
	return out
}

// spread hands ps to members: round robin over the members when there
// are at least as many partitions, else each member one partition, round
// robin over the partitions.
func spread(members []string, ps []TopicPartition, out map[string][]TopicPartition) {
	if len(ps) == 0 || len(members) == 0 {
		return
	}
	if len(ps) >= len(members) {
		for i, tp := range ps {
			m := members[i%len(members)]
			out[m] = append(out[m], tp)
		}
		return
	}
	for i, m := range members {
		out[m] = append(out[m], ps[i%len(ps)])
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func compareTP(a, b TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}
