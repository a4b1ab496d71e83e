// Package share is the broker side of Kafka's share groups (KIP-932,
// "Queues for Kafka", production-ready in Kafka 4.2) as pure state
// machines, in the style of package coordinator: they change state only
// when their host hands them a request or a tick, never read a clock and
// never set a timer (the host calls Tick at NextDeadline).
//
//   - Coordinator (group.go, assign.go) is the share group part of the
//     group coordinator: ShareGroupHeartbeat and ShareGroupDescribe, member
//     and group epochs, session timeouts, and the server-side "simple"
//     assignor.
//
//   - Partition (partition.go) is SharePartition, kept by the leader of a
//     topic partition for each share group that reads it: the share-partition
//     start and end offsets (SPSO, SPEO), the in-flight records and their
//     states (AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED), acquisition
//     locks, delivery counts, and accept / release / reject.
//
//   - Sessions (session.go) is the share session cache of ShareFetch
//     (ShareSessionEpoch).
//
//     c := share.NewCoordinator(share.DefaultConfig(), env)
//     resp := c.Heartbeat(now, req)
//     p := share.NewPartition("g", tp, startOffset, cfg)
//     got := p.Acquire(now, "member", candidates, 500)
//     err := p.Acknowledge(now, "member", batches)
//
// The package imports neither the broker nor the storage layer: its host
// (broker/server) reads the log and hands Partition the offsets of the
// committed records it found.
package share
