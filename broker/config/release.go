package config

// This file is the one table of what each Kafka release has: releases, a
// row per release where a mechanism kafkasim models arrives, changes its
// default or goes, each citing its KIP or JIRA. Version.Mechanisms folds the
// rows up to a release; every version-dependent default (DefaultBrokerFor,
// TruncationFor, the truncation alias, the KRaft defaults, the producer's
// defaults in DefaultProducerFor) reads from it, so a release's behaviour
// is decided here and nowhere else.
//
// ParseMatrixVersion maps a label of the version matrix ("2.0", "3.9-zk",
// "3.9-kraft", "4.0") to the properties a run needs for it.
//
// Simplified vs Kafka: a mechanism arrives with the release that shipped
// it; Kafka's inter.broker.protocol.version sub-versions (2.7-IV1 for
// truncation in Fetch) are folded into their release, and a mechanism that
// Kafka back-ported to a patch release arrives at its minor release.

import "strings"

// Mechanisms is what a release does, as far as kafkasim models it.
type Mechanisms struct {
	// Truncation is the follower's truncation protocol: HW below 0.11,
	// KIP101 to 1.1, KIP279 from 2.0.
	Truncation Truncation
	// HaltOnTruncationFailure: a follower that must truncate below its HW
	// with unclean election off halts the broker (0.10.2 and before,
	// KAFKA-3410; scenario kafka3410-halt). False once leader epochs make
	// such truncation safe (0.11).
	HaltOnTruncationFailure bool
	// UncleanElectionDefault is the default of
	// unclean.leader.election.enable: true below 0.11 (KIP-106).
	UncleanElectionDefault bool
	// LeaderEpochFencing is KIP-320 (2.1): CurrentLeaderEpoch fencing in
	// Fetch, ListOffsets and OffsetsForLeaderEpoch, and the default of
	// kafkasim.leader.epoch.fencing.
	LeaderEpochFencing bool
	// ConsumerTruncationDetection is KIP-320's consumer side (2.1): a
	// consumer validates its position after a leader change.
	ConsumerTruncationDetection bool
	// KAFKA7164Fixed: a follower truncates on every new leader epoch, also
	// when the leader stays the same (KAFKA-7164, fixed in 2.1).
	KAFKA7164Fixed bool
	// FetchFromFollower is KIP-392 (2.4): replica.selector.class and Fetch
	// v11 with the consumer's rack.
	FetchFromFollower bool
	// LongerTimeouts is KIP-537 (2.5): replica.lag.time.max.ms 30000 (was
	// 10000) and zookeeper.session.timeout.ms 18000 (was 6000).
	LongerTimeouts bool
	// TruncationInFetch is KIP-595's LastFetchedEpoch/DivergingEpoch applied
	// to replication (2.7, KAFKA-10554): a follower sends Fetch v12 with the
	// epoch of its last record and truncates when the leader answers
	// DivergingEpoch, instead of OffsetsForLeaderEpoch before fetching.
	TruncationInFetch bool
	// MessageFormatFollowsProtocol: log.message.format.version defaults to
	// the protocol version (below 3.0); from 3.0 it is 3.0-IV1 (KIP-724).
	MessageFormatFollowsProtocol bool
	// IdempotenceDefault is the producer's enable.idempotence default: true
	// from 3.0 (KIP-679).
	IdempotenceDefault bool
	// AcksAllDefault is the producer's acks default: all from 3.0 (KIP-679),
	// 1 before.
	AcksAllDefault bool
	// KRaftAvailable: process.roles may be set (KRaft is production-ready
	// from 3.3, KIP-833).
	KRaftAvailable bool
	// ZooKeeper: the release can run with ZooKeeper (up to 3.9; KIP-500
	// removed it in 4.0).
	ZooKeeper bool
	// PreVote is KIP-996 pre-vote, the default of kafkasim.raft.prevote
	// (4.0).
	PreVote bool
	// ELRAvailable is KIP-966's eligible leader replicas (4.0), off by
	// default there.
	ELRAvailable bool
	// ELRDefault: ELR is on by default for a new cluster (4.1).
	ELRDefault bool
	// Transactions is KIP-98 (0.11): the transaction coordinator,
	// transactional producers and read_committed consumers.
	Transactions bool
	// TxnPartitionVerification is KIP-890 part 1 (3.6): a partition
	// leader verifies a transaction's first batch with the coordinator
	// (the default of transaction.partition.verification.enable).
	TxnPartitionVerification bool
	// TransactionVersion is the default transaction.version: 1 before
	// 4.0, 2 from 4.0 (KIP-890 part 2: an epoch bump on every commit and
	// abort); 0 before transactions.
	TransactionVersion int
	// StrictTV2MarkerEpoch is KAFKA-19446 with its KAFKA-19999 follow-up
	// (Kafka 4.2, apache/kafka PRs #20882 and #21176): the partition
	// leader checks a transaction version 2 marker's epoch strictly (above
	// the producer's, or equal with no transaction ongoing) instead of
	// "not below". No row up to 4.1 has it.
	StrictTV2MarkerEpoch bool
}

