package config

// This file holds the broker's configuration (Kafka's KafkaConfig, the
// server.properties keys) for replication, the controller, ZooKeeper,
// storage and the group coordinator, plus the kafkasim.* switches.
// Simplified vs Kafka: one Broker value is shared by every broker of a run,
// so broker.id (and KRaft's node.id), which name one node, are accepted but
// not modelled: the cluster harness numbers the nodes; the
// network, security, quota, KRaft and transaction properties are absent;
// log.dir is accepted as the single-directory spelling of log.dirs.
//
// Version-dependent defaults follow inter.broker.protocol.version through
// the releases table (release.go), so that setting an old version gives
// that release's behaviour:
// unclean.leader.election.enable is true below 0.11 (KIP-106);
// replica.lag.time.max.ms is 10000 and zookeeper.session.timeout.ms 6000
// below 2.5 (KIP-537), 30000 and 18000 from 2.5; log.message.format.version
// follows the protocol version below 3.0 and is "3.0-IV1" from 3.0;
// kafkasim.leader.epoch.fencing (KIP-320) is on from 2.1;
// kafkasim.truncation.in.fetch (KAFKA-10554) from 2.7. A property the user
// sets explicitly always wins over the version's default.
// replica.selector.class (KIP-392, 2.4+) is null (fetch from the leader only)
// or Kafka's RackAwareReplicaSelector; a custom selector class cannot be
// loaded, and a selector below protocol version 2.4 is a Conflict (Fetch
// v11, which carries the consumer's rack, arrived in 2.4).

import (
	"math"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
)

// Names of the broker properties other code refers to.
const (
	PropMinInsyncReplicas             = "min.insync.replicas"
	PropUncleanLeaderElection         = "unclean.leader.election.enable"
	PropDefaultReplicationFactor      = "default.replication.factor"
	PropAutoCreateTopicsEnable        = "auto.create.topics.enable"
	PropInterBrokerProtocolVersion    = "inter.broker.protocol.version"
	PropLogMessageFormatVersion       = "log.message.format.version"
	PropReplicaLagTimeMaxMs           = "replica.lag.time.max.ms"
	PropReplicaFetchWaitMaxMs         = "replica.fetch.wait.max.ms"
	PropOffsetsTopicReplicationFactor = "offsets.topic.replication.factor"
	PropGroupMinSessionTimeoutMs      = "group.min.session.timeout.ms"
	PropGroupMaxSessionTimeoutMs      = "group.max.session.timeout.ms"
	// PropTruncation is the kafkasim alias that selects the truncation
	// protocol directly: hw, kip101 or kip279.
	PropTruncation = "truncation"
	// PropLeaderEpochFencing turns KIP-320 fencing (FENCED_LEADER_EPOCH /
	// UNKNOWN_LEADER_EPOCH on a stale current leader epoch) on or off.
	PropLeaderEpochFencing = "kafkasim.leader.epoch.fencing"
	// PropTruncateOnLeaderChangeOnly is the KAFKA-7164 bug switch.
	PropTruncateOnLeaderChangeOnly = "kafkasim.truncate.on.leader.change.only"
	// PropReplicaSelectorClass is KIP-392's replica.selector.class.
	PropReplicaSelectorClass = "replica.selector.class"
	// PropTruncationInFetch is the switch for truncation inside Fetch
	// (KIP-595's DivergingEpoch for replication, 2.7+, KAFKA-10554).
	PropTruncationInFetch = "kafkasim.truncation.in.fetch"
	// PropMetadataVersion is KRaft's metadata.version, naming a release.
	PropMetadataVersion = "metadata.version"
)

// ReplicaSelector is replica.selector.class: which replica a leader tells
// a consumer (Fetch v11+, with its client.rack) to read from.
type ReplicaSelector string

// The replica selectors.
const (
	// SelectorNone is Kafka's default (null): consumers read from the
	// leader.
	SelectorNone ReplicaSelector = ""
	// SelectorRackAware is Kafka's built-in RackAwareReplicaSelector: a
	// replica in the consumer's rack, the leader if it is there, else the
	// most caught-up one.
	SelectorRackAware ReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
)

const selectorAllowed = `"" (null: the leader only), org.apache.kafka.common.replica.RackAwareReplicaSelector (or RackAwareReplicaSelector)`

// String returns the property value.
func (s ReplicaSelector) String() string { return string(s) }

func parseReplicaSelector(s string) (ReplicaSelector, bool) {
	switch s {
	case "", "null":
		return SelectorNone, true
	case string(SelectorRackAware), "RackAwareReplicaSelector":
		return SelectorRackAware, true
	}
	return "", false
}

