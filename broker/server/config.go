package server

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/security"
	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/sim"
)

// Truncation is how a follower decides what to cut from its log before it
// fetches from a new leader.
type Truncation uint8

// The truncation protocols, by the inter.broker.protocol.version that
// introduced them.
const (
	// TruncateHW is the pre-0.11 rule: truncate to the local high watermark.
	TruncateHW Truncation = iota
	// TruncateKIP101 (0.11 to 1.x) asks the leader for the end offset of the
	// follower's latest leader epoch (OffsetsForLeaderEpoch v0).
	TruncateKIP101
	// TruncateKIP279 (2.0 and later) walks back epochs until leader and
	// follower agree (OffsetsForLeaderEpoch v1+).
	TruncateKIP279
)

func (t Truncation) String() string { return [...]string{"hw", "kip101", "kip279"}[t] }

// Config is what a broker needs, already resolved from Kafka's properties
// (package config does the parsing and names the properties).
type Config struct {
	// Mutants are the planted bugs switched on (package mutant; none is Kafka).
	Mutants  mutant.Set
	BrokerID int32  // broker.id
	Rack     string // broker.rack

	// Release is inter.broker.protocol.version (metadata.version in
	// KRaft): the Kafka release whose API versions the broker advertises
	// (api_versions.go). Zero means config.Latest.
	Release config.Version

	// AutoCreateTopics is auto.create.topics.enable (true).
	AutoCreateTopics bool
	// DeleteTopicEnable is delete.topic.enable (true from 1.0).
	DeleteTopicEnable bool
	// TopicConfigChanged hands a topic's new own configs (configs, by
	// topic property name, and s, what they make of the broker's
	// settings), written by an AlterConfigs in ZooKeeper mode, to every
	// node of the cluster (alter_configs.go); nil applies them on this
	// broker only. An error refuses the change (INVALID_CONFIG).
	TopicConfigChanged func(topic string, configs map[string]string, s TopicSettings) error
	// Security is the cluster's ACLs, SCRAM credentials and client quotas
	// (security.go), one Store for every node of a cluster, standing for
	// ZooKeeper's znodes or the metadata log's records of them; nil: New
	// gives the broker one of its own (a broker built alone).
	Security *security.Store
	// NumPartitions and DefaultReplicationFactor are num.partitions (1) and
	// default.replication.factor (1): a topic created without them
	// (auto-creation, CreateTopics with -1).
	NumPartitions, DefaultReplicationFactor int
	// OffsetsTopicReplicationFactor is offsets.topic.replication.factor
	// (3), for creating __consumer_offsets on the first FindCoordinator;
	// its partitions are Coordinator.NumPartitions.
	OffsetsTopicReplicationFactor int
	// NoAutoCreate keeps the broker from creating topics on its own
	// (kafkasim's cluster.Spec.ScriptedTopics: a scenario's admin creates
	// every topic): an unknown topic answers as with
	// auto.create.topics.enable=false, a missing __consumer_offsets or
	// __transaction_state COORDINATOR_NOT_AVAILABLE without creating it.
	NoAutoCreate bool
	// TxnStateReplicationFactor is
	// transaction.state.log.replication.factor (3), for creating
	// __transaction_state; its partitions are Txn.NumPartitions.
	TxnStateReplicationFactor int

	Storage storage.Config // log.dirs, log.segment.bytes, log.flush.*, ...

	Truncation Truncation // inter.broker.protocol.version (alias truncation=)
	// KIP320 turns on leader-epoch fencing (FENCED_LEADER_EPOCH,
	// UNKNOWN_LEADER_EPOCH) and the ISR-join rule of KIP-320 (2.1+).
	KIP320 bool
	// TruncationInFetch is truncation inside Fetch (2.7+, KIP-595's
	// LastFetchedEpoch/DivergingEpoch for replication, KAFKA-10554): the
	// follower fetches at once with Fetch v12 and truncates on the leader's
	// DivergingEpoch instead of sending OffsetsForLeaderEpoch first. Only
	// with TruncateKIP279.
	TruncationInFetch bool
	// TruncateOnLeaderChangeOnly reproduces KAFKA-7164: a follower that gets
	// a new leader epoch with the same leader keeps fetching without the
	// truncation step.
	TruncateOnLeaderChangeOnly bool
	// RackAwareReplicaSelector is replica.selector.class =
	// RackAwareReplicaSelector (KIP-392): the leader sends a consumer whose
	// Fetch carries a rack to an in-sync replica in that rack. False (Kafka's
	// null selector): consumers read from the leader.
	RackAwareReplicaSelector bool

	MinInsyncReplicas     int  // min.insync.replicas (default 1)
	UncleanLeaderElection bool // unclean.leader.election.enable
	// MessageMaxBytes is message.max.bytes (1048588; 1000012 below 2.5):
	// the largest record batch a produce may append (topic_config.go).
	MessageMaxBytes int
	// CompressionType is compression.type ("producer"): the codec batches
	// are stored with (topic_config.go).
	CompressionType string
	// TopicOverrides are the per-topic overrides. The map is never written
	// in place: AlterTopicConfig replaces it.
	TopicOverrides map[string]TopicSettings

	ReplicaLagTimeMax    sim.Duration // replica.lag.time.max.ms (30000)
	ReplicaFetchWaitMax  sim.Duration // replica.fetch.wait.max.ms (500)
	ReplicaFetchMinBytes int32        // replica.fetch.min.bytes (1)
	ReplicaFetchMaxBytes int32        // replica.fetch.max.bytes (1048576)
	ReplicaFetchBackoff  sim.Duration // replica.fetch.backoff.ms (1000)
	ReplicaSocketTimeout sim.Duration // replica.socket.timeout.ms (30000)
	HWCheckpointInterval sim.Duration // replica.high.watermark.checkpoint.interval.ms (5000)
	ControllerTimeout    sim.Duration // controller.socket.timeout.ms (30000)

	AutoLeaderRebalance                bool         // auto.leader.rebalance.enable (true)
	LeaderImbalanceCheckInterval       sim.Duration // leader.imbalance.check.interval.seconds (300)
	LeaderImbalancePerBrokerPercentage int          // leader.imbalance.per.broker.percentage (10)

	// ZooKeeper is the simulation node name of the ZooKeeper server; empty
	// runs the broker without one (tests that play the controller by
	// hand): ISR changes then apply locally.
	ZooKeeper        string
	ZKSessionTimeout sim.Duration // zookeeper.session.timeout.ms (18000)

	// KRaft is the node's KRaft configuration (kraft.go); nil in
	// ZooKeeper mode. ZooKeeper is empty then.
	KRaft *KRaftConfig

	// Coordinator is the group coordinator's configuration
	// (offsets.topic.num.partitions, group.*.session.timeout.ms,
	// group.initial.rebalance.delay.ms).
	Coordinator coordinator.Config
	// Share configures share groups (KIP-932, share*.go), served when
	// Enabled, from release 4.2, in KRaft mode (sharesEnabled).
	Share share.Config
	// OffsetsCommitTimeout is offsets.commit.timeout.ms (5000): how long a
	// coordinator's append waits for the HW before REQUEST_TIMED_OUT.
	OffsetsCommitTimeout sim.Duration
	// Txn is the transaction coordinator's configuration
	// (transaction.state.log.num.partitions, transaction.max.timeout.ms,
	// transaction.version, ...).
	Txn txn.Config
	// TxnPartitionVerification is transaction.partition.verification.enable
	// (KIP-890 part 1, 3.6+) with transactions on: partition leaders verify
	// a transaction's first batch with its coordinator.
	TxnPartitionVerification bool
	// StrictTV2MarkerEpoch is KAFKA-19446 (Kafka 4.2; config.Mechanisms):
	// a partition leader checks a WriteTxnMarkers v2 marker of transaction
	// version 2 against the producer's epoch strictly (above it, or equal
	// with no transaction ongoing). Off, every marker gets the legacy
	// check (not below the producer's epoch).
	StrictTV2MarkerEpoch bool
}