// release is one row of the table: from release From on, Apply changes the
// mechanisms of the release before it.
type release struct {
	From  Version
	Cite  string
	Apply func(*Mechanisms)
	// Alias is the truncation alias that selects this release as
	// inter.broker.protocol.version (the newest release using it), or 0.
	Alias Truncation
}

// releases is the table, oldest first. The first row is the baseline.
var releases = []release{
	{From: V0_8_0, Cite: "replication design (KAFKA-50): HW truncation; unclean election on by default", Apply: func(m *Mechanisms) {
		*m = Mechanisms{Truncation: HW, HaltOnTruncationFailure: true, UncleanElectionDefault: true,
			MessageFormatFollowsProtocol: true, ZooKeeper: true}
	}},
	{From: V0_10_2, Cite: "KAFKA-3410: a follower that cannot truncate halts (scenario kafka3410-halt); the last HW release", Alias: HW, Apply: func(m *Mechanisms) {}},
	{From: V0_11_0, Cite: "KIP-101 leader-epoch truncation (OffsetsForLeaderEpoch v0); KIP-106 unclean election off; KIP-98 transactions", Apply: func(m *Mechanisms) {
		m.Truncation, m.HaltOnTruncationFailure, m.UncleanElectionDefault = KIP101, false, false
		m.Transactions, m.TransactionVersion = true, 1
	}},
	{From: V1_1, Cite: "KIP-101: the last release before KIP-279 (still diverges: KAFKA-6361)", Alias: KIP101, Apply: func(m *Mechanisms) {}},
	{From: V2_0, Cite: "KIP-279 (KAFKA-6361): OffsetsForLeaderEpoch v1 names the epoch; the follower walks back", Apply: func(m *Mechanisms) {
		m.Truncation = KIP279
	}},
	{From: V2_1, Cite: "KIP-320 leader-epoch fencing and consumer truncation detection; KAFKA-7164 fixed", Apply: func(m *Mechanisms) {
		m.LeaderEpochFencing, m.ConsumerTruncationDetection, m.KAFKA7164Fixed = true, true, true
	}},
	{From: V2_4, Cite: "KIP-392 fetch from follower (replica.selector.class, Fetch v11)", Apply: func(m *Mechanisms) {
		m.FetchFromFollower = true
	}},
	{From: V2_5, Cite: "KIP-537: replica.lag.time.max.ms 30000, zookeeper.session.timeout.ms 18000", Apply: func(m *Mechanisms) {
		m.LongerTimeouts = true
	}},
	{From: V2_7, Cite: "KIP-595 LastFetchedEpoch/DivergingEpoch in Fetch v12 for replication (KAFKA-10554)", Apply: func(m *Mechanisms) {
		m.TruncationInFetch = true
	}},
	{From: V3_0, Cite: "KIP-679: producer enable.idempotence=true, acks=all; KIP-724: message format 3.0-IV1", Apply: func(m *Mechanisms) {
		m.IdempotenceDefault, m.AcksAllDefault, m.MessageFormatFollowsProtocol = true, true, false
	}},
	{From: V3_3, Cite: "KIP-833: KRaft production-ready", Apply: func(m *Mechanisms) {
		m.KRaftAvailable = true
	}},
	{From: V3_6, Cite: "KIP-890 part 1: transaction.partition.verification.enable (KAFKA-14402's hanging transactions)", Apply: func(m *Mechanisms) {
		m.TxnPartitionVerification = true
	}},
	{From: V3_9, Cite: "KIP-500: the last release with ZooKeeper (KRaft possible)", Alias: KIP279, Apply: func(m *Mechanisms) {}},
	{From: V4_0, Cite: "KIP-500: KRaft only; KIP-996 pre-vote; KIP-966 ELR available, off by default; KIP-890 part 2: transaction.version 2", Apply: func(m *Mechanisms) {
		m.ZooKeeper, m.PreVote, m.ELRAvailable = false, true, true
		m.TransactionVersion = 2
	}},
	{From: V4_1, Cite: "KIP-966: ELR on by default for new clusters", Apply: func(m *Mechanisms) {
		m.ELRDefault = true
	}},
}