// Broker is the broker configuration. Each field names its Kafka property,
// unit, default and limits; DefaultBroker returns the defaults of Latest.
//
// Invariant (checked by Validate): Truncation == TruncationFor(InterBrokerProtocolVersion).
type Broker struct {
	// Rack is broker.rack: the rack for rack-aware replica assignment and
	// fetch-from-follower (KIP-392). Default "" (no rack).
	Rack string
	// LogDirs is log.dirs (or log.dir): comma-separated directories on the
	// virtual disk. Default ["/tmp/kafka-logs"]. At least one, no empty or
	// repeated entry.
	LogDirs []string
	// AutoCreateTopicsEnable is auto.create.topics.enable: a Metadata
	// request for an unknown topic that allows it (always below v4) makes
	// the broker create the topic with num.partitions and
	// default.replication.factor (AutoTopicCreationManager). Default true.
	// __consumer_offsets and __transaction_state are created on the first
	// FindCoordinator whatever its value.
	AutoCreateTopicsEnable bool
	// DeleteTopicEnable is delete.topic.enable: DeleteTopics deletes
	// topics (false: TOPIC_DELETION_DISABLED, INVALID_REQUEST below
	// DeleteTopics v3). Default false before 1.0, true from 1.0 (KAFKA-5384).
	DeleteTopicEnable bool
	// NumPartitions is num.partitions: partitions of an auto-created topic.
	// Default 1; at least 1.
	NumPartitions int
	// DefaultReplicationFactor is default.replication.factor: replicas of a
	// topic created without one. Default 1; in [1, 32767].
	DefaultReplicationFactor int
	// MinInsyncReplicas is min.insync.replicas: the ISR size an acks=all
	// produce needs (NOT_ENOUGH_REPLICAS below it). Default 1; at least 1;
	// at most the replication factor (Config.Validate).
	MinInsyncReplicas int
	// UncleanLeaderElectionEnable is unclean.leader.election.enable: whether
	// a replica outside the ISR may become leader when no ISR member is
	// alive, losing committed records. Default false; true below 0.11
	// (KIP-106) when not set.
	UncleanLeaderElectionEnable bool
	// ReplicaLagTimeMax is replica.lag.time.max.ms: a follower not caught
	// up for this long leaves the ISR. Default 30000ms (10000ms below 2.5,
	// KIP-537); at least 1ms, at least replica.fetch.wait.max.ms.
	ReplicaLagTimeMax sim.Duration
	// ReplicaFetchWaitMax is replica.fetch.wait.max.ms: how long the leader
	// holds a follower's fetch waiting for replica.fetch.min.bytes. Default
	// 500ms; at least 0.
	ReplicaFetchWaitMax sim.Duration
	// ReplicaFetchMinBytes is replica.fetch.min.bytes: bytes a follower's
	// fetch waits for. Default 1; at least 0.
	ReplicaFetchMinBytes int
	// ReplicaFetchMaxBytes is replica.fetch.max.bytes: bytes per partition a
	// follower's fetch asks for (at least one batch is returned). Default
	// 1048576; at least 0.
	ReplicaFetchMaxBytes int
	// ReplicaFetchBackoff is replica.fetch.backoff.ms: the pause after a
	// failed follower fetch. Default 1000ms; at least 0.
	ReplicaFetchBackoff sim.Duration
	// ReplicaHighWatermarkCheckpointInterval is
	// replica.high.watermark.checkpoint.interval.ms: how often the HW is
	// written to replication-offset-checkpoint. Default 5000ms; at least 1ms.
	ReplicaHighWatermarkCheckpointInterval sim.Duration
	// ZookeeperSessionTimeout is zookeeper.session.timeout.ms: a broker
	// whose session is silent this long is dead to the controller. Default
	// 18000ms (6000ms below 2.5, KIP-537); at least 1ms.
	ZookeeperSessionTimeout sim.Duration
	// ControllerSocketTimeout is controller.socket.timeout.ms: how long the
	// controller waits for a broker's answer. Default 30000ms; at least 1ms.
	ControllerSocketTimeout sim.Duration
	// AutoLeaderRebalanceEnable is auto.leader.rebalance.enable: whether the
	// controller moves leadership back to preferred replicas. Default true.
	AutoLeaderRebalanceEnable bool
	// LeaderImbalanceCheckInterval is
	// leader.imbalance.check.interval.seconds (seconds): how often the
	// controller checks. Default 300s; at least 1s.
	LeaderImbalanceCheckInterval sim.Duration
	// LeaderImbalancePerBrokerPercentage is
	// leader.imbalance.per.broker.percentage: the imbalance that triggers a
	// rebalance. Default 10; in [0, 100].
	LeaderImbalancePerBrokerPercentage int
	// Patch is the patch release inter.broker.protocol.version named (1 of
	// "4.0.1"), or -1 (the default) when it named the release alone, which
	// is the release's DefaultPatch (release.go).
	Patch int
	// InterBrokerProtocolVersion is inter.broker.protocol.version. Default
	// Latest (3.9); one of Versions().
	InterBrokerProtocolVersion Version
	// LogMessageFormatVersion is log.message.format.version: "0.8.x"/"0.9.0"
	// give v0 messages, "0.10.x" v1 (no leader epoch), later v2 batches.
	// Default: the protocol version below 3.0, else "3.0-IV1". Not above
	// inter.broker.protocol.version when that is below 3.0 (as Kafka).
	LogMessageFormatVersion string
	// LogSegmentBytes is log.segment.bytes. Default 1073741824; at least 14.
	LogSegmentBytes int
	// LogRoll is log.roll.ms (or log.roll.hours): a segment rolls once its
	// first batch is this old. Default 168h; at least 1ms.
	LogRoll sim.Duration
	// LogIndexSizeMaxBytes is log.index.size.max.bytes. Default 10485760;
	// at least 8.
	LogIndexSizeMaxBytes int
	// LogIndexIntervalBytes is log.index.interval.bytes: bytes between
	// offset index entries. Default 4096; at least 0.
	LogIndexIntervalBytes int
	// LogRetention is log.retention.ms (or .minutes, .hours). Default 168h;
	// -1ms (any negative value given) means unlimited.
	LogRetention sim.Duration
	// LogRetentionBytes is log.retention.bytes. Default -1 (unlimited); at
	// least -1.
	LogRetentionBytes int64
	// LogRetentionCheckInterval is log.retention.check.interval.ms. Default
	// 300000ms; at least 1ms.
	LogRetentionCheckInterval sim.Duration
	// LogFlushIntervalMessages is log.flush.interval.messages: fsync after
	// this many messages. Default math.MaxInt64 (never: Kafka relies on
	// replication); at least 1.
	LogFlushIntervalMessages int64
	// LogFlushInterval is log.flush.interval.ms: fsync a log unsynced this
	// long. Default Never; at least 0.
	LogFlushInterval sim.Duration
	// LogFlushOffsetCheckpointInterval is
	// log.flush.offset.checkpoint.interval.ms. Default 60000ms; at least 1ms.
	LogFlushOffsetCheckpointInterval sim.Duration
	// LogCleanupPolicy is log.cleanup.policy. Default CleanupDelete.
	LogCleanupPolicy CleanupPolicy
	// LogCleanerDeleteRetention is log.cleaner.delete.retention.ms: how long
	// a tombstone survives compaction. Default 86400000ms; at least 0.
	LogCleanerDeleteRetention sim.Duration
	// LogCleanerBackoff is log.cleaner.backoff.ms. Default 15000ms; at
	// least 0.
	LogCleanerBackoff sim.Duration
	// OffsetsTopicNumPartitions is offsets.topic.num.partitions: partitions
	// of __consumer_offsets. Default 50; at least 1.
	OffsetsTopicNumPartitions int
	// OffsetsTopicReplicationFactor is offsets.topic.replication.factor.
	// Default 3; in [1, 32767]; at most the number of brokers when a group is
	// used (Config.Validate).
	OffsetsTopicReplicationFactor int
	// GroupInitialRebalanceDelay is group.initial.rebalance.delay.ms: how
	// long a new group waits for more members. Default 3000ms; at least 0.
	GroupInitialRebalanceDelay sim.Duration
	// GroupMinSessionTimeout is group.min.session.timeout.ms. Default
	// 6000ms; at least 0.
	GroupMinSessionTimeout sim.Duration
	// GroupMaxSessionTimeout is group.max.session.timeout.ms. Default
	// 1800000ms; at least group.min.session.timeout.ms.
	GroupMaxSessionTimeout sim.Duration
	// Truncation is the truncation protocol, the alias property truncation
	// (hw, kip101, kip279). It always equals
	// TruncationFor(InterBrokerProtocolVersion): given alone, truncation
	// selects the newest release using it (hw: 0.10.2, kip101: 1.1, kip279:
	// Latest); given with inter.broker.protocol.version, the two must agree.
	Truncation Truncation
	// LeaderEpochFencing is kafkasim.leader.epoch.fencing: KIP-320 (brokers
	// check the current leader epoch in Fetch, ListOffsets and
	// OffsetsForLeaderEpoch; consumers detect truncation). Default true from
	// 2.1, false before.
	LeaderEpochFencing bool
	// TruncateOnLeaderChangeOnly is kafkasim.truncate.on.leader.change.only:
	// true reproduces KAFKA-7164 (a follower skips truncation when a new
	// leader epoch keeps the same leader). Default false (the fix, PR #5436).
	// Ignored under HW truncation.
	TruncateOnLeaderChangeOnly bool
	// ReplicaSelectorClass is replica.selector.class (KIP-392): SelectorNone
	// (default: consumers fetch from the leader) or SelectorRackAware
	// (a consumer with client.rack is sent to a replica in its rack).
	// Needs inter.broker.protocol.version 2.4 or later.
	ReplicaSelectorClass ReplicaSelector
	// TruncationInFetch is kafkasim.truncation.in.fetch: a follower sends
	// Fetch v12 with LastFetchedEpoch and truncates on the leader's
	// DivergingEpoch instead of sending OffsetsForLeaderEpoch first
	// (KIP-595, KAFKA-10554). Default true from 2.7 (the releases table).
	// Ignored under HW and KIP101 truncation; set true at 2.0 to 2.6 it is
	// an experiment Kafka never shipped.
	TruncationInFetch bool
	// MetadataVersion is metadata.version, KRaft's feature level
	// ("3.6-IV2", or "3.6" for its latest level; metadata_version.go).
	// Default "": the latest production level of
	// inter.broker.protocol.version (MetadataVersionInEffect). Set, it
	// needs KRaft mode and a level the release runs (3.3-IV0, from 4.0
	// 3.3-IV3, up to the release's latest); alone it selects its release.
	MetadataVersion string
	// KRaft holds the KRaft properties (kraft.go).
	KRaft KRaft
	// ELR is KIP-966's eligible.leader.replicas.version (elr.go).
	ELR ELR
	// Txn holds the transaction coordinator's properties (txn.go).
	Txn Txn
	// ConsumerGroups holds the consumer group protocol's properties
	// (KIP-848, groups848.go).
	ConsumerGroups ConsumerGroups
	// ShareGroups holds the share groups' properties (KIP-932, share.go).
	ShareGroups ShareGroups
	// Records holds message.max.bytes and compression.type (records.go).
	Records Records
	// Mutants are the planted bugs switched on (kafkasim.mutant.NAME,
	// mutants.go): none by default, and none of them is Kafka.
	Mutants mutant.Set
}

