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
// In KRaft mode a topic's ConfigRecords (the configs CreateTopics gave
// it) come first, then the configuration's overrides (imageTopicConfig).
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
//
// compression.type (topic; broker compression.type, default producer):
// with producer the leader stores a batch as the producer compressed it
// (codec bits and compressed records on the virtual disk, as Kafka);
// with a codec (or uncompressed) it stores the batch recompressed with it
// (storedForm), and the stored batch is judged against max.message.bytes
// again. The followers store what they fetch, as it is.

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
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
	if s.CleanupPolicy == "" || validCleanupPolicy(s.CleanupPolicy) {
		return nil
	}
	return fmt.Errorf("topic %s: cleanup.policy %q: allowed: delete, compact, compact,delete", t, s.CleanupPolicy)
}

// TopicLog is a topic's log settings beyond cleanup.policy, with the
// topic property each stands for (the broker's log.* property otherwise).
type TopicLog struct {
	SegmentBytes          int64        // segment.bytes
	SegmentMs             sim.Duration // segment.ms
	RetentionMs           sim.Duration // retention.ms; negative: unlimited
	RetentionBytes        int64        // retention.bytes
	IndexIntervalBytes    int64        // index.interval.bytes
	FlushIntervalMessages int64        // flush.messages
	FlushIntervalMs       sim.Duration // flush.ms
	MessageFormatVersion  string       // message.format.version
}

// apply sets l's values in c and reports whether any differed.
func (l *TopicLog) apply(c *storage.Config) bool {
	before := *c
	c.SegmentBytes, c.SegmentMs, c.RetentionMs, c.RetentionBytes = l.SegmentBytes, l.SegmentMs, l.RetentionMs, l.RetentionBytes
	c.IndexIntervalBytes, c.FlushIntervalMessages, c.FlushIntervalMs = l.IndexIntervalBytes, l.FlushIntervalMessages, l.FlushIntervalMs
	c.MessageFormatVersion = l.MessageFormatVersion
	return c.SegmentBytes != before.SegmentBytes || c.SegmentMs != before.SegmentMs || c.RetentionMs != before.RetentionMs ||
		c.RetentionBytes != before.RetentionBytes || c.IndexIntervalBytes != before.IndexIntervalBytes ||
		c.FlushIntervalMessages != before.FlushIntervalMessages || c.FlushIntervalMs != before.FlushIntervalMs ||
		c.MessageFormatVersion != before.MessageFormatVersion
}

func validCleanupPolicy(p string) bool {
	switch p {
	case storage.CleanupDelete, storage.CleanupCompact, storage.CleanupCompactDelete, "delete,compact":
		return true
	}
	return false
}

// TopicSettingsOf returns the overrides that give a broker t's
// configuration: every setting of t that replication and the log consult.
func TopicSettingsOf(t config.Topic) TopicSettings {
	unclean, maxBytes := t.UncleanLeaderElectionEnable, t.MaxMessageBytes
	return TopicSettings{MinInsyncReplicas: t.MinInsyncReplicas, UncleanLeaderElection: &unclean,
		MaxMessageBytes: &maxBytes, CompressionType: t.CompressionType.String(), CleanupPolicy: t.CleanupPolicy.String(),
		Log: &TopicLog{SegmentBytes: int64(t.SegmentBytes), SegmentMs: t.SegmentRoll, RetentionMs: t.Retention, RetentionBytes: t.RetentionBytes,
			IndexIntervalBytes: int64(t.IndexIntervalBytes), FlushIntervalMessages: t.FlushMessages, FlushIntervalMs: t.Flush,
			MessageFormatVersion: t.MessageFormatVersion}}
}

// imageTopicConfig returns topic's own value of config name in the KRaft
// metadata (a ConfigRecord: the configs CreateTopics gave it), if any:
// the broker's image, or a dedicated controller's committed one. Kafka's
// brokers and controller take a topic's configs from there; ZooKeeper mode
// keeps none (create_topics.go).
func (b *Broker) imageTopicConfig(topic, name string) (string, bool) {
	img := b.Image()
	if img == nil {
		if qc := b.QuorumController(); qc != nil {
			img = qc.Image()
		}
	}
	if img == nil {
		return "", false
	}
	return img.Config(metadata.ResourceTopic, topic, name)
}

// imageInt is imageTopicConfig of an integer config.
func (b *Broker) imageInt(topic, name string) (int, bool) {
	if v, ok := b.imageTopicConfig(topic, name); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			return n, true
		}
	}
	return 0, false
}

