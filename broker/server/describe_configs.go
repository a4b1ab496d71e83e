package server

// This file serves DescribeConfigs (api key 32), v0-v4, as Kafka's
// ConfigHelper.describeConfigs: topic resources (type 2) answer the
// topic's effective configs under their topic names (retention.ms,
// min.insync.replicas, ...), broker resources (type 4, this broker's id)
// the broker's under the property names; the name "" asks for the
// cluster-wide dynamic defaults (dynamicConfig.currentDynamicDefaultConfigs),
// of which there are none here. Each entry has its
// value, source (TOPIC_CONFIG for a topic's own setting,
// STATIC_BROKER_CONFIG for a broker property that differs from the
// release's default, DEFAULT_CONFIG otherwise; v0: is_default), read-only
// flag (topic configs never; broker properties unless Kafka can change them
// dynamically), type (v3+) and, with include_synonyms (v1+), the chain of
// settings it comes from, most specific first. configuration_keys, when
// given, filters by name. An invalid topic name is INVALID_TOPIC_EXCEPTION,
// an unknown topic UNKNOWN_TOPIC_OR_PARTITION, another broker's id, a name
// that is not a number or another resource type INVALID_REQUEST.
//
// compression.type and max.message.bytes are listed with the broker's
// compression.type and message.max.bytes (topic_config.go).
//
// Simplifications: only the settings the simulation models are listed
// (Kafka lists every topic config and some 200 broker properties); no
// documentation (v3 include_documentation answers null); a broker
// property equal to its default is DEFAULT_CONFIG even when the properties
// file set it. Topic settings: in ZooKeeper mode the broker's (and the
// per-topic min.insync.replicas and unclean.leader.election.enable the
// broker was configured with), in KRaft mode also the topic's
// ConfigRecords; __consumer_offsets and __transaction_state are compacted
// (cleanup.policy=compact as a topic config, as Kafka creates them).