// DefaultBroker returns Kafka's defaults for the Latest release.
func DefaultBroker() Broker { return DefaultBrokerFor(Latest) }

// DefaultBrokerFor returns the defaults of release v (see the file comment
// for what depends on the version).
func DefaultBrokerFor(v Version) Broker {
	m := v.Mechanisms()
	b := Broker{
		LogDirs:                                []string{"/tmp/kafka-logs"},
		AutoCreateTopicsEnable:                 true,
		DeleteTopicEnable:                      v >= V1_0,
		NumPartitions:                          1,
		DefaultReplicationFactor:               1,
		MinInsyncReplicas:                      1,
		UncleanLeaderElectionEnable:            m.UncleanElectionDefault,
		ReplicaLagTimeMax:                      sim.Ms(30000),
		ReplicaFetchWaitMax:                    sim.Ms(500),
		ReplicaFetchMinBytes:                   1,
		ReplicaFetchMaxBytes:                   1048576,
		ReplicaFetchBackoff:                    sim.Ms(1000),
		ReplicaHighWatermarkCheckpointInterval: sim.Ms(5000),
		ZookeeperSessionTimeout:                sim.Ms(18000),
		ControllerSocketTimeout:                sim.Ms(30000),
		AutoLeaderRebalanceEnable:              true,
		LeaderImbalanceCheckInterval:           300 * sim.Second,
		LeaderImbalancePerBrokerPercentage:     10,
		InterBrokerProtocolVersion:             v,
		Patch:                                  -1,
		LogMessageFormatVersion:                "3.0-IV1",
		LogSegmentBytes:                        1073741824,
		LogRoll:                                168 * sim.Hour,
		LogIndexSizeMaxBytes:                   10485760,
		LogIndexIntervalBytes:                  4096,
		LogRetention:                           168 * sim.Hour,
		LogRetentionBytes:                      -1,
		LogRetentionCheckInterval:              sim.Ms(300000),
		LogFlushIntervalMessages:               math.MaxInt64,
		LogFlushInterval:                       Never,
		LogFlushOffsetCheckpointInterval:       sim.Ms(60000),
		LogCleanupPolicy:                       CleanupDelete,
		LogCleanerDeleteRetention:              sim.Ms(86400000),
		LogCleanerBackoff:                      sim.Ms(15000),
		OffsetsTopicNumPartitions:              50,
		OffsetsTopicReplicationFactor:          3,
		GroupInitialRebalanceDelay:             sim.Ms(3000),
		GroupMinSessionTimeout:                 sim.Ms(6000),
		GroupMaxSessionTimeout:                 sim.Ms(1800000),
		Truncation:                             TruncationFor(v),
		LeaderEpochFencing:                     m.LeaderEpochFencing,
		TruncationInFetch:                      m.TruncationInFetch,
		KRaft:                                  defaultKRaft(v),
		ELR:                                    defaultELR(v),
		Txn:                                    defaultTxn(v),
		ConsumerGroups:                         defaultConsumerGroups(v),
		ShareGroups:                            defaultShareGroups(v),
		Records:                                defaultRecords(v),
	}
	if !m.LongerTimeouts {
		b.ReplicaLagTimeMax = sim.Ms(10000)
		b.ZookeeperSessionTimeout = sim.Ms(6000)
	}
	if m.MessageFormatFollowsProtocol {
		b.LogMessageFormatVersion = v.String()
	}
	return b
}