// minISRFor is topic's min.insync.replicas: its ConfigRecord, else the
// configuration's.
func (b *Broker) minISRFor(topic string) int {
	if n, ok := b.imageInt(topic, config.PropMinInsyncReplicas); ok && n >= 1 {
		return n
	}
	return b.cfg.minISR(topic)
}

// uncleanFor is topic's unclean.leader.election.enable: its
// ConfigRecord, else the configuration's.
func (b *Broker) uncleanFor(topic string) bool {
	if v, ok := b.imageTopicConfig(topic, config.PropUncleanLeaderElection); ok {
		if on, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(v))); err == nil {
			return on
		}
	}
	return b.cfg.unclean(topic)
}

// maxMessageBytesFor is topic's max.message.bytes: its ConfigRecord, else
// the configuration's.
func (b *Broker) maxMessageBytesFor(topic string) int {
	if n, ok := b.imageInt(topic, config.PropMaxMessageBytes); ok && n >= 0 {
		return n
	}
	return b.cfg.maxMessageBytes(topic)
}

// compressionFor is topic's compression.type: its ConfigRecord, else the
// configuration's.
func (b *Broker) compressionFor(topic string) string {
	if v, ok := b.imageTopicConfig(topic, config.PropCompressionType); ok && validCompression(strings.TrimSpace(v)) {
		return strings.TrimSpace(v)
	}
	return b.cfg.compression(topic)
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
// cleanup.policy, segment.bytes, retention.ms, ...), nil otherwise.
func (b *Broker) logConfig(tp storage.TopicPartition) *storage.Config {
	if c := offsetsLogConfig(tp, b.cfg.Storage); c != nil {
		return c
	}
	s, ok := b.cfg.TopicOverrides[tp.Topic]
	c := b.cfg.Storage
	differs := false
	if ok && s.CleanupPolicy != "" && s.CleanupPolicy != c.CleanupPolicy {
		c.CleanupPolicy, differs = s.CleanupPolicy, true
	}
	if ok && s.Log != nil && s.Log.apply(&c) {
		differs = true
	}
	if v, ok := b.imageTopicConfig(tp.Topic, "cleanup.policy"); ok && v != c.CleanupPolicy {
		if p := canonicalCleanupPolicy(v); validCleanupPolicy(p) && p != c.CleanupPolicy {
			c.CleanupPolicy, differs = p, true
		}
	}
	// A KRaft topic's own log settings (ConfigRecords).
	for name, dst := range map[string]*int64{"segment.bytes": &c.SegmentBytes, "retention.bytes": &c.RetentionBytes,
		"index.interval.bytes": &c.IndexIntervalBytes, "flush.messages": &c.FlushIntervalMessages} { // NB: independent entries
		if v, ok := b.imageTopicConfig(tp.Topic, name); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n != *dst {
				*dst, differs = n, true
			}
		}
	}
	for name, dst := range map[string]*sim.Duration{"segment.ms": &c.SegmentMs, "retention.ms": &c.RetentionMs, "flush.ms": &c.FlushIntervalMs} { // NB: independent entries
		if v, ok := b.imageTopicConfig(tp.Topic, name); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && msDuration(n) != *dst {
				*dst, differs = msDuration(n), true
			}
		}
	}
	if !differs {
		return nil
	}
	return &c
}

// checkMessageSize answers MESSAGE_TOO_LARGE for a batch of size bytes
// above p's topic's max.message.bytes.
func (b *Broker) checkMessageSize(p *Partition, size int) bool {
	limit := b.maxMessageBytesFor(p.tp.Topic)
	if size <= limit {
		return true
	}
	b.logp("message-too-large", p, sim.I("size", int64(size)), sim.I("max-message-bytes", int64(limit)))
	return false
}

// AlterTopicConfig replaces topic's overrides with s on this running
// broker (see the file comment): its replicas of topic take the new
// min.insync.replicas, unclean.leader.election.enable and cleanup.policy at
// once (its logs take the new log settings, as UnifiedLog.updateConfig),
// and an active ZooKeeper controller elects leaders for the topic's
// offline partitions when unclean election became allowed (2.1+).
func (b *Broker) AlterTopicConfig(ctx *sim.Context, topic string, s TopicSettings) error {
	if err := s.validate(topic); err != nil {
		return err
	}
	b.ctx = ctx
	wasUnclean := b.uncleanFor(topic)
	b.PresetTopicConfig(topic, s)
	ctx.Log("topic-config", sim.S("topic", topic), sim.I("min-isr", int64(b.minISRFor(topic))),
		sim.S("unclean", strconv.FormatBool(b.uncleanFor(topic))), sim.I("max-message-bytes", int64(b.maxMessageBytesFor(topic))),
		sim.S("compression", b.compressionFor(topic)))
	if err := b.refreshTopicConfig(topic); err != nil {
		return err
	}
	if !wasUnclean && b.uncleanFor(topic) && b.controller != nil && b.cfg.release() >= config.V2_1 {
		b.controller.EnableTopicUncleanLeaderElection(ctx, topic)
	}
	return nil
}

