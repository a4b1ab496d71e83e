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
// Patch releases: a row may name the patch release it arrives in (Patch:
// 1 is X.Y.1), for a bug Kafka fixed in a patch release, so that the release
// that had it reproduces it: 4.0.0 elects a fenced last-known leader
// (KAFKA-19522) and bumps the producer epoch twice on a transaction version
// 2 fence-and-abort (KAFKA-19367); 4.0.1 fixes both. A release named
// without its patch ("4.0", inter.broker.protocol.version=4.0) is its newest
// patch the table knows (DefaultPatch: 4.0 is 4.0.1), which is what kafkasim
// modelled before patches were in the table. A patch the table has no row
// for behaves as the newest row at or below it (3.9.1 is 3.9.0).
//
// The producer's idempotence by release (ProducerConfig and KafkaProducer
// at each tag): 0.11 to 2.8, 3.0.0 and 3.1.0 are idempotent only when
// enable.idempotence=true is set (or transactional.id), and then acks other
// than all, retries=0 or too many requests in flight are a ConfigException;
// 3.0.1, 3.1.1 and 3.2+ are idempotent by default and a conflicting
// setting turns the default off (logged), while an explicit true still
// conflicts. So "3.0" and "3.1" mean 3.0.1 and 3.1.1; 3.0.0 and 3.1.0
// reproduce the bug. From 4.0 max.in.flight above 5 no longer turns the
// default off: it is refused (KAFKA-17927).
//
// Simplified vs Kafka: a mechanism arrives with the release that shipped
// it; Kafka's inter.broker.protocol.version sub-versions (2.7-IV1 for
// truncation in Fetch) are folded into their release, and a mechanism that
// Kafka back-ported to a patch release arrives at its minor release unless
// a row names the patch (only where kafkasim models the difference).