const maxInt32 = math.MaxInt32

var brokerProps = newTable(append(append(append(coreBrokerProps(), kraftProps()...), elrProps()...), append(append(append(txnProps(), recordsProps()...), mutantProps()...), append(consumerGroupProps(), shareGroupProps()...)...)...)...)

func coreBrokerProps() []property[Broker] {
	return []property[Broker]{
		stringProp("broker.rack", func(b *Broker) *string { return &b.Rack }),
		listProp("log.dirs", func(b *Broker) *[]string { return &b.LogDirs }),
		aliasOf(listProp("log.dir", func(b *Broker) *[]string { return &b.LogDirs }), "log.dirs"),
		boolProp(PropAutoCreateTopicsEnable, func(b *Broker) *bool { return &b.AutoCreateTopicsEnable }),
		boolProp("delete.topic.enable", func(b *Broker) *bool { return &b.DeleteTopicEnable }),
		intProp("num.partitions", func(b *Broker) *int { return &b.NumPartitions }, 1, maxInt32),
		intProp(PropDefaultReplicationFactor, func(b *Broker) *int { return &b.DefaultReplicationFactor }, 1, math.MaxInt16),
		intProp(PropMinInsyncReplicas, func(b *Broker) *int { return &b.MinInsyncReplicas }, 1, maxInt32),
		boolProp(PropUncleanLeaderElection, func(b *Broker) *bool { return &b.UncleanLeaderElectionEnable }),
		msProp(PropReplicaLagTimeMaxMs, func(b *Broker) *sim.Duration { return &b.ReplicaLagTimeMax }, 1, math.MaxInt64),
		msProp(PropReplicaFetchWaitMaxMs, func(b *Broker) *sim.Duration { return &b.ReplicaFetchWaitMax }, 0, maxInt32),
		intProp("replica.fetch.min.bytes", func(b *Broker) *int { return &b.ReplicaFetchMinBytes }, 0, maxInt32),
		intProp("replica.fetch.max.bytes", func(b *Broker) *int { return &b.ReplicaFetchMaxBytes }, 0, maxInt32),
		msProp("replica.fetch.backoff.ms", func(b *Broker) *sim.Duration { return &b.ReplicaFetchBackoff }, 0, maxInt32),
		msProp("replica.high.watermark.checkpoint.interval.ms", func(b *Broker) *sim.Duration { return &b.ReplicaHighWatermarkCheckpointInterval }, 1, math.MaxInt64),
		msProp("zookeeper.session.timeout.ms", func(b *Broker) *sim.Duration { return &b.ZookeeperSessionTimeout }, 1, maxInt32),
		msProp("controller.socket.timeout.ms", func(b *Broker) *sim.Duration { return &b.ControllerSocketTimeout }, 1, maxInt32),
		boolProp("auto.leader.rebalance.enable", func(b *Broker) *bool { return &b.AutoLeaderRebalanceEnable }),
		durProp("leader.imbalance.check.interval.seconds", sim.Second, "seconds", func(b *Broker) *sim.Duration { return &b.LeaderImbalanceCheckInterval }, 1, math.MaxInt64),
		intProp("leader.imbalance.per.broker.percentage", func(b *Broker) *int { return &b.LeaderImbalancePerBrokerPercentage }, 0, 100),
		versionProp(),
		formatVersionProp(PropLogMessageFormatVersion, func(b *Broker) *string { return &b.LogMessageFormatVersion }),
		intProp("log.segment.bytes", func(b *Broker) *int { return &b.LogSegmentBytes }, 14, maxInt32),
		msProp("log.roll.ms", func(b *Broker) *sim.Duration { return &b.LogRoll }, 1, math.MaxInt64),
		aliasOf(durProp("log.roll.hours", sim.Hour, "hours", func(b *Broker) *sim.Duration { return &b.LogRoll }, 1, maxInt32), "log.roll.ms"),
		intProp("log.index.size.max.bytes", func(b *Broker) *int { return &b.LogIndexSizeMaxBytes }, 8, maxInt32),
		intProp("log.index.interval.bytes", func(b *Broker) *int { return &b.LogIndexIntervalBytes }, 0, maxInt32),
		msProp("log.retention.ms", func(b *Broker) *sim.Duration { return &b.LogRetention }, -1, math.MaxInt64),
		aliasOf(durProp("log.retention.minutes", sim.Minute, "minutes", func(b *Broker) *sim.Duration { return &b.LogRetention }, -1, maxInt32), "log.retention.ms"),
		aliasOf(durProp("log.retention.hours", sim.Hour, "hours", func(b *Broker) *sim.Duration { return &b.LogRetention }, -1, maxInt32), "log.retention.minutes", "log.retention.ms"),
		longProp("log.retention.bytes", func(b *Broker) *int64 { return &b.LogRetentionBytes }, -1, math.MaxInt64),
		msProp("log.retention.check.interval.ms", func(b *Broker) *sim.Duration { return &b.LogRetentionCheckInterval }, 1, math.MaxInt64),
		longProp("log.flush.interval.messages", func(b *Broker) *int64 { return &b.LogFlushIntervalMessages }, 1, math.MaxInt64),
		msProp("log.flush.interval.ms", func(b *Broker) *sim.Duration { return &b.LogFlushInterval }, 0, math.MaxInt64),
		msProp("log.flush.offset.checkpoint.interval.ms", func(b *Broker) *sim.Duration { return &b.LogFlushOffsetCheckpointInterval }, 1, maxInt32),
		choiceProp("log.cleanup.policy", func(b *Broker) *CleanupPolicy { return &b.LogCleanupPolicy }, parseCleanupPolicy, cleanupAllowed),
		msProp("log.cleaner.delete.retention.ms", func(b *Broker) *sim.Duration { return &b.LogCleanerDeleteRetention }, 0, math.MaxInt64),
		msProp("log.cleaner.backoff.ms", func(b *Broker) *sim.Duration { return &b.LogCleanerBackoff }, 0, math.MaxInt64),
		intProp("offsets.topic.num.partitions", func(b *Broker) *int { return &b.OffsetsTopicNumPartitions }, 1, maxInt32),
		intProp(PropOffsetsTopicReplicationFactor, func(b *Broker) *int { return &b.OffsetsTopicReplicationFactor }, 1, math.MaxInt16),
		msProp("group.initial.rebalance.delay.ms", func(b *Broker) *sim.Duration { return &b.GroupInitialRebalanceDelay }, 0, maxInt32),
		msProp(PropGroupMinSessionTimeoutMs, func(b *Broker) *sim.Duration { return &b.GroupMinSessionTimeout }, 0, maxInt32),
		msProp(PropGroupMaxSessionTimeoutMs, func(b *Broker) *sim.Duration { return &b.GroupMaxSessionTimeout }, 0, maxInt32),
		choiceProp(PropTruncation, func(b *Broker) *Truncation { return &b.Truncation }, func(s string) (Truncation, bool) {
			t, err := ParseTruncation(s)
			return t, err == nil
		}, "hw, kip101, kip279"),
		boolProp(PropLeaderEpochFencing, func(b *Broker) *bool { return &b.LeaderEpochFencing }),
		boolProp(PropTruncateOnLeaderChangeOnly, func(b *Broker) *bool { return &b.TruncateOnLeaderChangeOnly }),
		choiceProp(PropReplicaSelectorClass, func(b *Broker) *ReplicaSelector { return &b.ReplicaSelectorClass }, parseReplicaSelector, selectorAllowed),
		boolProp(PropTruncationInFetch, func(b *Broker) *bool { return &b.TruncationInFetch }),
		metadataVersionProp(),
	}
}

