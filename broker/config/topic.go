package config

// This file holds the per-topic configuration (Kafka's TopicConfig /
// LogConfig): the overrides a topic may carry of the broker's log.* and
// replication defaults. Simplified vs Kafka: only the overrides the testbed
// acts on are known (no timestamp or tiered-storage properties; the
// records properties max.message.bytes and compression.type are in
// records.go); a topic's configuration is fixed when it is parsed, except
// through Topic.With (a script's alter-config step); Kafka re-reads dynamic
// broker defaults, which kafkasim does not have.

import (
	"math"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// Topic is a topic's effective configuration: the broker's defaults with the
// topic's overrides applied. Each field names its topic property, the broker
// property it defaults to, unit and limits.
type Topic struct {
	// MinInsyncReplicas is min.insync.replicas (broker: min.insync.replicas).
	// At least 1; at most the replication factor (Config.Validate).
	MinInsyncReplicas int
	// UncleanLeaderElectionEnable is unclean.leader.election.enable (broker:
	// the same name).
	UncleanLeaderElectionEnable bool
	// CleanupPolicy is cleanup.policy (broker: log.cleanup.policy).
	CleanupPolicy CleanupPolicy
	// Retention is retention.ms (broker: log.retention.ms); -1ms means
	// unlimited.
	Retention sim.Duration
	// RetentionBytes is retention.bytes (broker: log.retention.bytes); -1
	// means unlimited.
	RetentionBytes int64
	// SegmentBytes is segment.bytes (broker: log.segment.bytes); at least 14.
	SegmentBytes int
	// SegmentRoll is segment.ms (broker: log.roll.ms); at least 1ms.
	SegmentRoll sim.Duration
	// MessageFormatVersion is message.format.version (broker:
	// log.message.format.version). Not above inter.broker.protocol.version
	// when that is below 3.0.
	MessageFormatVersion string
	// IndexIntervalBytes is index.interval.bytes (broker:
	// log.index.interval.bytes); at least 0.
	IndexIntervalBytes int
	// FlushMessages is flush.messages (broker: log.flush.interval.messages);
	// at least 1. flush.messages=1 makes every append durable.
	FlushMessages int64
	// Flush is flush.ms (broker: log.flush.interval.ms); at least 0.
	Flush sim.Duration
	// MaxMessageBytes is max.message.bytes (broker: message.max.bytes):
	// the largest record batch the topic accepts; at least 0.
	MaxMessageBytes int
	// CompressionType is compression.type (broker: compression.type): the
	// codec the topic's batches are stored with, or producer.
	CompressionType Compression
}

var topicProps = newTable(append(topicRecordsProps(),
	intProp(PropMinInsyncReplicas, func(t *Topic) *int { return &t.MinInsyncReplicas }, 1, maxInt32),
	boolProp(PropUncleanLeaderElection, func(t *Topic) *bool { return &t.UncleanLeaderElectionEnable }),
	choiceProp("cleanup.policy", func(t *Topic) *CleanupPolicy { return &t.CleanupPolicy }, parseCleanupPolicy, cleanupAllowed),
	msProp("retention.ms", func(t *Topic) *sim.Duration { return &t.Retention }, -1, math.MaxInt64),
	longProp("retention.bytes", func(t *Topic) *int64 { return &t.RetentionBytes }, -1, math.MaxInt64),
	intProp("segment.bytes", func(t *Topic) *int { return &t.SegmentBytes }, 14, maxInt32),
	msProp("segment.ms", func(t *Topic) *sim.Duration { return &t.SegmentRoll }, 1, math.MaxInt64),
	formatVersionProp("message.format.version", func(t *Topic) *string { return &t.MessageFormatVersion }),
	intProp("index.interval.bytes", func(t *Topic) *int { return &t.IndexIntervalBytes }, 0, maxInt32),
	longProp("flush.messages", func(t *Topic) *int64 { return &t.FlushMessages }, 1, math.MaxInt64),
	msProp("flush.ms", func(t *Topic) *sim.Duration { return &t.Flush }, 0, math.MaxInt64),
)...)

// TopicProperties returns every key ParseTopic accepts, sorted.
func TopicProperties() []string { return topicProps.names() }

// TopicDefaults returns the configuration of a topic without overrides.
func (b Broker) TopicDefaults() Topic {
	return Topic{
		MinInsyncReplicas:           b.MinInsyncReplicas,
		UncleanLeaderElectionEnable: b.UncleanLeaderElectionEnable,
		CleanupPolicy:               b.LogCleanupPolicy,
		Retention:                   b.LogRetention,
		RetentionBytes:              b.LogRetentionBytes,
		SegmentBytes:                b.LogSegmentBytes,
		SegmentRoll:                 b.LogRoll,
		MessageFormatVersion:        b.LogMessageFormatVersion,
		IndexIntervalBytes:          b.LogIndexIntervalBytes,
		FlushMessages:               b.LogFlushIntervalMessages,
		Flush:                       b.LogFlushInterval,
		MaxMessageBytes:             b.Records.MessageMaxBytes,
		CompressionType:             b.Records.CompressionType,
	}
}

// ParseTopic applies a topic's overrides, keys in sorted order, to b's
// defaults, and validates the result against b.
func ParseTopic(b Broker, props map[string]string) (Topic, error) {
	t := b.TopicDefaults()
	if err := topicProps.apply(&t, props); err != nil {
		return Topic{}, err
	}
	if t.Retention < 0 {
		t.Retention = sim.Ms(-1)
	}
	if err := t.Validate(); err != nil {
		return Topic{}, err
	}
	if err := t.validateWith(b); err != nil {
		return Topic{}, err
	}
	return t, nil
}

// Validate reports the first property outside its limits, in name order.
func (t Topic) Validate() error { return topicProps.validate(&t) }

// validateWith checks what depends on the broker: the message format.
func (t Topic) validateWith(b Broker) error {
	if err := zstdBefore21(PropCompressionType, t.CompressionType, b.InterBrokerProtocolVersion); err != nil {
		return err
	}
	if b.InterBrokerProtocolVersion >= V3_0 {
		return nil
	}
	if f, _ := parseRelease(t.MessageFormatVersion, true); f > b.InterBrokerProtocolVersion {
		return conflict("message.format.version", t.MessageFormatVersion, PropInterBrokerProtocolVersion, b.InterBrokerProtocolVersion.String(),
			"the message format cannot be newer than the inter-broker protocol below 3.0",
			"a format version at most "+b.InterBrokerProtocolVersion.String())
	}
	return nil
}

// Pairs renders every topic property as sorted key=value lines.
func (t Topic) Pairs() []string { return topicProps.pairs(&t) }

// Overrides renders the topic properties whose value differs from b's
// defaults: what kafka-configs --describe would list for the topic.
func (t Topic) Overrides(b Broker) []string {
	d := b.TopicDefaults()
	return topicProps.diff(&t, &d)
}

// String renders Pairs one per line.
func (t Topic) String() string { return strings.Join(t.Pairs(), "\n") }
