// Package raft is KRaft's metadata quorum (KIP-595, with KIP-996 pre-vote
// and check-quorum, and KIP-630 snapshots), as Kafka 4.0's KafkaRaftClient
// runs it, as a pure state machine: every effect goes through *sim.Context
// (timers named "raft-...", the virtual disk, the trace) and Env.Send.
//
// A host node (a controller, a combined node, or a broker as an observer)
// creates a Client with New, calls Start at every (re)start, routes
// requests to Handle and its timers to Timer, and appends metadata records
// through Append while IsLeader:
//
//	c, err := raft.New(cfg, raft.Env{Send: send}, listener)
//	c.Start(ctx)                           // recover log, snapshot, quorum-state
//	c.Handle(ctx, from, req, reply)        // Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot, DescribeQuorum
//	c.Timer(ctx, id, name)                 // "raft-election", "raft-fetch-timeout", ...
//	last, err := c.Append(ctx, records)    // leader only
//
// On disk (Dir/__cluster_metadata-0): the log's segments and
// leader-epoch-checkpoint (package storage), quorum-state (JSON,
// data_version 0) and <end offset>-<epoch>.checkpoint snapshots.
//
// Voters: static (controller.quorum.voters, kraft.version 0), or KIP-853's
// dynamic voter set (kraft.version 1, voters.go): voters are (node id,
// directory id) pairs kept as KRaftVersion/Voters control records in the
// log and snapshots, and the leader changes them one at a time with
// AddRaftVoter and RemoveRaftVoter (voter_change.go).
//
// Trace records: raft-state, raft-leader, raft-vote, raft-truncate,
// raft-commit, raft-snapshot, raft-hw (every advance), raft-resign,
// raft-voters (kraft.version 1: a voter set read or written).
//
// Invariant: a follower never truncates below its high watermark; a leader
// asking for it makes the client panic with "raft: invariant: ..." (Kafka
// throws a fatal KafkaException), which the simulator turns into a failed
// run.
//
// Left out: UpdateRaftVoter (no voter's endpoint or supported
// kraft.version range ever changes, so none needs an update), leader
// endpoints, compression, and fetch sessions.
package raft
