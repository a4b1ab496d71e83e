package config

// This file holds the configuration of a whole run (Config): parsing one
// flat key/value map, as typed on the command line (-set acks=all), into the
// broker, topic, producer and consumer parts; the cluster-level checks; and
// the rendering used by run reports and replay commands.
//
// Routing a key: a key with the prefix "topic.", "producer." or "consumer."
// (Kafka Streams' prefixes) goes to that part only, and wins over the same
// key without prefix. A key without prefix goes to the broker if the broker
// knows it (min.insync.replicas, unclean.leader.election.enable: topics
// inherit them), else to every part that knows it (client.id,
// request.timeout.ms and retry.backoff.ms reach both clients).

import (
	"sort"
	"strconv"
	"strings"
)

// Config is the configuration of a run: one broker configuration shared by
// every broker, the effective configuration of the scenario's topics, and
// the clients'.
type Config struct {
	Broker   Broker
	Topic    Topic
	Producer Producer
	Consumer Consumer
	// NotModelled lists, as sorted key=value lines, the properties that
	// were accepted (Kafka's release has them and their values pass its
	// validators) but that kafkasim does not model: they change nothing
	// in the run, and every report says so.
	NotModelled []string
	// Ignored lists the properties of other releases only that a scenario
	// set (ParseGiven), each as its NotInRelease error.
	Ignored []string
}

// The prefixes that address one part of a Config.
const (
	TopicPrefix    = "topic."
	ProducerPrefix = "producer."
	ConsumerPrefix = "consumer."
)

// Default returns Kafka's defaults for every part.
func Default() Config {
	b := DefaultBroker()
	return Config{Broker: b, Topic: b.TopicDefaults(), Producer: DefaultProducer(), Consumer: DefaultConsumer()}
}

type part int

const (
	partBroker part = iota
	partTopic
	partProducer
	partConsumer
	numParts
)

var partPrefix = [numParts]string{"", TopicPrefix, ProducerPrefix, ConsumerPrefix}

func partNames(p part) []string {
	switch p {
	case partBroker:
		return brokerProps.names()
	case partTopic:
		return topicProps.names()
	case partProducer:
		return producerProps.names()
	}
	return consumerProps.names()
}

func knows(p part, name string) bool {
	switch p {
	case partBroker:
		_, ok := brokerProps.find(name)
		return ok
	case partTopic:
		_, ok := topicProps.find(name)
		return ok
	case partProducer:
		_, ok := producerProps.find(name)
		return ok
	}
	_, ok := consumerProps.find(name)
	return ok
}