import (
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/kraft"
	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configEntry is one setting: its topic name ("" for broker-only ones),
// its broker property, its type, whether Kafka can change the broker
// property dynamically, and its value in a configuration.
type configEntry struct {
	topic, broker string
	typ           kmsg.ConfigType
	dynamic       bool
	value         func(c *Config) string
	def           func(d *config.Broker) string
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func msString(d sim.Duration) string {
	if d == storage.Never {
		return itoa64(1<<63 - 1)
	}
	if d < 0 {
		return "-1"
	}
	return itoa64(d.Milliseconds())
}

// configEntries are the settings DescribeConfigs reports, in name order of
// their topic names, then the broker-only ones.
var configEntries = []configEntry{
	{"cleanup.policy", "log.cleanup.policy", kmsg.ConfigTypeList, true,
		func(c *Config) string { return c.Storage.CleanupPolicy }, func(d *config.Broker) string { return string(d.LogCleanupPolicy) }},
	{"compression.type", "compression.type", kmsg.ConfigTypeString, true,
		func(c *Config) string { return c.CompressionType }, func(d *config.Broker) string { return d.Records.CompressionType.String() }},
	{"delete.retention.ms", "log.cleaner.delete.retention.ms", kmsg.ConfigTypeLong, true,
		func(c *Config) string { return msString(c.Storage.DeleteRetentionMs) }, func(d *config.Broker) string { return msString(d.LogCleanerDeleteRetention) }},
	{"flush.messages", "log.flush.interval.messages", kmsg.ConfigTypeLong, true,
		func(c *Config) string { return itoa64(c.Storage.FlushIntervalMessages) }, func(d *config.Broker) string { return itoa64(d.LogFlushIntervalMessages) }},
	{"flush.ms", "log.flush.interval.ms", kmsg.ConfigTypeLong, true,
		func(c *Config) string { return msString(c.Storage.FlushIntervalMs) }, func(d *config.Broker) string { return msString(d.LogFlushInterval) }},
	{"index.interval.bytes", "log.index.interval.bytes", kmsg.ConfigTypeInt, true,
		func(c *Config) string { return itoa64(c.Storage.IndexIntervalBytes) }, func(d *config.Broker) string { return strconv.Itoa(d.LogIndexIntervalBytes) }},
	{"max.message.bytes", "message.max.bytes", kmsg.ConfigTypeInt, true,
		func(c *Config) string { return strconv.Itoa(c.MessageMaxBytes) }, func(d *config.Broker) string { return strconv.Itoa(d.Records.MessageMaxBytes) }},
	{"message.format.version", "log.message.format.version", kmsg.ConfigTypeString, true,
		func(c *Config) string { return c.Storage.MessageFormatVersion }, func(d *config.Broker) string { return d.LogMessageFormatVersion }},
	{"min.insync.replicas", "min.insync.replicas", kmsg.ConfigTypeInt, true,
		func(c *Config) string { return strconv.Itoa(c.MinInsyncReplicas) }, func(d *config.Broker) string { return strconv.Itoa(d.MinInsyncReplicas) }},
	{"retention.bytes", "log.retention.bytes", kmsg.ConfigTypeLong, true,
		func(c *Config) string { return itoa64(c.Storage.RetentionBytes) }, func(d *config.Broker) string { return itoa64(d.LogRetentionBytes) }},
	{"retention.ms", "log.retention.ms", kmsg.ConfigTypeLong, true,
		func(c *Config) string { return msString(c.Storage.RetentionMs) }, func(d *config.Broker) string { return msString(d.LogRetention) }},
	{"segment.bytes", "log.segment.bytes", kmsg.ConfigTypeInt, true,
		func(c *Config) string { return itoa64(c.Storage.SegmentBytes) }, func(d *config.Broker) string { return strconv.Itoa(d.LogSegmentBytes) }},
	{"segment.index.bytes", "log.index.size.max.bytes", kmsg.ConfigTypeInt, true,
		func(c *Config) string { return itoa64(c.Storage.SegmentIndexBytes) }, func(d *config.Broker) string { return strconv.Itoa(d.LogIndexSizeMaxBytes) }},
	{"segment.ms", "log.roll.ms", kmsg.ConfigTypeLong, true,
		func(c *Config) string { return msString(c.Storage.SegmentMs) }, func(d *config.Broker) string { return msString(d.LogRoll) }},
	{"unclean.leader.election.enable", "unclean.leader.election.enable", kmsg.ConfigTypeBoolean, true,
		func(c *Config) string { return strconv.FormatBool(c.UncleanLeaderElection) }, func(d *config.Broker) string { return strconv.FormatBool(d.UncleanLeaderElectionEnable) }},
	{"", "auto.create.topics.enable", kmsg.ConfigTypeBoolean, false,
		func(c *Config) string { return strconv.FormatBool(c.AutoCreateTopics) }, func(d *config.Broker) string { return strconv.FormatBool(d.AutoCreateTopicsEnable) }},
	{"", "auto.leader.rebalance.enable", kmsg.ConfigTypeBoolean, false,
		func(c *Config) string { return strconv.FormatBool(c.AutoLeaderRebalance) }, func(d *config.Broker) string { return strconv.FormatBool(d.AutoLeaderRebalanceEnable) }},
	{"", "broker.id", kmsg.ConfigTypeInt, false,
		func(c *Config) string { return strconv.Itoa(int(c.BrokerID)) }, nil},
	{"", "broker.rack", kmsg.ConfigTypeString, false,
		func(c *Config) string { return c.Rack }, func(d *config.Broker) string { return d.Rack }},
	{"", "default.replication.factor", kmsg.ConfigTypeInt, false,
		func(c *Config) string { return strconv.Itoa(c.DefaultReplicationFactor) }, func(d *config.Broker) string { return strconv.Itoa(d.DefaultReplicationFactor) }},
	{"", "inter.broker.protocol.version", kmsg.ConfigTypeString, false,
		func(c *Config) string { return c.release().String() }, func(d *config.Broker) string { return config.Latest.String() }},
	{"", "num.partitions", kmsg.ConfigTypeInt, false,
		func(c *Config) string { return strconv.Itoa(c.NumPartitions) }, func(d *config.Broker) string { return strconv.Itoa(d.NumPartitions) }},
	{"", "offsets.topic.num.partitions", kmsg.ConfigTypeInt, false,
		func(c *Config) string { return strconv.Itoa(c.Coordinator.NumPartitions) }, func(d *config.Broker) string { return strconv.Itoa(d.OffsetsTopicNumPartitions) }},
	{"", "offsets.topic.replication.factor", kmsg.ConfigTypeShort, false,
		func(c *Config) string { return strconv.Itoa(c.OffsetsTopicReplicationFactor) }, func(d *config.Broker) string { return strconv.Itoa(d.OffsetsTopicReplicationFactor) }},
	{"", "replica.lag.time.max.ms", kmsg.ConfigTypeLong, false,
		func(c *Config) string { return msString(c.ReplicaLagTimeMax) }, func(d *config.Broker) string { return msString(d.ReplicaLagTimeMax) }},
	{"", "transaction.state.log.num.partitions", kmsg.ConfigTypeInt, false,
		func(c *Config) string { return strconv.Itoa(c.Txn.NumPartitions) }, func(d *config.Broker) string { return strconv.Itoa(d.Txn.StateLogNumPartitions) }},
	{"", "transaction.state.log.replication.factor", kmsg.ConfigTypeShort, false,
		func(c *Config) string { return strconv.Itoa(c.TxnStateReplicationFactor) }, func(d *config.Broker) string { return strconv.Itoa(d.Txn.StateLogReplicationFactor) }},
}

// topicConfigByName returns the entry of a topic config name.
func topicConfigByName(name string) (configEntry, bool) {
	for _, e := range configEntries {
		if e.topic != "" && e.topic == name {
			return e, true
		}
	}
	return configEntry{}, false
}

// applies reports whether the entry exists in the broker's release and
// mode (message.format.version and inter.broker.protocol.version left
// with Kafka 4.0).
func (b *Broker) applies(e configEntry) bool {
	if b.cfg.release() >= config.V4_0 && (e.broker == "log.message.format.version" || e.broker == "inter.broker.protocol.version") {
		return false
	}
	return true
}

// brokerSetting returns a broker property's value and source.
func (b *Broker) brokerSetting(e configEntry) (string, kmsg.ConfigSource) {
	v := e.value(&b.cfg)
	d := config.DefaultBrokerFor(b.cfg.release())
	if e.def != nil && e.def(&d) == v {
		return v, kmsg.ConfigSourceDefaultConfig
	}
	return v, kmsg.ConfigSourceStaticBrokerConfig
}

// topicSetting returns a topic config's own value, if the topic has one.
func (b *Broker) topicSetting(topic string, e configEntry) (string, bool) {
	if img := b.Image(); img != nil {
		if v, ok := img.Config(metadata.ResourceTopic, topic, e.topic); ok {
			return v, true
		}
	}
	switch e.topic {
	case "cleanup.policy":
		if topic == coordinator.OffsetsTopic || topic == txn.StateTopic {
			return storage.CleanupCompact, true
		}
	}
	s, ok := b.cfg.TopicOverrides[topic]
	if !ok {
		return "", false
	}
	var v string
	switch e.topic {
	case "cleanup.policy":
		v = s.CleanupPolicy
	case "compression.type":
		v = s.CompressionType
	case "max.message.bytes":
		if s.MaxMessageBytes != nil {
			v = strconv.Itoa(*s.MaxMessageBytes)
		}
	case "min.insync.replicas":
		if s.MinInsyncReplicas > 0 {
			v = strconv.Itoa(s.MinInsyncReplicas)
		}
	case "unclean.leader.election.enable":
		if s.UncleanLeaderElection != nil {
			v = strconv.FormatBool(*s.UncleanLeaderElection)
		}
	default:
		if l := s.Log; l != nil {
			v = map[string]string{"retention.ms": msString(l.RetentionMs), "retention.bytes": itoa64(l.RetentionBytes),
				"segment.bytes": itoa64(l.SegmentBytes), "segment.ms": msString(l.SegmentMs), "index.interval.bytes": itoa64(l.IndexIntervalBytes),
				"flush.messages": itoa64(l.FlushIntervalMessages), "flush.ms": msString(l.FlushIntervalMs),
				"message.format.version": l.MessageFormatVersion}[e.topic]
		}
	}
	// NB: a script's topic carries every modelled setting; one equal to
	// the broker's is the broker's, as Kafka lists only the topic's own.
	if v == "" || v == e.value(&b.cfg) {
		return "", false
	}
	return v, true
}

type synonym struct {
	name, value string
	source      kmsg.ConfigSource
}

// topicConfig returns the effective value of a topic config with its
// synonyms, most specific first.
func (b *Broker) topicConfig(topic string, e configEntry) []synonym {
	var out []synonym
	if v, ok := b.topicSetting(topic, e); ok {
		out = append(out, synonym{e.topic, v, kmsg.ConfigSourceDynamicTopicConfig})
	}
	v, src := b.brokerSetting(e)
	if src == kmsg.ConfigSourceStaticBrokerConfig {
		out = append(out, synonym{e.broker, v, src})
	}
	d := config.DefaultBrokerFor(b.cfg.release())
	out = append(out, synonym{e.broker, e.def(&d), kmsg.ConfigSourceDefaultConfig})
	return out
}

// createdTopicConfigs are the configs a CreateTopics v5+ answer lists.
func (b *Broker) createdTopicConfigs(topic string) []kmsg.CreateTopicsResponseTopicConfig {
	var out []kmsg.CreateTopicsResponseTopicConfig
	for _, e := range configEntries {
		if e.topic == "" || !b.applies(e) {
			continue
		}
		s := b.topicConfig(topic, e)[0]
		v := s.value
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.Value, c.Source = e.topic, &v, int8(s.source)
		out = append(out, c)
	}
	return out
}

func (b *Broker) handleDescribeConfigs(from sim.NodeID, req *wire.Request, body *kmsg.DescribeConfigsRequest) {
	resp := body.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, r := range body.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		fail := func(err *kerr.Error, msg string) {
			rr.ErrorCode, rr.ErrorMessage = err.Code, &msg
		}
		wanted := func(name string) bool {
			if r.ConfigNames == nil {
				return true
			}
			for _, n := range r.ConfigNames {
				if n == name {
					return true
				}
			}
			return false
		}
		add := func(name string, ss []synonym, readOnly bool, typ kmsg.ConfigType) {
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			v := ss[0].value
			c.Name, c.Value, c.ReadOnly = name, &v, readOnly
			if body.Version == 0 {
				c.IsDefault = ss[0].source == kmsg.ConfigSourceDefaultConfig
			} else {
				c.Source = ss[0].source
			}
			if body.Version >= 3 {
				c.ConfigType = typ
			}
			if body.Version >= 1 && body.IncludeSynonyms {
				for _, s := range ss {
					sv := s.value
					c.ConfigSynonyms = append(c.ConfigSynonyms, kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{Name: s.name, Value: &sv, Source: s.source})
				}
			}
			rr.Configs = append(rr.Configs, c)
		}
		switch r.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			switch {
			case !kraft.ValidTopicName(r.ResourceName):
				fail(kerr.InvalidTopicException, "topic name "+strconv.Quote(r.ResourceName)+" is illegal")
			case b.metadata.topicPartitions(r.ResourceName) == 0:
				fail(kerr.UnknownTopicOrPartition, "topic "+r.ResourceName+" does not exist")
			default:
				for _, e := range configEntries {
					if e.topic != "" && b.applies(e) && wanted(e.topic) {
						add(e.topic, b.topicConfig(r.ResourceName, e), false, e.typ)
					}
				}
			}
		case kmsg.ConfigResourceTypeBroker:
			if r.ResourceName == "" {
				break // the cluster-wide dynamic defaults: none are set here
			}
			if id, err := strconv.ParseInt(r.ResourceName, 10, 32); err != nil {
				fail(kerr.InvalidRequest, "broker id must be an integer, but it is: "+r.ResourceName)
				break
			} else if int32(id) != b.cfg.BrokerID {
				fail(kerr.InvalidRequest, "unexpected broker id, expected "+strconv.Itoa(int(b.cfg.BrokerID))+" or empty string, but received "+r.ResourceName)
				break
			}
			for _, e := range configEntries {
				if !b.applies(e) || !wanted(e.broker) {
					continue
				}
				v, src := b.brokerSetting(e)
				ss := []synonym{{e.broker, v, src}}
				if src == kmsg.ConfigSourceStaticBrokerConfig && e.def != nil {
					d := config.DefaultBrokerFor(b.cfg.release())
					ss = append(ss, synonym{e.broker, e.def(&d), kmsg.ConfigSourceDefaultConfig})
				}
				add(e.broker, ss, !e.dynamic, e.typ)
			}
		case kmsg.ConfigResourceTypeGroupConfig:
			if r.ResourceName == "" {
				fail(kerr.InvalidRequest, "group name must not be empty")
				break
			}
			for _, g := range b.groupConfigEntries(r.ResourceName) {
				if wanted(g.name) {
					add(g.name, []synonym{{g.name, g.value, g.source}}, false, g.typ)
				}
			}
		default:
			fail(kerr.InvalidRequest, "unsupported resource type: "+strconv.Itoa(int(r.ResourceType)))
		}
		resp.Resources = append(resp.Resources, rr)
	}
	b.respond(from, req, resp)
}