// TopicSettings are the topic-level overrides replication and the log
// consult.
type TopicSettings struct {
	MinInsyncReplicas     int   // min.insync.replicas; 0 = the broker's
	UncleanLeaderElection *bool // unclean.leader.election.enable; nil = the broker's
	MaxMessageBytes       *int  // max.message.bytes; nil = message.max.bytes
	// CompressionType is compression.type; "" = the broker's.
	CompressionType string
	// CleanupPolicy is cleanup.policy ("delete", "compact",
	// "compact,delete"); "" = the broker's log.cleanup.policy.
	CleanupPolicy string
	// Log holds the topic's other log settings (segment.bytes,
	// retention.ms, flush.messages, ...); nil = the broker's.
	Log *TopicLog
}

// DefaultConfig returns Kafka's defaults for broker id.
func DefaultConfig(id int32) Config {
	return Config{
		BrokerID:                           id,
		AutoCreateTopics:                   true,
		DeleteTopicEnable:                  true,
		NumPartitions:                      1,
		DefaultReplicationFactor:           1,
		OffsetsTopicReplicationFactor:      3,
		TxnStateReplicationFactor:          3,
		Storage:                            storage.DefaultConfig(),
		Truncation:                         TruncateKIP279,
		KIP320:                             true,
		TruncationInFetch:                  true,
		MinInsyncReplicas:                  1,
		MessageMaxBytes:                    1024*1024 + 12,
		CompressionType:                    "producer",
		ReplicaLagTimeMax:                  30 * sim.Second,
		ReplicaFetchWaitMax:                500 * sim.Millisecond,
		ReplicaFetchMinBytes:               1,
		ReplicaFetchMaxBytes:               1048576,
		ReplicaFetchBackoff:                sim.Second,
		ReplicaSocketTimeout:               30 * sim.Second,
		HWCheckpointInterval:               5 * sim.Second,
		ControllerTimeout:                  30 * sim.Second,
		AutoLeaderRebalance:                true,
		LeaderImbalanceCheckInterval:       300 * sim.Second,
		LeaderImbalancePerBrokerPercentage: 10,
		ZKSessionTimeout:                   18 * sim.Second,
		Coordinator:                        coordinator.DefaultConfig(id),
		Share:                              share.DefaultConfig(),
		OffsetsCommitTimeout:               5 * sim.Second,
		Txn:                                txn.DefaultConfig(),
	}
}