// BrokerProperties returns every key ParseBroker accepts, sorted.
func BrokerProperties() []string { return brokerProps.names() }

// ParseBroker parses broker properties. inter.broker.protocol.version and
// truncation are read first, because the defaults depend on them; then
// every key is applied in sorted order, so the first error is always the
// same. The result is validated.
func ParseBroker(props map[string]string) (Broker, error) {
	v, err := brokerVersion(props)
	if err != nil {
		return Broker{}, err
	}
	b := DefaultBrokerFor(v)
	if err := brokerProps.apply(&b, props); err != nil {
		return Broker{}, err
	}
	if b.LogRetention < 0 {
		b.LogRetention = sim.Ms(-1)
	}
	if err := b.Validate(); err != nil {
		return Broker{}, err
	}
	return b, nil
}

// brokerVersion resolves the protocol version from
// inter.broker.protocol.version and its alias truncation.
func brokerVersion(props map[string]string) (Version, error) {
	vs, hasV := props[PropInterBrokerProtocolVersion]
	ts, hasT := props[PropTruncation]
	v := Latest
	if hasV {
		var err error
		if v, err = ParseVersion(vs); err != nil {
			return 0, err
		}
	}
	if ms, hasM := props[PropMetadataVersion]; hasM && strings.TrimSpace(ms) != "" {
		mv, err := parseMetadataVersion(ms)
		if err != nil {
			return 0, err
		}
		if hasV && (mv.Level > LatestMetadataVersion(v).Level || mv.Level < minMetadataVersion(v).Level) {
			return 0, metadataConflict(ms, v)
		}
		if !hasV {
			v, hasV = mv.Release, true
		}
	}
	if !hasT {
		return v, nil
	}
	t, err := ParseTruncation(ts)
	if err != nil {
		return 0, err
	}
	if !hasV {
		return t.Version(), nil
	}
	if want := TruncationFor(v); want != t {
		return 0, conflict(PropTruncation, t.String(), PropInterBrokerProtocolVersion, v.String(),
			"version "+v.String()+" uses "+want.String()+" truncation",
			truncationRanges+"; or set only one of the two")
	}
	return v, nil
}

