// Package assignor holds the consumer group's client-side partition
// assignors, run by the group leader after JoinGroup: Range, RoundRobin and
// Sticky, following the orderings of Kafka's RangeAssignor,
// RoundRobinAssignor and StickyAssignor (AbstractStickyAssignor), and the
// ConsumerProtocol encodings of subscriptions and assignments (kmsg's
// ConsumerMemberMetadata and ConsumerMemberAssignment, version 0/1).
//
//	members := []assignor.Member{{ID: "c1", Topics: []string{"t"}}, {ID: "c2", Topics: []string{"t"}}}
//	got := assignor.Range{}.Assign(members, map[string]int32{"t": 3})
//	// got["c1"] = [t-0 t-1], got["c2"] = [t-2]
//
// Simplifications: no static membership (group.instance.id), no rack-aware
// assignment (KIP-881), and cooperative-sticky is Sticky run eagerly (the
// consumer revokes everything before each rebalance).
package assignor
