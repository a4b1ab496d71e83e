package raft

// This file is the package's contract with the nodes that host a quorum
// member (broker/server: a controller, a combined broker+controller, or a
// broker as an observer). The exported names below are fixed: the server
// integration is written against them.

import (
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MetadataTopic is the name of the metadata log's topic; its one partition
// is 0 (Kafka's __cluster_metadata-0).
const MetadataTopic = "__cluster_metadata"

// Config is one quorum member's configuration, from Kafka's properties.
type Config struct {
	// Mutants are the planted bugs switched on (package mutant; none is Kafka).
	Mutants mutant.Set
	// NodeID is node.id.
	NodeID int32
	// Voters is controller.quorum.voters (static voters), as node ids in
	// the order given. A node whose id is not among them is an observer.
	Voters []int32
	// ClusterID is the cluster.id the storage was formatted with.
	ClusterID string
	// Dir is metadata.log.dir: the metadata log lives in
	// Dir/__cluster_metadata-0 and the quorum-state file there too.
	Dir string
	// ElectionTimeout is controller.quorum.election.timeout.ms (1000).
	ElectionTimeout sim.Duration
	// FetchTimeout is controller.quorum.fetch.timeout.ms (2000).
	FetchTimeout sim.Duration
	// ElectionBackoffMax is controller.quorum.election.backoff.max.ms (1000).
	ElectionBackoffMax sim.Duration
	// RequestTimeout is controller.quorum.request.timeout.ms (2000).
	RequestTimeout sim.Duration
	// RetryBackoff is controller.quorum.retry.backoff.ms (20).
	RetryBackoff sim.Duration
	// FetchMaxWait is how long the leader parks a Fetch that finds no new
	// data (KafkaRaftClient's fetchMaxWaitMs, 500).
	FetchMaxWait sim.Duration
	// FetchHighWatermark is KIP-1166 (4.1): Fetch v18 carries the HW
	// this replica knows, and a leader whose HW is higher answers it at
	// once instead of parking it (Mechanisms.RaftFetchHighWatermark).
	FetchHighWatermark bool
	// SegmentBytes is metadata.log.segment.bytes.
	SegmentBytes int64
	// SnapshotBytes is metadata.log.max.record.bytes.between.snapshots:
	// after this many committed bytes the listener is asked for a snapshot
	// (see Listener.Snapshot). 0 turns snapshots off.
	SnapshotBytes int64
	// PreVote turns on KIP-996 pre-vote (kafkasim.raft.prevote).
	PreVote bool
	// CheckQuorum turns on KIP-996 check-quorum: a leader that has not
	// heard from a majority within the fetch timeout resigns
	// (kafkasim.raft.check.quorum).
	CheckQuorum bool
	// VoteCheckLog is Raft's log up-to-date check on Vote; false is a
	// planted bug (kafkasim.raft.vote.check.log=false) that explore must
	// find.
	VoteCheckLog bool
	// KRaftVersion is the kraft.version feature the storage was formatted
	// with (KIP-853): 0, static voters (Voters); 1, dynamic voters in the
	// log, each a (node id, directory id), with Voters the bootstrap
	// servers and the initial controllers (voters.go).
	KRaftVersion int16
	// AutoJoin is controller.quorum.auto.join.enable (Kafka 4.2, KIP-853;
	// kafkasim.raft.auto.join until kafkasim has release 4.2): a
	// controller that is no voter replaces its stale voter key and adds
	// itself (voter_change.go: maybeAutoJoin).
	AutoJoin bool
}

// Env is what a quorum member needs from the node it runs in.
type Env struct {
	// Send sends req to node `to` and calls cb exactly once, with the
	// response or with an error when it does not come within timeout.
	Send func(to int32, req kmsg.Request, timeout sim.Duration, cb func(kmsg.Response, error))
	// Fatal, when set, is the node's fatal fault handler: Kafka's raft
	// thread hands a fatal error (a KafkaException such as a truncation
	// below the high watermark) to it, and the process halts. The client
	// logs "raft-fatal" first and does nothing more in that event. Unset
	// (unit tests), a fatal error panics.
	Fatal func(reason string)
}

// Batch is a committed batch of records, handed to the listener in offset
// order, each exactly once per process life.
type Batch struct {
	BaseOffset int64
	Epoch      int32 // the leader epoch it was written in
	// Records are the values of the batch's records (metadata records in
	// their serialized form); none for a control batch.
	Records [][]byte
	// Control marks a control batch (the LeaderChange record a leader
	// writes at the start of its epoch, snapshot markers): its records are
	// not the state machine's, but its commit moves the committed offset
	// to ControlLastOffset, as Kafka's listeners see control batches too. A
	// controller answers requests that write nothing once everything
	// before them has committed, the new leader's LeaderChange included.
	Control           bool
	ControlLastOffset int64
}

// LastOffset returns the offset of the batch's last record.
func (b Batch) LastOffset() int64 {
	if b.Control {
		return b.ControlLastOffset
	}
	return b.BaseOffset + int64(len(b.Records)) - 1
}

// Snapshot is a snapshot's content: the records that rebuild the state of
// the log up to (not including) EndOffset.
type Snapshot struct {
	EndOffset int64
	Epoch     int32 // the epoch of the record at EndOffset-1
	Records   [][]byte
}

// LeaderAndEpoch is the quorum's leader as this member knows it; Leader
// is -1 when unknown.
type LeaderAndEpoch struct {
	Leader int32
	Epoch  int32
}

// Listener is the state machine on top of the log (RaftClient.Listener).
type Listener interface {
	// HandleCommit is called for every committed batch, in order, control
	// batches included (Batch.Control, with no records).
	HandleCommit(ctx *sim.Context, b Batch)
	// HandleLoadSnapshot replaces the state with a snapshot's (at start,
	// or when a follower fetched a snapshot because the leader's log no
	// longer has what it needs).
	HandleLoadSnapshot(ctx *sim.Context, s Snapshot)
	// HandleLeaderChange tells the listener of a new leader or epoch.
	HandleLeaderChange(ctx *sim.Context, l LeaderAndEpoch)
	// Snapshot returns the records of the listener's state up to the last
	// committed batch it handled (asked for when SnapshotBytes have been
	// committed since the last snapshot).
	Snapshot() [][]byte
}
