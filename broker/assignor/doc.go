// Package assignor holds the consumer group's client-side partition
// assignors, run by the group leader after JoinGroup: Range, RoundRobin,
// Sticky and CooperativeSticky, following the orderings of Kafka's
// RangeAssignor, RoundRobinAssignor, StickyAssignor and
// CooperativeStickyAssignor (a port of AbstractStickyAssignor, Kafka 3.8+,
// reproducing Java's HashMap iteration order where it decides a result),
// and the ConsumerProtocol encodings of subscriptions and assignments
// (kmsg's ConsumerMemberMetadata and ConsumerMemberAssignment, version
// 0-2) and of StickyAssignorUserData.
//
//	members := []assignor.Member{{ID: "c1", Topics: []string{"t"}}, {ID: "c2", Topics: []string{"t"}}}
//	got := assignor.Range{}.Assign(members, map[string]int32{"t": 3})
//	// got["c1"] = [t-0 t-1], got["c2"] = [t-2]
//
// Simplifications: no static membership (group.instance.id), no rack-aware
// assignment (KIP-881). CooperativeSticky withholds partitions that change
// owner (KIP-429), but the consumer here still rebalances eagerly and sends
// no owned partitions, so for it both sticky assignors start fresh.
package assignor
