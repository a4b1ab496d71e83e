package server

// This file holds the topic configs a broker acts on beyond min.insync.replicas
// (max.message.bytes, compression.type, cleanup.policy), and their change
// during a run (AlterTopicConfig).
//
// max.message.bytes (topic; broker message.max.bytes) bounds one record
// batch as Kafka measures it (its sizeInBytes: the batch with its 12-byte
// log overhead): a larger produce is answered MESSAGE_TOO_LARGE for that
// partition after the leader and min.insync.replicas checks and before the
// CRC check, as UnifiedLog.analyzeAndValidateRecords does. Followers append
// what the leader accepted without the check (Kafka skips it for
// replication appends), so batches accepted before the limit was lowered
// still replicate; replica.fetch.max.bytes is not a hard limit since
// 0.10.1 (KIP-74): a fetch returns at least one batch (fetch.go).
//
// AlterTopicConfig stands for the ZooKeeper path of a topic config change
// (AlterConfigs writes /config/topics/<t> and a /config/changes
// notification; every broker's TopicConfigHandler applies it) and for
// KRaft's ConfigRecord reaching every node: the harness applies it to every
// running node at one instant, and to every node it starts later. The
// active ZooKeeper controller then elects leaders for the topic's offline
// partitions when unclean.leader.election.enable became true (2.1+,
// KafkaController.enableTopicUncleanLeaderElection); before 2.1 the value
// waits for the next election, which reads it. A KRaft controller reads it
// at its next unclean check (unclean.leader.election.interval.ms, 3.9+).
// Simplified: the notification's latency through ZooKeeper is not
// modelled (every node sees the change at once).

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

const compressionAllowed = "allowed: uncompressed, zstd, lz4, snappy, gzip, producer"

func validCompression(s string) bool {
	switch s {
	case "uncompressed", "zstd", "lz4", "snappy", "gzip", "producer":
		return true
	}
	return false
}

// validate checks the overrides of topic t.
func (s TopicSettings) validate(t string) error {
	switch {
	case s.MaxMessageBytes != nil && *s.MaxMessageBytes < 0:
		return fmt.Errorf("topic %s: max.message.bytes %d: must be >= 0", t, *s.MaxMessageBytes)
	case s.CompressionType != "" && !validCompression(s.CompressionType):
		return fmt.Errorf("topic %s: compression.type %q: %s", t, s.CompressionType, compressionAllowed)
	}
	switch s.CleanupPolicy {
	case "", storage.CleanupDelete, storage.CleanupCompact, storage.CleanupCompactDelete, "delete,compact":
		return nil
	}
	return fmt.Errorf("topic %s: cleanup.policy %q: allowed: delete, compact, compact,delete", t, s.CleanupPolicy)
}

// TopicSettingsOf returns the overrides that give a broker t's
// configuration: every setting of t that replication and the log consult.
func TopicSettingsOf(t config.Topic) TopicSettings {
	unclean, maxBytes := t.UncleanLeaderElectionEnable, t.MaxMessageBytes
	return TopicSettings{MinInsyncReplicas: t.MinInsyncReplicas, UncleanLeaderElection: &unclean,
		MaxMessageBytes: &maxBytes, CompressionType: t.CompressionType.String(), CleanupPolicy: t.CleanupPolicy.String()}
}

// maxMessageBytes is topic's max.message.bytes.
func (c Config) maxMessageBytes(topic string) int {
	if s, ok := c.TopicOverrides[topic]; ok && s.MaxMessageBytes != nil {
		return *s.MaxMessageBytes
	}
	return c.MessageMaxBytes
}

// compression is topic's compression.type.
func (c Config) compression(topic string) string {
	if s, ok := c.TopicOverrides[topic]; ok && s.CompressionType != "" {
		return s.CompressionType
	}
	return c.CompressionType
}

// logConfig returns the log configuration of tp when its topic's differs
// from the broker's (the internal topics are compacted; a topic may set
// cleanup.policy), nil otherwise.
func (b *Broker) logConfig(tp storage.TopicPartition) *storage.Config {
	if c := offsetsLogConfig(tp, b.cfg.Storage); c != nil {
		return c
	}
	if s, ok := b.cfg.TopicOverrides[tp.Topic]; ok && s.CleanupPolicy != "" && s.CleanupPolicy != b.cfg.Storage.CleanupPolicy {
		c := b.cfg.Storage
		c.CleanupPolicy = s.CleanupPolicy
		return &c
	}
	return nil
}

// checkMessageSize answers MESSAGE_TOO_LARGE for a batch of size bytes
// above p's topic's max.message.bytes.
func (b *Broker) checkMessageSize(p *Partition, size int) bool {
	limit := b.cfg.maxMessageBytes(p.tp.Topic)
	if size <= limit {
		return true
	}
	b.logp("message-too-large", p, sim.I("size", int64(size)), sim.I("max-message-bytes", int64(limit)))
	return false
}

// AlterTopicConfig replaces topic's overrides with s on this running
// broker (see the file comment): its replicas of topic take the new
// min.insync.replicas, unclean.leader.election.enable and cleanup.policy at
// once, and an active ZooKeeper controller elects leaders for the topic's
// offline partitions when unclean election became allowed (2.1+).
func (b *Broker) AlterTopicConfig(ctx *sim.Context, topic string, s TopicSettings) error {
	if err := s.validate(topic); err != nil {
		return err
	}
	b.ctx = ctx
	wasUnclean := b.cfg.unclean(topic)
	b.PresetTopicConfig(topic, s)
	ctx.Log("topic-config", sim.S("topic", topic), sim.I("min-isr", int64(b.cfg.minISR(topic))),
		sim.S("unclean", strconv.FormatBool(b.cfg.unclean(topic))), sim.I("max-message-bytes", int64(b.cfg.maxMessageBytes(topic))),
		sim.S("compression", b.cfg.compression(topic)))
	for _, tp := range b.logs.Partitions() {
		if tp.Topic != topic {
			continue
		}
		if c := b.logConfig(tp); c != nil {
			l, _ := b.logs.Log(tp)
			if err := l.SetCleanupPolicy(c.CleanupPolicy); err != nil {
				return err
			}
		} else if l, _ := b.logs.Log(tp); l.CleanupPolicy() != b.cfg.Storage.CleanupPolicy {
			if err := l.SetCleanupPolicy(b.cfg.Storage.CleanupPolicy); err != nil {
				return err
			}
		}
		if p := b.partitions[tp]; p != nil {
			p.minISR, p.unclean = b.cfg.minISR(topic), b.cfg.unclean(topic)
		}
	}
	if !wasUnclean && b.cfg.unclean(topic) && b.controller != nil && b.cfg.release() >= config.V2_1 {
		b.controller.EnableTopicUncleanLeaderElection(ctx, topic)
	}
	return nil
}

// PresetTopicConfig sets topic's overrides on a broker that has not
// started yet: a broker (re)started after a config change reads it (from
// ZooKeeper's /config/topics, or the metadata log) before it serves.
func (b *Broker) PresetTopicConfig(topic string, s TopicSettings) {
	m := maps.Clone(b.cfg.TopicOverrides)
	if m == nil {
		m = map[string]TopicSettings{}
	}
	m[topic] = s
	b.cfg.TopicOverrides = m
}

// TopicSettings returns topic's overrides on this broker, if it has any.
func (b *Broker) TopicSettings(topic string) (TopicSettings, bool) {
	s, ok := b.cfg.TopicOverrides[topic]
	return s, ok
}