// allKeys returns every key Parse accepts, sorted.
func allKeys() []string {
	seen := map[string]bool{}
	var out []string
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for p := partBroker; p < numParts; p++ {
		for _, n := range partNames(p) {
			add(n)
			if p != partBroker {
				add(partPrefix[p] + n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Properties returns every key Parse accepts, prefixed forms included,
// sorted.
func Properties() []string { return allKeys() }

// Parse parses a flat property map into a Config. Keys are routed in sorted
// order (the first unknown key is reported, with the nearest known key);
// then the broker, topic, producer and consumer parts are parsed, each in
// sorted key order, and validated. Cluster-level combinations need the
// cluster's size: call Validate. Every key is held to the release: a
// property of other releases only is an error (NotInRelease).
func Parse(props map[string]string) (Config, error) { return ParseGiven(props, nil) }

// ParseGiven is Parse where only the keys strict reports (the user's own:
// -set, -grid, -config files) are held to the release; a nil strict holds
// every key. A property of other releases only that comes from elsewhere
// (a scenario's set line, written for every release it runs under:
// zookeeper.session.timeout.ms under 4.0) is kept and listed in
// Config.Ignored, as Kafka's broker logs and ignores a property it does not
// know.
func ParseGiven(props map[string]string, strict func(key string) bool) (Config, error) {
	held := func(k string, err error) error {
		if e, ok := err.(*Error); ok && e.Kind == NotInRelease && strict != nil && !strict(k) {
			return nil
		}
		return err
	}
	sub, written, unmodelled := route(props)
	// The release decides which properties exist: every key is checked
	// against it, in sorted order, before any value is parsed.
	release, err := brokerVersion(sub[partBroker])
	if err != nil {
		return Config{}, err
	}
	var c Config
	isUnmodelled := map[string]bool{}
	for _, k := range unmodelled {
		isUnmodelled[k] = true
	}
	for _, k := range sortedKeys(props) {
		if isUnmodelled[k] {
			line, err := acceptUnmodelled(k, props[k], release)
			if err != nil {
				if held(k, err) != nil {
					return Config{}, err
				}
				c.Ignored = append(c.Ignored, err.Error())
				continue
			}
			c.NotModelled = append(c.NotModelled, line)
			continue
		}
		for p := partBroker; p < numParts; p++ {
			base := strings.TrimPrefix(k, partPrefix[p])
			if written[p][base] != k {
				continue
			}
			if err := checkModelledInRelease(k, props[k], p, base, release); err != nil {
				if held(k, err) != nil {
					return Config{}, err
				}
				c.Ignored = append(c.Ignored, err.Error())
			}
		}
	}
	if c.Broker, err = ParseBroker(sub[partBroker]); err != nil {
		return Config{}, err
	}
	if c.Topic, err = ParseTopic(c.Broker, sub[partTopic]); err != nil {
		return Config{}, rename(err, written[partTopic])
	}
	if c.Producer, err = ParseProducer(sub[partProducer]); err != nil {
		return Config{}, rename(err, written[partProducer])
	}
	if c.Consumer, err = ParseConsumer(sub[partConsumer]); err != nil {
		return Config{}, rename(err, written[partConsumer])
	}
	if _, set := sub[partConsumer][PropTruncationDetection]; !set {
		// The client is as old as the brokers: KIP-320 on both sides or neither.
		c.Consumer.TruncationDetection = c.Broker.LeaderEpochFencing
	}
	return c, nil
}

// ProducerSet returns the producer properties a flat property map gives
// that kafkasim models (routed as Parse routes them, by their names
// without prefix): what the user set, as opposed to defaults, which
// Kafka's producer rules tell apart (acks=1 set explicitly turns default
// idempotence off).
func ProducerSet(props map[string]string) (map[string]string, error) {
	sub, _, _ := route(props)
	return sub[partProducer], nil
}

// route splits props into the parts' maps (written: each base name's key
// as written), keys in sorted order; the keys no part models are returned
// apart, sorted, for the catalog (acceptUnmodelled).
func route(props map[string]string) (sub, written [numParts]map[string]string, unmodelled []string) {
	for p := range sub {
		sub[p] = map[string]string{}
		written[p] = map[string]string{}
	}
	for _, k := range sortedKeys(props) {
		routed := false
		for p := partTopic; p < numParts; p++ {
			if base, ok := strings.CutPrefix(k, partPrefix[p]); ok && knows(p, base) {
				sub[p][base], written[p][base] = props[k], k
				routed = true
			}
		}
		if routed {
			continue
		}
		for p := partBroker; p < numParts; p++ {
			if !knows(p, k) || (p != partBroker && knows(partBroker, k)) {
				continue
			}
			routed = true
			if _, prefixed := props[partPrefix[p]+k]; p != partBroker && prefixed {
				continue
			}
			sub[p][k], written[p][k] = props[k], k
		}
		if !routed {
			unmodelled = append(unmodelled, k)
		}
	}
	return sub, written, unmodelled
}

// rename makes an error name the keys as the user wrote them.
func rename(err error, written map[string]string) error {
	e, ok := err.(*Error)
	if !ok {
		return err
	}
	c := *e
	if k, ok := written[c.Property]; ok {
		c.Property = k
	}
	if k, ok := written[c.Other]; ok {
		c.Other = k
	}
	return &c
}

// Validate checks every part, then the combinations that depend on the
// cluster: brokers is the number of brokers, replicationFactor that of the
// scenario's topics (0 means default.replication.factor). It refuses a
// replication factor above the number of brokers, min.insync.replicas above
// the replication factor, a consumer session timeout outside the broker's
// group.min/max.session.timeout.ms (Kafka: INVALID_SESSION_TIMEOUT), and a
// consumer group whose __consumer_offsets could never be created.
func (c Config) Validate(brokers, replicationFactor int) error {
	if brokers < 1 {
		return &Error{Kind: OutOfRange, Property: "brokers", Value: itoa(brokers), Reason: "a cluster needs a broker", Allowed: "an integer >= 1"}
	}
	for _, err := range []error{c.Broker.Validate(), c.Topic.Validate(), c.Topic.validateWith(c.Broker), c.Producer.Validate(), c.Consumer.Validate()} {
		if err != nil {
			return err
		}
	}
	rf, rfName := replicationFactor, "replication factor"
	if rf <= 0 {
		rf, rfName = c.Broker.DefaultReplicationFactor, PropDefaultReplicationFactor
	}
	if rf > brokers {
		return conflict(rfName, itoa(rf), "brokers", itoa(brokers),
			"every replica needs its own broker (Kafka: INVALID_REPLICATION_FACTOR)", "a replication factor in [1, "+itoa(brokers)+"]")
	}
	if c.Topic.MinInsyncReplicas > rf {
		return conflict(PropMinInsyncReplicas, itoa(c.Topic.MinInsyncReplicas), rfName, itoa(rf),
			"every acks=all produce would fail with NOT_ENOUGH_REPLICAS", "min.insync.replicas in [1, "+itoa(rf)+"]")
	}
	if err := c.validateGroupProtocol(); err != nil {
		return err
	}
	if c.Consumer.GroupID != "" {
		// NB: group.protocol=consumer ignores session.timeout.ms (the
		// broker's group.consumer.session.timeout.ms rules).
		if s := c.Consumer.SessionTimeout; c.Consumer.GroupProtocol != GroupProtocolConsumer && (s < c.Broker.GroupMinSessionTimeout || s > c.Broker.GroupMaxSessionTimeout) {
			other, ov := PropGroupMinSessionTimeoutMs, ms(c.Broker.GroupMinSessionTimeout)
			if s > c.Broker.GroupMaxSessionTimeout {
				other, ov = PropGroupMaxSessionTimeoutMs, ms(c.Broker.GroupMaxSessionTimeout)
			}
			return conflict(PropSessionTimeoutMs, ms(s), other, ov,
				"the coordinator would answer INVALID_SESSION_TIMEOUT",
				"session.timeout.ms in ["+ms(c.Broker.GroupMinSessionTimeout)+", "+ms(c.Broker.GroupMaxSessionTimeout)+"]")
		}
		if c.Consumer.OffsetsStorage == OffsetsKafka && c.Broker.OffsetsTopicReplicationFactor > brokers {
			return conflict(PropOffsetsTopicReplicationFactor, itoa(c.Broker.OffsetsTopicReplicationFactor), "brokers", itoa(brokers),
				"__consumer_offsets could never be created, so group "+strconv.Quote(c.Consumer.GroupID)+" would find no coordinator",
				"offsets.topic.replication.factor in [1, "+itoa(brokers)+"]")
		}
	}
	return nil
}

// Pairs renders the effective configuration as sorted key=value lines, in
// the form Parse reads back into the same Config: every broker, producer and
// consumer property, and the topic properties that override the broker's.
// A key is prefixed only where it would be ambiguous (producer.client.id,
// topic.min.insync.replicas).
func (c Config) Pairs() []string {
	return c.render(c.Broker.Pairs(), c.Producer.Pairs(), c.Consumer.Pairs())
}

// NonDefaultPairs renders, like Pairs, only the properties whose value
// differs from Default()'s: what a replay command needs. Parse reads it back
// into the same Config.
func (c Config) NonDefaultPairs() []string {
	d := DefaultConsumer()
	d.TruncationDetection = c.Broker.LeaderEpochFencing // Parse's default
	return c.render(c.Broker.NonDefaultPairs(), c.Producer.NonDefaultPairs(), consumerProps.diff(&c.Consumer, &d))
}

// String renders Pairs one per line.
func (c Config) String() string { return strings.Join(c.Pairs(), "\n") }

func (c Config) render(broker, producer, consumer []string) []string {
	out := append([]string(nil), broker...)
	lists := [numParts][]string{partTopic: c.Topic.Overrides(c.Broker), partProducer: producer, partConsumer: consumer}
	for p := partTopic; p < numParts; p++ {
		for _, kv := range lists[p] {
			name, _, _ := strings.Cut(kv, "=")
			if ambiguous(p, name) {
				kv = partPrefix[p] + kv
			}
			out = append(out, kv)
		}
	}
	sort.Strings(out)
	return out
}

// ambiguous reports whether name, unprefixed, would reach a part other than
// p (or not only p).
func ambiguous(p part, name string) bool {
	for q := partBroker; q < numParts; q++ {
		if q != p && knows(q, name) {
			return true
		}
	}
	return false
}