// Mechanisms returns what release v does (the table's rows up to v). An
// invalid v gets the zero Mechanisms.
func (v Version) Mechanisms() Mechanisms {
	if !v.Valid() {
		return Mechanisms{}
	}
	n := 0
	for _, r := range releases {
		if r.From > v {
			break
		}
		n++
	}
	if n == 0 {
		return Mechanisms{}
	}
	return cumulative[n-1]
}

// cumulative[i] is what rows 0 to i of releases add up to, computed once:
// Mechanisms applied the rows on every call, and the indirect calls moved
// its result to the heap (the table is read-only after init).
var cumulative = func() []Mechanisms {
	out := make([]Mechanisms, len(releases))
	var m Mechanisms
	for i, r := range releases {
		r.Apply(&m)
		out[i] = m
	}
	return out
}()

// ReleaseCitations returns, for each row of the table, its release and
// citation, oldest first ("2.7: KIP-595 ...").
func ReleaseCitations() []string {
	out := make([]string, len(releases))
	for i, r := range releases {
		out[i] = r.From.String() + ": " + r.Cite
	}
	return out
}

// aliasVersion returns the release the truncation alias t selects.
func aliasVersion(t Truncation) Version {
	for _, r := range releases {
		if r.Alias == t {
			return r.From
		}
	}
	return Latest
}

// Matrix labels: a release alone runs in its only mode (ZooKeeper below
// 3.3, KRaft from 4.0); from 3.3 to 3.9 the label names the mode.
const (
	matrixZK    = "-zk"
	matrixKRaft = "-kraft"
)

// MatrixLabels returns every label ParseMatrixVersion accepts, oldest
// release first.
func MatrixLabels() []string {
	var out []string
	for _, v := range Versions() {
		m := v.Mechanisms()
		switch {
		case m.ZooKeeper && m.KRaftAvailable:
			out = append(out, v.String()+matrixZK, v.String()+matrixKRaft)
		default:
			out = append(out, v.String())
		}
	}
	return out
}

// ParseMatrixVersion returns the properties a run needs for the matrix
// label s: {inter.broker.protocol.version: "3.9"} for "3.9-zk" (and for a
// ZooKeeper-only release such as "2.0"), plus process.roles=broker for
// "3.9-kraft"; "4.0" needs only the version (4.0 runs KRaft by default).
// An unknown label is an *Error listing the known ones.
func ParseMatrixVersion(s string) (map[string]string, error) {
	label := strings.TrimSpace(s)
	for _, known := range MatrixLabels() {
		if known != label {
			continue
		}
		release, mode, _ := strings.Cut(label, "-")
		props := map[string]string{PropInterBrokerProtocolVersion: release}
		if "-"+mode == matrixKRaft {
			props[PropProcessRoles] = RolesBroker.String()
		}
		return props, nil
	}
	return nil, &Error{Kind: BadValue, Property: "version", Value: s, Reason: "not a known matrix label",
		Allowed: strings.Join(MatrixLabels(), ", ")}
}