// Validate reports the first property outside its limits (in name order),
// then the first impossible combination.
func (b Broker) Validate() error {
	if err := brokerProps.validate(&b); err != nil {
		return err
	}
	if want := TruncationFor(b.InterBrokerProtocolVersion); b.Truncation != want {
		return conflict(PropTruncation, b.Truncation.String(), PropInterBrokerProtocolVersion, b.InterBrokerProtocolVersion.String(),
			"version "+b.InterBrokerProtocolVersion.String()+" uses "+want.String()+" truncation", truncationRanges)
	}
	if b.InterBrokerProtocolVersion < V3_0 {
		f, _ := parseRelease(b.LogMessageFormatVersion, true)
		if f > b.InterBrokerProtocolVersion {
			return conflict(PropLogMessageFormatVersion, b.LogMessageFormatVersion, PropInterBrokerProtocolVersion, b.InterBrokerProtocolVersion.String(),
				"the message format cannot be newer than the inter-broker protocol below 3.0",
				"a format version at most "+b.InterBrokerProtocolVersion.String())
		}
	}
	if err := b.validateRelease(); err != nil {
		return err
	}
	if b.ReplicaSelectorClass != SelectorNone && !b.InterBrokerProtocolVersion.Mechanisms().FetchFromFollower {
		return conflict(PropReplicaSelectorClass, b.ReplicaSelectorClass.String(), PropInterBrokerProtocolVersion, b.InterBrokerProtocolVersion.String(),
			"fetch from follower (KIP-392, Fetch v11) arrived in 2.4", "inter.broker.protocol.version 2.4 or later, or no replica.selector.class")
	}
	if b.ReplicaFetchWaitMax > b.ReplicaLagTimeMax {
		return conflict(PropReplicaFetchWaitMaxMs, ms(b.ReplicaFetchWaitMax), PropReplicaLagTimeMaxMs, ms(b.ReplicaLagTimeMax),
			"a follower waiting longer than the lag limit would drop out of the ISR while fetching",
			"replica.fetch.wait.max.ms <= replica.lag.time.max.ms")
	}
	if b.GroupMinSessionTimeout > b.GroupMaxSessionTimeout {
		return conflict(PropGroupMinSessionTimeoutMs, ms(b.GroupMinSessionTimeout), PropGroupMaxSessionTimeoutMs, ms(b.GroupMaxSessionTimeout),
			"the minimum session timeout is above the maximum", "group.min.session.timeout.ms <= group.max.session.timeout.ms")
	}
	if err := b.validateKRaft(); err != nil {
		return err
	}
	if err := b.validateTxn(); err != nil {
		return err
	}
	if err := b.validateConsumerGroups(); err != nil {
		return err
	}
	if err := b.validateShareGroups(); err != nil {
		return err
	}
	if err := b.validateRecords(); err != nil {
		return err
	}
	return b.validateELR()
}