// refreshTopicConfig makes this broker's replicas of topic take its
// configuration in force: min.insync.replicas and
// unclean.leader.election.enable on the replicas, the log settings on
// their logs (UnifiedLog.updateConfig).
func (b *Broker) refreshTopicConfig(topic string) error {
	for _, tp := range b.logs.Partitions() {
		if tp.Topic != topic {
			continue
		}
		c := b.cfg.Storage
		if lc := b.logConfig(tp); lc != nil {
			c = *lc
		}
		l, _ := b.logs.Log(tp)
		if err := l.UpdateConfig(c); err != nil {
			return err
		}
		if p := b.partitions[tp]; p != nil {
			p.minISR, p.unclean = b.minISRFor(topic), b.uncleanFor(topic)
		}
	}
	return nil
}

// topicConfigChanged applies a KRaft topic's new ConfigRecords on this
// broker (kraft_metadata.go), as BrokerMetadataPublisher hands a config
// delta to the logs.
func (b *Broker) topicConfigChanged(topic string) {
	if err := b.refreshTopicConfig(topic); err != nil {
		panic(fmt.Sprintf("broker %d: topic %s: applying its configs: %v", b.cfg.BrokerID, topic, err))
	}
	b.ctx.Log("topic-config", sim.S("topic", topic), sim.I("min-isr", int64(b.minISRFor(topic))),
		sim.S("unclean", strconv.FormatBool(b.uncleanFor(topic))), sim.I("max-message-bytes", int64(b.maxMessageBytesFor(topic))),
		sim.S("compression", b.compressionFor(topic)))
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

// SetTopicConfigChanged sets Config.TopicConfigChanged on a broker that
// has not started yet.
func (b *Broker) SetTopicConfigChanged(f func(topic string, configs map[string]string, s TopicSettings) error) {
	b.cfg.TopicConfigChanged = f
}

// TopicSettings returns topic's overrides on this broker, if it has any.
func (b *Broker) TopicSettings(topic string) (TopicSettings, bool) {
	s, ok := b.cfg.TopicOverrides[topic]
	return s, ok
}

// traceCleaned traces the compaction passes of user topics (cleanup.policy
// with compact) that removed records: the checkers learn from them that
// records are gone by design (the internal topics' passes are not traced).
func (b *Broker) traceCleaned() {
	for _, c := range b.logs.TakeCleaned() {
		if c.Topic == coordinator.OffsetsTopic || c.Topic == txn.StateTopic {
			continue
		}
		b.ctx.Log("log-cleaned", sim.S("partition", c.TopicPartition.String()), sim.I("removed", int64(c.RecordsRemoved)),
			sim.I("segments", int64(c.SegmentsCleaned)))
	}
}

// codecOf is the batch codec of a compression.type other than producer.
func codecOf(compression string) int16 {
	switch compression {
	case "gzip":
		return storage.CodecGzip
	case "snappy":
		return storage.CodecSnappy
	case "lz4":
		return storage.CodecLZ4
	case "zstd":
		return storage.CodecZstd
	}
	return storage.CodecNone
}

// storedForm returns the batch as p's log stores it: as the producer sent
// it under compression.type=producer or when its codec is the topic's,
// else recompressed with the topic's codec (LogValidator's
// validateMessagesAndAssignOffsetsCompressed), then judged against
// max.message.bytes again, as UnifiedLog.append re-validates sizes that
// recompression may have changed. A log in a pre-0.11 format stores its
// legacy messages uncompressed (compressed wrapper messages are not
// modelled).
func (b *Broker) storedForm(p *Partition, records []byte, codec int16) ([]byte, *kerr.Error) {
	target := b.compressionFor(p.tp.Topic)
	if target == "producer" || codecOf(target) == codec || p.log.Magic() < storage.MagicV2 {
		return records, nil
	}
	rb, _, err := storage.DecodeBatch(records)
	if err != nil {
		return nil, kerr.CorruptMessage
	}
	rb.Attributes = rb.Attributes&^storage.CompressionCodecMask | codecOf(target)
	out := rb.AppendTo(nil)
	b.logp("recompress", p, sim.S("from", storage.CodecName(codec)), sim.S("to", storage.CodecName(codecOf(target))),
		sim.I("size", int64(len(records))), sim.I("stored", int64(len(out))))
	if !b.checkMessageSize(p, len(out)) {
		return nil, kerr.MessageTooLarge
	}
	return out, nil
}