// Validate reports the first setting outside its allowed range.
func (c Config) Validate() error {
	switch {
	case c.BrokerID < 0:
		return fmt.Errorf("broker.id %d: must be >= 0", c.BrokerID)
	case c.MinInsyncReplicas < 1:
		return fmt.Errorf("min.insync.replicas %d: must be >= 1", c.MinInsyncReplicas)
	case c.MessageMaxBytes < 0:
		return fmt.Errorf("message.max.bytes %d: must be >= 0", c.MessageMaxBytes)
	case !validCompression(c.CompressionType):
		return fmt.Errorf("compression.type %q: %s", c.CompressionType, compressionAllowed)
	case c.ReplicaLagTimeMax <= 0:
		return fmt.Errorf("replica.lag.time.max.ms %d: must be > 0", c.ReplicaLagTimeMax.Milliseconds())
	case c.ReplicaFetchWaitMax < 0:
		return fmt.Errorf("replica.fetch.wait.max.ms %d: must be >= 0", c.ReplicaFetchWaitMax.Milliseconds())
	case c.ReplicaFetchWaitMax >= c.ReplicaSocketTimeout:
		return fmt.Errorf("replica.fetch.wait.max.ms %d: must be below replica.socket.timeout.ms %d", c.ReplicaFetchWaitMax.Milliseconds(), c.ReplicaSocketTimeout.Milliseconds())
	case c.ReplicaFetchMaxBytes < 1:
		return fmt.Errorf("replica.fetch.max.bytes %d: must be >= 1", c.ReplicaFetchMaxBytes)
	case c.ReplicaFetchBackoff < 0:
		return fmt.Errorf("replica.fetch.backoff.ms %d: must be >= 0", c.ReplicaFetchBackoff.Milliseconds())
	case c.HWCheckpointInterval <= 0:
		return fmt.Errorf("replica.high.watermark.checkpoint.interval.ms %d: must be > 0", c.HWCheckpointInterval.Milliseconds())
	case c.ZooKeeper != "" && c.ZKSessionTimeout <= 0:
		return fmt.Errorf("zookeeper.session.timeout.ms %d: must be > 0", c.ZKSessionTimeout.Milliseconds())
	case c.KRaft != nil && c.ZooKeeper != "":
		return fmt.Errorf("node %d: zookeeper.connect and process.roles: a KRaft node does not use ZooKeeper", c.BrokerID)
	case c.Release != 0 && !c.Release.Valid():
		return fmt.Errorf("inter.broker.protocol.version %v: not a known release", c.Release)
	case c.NumPartitions < 1:
		return fmt.Errorf("num.partitions %d: must be >= 1", c.NumPartitions)
	case c.DefaultReplicationFactor < 1 || c.DefaultReplicationFactor > 32767:
		return fmt.Errorf("default.replication.factor %d: must be in [1, 32767]", c.DefaultReplicationFactor)
	case c.OffsetsTopicReplicationFactor < 1 || c.OffsetsTopicReplicationFactor > 32767:
		return fmt.Errorf("offsets.topic.replication.factor %d: must be in [1, 32767]", c.OffsetsTopicReplicationFactor)
	case c.TxnStateReplicationFactor < 1 || c.TxnStateReplicationFactor > 32767:
		return fmt.Errorf("transaction.state.log.replication.factor %d: must be in [1, 32767]", c.TxnStateReplicationFactor)
	case c.Truncation > TruncateKIP279:
		return fmt.Errorf("truncation %d: must be hw, kip101 or kip279", c.Truncation)
	}
	for t, s := range c.TopicOverrides {
		if s.MinInsyncReplicas < 0 {
			return fmt.Errorf("topic %s: min.insync.replicas %d: must be >= 1", t, s.MinInsyncReplicas)
		}
		if err := s.validate(t); err != nil {
			return err
		}
	}
	if c.OffsetsCommitTimeout <= 0 {
		return fmt.Errorf("offsets.commit.timeout.ms %d: must be > 0", c.OffsetsCommitTimeout.Milliseconds())
	}
	if err := c.Coordinator.Validate(); err != nil {
		return err
	}
	if err := c.Txn.Validate(); err != nil {
		return err
	}
	return c.Storage.Validate()
}

// release returns the configured release (config.Latest when unset).
func (c Config) release() config.Version {
	if c.Release == 0 {
		return config.Latest
	}
	return c.Release
}

func (c Config) minISR(topic string) int {
	if s, ok := c.TopicOverrides[topic]; ok && s.MinInsyncReplicas > 0 {
		return s.MinInsyncReplicas
	}
	return c.MinInsyncReplicas
}

func (c Config) unclean(topic string) bool {
	if s, ok := c.TopicOverrides[topic]; ok && s.UncleanLeaderElection != nil {
		return *s.UncleanLeaderElection
	}
	return c.UncleanLeaderElection
}
