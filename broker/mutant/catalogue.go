package mutant

// This file is the catalogue: every planted bug, the mistake it imitates,
// the code that makes it and the scenarios that can reach it. Every entry
// is NOT Kafka. The IDs are the order of the catalogue.

// The mutants.
const (
	// Replication (broker/server).
	HWBeforeISRFetch ID = iota
	FollowerSkipsTruncation
	OffsetsForEpochWrongEnd
	ISRExpandsLagging
	AcksAllBelowMinISR
	LeaderEpochNotBumped
	FollowerHWPastLEO
	FetchBeyondHW
	// Controller and ZooKeeper.
	CleanElectionOutOfISR
	StaleControllerEpoch
	NoFenceOnSessionExpiry
	AlterPartitionStaleEpoch
	// Raft (broker/raft).
	RaftVoteNoLogCheck
	RaftHWWithoutMajority
	RaftEpochNotPersisted
	RaftLeaderWithoutQuorum
	RaftCommitPreviousTerm
	// KIP-966.
	ELRKeepsUncleanReplica
	// Transactions.
	TxnMarkerSkipped
	LSOPastOpenTxn
	ZombieNotFenced
	TxnOffsetsOutside
	// Groups.
	CommitSkipsGeneration
	AssignmentDuplicated
	OffsetsLoadSkipped
	OffsetCommitBeforeReplicated
	// Producer and storage.
	SequenceCheckOff
	FsyncLies
	RecoverySkipsLastSegment
	IndexOffByOne
	ProducerRetryNewSequence
	// Client.
	CommitBeforeProcess
	NoRewindOnTruncation
	numMutants
)

// Where each layer's mutants are looked for (Mutant.Targets).
var (
	swarmZK    = Target{"swarm", "kip279-safe"}
	swarmKRaft = Target{"kraft-swarm", "kraft-safe"}
	groupZK    = Target{"group-swarm", "eager"}
	groupCoop  = Target{"group-swarm", "cooperative"}
	groupKRaft = Target{"group-swarm", "kraft"}
	txnTV1     = Target{"txn-exactly-once", "tv1"}
	txnTV2     = Target{"txn-exactly-once", "tv2"}
)

var (
	replication = []Target{swarmZK, swarmKRaft}
	zkOnly      = []Target{swarmZK}
	kraftOnly   = []Target{swarmKRaft}
	groups      = []Target{groupZK, groupCoop, groupKRaft}
	txns        = []Target{txnTV1, txnTV2}
)