import (
	"slices"
	"strconv"
	"strings"
)

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
	// Idempotence is KIP-98's idempotent producer (0.11): the property
	// enable.idempotence exists.
	Idempotence bool
	// IdempotenceDefault: a producer that leaves enable.idempotence unset
	// is idempotent, unless acks, retries or
	// max.in.flight.requests.per.connection conflict, which turn it off
	// (KIP-679 with KAFKA-13598 and KAFKA-13673: 3.0.1, 3.1.1, 3.2.0 on).
	// 3.0.0 and 3.1.0 document the default true but never apply it
	// (ProducerConfig.idempotenceEnabled asked originals() for the key):
	// off there. Before 3.0 the default is false.
	IdempotenceDefault bool
	// InFlightAboveFiveRefused: from 4.0 (KAFKA-17927, apache/kafka PR
	// #17717) max.in.flight.requests.per.connection above 5 is a
	// ConfigException while idempotence is on, by default too, instead of
	// turning the default off (3.0.1-3.9 warned "in v4.0.0 and onward,
	// this will become an error").
	InFlightAboveFiveRefused bool
	// IdempotenceMaxInFlight is the most
	// max.in.flight.requests.per.connection an idempotent producer takes:
	// 1 in 0.11 (left unset, it is lowered to 1), 5 from 1.0 (KAFKA-5494);
	// 0 before 0.11.
	IdempotenceMaxInFlight int
	// AcksAllDefault is the producer's acks default: all from 3.0 (KIP-679),
	// 1 before.
	AcksAllDefault bool
	// KRaftAvailable: process.roles may be set (KRaft is production-ready
	// from 3.3, KIP-833).
	KRaftAvailable bool
	// ZooKeeper: the release can run with ZooKeeper (up to 3.9; KIP-500
	// removed it in 4.0).
	ZooKeeper bool
	// NoCheckQuorum is KRaft before KAFKA-15489 (3.3-3.6; fixed in 3.7.0,
	// apache/kafka #14428, which made a Raft leader that no majority of
	// voters fetched from within 1.5 × the fetch timeout resign): their
	// LeaderState has no such check, so a leader cut off from the other
	// voters but not from the brokers stays leader (scenario
	// kraft-split-brain). kafkasim.raft.check.quorum defaults to its
	// negation (on for the ZooKeeper-only rows, where it does nothing).
	NoCheckQuorum bool
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
	// UncleanElectionKRaft: the KRaft controller honours
	// unclean.leader.election.enable (topic, else cluster) when a broker
	// leaves, and checks leaderless partitions every
	// unclean.leader.election.interval.ms (KAFKA-12670, PR #16866, 3.9.0).
	// Before, ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic
	// returned false: a 3.3-3.8 KRaft controller never elects uncleanly on
	// its own (only the ElectLeaders API could, which kafkasim does not
	// model).
	UncleanElectionKRaft bool
	// FencedLastKnownLeaderElected is KAFKA-19522 (4.0.0 only): the
	// last-known-leader election of KIP-966 elects that broker even while
	// it is fenced (PartitionChangeBuilder.canElectLastKnownLeader only
	// logged an unacceptable leader); fixed in 4.0.1 and 4.1.0.
	FencedLastKnownLeaderElected bool
	// TxnFenceBumpsEpochTwice is KAFKA-19367 (4.0.0 only): with
	// transaction version 2 a coordinator's fence-and-abort (InitProducerId
	// over an ongoing transaction, or its timeout) bumps the producer epoch
	// in the fence and again in the abort; fixed in 4.0.1 and 4.1.0 (one
	// bump).
	TxnFenceBumpsEpochTwice bool
	// StrictTV2MarkerEpoch is KAFKA-19446 with its KAFKA-19999 follow-up
	// (Kafka 4.2, apache/kafka PRs #20882 and #21176): the partition
	// leader checks a transaction version 2 marker's epoch strictly (above
	// the producer's, or equal with no transaction ongoing) instead of
	// "not below". From 4.2.
	StrictTV2MarkerEpoch bool
	// RaftFetchHighWatermark is KIP-1166 (4.1, Fetch v18): a KRaft
	// replica's Fetch carries the high watermark it knows, and the leader
	// answers at once, not after fetch.max.wait, when its own is higher.
	// Before, a fetch that arrived just after the HW advanced was parked,
	// and that replica (a broker applying metadata, say a new topic's
	// partitions) learnt of the commit up to 500 ms after the others.
	RaftFetchHighWatermark bool
}

