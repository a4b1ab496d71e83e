// Package coordinator is Kafka's group coordinator for the classic group
// protocol (GroupCoordinator and GroupMetadataManager, Kafka 2.x) as a pure
// state machine: it changes state only when its host hands it a request,
// a tick (the clock moved) or a change of leadership of a
// __consumer_offsets partition, and it asks its host for effects through
// Env (append records to __consumer_offsets and be told once they are
// committed; write to the trace). It never reads a clock or sets a timer:
// the host calls Tick at NextDeadline.
//
//	c := coordinator.New(coordinator.DefaultConfig(0), env)
//	c.BecomeLeader(now, 12)          // this broker now leads __consumer_offsets-12
//	c.Load(now, 12, records)         // ... and has read that partition's log
//	c.JoinGroup(now, req, func(resp *kmsg.JoinGroupResponse) { ... })
//	if at, ok := c.NextDeadline(); ok { /* call c.Tick(at) then */ }
//
// A group lives in partition CoordinatorPartition(group, partitions); its
// offsets and its metadata (generation, protocol, leader, members and their
// assignments) are records in that partition (records.go), so they
// replicate like any record and a coordinator elected after a fail-over
// loads them from its replica. While it loads, requests for its groups get
// COORDINATOR_LOAD_IN_PROGRESS; requests for groups of a partition it does
// not lead get NOT_COORDINATOR.
//
// Transactional offset commits (TxnOffsetCommit, KIP-98/KIP-447) are
// appended with Env.AppendTxn as a transactional batch of the producer and
// stay pending, invisible to OffsetFetch, until the host reports the
// transaction's marker on the partition (CompleteTxn); LoadBatches rebuilds
// them from the log (txn_offsets.go).
//
// Static membership (KIP-345: group.instance.id, FENCED_INSTANCE_ID, a
// restart within the session timeout without a rebalance) is static.go.
//
// Simplifications vs Kafka: no
// offset expiration or offsets.retention.minutes, no DeleteGroups/DescribeGroups/ListGroups, no KIP-848 protocol;
// OffsetFetch is not validated against member and generation (the classic
// protocol does not do it either). Member ids are "<client.id>-<n>" with a
// per-coordinator counter stamped with the broker id and the load time
// instead of a random UUID, so runs are deterministic.
package coordinator