// Catalogue is every mutant, in ID order.
var Catalogue = [numMutants]Mutant{
	{ID: HWBeforeISRFetch, Name: "hw-before-isr-fetch", Layer: Replication, Targets: replication,
		Mistake: "the leader advances the high watermark to its own log end before every ISR member has fetched it",
		Where:   "broker/server: the leader's high-watermark update"},
	{ID: FollowerSkipsTruncation, Name: "follower-skips-truncation", Layer: Replication, Targets: replication,
		Mistake: "a follower keeps its log on a leader-epoch change instead of truncating to the divergence point",
		Where:   "broker/server: the follower's truncation on becoming a follower"},
	{ID: OffsetsForEpochWrongEnd, Name: "offsets-for-epoch-wrong-end", Layer: Replication, Targets: replication,
		Mistake: "OffsetsForLeaderEpoch answers the end offset of the leader's latest epoch, not of the epoch asked for",
		Where:   "broker/server: OffsetsForLeaderEpoch"},
	{ID: ISRExpandsLagging, Name: "isr-expands-lagging", Layer: Replication, Targets: replication,
		Mistake: "the leader adds a follower to the ISR on its first fetch, before it caught up to the high watermark",
		Where:   "broker/server: the leader's ISR expansion"},
	{ID: AcksAllBelowMinISR, Name: "acks-all-below-min-isr", Layer: Replication, Targets: replication,
		Mistake: "an acks=all produce is appended and acknowledged while the ISR is below min.insync.replicas",
		Where:   "broker/server: Produce's min.insync.replicas check"},
	{ID: LeaderEpochNotBumped, Name: "leader-epoch-not-bumped", Layer: Replication, Targets: replication,
		Mistake: "the controller elects a new leader without bumping the partition's leader epoch",
		Where:   "broker/controller and broker/kraft: leader election"},
	{ID: FollowerHWPastLEO, Name: "follower-hw-past-leo", Layer: Replication, Targets: replication,
		Mistake: "a follower takes the leader's high watermark without capping it at its own log end",
		Where:   "broker/server: the follower's fetch response handling"},
	{ID: FetchBeyondHW, Name: "fetch-beyond-hw", Layer: Replication, Targets: replication,
		Mistake: "the leader serves consumers records above the high watermark (uncommitted reads)",
		Where:   "broker/server: Fetch's upper bound for consumers"},

	{ID: CleanElectionOutOfISR, Name: "clean-election-out-of-isr", Layer: Controller, Targets: replication,
		Mistake: "a clean leader election picks the first live assigned replica, in the ISR or not",
		Where:   "broker/controller and broker/kraft: the election's choice of leader"},
	{ID: StaleControllerEpoch, Name: "stale-controller-epoch", Layer: Controller, Targets: zkOnly,
		Mistake: "a broker obeys a LeaderAndIsr request from a controller whose epoch is older than the latest it saw",
		Where:   "broker/server: LeaderAndIsr's controller-epoch check"},
	{ID: NoFenceOnSessionExpiry, Name: "no-fence-on-session-expiry", Layer: Controller, Targets: replication,
		Mistake: "a broker whose session expired (ZooKeeper) or whose heartbeats stopped (KRaft) is not fenced: it stays a leader and in ISRs",
		Where:   "broker/controller (broker change) and broker/kraft (heartbeat expiry)"},
	{ID: AlterPartitionStaleEpoch, Name: "alter-partition-stale-epoch", Layer: Controller, Targets: kraftOnly,
		Mistake: "the controller applies an AlterPartition (ISR change) sent with a stale leader epoch or partition epoch",
		Where:   "broker/kraft: AlterPartition"},

	{ID: RaftVoteNoLogCheck, Name: "raft-vote-no-log-check", Layer: Raft, Targets: kraftOnly,
		Mistake: "a voter grants its vote without checking that the candidate's log is at least as up to date as its own",
		Where:   "broker/raft: Vote (also kafkasim.raft.vote.check.log=false)"},
	{ID: RaftHWWithoutMajority, Name: "raft-hw-without-majority", Layer: Raft, Targets: kraftOnly,
		Mistake: "the Raft leader advances the high watermark when any one voter has fetched, not a majority",
		Where:   "broker/raft: the leader's high-watermark update"},
	{ID: RaftEpochNotPersisted, Name: "raft-epoch-not-persisted", Layer: Raft, Targets: kraftOnly,
		Mistake: "a voter grants its vote (or starts an election) without first persisting the epoch and vote in quorum-state",
		Where:   "broker/raft: quorum-state writes"},
	{ID: RaftLeaderWithoutQuorum, Name: "raft-leader-without-quorum", Layer: Raft, Targets: kraftOnly,
		Mistake: "a Raft leader that sees a higher epoch keeps acting as leader instead of stepping down",
		Where:   "broker/raft: epoch handling on the leader"},
	{ID: RaftCommitPreviousTerm, Name: "raft-commit-previous-term", Layer: Raft, Targets: kraftOnly,
		Mistake: "a new Raft leader advances the high watermark over records of earlier epochs before it commits one of its own epoch (Raft's Figure 8)",
		Where:   "broker/raft: the leader's high-watermark update"},

	{ID: ELRKeepsUncleanReplica, Name: "elr-keeps-unclean-replica", Layer: ELR, Targets: []Target{swarmKRaft, {"last-replica-standing", "elr"}},
		Mistake: "the controller keeps a broker in the ELR after it restarted from an unclean shutdown that lost unflushed data",
		Where:   "broker/kraft: broker registration's ELR cleanup"},

	{ID: TxnMarkerSkipped, Name: "txn-marker-skipped", Layer: Txn, Targets: txns,
		Mistake: "the transaction coordinator completes a transaction without writing its marker to one of its partitions",
		Where:   "broker/txn: writing the markers"},
	{ID: LSOPastOpenTxn, Name: "lso-past-open-txn", Layer: Txn, Targets: txns,
		Mistake: "the last stable offset advances to the high watermark past an open transaction",
		Where:   "broker/server: the partition's last stable offset"},
	{ID: ZombieNotFenced, Name: "zombie-not-fenced", Layer: Txn, Targets: txns,
		Mistake: "a produce or TxnOffsetCommit with an older producer epoch is accepted after InitProducerId bumped it",
		Where:   "broker/server: the producer-epoch check"},
	{ID: TxnOffsetsOutside, Name: "txn-offsets-outside", Layer: Txn, Targets: txns,
		Mistake: "TxnOffsetCommit's offsets become visible at once instead of with the transaction's commit marker",
		Where:   "broker/coordinator: TxnOffsetCommit"},

	{ID: CommitSkipsGeneration, Name: "commit-skips-generation", Layer: Groups, Targets: groups,
		Mistake: "OffsetCommit is accepted from a member of an older generation (no ILLEGAL_GENERATION)",
		Where:   "broker/coordinator: OffsetCommit's generation check"},
	{ID: AssignmentDuplicated, Name: "assignment-duplicated", Layer: Groups, Targets: groups,
		Mistake: "the assignment gives a partition to two members of the same generation",
		Where:   "broker/assignor"},
	{ID: OffsetsLoadSkipped, Name: "offsets-load-skipped", Layer: Groups, Targets: groups,
		Mistake: "a new group coordinator serves OffsetFetch without loading the committed offsets from __consumer_offsets",
		Where:   "broker/coordinator: the load on election"},
	{ID: OffsetCommitBeforeReplicated, Name: "offset-commit-before-replicated", Layer: Groups, Targets: groups,
		Mistake: "the coordinator answers OffsetCommit once its own log has the record, before the ISR replicated it",
		Where:   "broker/coordinator: the offset commit's append (acks=-1)"},

	{ID: SequenceCheckOff, Name: "sequence-check-off", Layer: Storage, Targets: replication,
		Mistake: "the leader appends an idempotent producer's batch without checking its sequence number (no duplicate or gap check)",
		Where:   "broker/server: the producer-state check on append (checkSequence; the epoch is still checked)"},
	{ID: FsyncLies, Name: "fsync-lies", Layer: Storage, Targets: []Target{{"swarm", "kip279-flush"}, {"kraft-swarm", "kraft-flush"}},
		Mistake: "fsync returns before the data is durable: a power loss drops what was flushed (segments, indexes, checkpoints, the KRaft metadata log)",
		Where:   "broker/storage: the FS the logs and checkpoints sync through (OpenManager, OpenLog)"},
	{ID: RecoverySkipsLastSegment, Name: "recovery-skips-last-segment", Layer: Storage, Targets: replication,
		Mistake: "log recovery after an unclean shutdown does not scan the active segment: its indexes are trusted as the disk kept them (pointing past a shortened log) and a torn tail stays",
		Where:   "broker/storage: recovery (loadSegments)"},
	{ID: IndexOffByOne, Name: "index-off-by-one", Layer: Storage, Targets: replication,
		Mistake: "an offset-index entry points at the batch after the one it names (the segment's size after the append, not before)",
		Where:   "broker/storage: the offset index entry written on append and on recovery (segment.appended)"},
	{ID: ProducerRetryNewSequence, Name: "producer-retry-new-sequence", Layer: Storage, Targets: replication,
		Mistake: "the idempotent producer gives a retried batch a new sequence number, so the broker cannot see it is a duplicate",
		Where:   "broker/client: the producer's retry (batchError): the batch is sequenced again when drained"},

	{ID: CommitBeforeProcess, Name: "commit-before-process", Layer: Client, Targets: groups,
		Mistake: "an at-least-once consumer commits a poll's offsets before it processes the records",
		Where:   "scenarios/harness: the consumer's at-least-once loop"},
	{ID: NoRewindOnTruncation, Name: "no-rewind-on-truncation", Layer: Client, Targets: []Target{{"consumer-truncation", "kip320"}, groupKRaft},
		Mistake: "a consumer on a release with KIP-320 does not validate its position after a leader change, so it skips records after a truncation",
		Where:   "broker/client: the consumer's offset validation"},
}