// Pairs renders every broker property as sorted key=value lines.
func (b Broker) Pairs() []string { return brokerProps.pairs(&b) }

// NonDefaultPairs renders the broker properties whose value differs from
// DefaultBroker()'s.
func (b Broker) NonDefaultPairs() []string {
	d := DefaultBroker()
	return brokerProps.diff(&b, &d)
}

// String renders Pairs one per line.
func (b Broker) String() string { return strings.Join(b.Pairs(), "\n") }

// versionProp is inter.broker.protocol.version: the release and, when
// given, its patch (Broker.Patch).
func versionProp() property[Broker] {
	p := choiceProp(PropInterBrokerProtocolVersion, func(b *Broker) *Version { return &b.InterBrokerProtocolVersion },
		func(s string) (Version, bool) {
			v, err := ParseVersion(s)
			return v, err == nil
		}, allowedVersions())
	set := p.set
	p.set = func(b *Broker, s string) error {
		if err := set(b, s); err != nil {
			return err
		}
		_, b.Patch, _ = ParseVersionPatch(s)
		return nil
	}
	get := p.get
	p.get = func(b *Broker) string {
		if b.Patch >= 0 {
			return get(b) + "." + strconv.Itoa(b.Patch)
		}
		return get(b)
	}
	return p
}