// release is one row of the table: from release From on, Apply changes the
// mechanisms of the release before it.
type release struct {
	From Version
	// Patch is the patch release of From the row arrives in: 0 for X.Y.0,
	// 1 for X.Y.1.
	Patch int
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
		m.Idempotence, m.IdempotenceMaxInFlight = true, 1
	}},
	{From: V1_0, Cite: "KAFKA-5494: the idempotent producer takes up to 5 requests in flight (0.11: exactly 1)", Apply: func(m *Mechanisms) {
		m.IdempotenceMaxInFlight = 5
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
	{From: V3_0, Cite: "KIP-679: producer acks=all, enable.idempotence=true documented but not applied (KAFKA-13598); KIP-724: message format 3.0-IV1", Apply: func(m *Mechanisms) {
		m.AcksAllDefault, m.MessageFormatFollowsProtocol = true, false
	}},
	{From: V3_0, Patch: 1, Cite: "KAFKA-13598 and KAFKA-13673 (3.0.1): idempotence on by default; conflicting acks, retries or max.in.flight turn it off", Apply: func(m *Mechanisms) {
		m.IdempotenceDefault = true
	}},
	{From: V3_1, Cite: "KAFKA-13598: 3.1.0 shipped without the fix (idempotence only when set explicitly)", Apply: func(m *Mechanisms) {
		m.IdempotenceDefault = false
	}},
	{From: V3_1, Patch: 1, Cite: "KAFKA-13598 and KAFKA-13673 (3.1.1, 3.2.0): idempotence on by default; conflicting acks, retries or max.in.flight turn it off", Apply: func(m *Mechanisms) {
		m.IdempotenceDefault = true
	}},
	{From: V3_3, Cite: "KIP-833: KRaft production-ready (without check-quorum until 3.7: KAFKA-15489)", Apply: func(m *Mechanisms) {
		m.KRaftAvailable, m.NoCheckQuorum = true, true
	}},
	{From: V3_6, Cite: "KIP-890 part 1: transaction.partition.verification.enable (KAFKA-14402's hanging transactions)", Apply: func(m *Mechanisms) {
		m.TxnPartitionVerification = true
	}},
	{From: V3_7, Cite: "KAFKA-15489: a KRaft leader without fetches from a majority of voters resigns (check-quorum)", Apply: func(m *Mechanisms) {
		m.NoCheckQuorum = false
	}},
	{From: V3_9, Cite: "KIP-500: the last release with ZooKeeper (KRaft possible); KAFKA-12670: the KRaft controller honours unclean.leader.election.enable and checks leaderless partitions every unclean.leader.election.interval.ms", Alias: KIP279, Apply: func(m *Mechanisms) {
		m.UncleanElectionKRaft = true
	}},
	{From: V4_0, Cite: "KIP-500: KRaft only; KIP-996 pre-vote; KIP-966 ELR available, off by default; KIP-890 part 2: transaction.version 2; KAFKA-17927: an idempotent producer (by default too) refuses max.in.flight above 5; 4.0.0's KAFKA-19522 (a fenced last-known leader is elected) and KAFKA-19367 (a TV2 fence-and-abort bumps the epoch twice)", Apply: func(m *Mechanisms) {
		m.ZooKeeper, m.PreVote, m.ELRAvailable = false, true, true
		m.InFlightAboveFiveRefused = true
		m.TransactionVersion = 2
		m.FencedLastKnownLeaderElected, m.TxnFenceBumpsEpochTwice = true, true
	}},
	{From: V4_0, Patch: 1, Cite: "KAFKA-19522 fixed (only an acceptable last-known leader is elected); KAFKA-19367 fixed (one epoch bump on a TV2 fence-and-abort)", Apply: func(m *Mechanisms) {
		m.FencedLastKnownLeaderElected, m.TxnFenceBumpsEpochTwice = false, false
	}},
	{From: V4_1, Cite: "KIP-966: ELR on by default for new clusters; KIP-1166: a KRaft Fetch (v18) carries the replica's high watermark, answered at once when the leader's is higher", Apply: func(m *Mechanisms) {
		m.ELRDefault, m.RaftFetchHighWatermark = true, true
	}},
	// Sources for 4.2 and 4.3: apache/kafka docs/getting-started/upgrade.md
	// ("Notable changes in 4.2.0", "Notable changes in 4.3.0") and
	// MetadataVersion.java. What a row lists as not modelled changes
	// nothing here.
	{From: V4_2, Cite: "KAFKA-19446 with KAFKA-19999 (PRs #20882, #21176): a transaction version 2 marker's epoch is checked strictly; metadata.version 4.2-IV1; KIP-932 share groups production-ready (share.version=1 by default: share group coordinator, share-partitions, __share_group_state; docs/share-broker.md); " +
		"KIP-853 controller.quorum.auto.join.enable (default false; with kafkasim.kraft.version=1 a controller that is no voter replaces its stale voter and adds itself). " +
		"Not modelled: KIP-1071 Streams rebalance protocol GA; " +
		"KIP-1161 stricter LIST-type config validation; num.replica.fetchers >= 1; no property tables for 4.2 in the catalog (properties of any release are accepted unchecked). " +
		"The consumer's group.protocol default stays classic (KIP-848's consumer protocol is opt-in; apache/kafka#18121 leaves the switch to 5.0)", Apply: func(m *Mechanisms) {
		m.StrictTV2MarkerEpoch = true
	}},
	{From: V4_3, Cite: "metadata.version 4.3-IV0 (has metadata changes). Not modelled: KAFKA-18928 dynamic configs of dynamic-quorum controllers; " +
		"KIP-1196 group.coordinator.cached.buffer.max.bytes and share.coordinator.cached.buffer.max.bytes; KIP-1235 remote.log.metadata.topic.min.isr (2); " +
		"KIP-1066 cordoned.log.dirs; no property tables for 4.3 in the catalog. Nothing kafkasim models changes from 4.2", Apply: func(m *Mechanisms) {}},
}

// Mechanisms returns what release v does at its default patch (the
// table's rows up to v's newest patch row; see the file comment). An
// invalid v gets the zero Mechanisms.
func (v Version) Mechanisms() Mechanisms { return v.MechanismsAt(-1) }

// DefaultPatch is the patch release "X.Y" alone means: the newest patch
// the table has a row for (1 for 4.0), else 0.
func (v Version) DefaultPatch() int {
	p := 0
	for _, r := range releases {
		if r.From == v && r.Patch > p {
			p = r.Patch
		}
	}
	return p
}

// MechanismsAt returns what patch release patch of v does (v.patch, e.g.
// 4.0.0 for patch 0); a negative patch is DefaultPatch.
func (v Version) MechanismsAt(patch int) Mechanisms {
	if !v.Valid() {
		return Mechanisms{}
	}
	if patch < 0 {
		patch = v.DefaultPatch()
	}
	n := 0
	for _, r := range releases {
		if r.From > v || r.From == v && r.Patch > patch {
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
		if r.Patch > 0 {
			out[i] = r.From.String() + "." + strconv.Itoa(r.Patch) + ": " + r.Cite
		}
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
// 3.3, KRaft from 4.0); from 3.3 to 3.9 the label names the mode. A label
// may name a patch release ("4.0.0", "4.0.1", "3.9.0-kraft"): the release
// at that patch (see the file comment); without one it is DefaultPatch.
const (
	matrixZK    = "-zk"
	matrixKRaft = "-kraft"
)

// MatrixLabels returns the labels to list: one per release and mode, oldest
// release first, and for a release with patch rows (4.0) also each of its
// patches ("4.0.0", "4.0.1") after it. ParseMatrixVersion accepts these
// and any other patch of a known release.
func MatrixLabels() []string {
	var out []string
	for _, v := range Versions() {
		m := v.Mechanisms()
		modes := []string{""}
		if m.ZooKeeper && m.KRaftAvailable {
			modes = []string{matrixZK, matrixKRaft}
		}
		for _, mode := range modes {
			out = append(out, v.String()+mode)
		}
		if p := v.DefaultPatch(); p > 0 {
			for i := 0; i <= p; i++ {
				for _, mode := range modes {
					out = append(out, v.String()+"."+strconv.Itoa(i)+mode)
				}
			}
		}
	}
	return out
}

// ParseMatrixVersion returns the properties a run needs for the matrix
// label s: {inter.broker.protocol.version: "3.9"} for "3.9-zk" (and for a
// ZooKeeper-only release such as "2.0"), plus process.roles=broker for
// "3.9-kraft"; "4.0" needs only the version (4.0 runs KRaft by default); a
// patch label keeps its patch ("4.0.0": inter.broker.protocol.version
// 4.0.0). An unknown label is an *Error listing the known ones.
func ParseMatrixVersion(s string) (map[string]string, error) {
	label := strings.TrimSpace(s)
	release, mode, _ := strings.Cut(label, "-")
	bad := &Error{Kind: BadValue, Property: "version", Value: s, Reason: "not a known matrix label",
		Allowed: strings.Join(MatrixLabels(), ", ") + " (or another patch release of a listed one, such as 3.9.1-kraft)"}
	v, patch, ok := parseReleasePatch(release)
	if !ok {
		return nil, bad
	}
	want := v.String()
	if mode != "" {
		want += "-" + mode
	}
	if !slices.Contains(MatrixLabels(), want) {
		return nil, bad
	}
	props := map[string]string{PropInterBrokerProtocolVersion: v.String()}
	if patch >= 0 {
		props[PropInterBrokerProtocolVersion] = v.String() + "." + strconv.Itoa(patch)
	}
	if "-"+mode == matrixKRaft {
		props[PropProcessRoles] = RolesBroker.String()
	}
	return props, nil
}