// validConfigValue reports whether v parses as a value of e's type, as
// ConfigDef.parseType requires (lists: cleanup.policy's values).
func validConfigValue(e configEntry, v string) bool {
	v = strings.TrimSpace(v)
	switch e.typ {
	case kmsg.ConfigTypeBoolean:
		return strings.EqualFold(v, "true") || strings.EqualFold(v, "false")
	case kmsg.ConfigTypeInt, kmsg.ConfigTypeShort, kmsg.ConfigTypeLong:
		bits := map[kmsg.ConfigType]int{kmsg.ConfigTypeInt: 32, kmsg.ConfigTypeShort: 16, kmsg.ConfigTypeLong: 64}[e.typ]
		_, err := strconv.ParseInt(v, 10, bits)
		return err == nil
	case kmsg.ConfigTypeString:
		if e.topic == "compression.type" {
			return validCompression(v)
		}
	case kmsg.ConfigTypeList:
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != storage.CleanupDelete && p != storage.CleanupCompact {
				return false
			}
		}
	}
	return true
}

type groupConfigEntry struct {
	name, value string
	source      kmsg.ConfigSource
	typ         kmsg.ConfigType
}

// groupConfigEntries returns a group's configs (resource type 32) as
// DescribeConfigs shows them: the share group configs (when share groups
// are on) and the consumer group ones, each the group's value
// (GROUP_CONFIG) or the broker's default (DEFAULT_CONFIG), sorted.
func (b *Broker) groupConfigEntries(group string) []groupConfigEntry {
	var out []groupConfigEntry
	add := func(name, def string, typ kmsg.ConfigType) {
		if v := b.groupConfig(group, name); v != "" {
			out = append(out, groupConfigEntry{name, v, kmsg.ConfigSourceGroupConfig, typ})
			return
		}
		out = append(out, groupConfigEntry{name, def, kmsg.ConfigSourceDefaultConfig, typ})
	}
	add("consumer.heartbeat.interval.ms", strconv.FormatInt(b.cfg.Coordinator.Consumer.HeartbeatInterval.Milliseconds(), 10), kmsg.ConfigTypeInt)
	add("consumer.session.timeout.ms", strconv.FormatInt(b.cfg.Coordinator.Consumer.SessionTimeout.Milliseconds(), 10), kmsg.ConfigTypeInt)
	if b.cfg.sharesEnabled() {
		for _, n := range share.GroupConfigNames {
			typ := kmsg.ConfigTypeInt
			if n == share.GroupAutoOffsetReset || n == share.GroupIsolationLevel {
				typ = kmsg.ConfigTypeString
			}
			add(n, b.cfg.Share.GroupConfigDefault(n), typ)
		}
	}
	return out
}