// Mechanisms is what the configured release does at its patch
// (inter.broker.protocol.version; see release.go).
func (b Broker) Mechanisms() Mechanisms { return b.InterBrokerProtocolVersion.MechanismsAt(b.Patch) }

// Release renders inter.broker.protocol.version with its patch when one
// was given ("4.0.0"), else the release ("4.0").
func (b Broker) Release() string {
	if b.Patch >= 0 {
		return b.InterBrokerProtocolVersion.String() + "." + strconv.Itoa(b.Patch)
	}
	return b.InterBrokerProtocolVersion.String()
}

// formatVersionProp is log.message.format.version or message.format.version:
// a known release, optionally with a patch or an "-IVn" suffix.
func formatVersionProp[T any](name string, f func(*T) *string) property[T] {
	allowed := "a Kafka release (" + allowedVersions() + "), optionally with an -IVn suffix"
	return property[T]{
		name: name,
		set: func(c *T, v string) error {
			s := strings.TrimSpace(v)
			if _, ok := parseRelease(s, true); !ok {
				return &Error{Kind: BadValue, Property: name, Value: v, Reason: "not a known Kafka release", Allowed: allowed}
			}
			*f(c) = s
			return nil
		},
		get: func(c *T) string { return *f(c) },
		check: func(c *T) error {
			if _, ok := parseRelease(*f(c), true); !ok {
				return &Error{Kind: BadValue, Property: name, Value: *f(c), Reason: "not a known Kafka release", Allowed: allowed}
			}
			return nil
		},
	}
}

// listProp is a comma-separated LIST property of non-empty, distinct items.
func listProp[T any](name string, f func(*T) *[]string) property[T] {
	const allowed = "a comma-separated list of one or more distinct, non-empty entries"
	check := func(items []string, raw string) error {
		if len(items) == 0 {
			return &Error{Kind: BadValue, Property: name, Value: raw, Reason: "empty list", Allowed: allowed}
		}
		for i, it := range items {
			if it == "" {
				return &Error{Kind: BadValue, Property: name, Value: raw, Reason: "empty entry", Allowed: allowed}
			}
			for _, prev := range items[:i] {
				if prev == it {
					return &Error{Kind: BadValue, Property: name, Value: raw, Reason: "repeated entry " + it, Allowed: allowed}
				}
			}
		}
		return nil
	}
	return property[T]{
		name: name,
		set: func(c *T, v string) error {
			items := strings.Split(strings.TrimSpace(v), ",")
			for i := range items {
				items[i] = strings.TrimSpace(items[i])
			}
			if strings.TrimSpace(v) == "" {
				items = nil
			}
			if err := check(items, v); err != nil {
				return err
			}
			*f(c) = items
			return nil
		},
		get:   func(c *T) string { return strings.Join(*f(c), ",") },
		check: func(c *T) error { return check(*f(c), strings.Join(*f(c), ",")) },
	}
}

// CleanupPolicy is log.cleanup.policy / cleanup.policy.
type CleanupPolicy string

// The cleanup policies.
const (
	CleanupDelete        CleanupPolicy = "delete"
	CleanupCompact       CleanupPolicy = "compact"
	CleanupCompactDelete CleanupPolicy = "compact,delete"
)

const cleanupAllowed = "delete, compact, compact,delete"

// String returns the property value.
func (p CleanupPolicy) String() string { return string(p) }

// Compact reports whether the policy includes compaction.
func (p CleanupPolicy) Compact() bool { return p == CleanupCompact || p == CleanupCompactDelete }

// Delete reports whether the policy includes time and size retention.
func (p CleanupPolicy) Delete() bool { return p == CleanupDelete || p == CleanupCompactDelete }

// parseCleanupPolicy accepts "delete", "compact" and both in either order.
func parseCleanupPolicy(s string) (CleanupPolicy, bool) {
	var del, comp bool
	for _, it := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(it)) {
		case "delete":
			del = true
		case "compact":
			comp = true
		default:
			return "", false
		}
	}
	switch {
	case del && comp:
		return CleanupCompactDelete, true
	case comp:
		return CleanupCompact, true
	}
	return CleanupDelete, true
}
