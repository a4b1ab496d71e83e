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
	RaftVoterChangesOverlap
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
	AssignBeforeRevoke
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
	group848   = Target{"group-swarm", "consumer"}
	txnTV1     = Target{"txn-exactly-once", "tv1"}
	txnTV2     = Target{"txn-exactly-once", "tv2"}
	// kip853 is the scripted reconfiguration the voter-change mutants
	// need: the swarms change voters only through auto-join, one answered
	// request at a time.
	kip853 = Target{"kraft-voter-changes", "dynamic"}
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
		Where:   "broker/server: the follower's truncation on becoming a follower (fetcher.go startTruncation; 2.7+, where truncation happens in Fetch, its Fetch also carries no LastFetchedEpoch, so the leader never answers DivergingEpoch)"},
	{ID: OffsetsForEpochWrongEnd, Name: "offsets-for-epoch-wrong-end", Layer: Replication, Targets: replication,
		Mistake: "OffsetsForLeaderEpoch answers the end offset of the leader's latest epoch, not of the epoch asked for",
		Where:   "broker/server: the leader's end offset for an epoch (endOffsetForEpoch), which answers OffsetsForLeaderEpoch and, 2.7+, a follower Fetch's divergence check"},
	{ID: ISRExpandsLagging, Name: "isr-expands-lagging", Layer: Replication, Targets: replication,
		Mistake: "the leader adds a follower to the ISR on its first fetch, before it caught up to the high watermark",
		Where:   "broker/server: the leader's ISR expansion"},
	{ID: AcksAllBelowMinISR, Name: "acks-all-below-min-isr", Layer: Replication, Targets: replication,
		Mistake: "an acks=all produce is appended and acknowledged while the ISR is below min.insync.replicas",
		Where:   "broker/server: Produce's min.insync.replicas check"},
	{ID: LeaderEpochNotBumped, Name: "leader-epoch-not-bumped", Layer: Replication, Targets: replication,
		Mistake: "the controller elects a new leader without bumping the partition's leader epoch",
		Where:   "broker/controller: electedEpoch (offline, unclean and preferred elections); KRaft: broker/metadata's replay of a PartitionChangeRecord that names a new leader (PartitionRegistration.merge, on the controllers and the brokers)"},
	{ID: FollowerHWPastLEO, Name: "follower-hw-past-leo", Layer: Replication, Targets: replication,
		Mistake: "a follower takes the leader's high watermark without capping it at its own log end",
		Where:   "broker/server: the follower's fetch response handling"},
	// NB: the replication swarms have no consumers (only the checkers'
	// final reads, after the replicas caught up), so fetch-beyond-hw is
	// looked for in the group swarms, whose members read while brokers fail.
	{ID: FetchBeyondHW, Name: "fetch-beyond-hw", Layer: Replication, Targets: []Target{groupZK, groupKRaft},
		Mistake: "the leader serves consumers records above the high watermark (uncommitted reads)",
		Where:   "broker/server: Fetch's upper bound for read_uncommitted consumers on the leader"},

	{ID: CleanElectionOutOfISR, Name: "clean-election-out-of-isr", Layer: Controller, Targets: replication,
		Mistake: "a clean leader election picks the first live assigned replica, in the ISR or not (which then joins the ISR it leads)",
		Where:   "broker/controller: electOffline; broker/kraft: change.elect (PartitionChangeBuilder's election)"},
	{ID: StaleControllerEpoch, Name: "stale-controller-epoch", Layer: Controller, Targets: zkOnly,
		Mistake:    "a broker obeys a LeaderAndIsr or UpdateMetadata request from a controller whose epoch is older than the latest it saw",
		Where:      "broker/server: LeaderAndIsr's and UpdateMetadata's controller-epoch check",
		Equivalent: "the per-partition leader-epoch check of LeaderAndIsr (0.11+) ignores every state a deposed controller can send: its ZooKeeper writes are fenced by /controller_epoch's version (KAFKA-6082), so it never decides a leader epoch the new controller has not re-sent, and a stale UpdateMetadata only misroutes clients until the next one (0 of 100 swarm seeds)"},
	{ID: NoFenceOnSessionExpiry, Name: "no-fence-on-session-expiry", Layer: Controller, Targets: replication,
		Mistake: "a broker whose session expired (ZooKeeper: the deletion of its registration and its new registration, KIP-380's broker epoch, go unnoticed) or whose heartbeats stopped (KRaft) is not fenced: it stays a leader and in ISRs",
		Where:   "broker/controller: onBrokerChange; broker/kraft: maybeFenceStaleBroker"},
	{ID: AlterPartitionStaleEpoch, Name: "alter-partition-stale-epoch", Layer: Controller, Targets: kraftOnly,
		Mistake: "the controller applies an AlterPartition (ISR change) sent with a stale leader epoch or partition epoch",
		Where:   "broker/kraft: AlterPartition"},

	{ID: RaftVoteNoLogCheck, Name: "raft-vote-no-log-check", Layer: Raft, Targets: []Target{swarmKRaft, {"kraft-swarm", "kraft-partitions"}},
		Mistake: "a voter grants its vote without checking that the candidate's log is at least as up to date as its own",
		Where:   "broker/raft: Vote (also kafkasim.raft.vote.check.log=false)"},
	{ID: RaftHWWithoutMajority, Name: "raft-hw-without-majority", Layer: Raft, Targets: []Target{swarmKRaft, {"kraft-swarm", "kraft-partitions"}},
		Mistake: "the Raft leader advances the high watermark to one voter's end offset (the furthest: its own log end), not to the end offset a majority of voters holds",
		Where:   "broker/raft: the leader's high-watermark update (maybeAdvanceHW)"},
	{ID: RaftEpochNotPersisted, Name: "raft-epoch-not-persisted", Layer: Raft, Targets: []Target{swarmKRaft, {"kraft-swarm", "kraft-partitions"}},
		Mistake: "quorum-state is written lazily, only once the epoch has a leader: a voter grants its vote (or starts an election) with the new epoch and vote in memory only, so a crash forgets them",
		Where:   "broker/raft: quorum-state writes (persist)"},
	{ID: RaftLeaderWithoutQuorum, Name: "raft-leader-without-quorum", Layer: Raft, Targets: []Target{swarmKRaft, {"kraft-swarm", "kraft-partitions"}},
		Mistake: "a Raft leader that sees a higher epoch (a Vote, a BeginQuorumEpoch, an EndQuorumEpoch) takes the epoch but keeps acting as leader instead of stepping down: two leaders in one epoch",
		Where:   "broker/raft: epoch handling on the leader (leaderKeepsRole, from observeEpoch, Vote and BeginQuorumEpoch)"},
	{ID: RaftCommitPreviousTerm, Name: "raft-commit-previous-term", Layer: Raft, Targets: []Target{swarmKRaft, {"kraft-swarm", "kraft-partitions"}},
		Mistake: "a new Raft leader advances the high watermark over records of earlier epochs before it commits one of its own epoch (Raft's Figure 8)",
		Where:   "broker/raft: the leader's high-watermark update (maybeAdvanceHW)"},
	{ID: RaftVoterChangesOverlap, Name: "raft-voter-changes-overlap", Layer: Raft, Targets: []Target{kip853, {"kraft-swarm", "kraft-dynamic-wipe"}},
		Mistake: "the leader accepts an AddRaftVoter or RemoveRaftVoter while another voter change is still uncommitted (KIP-853 allows one at a time): two changes away, the old and new voter sets need not share a majority",
		Where:   "broker/raft: voterChangeAllowed (AddRaftVoter, RemoveRaftVoter)"},

	{ID: ELRKeepsUncleanReplica, Name: "elr-keeps-unclean-replica", Layer: ELR, Targets: []Target{{"kraft-swarm", "kraft-elr"}, {"last-replica-standing", "elr"}},
		Mistake: "the controller takes a broker's re-registration after an unclean shutdown (lost unflushed data) for a clean one, so it keeps the broker in the ELR",
		Where:   "broker/kraft: broker registration's unclean-shutdown check (handleBrokerUncleanShutdown)"},

	{ID: TxnMarkerSkipped, Name: "txn-marker-skipped", Layer: Txn, Targets: []Target{{"txn-swarm", "tv1"}, {"txn-swarm", "tv2"}, txnTV1, txnTV2},
		Mistake: "the transaction coordinator completes a transaction without writing its marker to one of its partitions (an off-by-one over the partitions skips the last)",
		Where:   "broker/txn: sendMarkers"},
	{ID: LSOPastOpenTxn, Name: "lso-past-open-txn", Layer: Txn, Targets: []Target{{"txn-swarm", "tv1"}, {"txn-swarm", "tv2"}, txnTV1, txnTV2},
		Mistake: "the last stable offset advances to the high watermark past an open transaction",
		Where:   "broker/server: Partition.lsoAt"},
	{ID: ZombieNotFenced, Name: "zombie-not-fenced", Layer: Txn, Targets: []Target{{"txn-hanging", "tv2"}, {"txn-swarm", "tv1"}, {"txn-swarm", "tv2"}, txnTV1, txnTV2},
		Mistake: "a produce or TxnOffsetCommit with an older producer epoch is accepted after InitProducerId (or an abort) bumped it",
		Where:   "broker/server: the producer-epoch check (Partition.checkSequence and Partition.checkProducerAppend)"},
	{ID: TxnOffsetsOutside, Name: "txn-offsets-outside", Layer: Txn, Targets: []Target{{"txn-swarm", "tv1"}, {"txn-swarm", "tv2"}, txnTV1, txnTV2},
		Mistake: "TxnOffsetCommit's offsets become visible at once (stored as a plain OffsetCommit) instead of with the transaction's commit marker",
		Where:   "broker/coordinator: TxnOffsetCommit's append callback"},

	{ID: CommitSkipsGeneration, Name: "commit-skips-generation", Layer: Groups, Targets: groups,
		Mistake: "OffsetCommit is accepted from a member of an older generation, one the group has rebalanced past or without (no ILLEGAL_GENERATION, no UNKNOWN_MEMBER_ID): a zombie's commit lands",
		Where:   "broker/coordinator: OffsetCommit's member and generation checks"},
	{ID: AssignmentDuplicated, Name: "assignment-duplicated", Layer: Groups, Targets: groups,
		Mistake: "the assignment gives a partition to two members of the same generation",
		Where:   "broker/client: the group leader's assignment, the assignor's output (Consumer.assign)"},
	{ID: OffsetsLoadSkipped, Name: "offsets-load-skipped", Layer: Groups, Targets: groups,
		Mistake: "a new group coordinator serves OffsetFetch without loading the committed offsets from __consumer_offsets",
		Where:   "broker/coordinator: the load on election"},
	{ID: OffsetCommitBeforeReplicated, Name: "offset-commit-before-replicated", Layer: Groups, Targets: groups,
		Mistake: "the coordinator answers OffsetCommit once its own log has the record, before the ISR replicated it",
		Where:   "broker/coordinator: the offset commit's append (acks=-1)"},
	{ID: AssignBeforeRevoke, Name: "assign-before-revoke", Layer: Groups, Targets: []Target{group848, {"rebalance-storm", "consumer"}},
		Mistake: "the KIP-848 coordinator hands a partition to its new owner while the old owner has not yet acknowledged its revocation (no UNRELEASED_PARTITIONS wait)",
		Where:   "broker/coordinator: CurrentAssignmentBuilder (consumerGroup.computeNext)"},

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
