package config

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kafkasim/kafkasim/sim"
)

// TestDefaults pins Kafka's defaults as rendered by Pairs.
func TestDefaults(t *testing.T) {
	want := map[string]string{
		"acks": "all", "retries": "2147483647", "retry.backoff.ms": "", "delivery.timeout.ms": "120000",
		"linger.ms": "0", "batch.size": "16384", "max.in.flight.requests.per.connection": "5",
		"enable.idempotence": "true", "partitioner.class": "default",
		"log.dirs": "/tmp/kafka-logs", "num.partitions": "1", "default.replication.factor": "1",
		"min.insync.replicas": "1", "unclean.leader.election.enable": "false", "replica.lag.time.max.ms": "30000",
		"replica.fetch.wait.max.ms": "500", "replica.fetch.min.bytes": "1", "replica.fetch.max.bytes": "1048576",
		"replica.fetch.backoff.ms": "1000", "replica.high.watermark.checkpoint.interval.ms": "5000",
		"zookeeper.session.timeout.ms": "18000", "controller.socket.timeout.ms": "30000",
		"auto.leader.rebalance.enable": "true", "leader.imbalance.check.interval.seconds": "300",
		"inter.broker.protocol.version": "3.9", "log.message.format.version": "3.0-IV1", "truncation": "kip279",
		"log.segment.bytes": "1073741824", "log.index.interval.bytes": "4096", "log.roll.ms": "604800000",
		"log.retention.ms": "604800000", "log.retention.bytes": "-1",
		"log.flush.interval.messages": "9223372036854775807", "log.flush.interval.ms": "9223372036854775807",
		"offsets.topic.num.partitions": "50", "offsets.topic.replication.factor": "3",
		"group.initial.rebalance.delay.ms": "3000", "group.min.session.timeout.ms": "6000",
		"group.max.session.timeout.ms": "1800000", "kafkasim.leader.epoch.fencing": "true",
		"kafkasim.truncate.on.leader.change.only": "false",
		"group.id": "", "session.timeout.ms": "45000", "heartbeat.interval.ms": "3000",
		"max.poll.interval.ms": "300000", "rebalance.timeout.ms": "300000", "auto.offset.reset": "latest",
		"enable.auto.commit": "false", "auto.commit.interval.ms": "5000", "fetch.min.bytes": "1",
		"fetch.max.wait.ms": "500", "max.partition.fetch.bytes": "1048576",
		"partition.assignment.strategy": "range,cooperative-sticky", "isolation.level": "read_uncommitted",
		"producer.retry.backoff.ms": "100", "consumer.request.timeout.ms": "30000",
	}
	delete(want, "retry.backoff.ms") // ambiguous: rendered with a prefix
	got := map[string]string{}
	for _, kv := range Default().Pairs() {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("default %s = %q, want %q", k, got[k], v)
		}
	}
	if d := DefaultBroker(); d.ReplicaLagTimeMax != 30*sim.Second || d.LogRoll != 168*sim.Hour || d.LogFlushInterval != Never ||
		d.LeaderImbalanceCheckInterval != 5*sim.Minute {
		t.Errorf("broker durations: lag %s roll %s flush %s imbalance %s", d.ReplicaLagTimeMax, d.LogRoll, d.LogFlushInterval, d.LeaderImbalanceCheckInterval)
	}
	if p := DefaultProducer(); p.DeliveryTimeout != 2*sim.Minute || p.Acks != AcksAll {
		t.Errorf("producer: delivery %s acks %s", p.DeliveryTimeout, p.Acks)
	}
	if err := Default().Validate(3, 3); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	c, err := Parse(nil)
	if err != nil || !reflect.DeepEqual(c, Default()) {
		t.Errorf("Parse(nil) = %v, %v; want Default()", c, err)
	}
	if nd := Default().NonDefaultPairs(); len(nd) != 0 {
		t.Errorf("Default().NonDefaultPairs() = %v, want none", nd)
	}
}

// TestParseErrors covers every error class: the kind, the property named,
// and that the message carries the value and what is allowed.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		props    map[string]string
		kind     ErrorKind
		property string
		contains []string
	}{
		// Unknown properties, with the nearest name.
		{map[string]string{"min.insync.replica": "2"}, UnknownProperty, "min.insync.replica", []string{`did you mean "min.insync.replicas"`}},
		{map[string]string{"ack": "1"}, UnknownProperty, "ack", []string{`"acks"`}},
		{map[string]string{"producer.ackss": "1"}, UnknownProperty, "producer.ackss", []string{`"producer.acks"`}},
		{map[string]string{"unclean.leader.election.enabled": "true"}, UnknownProperty, "unclean.leader.election.enabled", []string{`"unclean.leader.election.enable"`}},
		{map[string]string{"kafkasim.truncate.on.leader.change": "true"}, UnknownProperty, "kafkasim.truncate.on.leader.change", []string{`"kafkasim.truncate.on.leader.change.only"`}},
		// Wrong type or not an allowed value.
		{map[string]string{"acks": "maybe"}, BadValue, "acks", []string{`"maybe"`, "0, 1, -1, all"}},
		{map[string]string{"acks": "2"}, BadValue, "acks", []string{`"2"`, "0, 1, -1, all"}},
		{map[string]string{"min.insync.replicas": "two"}, BadValue, "min.insync.replicas", []string{`"two"`, "not an integer", "[1, 2147483647]"}},
		{map[string]string{"replica.lag.time.max.ms": "10s"}, BadValue, "replica.lag.time.max.ms", []string{`"10s"`, "milliseconds"}},
		{map[string]string{"unclean.leader.election.enable": "yes"}, BadValue, "unclean.leader.election.enable", []string{`"yes"`, "true, false"}},
		{map[string]string{"inter.broker.protocol.version": "2.9"}, BadValue, "inter.broker.protocol.version", []string{`"2.9"`, "3.9"}},
		{map[string]string{"truncation": "kip102"}, BadValue, "truncation", []string{"hw, kip101, kip279"}},
		{map[string]string{"auto.offset.reset": "smallest"}, BadValue, "auto.offset.reset", []string{"earliest, latest, none"}},
		{map[string]string{"partition.assignment.strategy": "range,fair"}, BadValue, "partition.assignment.strategy", []string{"unknown assignor fair", "cooperative-sticky"}},
		{map[string]string{"partition.assignment.strategy": "range,RangeAssignor"}, BadValue, "partition.assignment.strategy", []string{"listed twice"}},
		{map[string]string{"partition.assignment.strategy": ""}, BadValue, "partition.assignment.strategy", []string{"empty list"}},
		{map[string]string{"partitioner.class": "Murmur"}, BadValue, "partitioner.class", []string{"roundrobin"}},
		{map[string]string{"isolation.level": "serializable"}, BadValue, "isolation.level", []string{"read_committed"}},
		{map[string]string{"offsets.storage": "redis"}, BadValue, "offsets.storage", []string{"kafka, zookeeper"}},
		{map[string]string{"cleanup.policy": "archive"}, BadValue, "cleanup.policy", []string{"compact,delete"}},
		{map[string]string{"log.dirs": "/a,,/b"}, BadValue, "log.dirs", []string{"empty entry"}},
		{map[string]string{"log.dirs": "/a,/a"}, BadValue, "log.dirs", []string{"repeated entry /a"}},
		{map[string]string{"log.message.format.version": "0.10.x"}, BadValue, "log.message.format.version", []string{"-IVn"}},
		// Right type, outside the limits.
		{map[string]string{"min.insync.replicas": "0"}, OutOfRange, "min.insync.replicas", []string{`= "0"`, "[1, 2147483647]"}},
		{map[string]string{"log.segment.bytes": "13"}, OutOfRange, "log.segment.bytes", []string{"[14, 2147483647]"}},
		{map[string]string{"leader.imbalance.per.broker.percentage": "101"}, OutOfRange, "leader.imbalance.per.broker.percentage", []string{"[0, 100]"}},
		{map[string]string{"retries": "-1"}, OutOfRange, "retries", []string{"[0, 2147483647]"}},
		{map[string]string{"max.in.flight.requests.per.connection": "0"}, OutOfRange, "max.in.flight.requests.per.connection", []string{"[1, 2147483647]"}},
		{map[string]string{"session.timeout.ms": "2147483648"}, OutOfRange, "session.timeout.ms", []string{"milliseconds in [1, 2147483647]"}},
		{map[string]string{"log.retention.bytes": "-2"}, OutOfRange, "log.retention.bytes", []string{">= -1"}},
		{map[string]string{"log.roll.hours": "0"}, OutOfRange, "log.roll.hours", []string{"hours in [1, 2147483647]"}},
		{map[string]string{"log.roll.hours": "0", "log.roll.ms": "5"}, OutOfRange, "log.roll.hours", []string{"hours in [1, 2147483647]"}},
		{map[string]string{"default.replication.factor": "40000"}, OutOfRange, "default.replication.factor", []string{"[1, 32767]"}},
		{map[string]string{"topic.min.insync.replicas": "0"}, OutOfRange, "topic.min.insync.replicas", []string{"[1, 2147483647]"}},
		// Combinations a single part refuses.
		{map[string]string{"enable.idempotence": "true", "acks": "1"}, Conflict, "enable.idempotence", []string{"acks = 1", "acks=all"}},
		{map[string]string{"enable.idempotence": "true", "max.in.flight.requests.per.connection": "6"}, Conflict, "enable.idempotence", []string{"max.in.flight.requests.per.connection = 6", "[1, 5]"}},
		{map[string]string{"enable.idempotence": "true", "retries": "0"}, Conflict, "enable.idempotence", []string{"retries = 0"}},
		{map[string]string{"delivery.timeout.ms": "1000", "linger.ms": "500"}, Conflict, "delivery.timeout.ms", []string{"linger.ms + request.timeout.ms"}},
		{map[string]string{"heartbeat.interval.ms": "45000"}, Conflict, "heartbeat.interval.ms", []string{"session.timeout.ms = 45000"}},
		{map[string]string{"enable.auto.commit": "true"}, Conflict, "enable.auto.commit", []string{"group.id"}},
		{map[string]string{"consumer.enable.auto.commit": "true"}, Conflict, "consumer.enable.auto.commit", []string{"group.id"}},
		{map[string]string{"inter.broker.protocol.version": "2.0", "log.message.format.version": "2.1-IV0"}, Conflict, "log.message.format.version", []string{"inter.broker.protocol.version = 2.0"}},
		{map[string]string{"inter.broker.protocol.version": "0.10.2", "message.format.version": "0.11.0"}, Conflict, "message.format.version", []string{"at most 0.10.2"}},
		{map[string]string{"replica.fetch.wait.max.ms": "40000"}, Conflict, "replica.fetch.wait.max.ms", []string{"replica.lag.time.max.ms = 30000"}},
		{map[string]string{"group.min.session.timeout.ms": "60000", "group.max.session.timeout.ms": "50000"}, Conflict, "group.min.session.timeout.ms", []string{"50000"}},
		{map[string]string{"truncation": "hw", "inter.broker.protocol.version": "3.9"}, Conflict, "truncation", []string{"inter.broker.protocol.version = 3.9", "kip279"}},
	} {
		_, err := Parse(tc.props)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%v: got %v, want a %s error", tc.props, err, tc.kind)
			continue
		}
		if e.Kind != tc.kind || e.Property != tc.property {
			t.Errorf("%v: got %s on %q (%v), want %s on %q", tc.props, e.Kind, e.Property, err, tc.kind, tc.property)
		}
		for _, s := range tc.contains {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%v: %q does not contain %q", tc.props, err, s)
			}
		}
		if !strings.Contains(err.Error(), tc.property) {
			t.Errorf("%v: %q does not name %s", tc.props, err, tc.property)
		}
	}
}

// TestFirstErrorIsDeterministic checks that a map with several bad keys
// always reports the same one, the first in sorted order.
func TestFirstErrorIsDeterministic(t *testing.T) {
	props := map[string]string{"zzz.unknown": "1", "acks": "maybe", "min.insync.replicas": "two", "aaa.unknown": "1", "retries": "x"}
	first := ""
	for i := 0; i < 50; i++ {
		_, err := Parse(props)
		if err == nil {
			t.Fatal("no error")
		}
		if i == 0 {
			first = err.Error()
		} else if err.Error() != first {
			t.Fatalf("run %d: %q, run 0: %q", i, err, first)
		}
	}
	if !strings.Contains(first, `"aaa.unknown"`) {
		t.Errorf("first error %q, want the sorted-first key aaa.unknown", first)
	}
	delete(props, "aaa.unknown")
	delete(props, "zzz.unknown")
	for i := 0; i < 20; i++ {
		if _, err := ParseBroker(map[string]string{"min.insync.replicas": "two", "log.segment.bytes": "x", "num.partitions": "y"}); err == nil ||
			!strings.Contains(err.Error(), "log.segment.bytes") {
			t.Fatalf("ParseBroker first error = %v, want log.segment.bytes", err)
		}
	}
}

// TestClusterValidate covers the combinations that need the cluster's size.
func TestClusterValidate(t *testing.T) {
	for _, tc := range []struct {
		props           map[string]string
		brokers, rf     int
		property, other string // "" property: valid
	}{
		{map[string]string{"min.insync.replicas": "2"}, 3, 3, "", ""},
		{map[string]string{"min.insync.replicas": "3"}, 3, 3, "", ""},
		{map[string]string{"min.insync.replicas": "4"}, 5, 3, "min.insync.replicas", "replication factor"},
		{map[string]string{"min.insync.replicas": "2"}, 3, 0, "min.insync.replicas", "default.replication.factor"},
		{map[string]string{"topic.min.insync.replicas": "3"}, 3, 2, "min.insync.replicas", "replication factor"},
		{map[string]string{"min.insync.replicas": "3", "topic.min.insync.replicas": "2"}, 3, 2, "", ""},
		{map[string]string{}, 2, 3, "replication factor", "brokers"},
		{map[string]string{"default.replication.factor": "3"}, 2, 0, "default.replication.factor", "brokers"},
		{map[string]string{}, 0, 1, "brokers", ""},
		{map[string]string{"group.id": "g"}, 3, 3, "", ""},
		{map[string]string{"group.id": "g"}, 2, 2, "offsets.topic.replication.factor", "brokers"},
		{map[string]string{"group.id": "g", "offsets.topic.replication.factor": "2"}, 2, 2, "", ""},
		{map[string]string{"group.id": "g", "offsets.storage": "zookeeper"}, 1, 1, "", ""},
		{map[string]string{"offsets.topic.replication.factor": "3"}, 1, 1, "", ""},
		{map[string]string{"group.id": "g", "session.timeout.ms": "5000"}, 3, 3, "session.timeout.ms", "group.min.session.timeout.ms"},
		{map[string]string{"group.id": "g", "session.timeout.ms": "1800001"}, 3, 3, "session.timeout.ms", "group.max.session.timeout.ms"},
		{map[string]string{"group.id": "g", "session.timeout.ms": "5000", "group.min.session.timeout.ms": "5000"}, 3, 3, "", ""},
	} {
		c, err := Parse(tc.props)
		if err != nil {
			t.Errorf("%v: Parse: %v", tc.props, err)
			continue
		}
		err = c.Validate(tc.brokers, tc.rf)
		if tc.property == "" {
			if err != nil {
				t.Errorf("%v brokers=%d rf=%d: %v", tc.props, tc.brokers, tc.rf, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Property != tc.property || e.Other != tc.other {
			t.Errorf("%v brokers=%d rf=%d: got %v, want an error on %q against %q", tc.props, tc.brokers, tc.rf, err, tc.property, tc.other)
		}
	}
}

// TestValidateHandBuiltClients checks Validate on structs built without
// Parse: acks outside {0,1,-1,all}, and idempotence with what Kafka refuses.
func TestValidateHandBuiltClients(t *testing.T) {
	for _, tc := range []struct {
		mod      func(*Producer)
		property string
		other    string
	}{
		{func(p *Producer) {}, "", ""},
		{func(p *Producer) { p.Acks = 2 }, "acks", ""},
		{func(p *Producer) { p.Acks = -2 }, "acks", ""},
		{func(p *Producer) { p.Acks = AcksNone }, "enable.idempotence", "acks"},
		{func(p *Producer) { p.Acks = AcksNone; p.EnableIdempotence = false }, "", ""},
		{func(p *Producer) { p.MaxInFlightRequestsPerConnection = 6 }, "enable.idempotence", "max.in.flight.requests.per.connection"},
		{func(p *Producer) { p.Retries = 0 }, "enable.idempotence", "retries"},
		{func(p *Producer) { p.Partitioner = "murmur3" }, "partitioner.class", ""},
	} {
		p := DefaultProducer()
		tc.mod(&p)
		err := p.Validate()
		if tc.property == "" {
			if err != nil {
				t.Errorf("%+v: %v", p, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Property != tc.property || e.Other != tc.other {
			t.Errorf("%+v: got %v, want an error on %q against %q", p, err, tc.property, tc.other)
		}
	}
	c := DefaultConsumer()
	c.PartitionAssignmentStrategy = []Assignor{"fair"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "partition.assignment.strategy") {
		t.Errorf("unknown assignor: %v", err)
	}
}

// TestImplicitDefaults checks the defaults that depend on other settings,
// as Kafka resolves them.
func TestImplicitDefaults(t *testing.T) {
	c, err := Parse(map[string]string{"acks": "1", "linger.ms": "100000", "group.id": "g", "max.poll.interval.ms": "60000"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Producer.EnableIdempotence {
		t.Error("acks=1 with enable.idempotence unset: idempotence stayed on")
	}
	if want := sim.Ms(130000); c.Producer.DeliveryTimeout != want {
		t.Errorf("delivery.timeout.ms unset: %s, want linger+request = %s", c.Producer.DeliveryTimeout, want)
	}
	if !c.Consumer.EnableAutoCommit {
		t.Error("group.id set, enable.auto.commit unset: auto-commit off")
	}
	if c.Consumer.RebalanceTimeout != sim.Ms(60000) {
		t.Errorf("rebalance timeout %s, want max.poll.interval.ms", c.Consumer.RebalanceTimeout)
	}
	c, err = Parse(map[string]string{"max.in.flight.requests.per.connection": "10", "retries": "0"})
	if err != nil || c.Producer.EnableIdempotence {
		t.Errorf("max.in.flight=10 retries=0: %v, idempotence %v", err, c.Producer.EnableIdempotence)
	}
	c, err = Parse(map[string]string{"group.id": "g", "enable.auto.commit": "false", "rebalance.timeout.ms": "1000"})
	if err != nil || c.Consumer.EnableAutoCommit || c.Consumer.RebalanceTimeout != sim.Second {
		t.Errorf("explicit settings lost: %v %v %s", err, c.Consumer.EnableAutoCommit, c.Consumer.RebalanceTimeout)
	}
}

// TestUnitsAndAliases checks the conversions to sim.Duration and the
// precedence of the longer-unit spellings.
func TestUnitsAndAliases(t *testing.T) {
	for _, tc := range []struct {
		props       map[string]string
		roll, reten sim.Duration
		flush       sim.Duration
	}{
		{map[string]string{"log.roll.hours": "2"}, 2 * sim.Hour, 168 * sim.Hour, Never},
		{map[string]string{"log.roll.hours": "2", "log.roll.ms": "1500"}, sim.Ms(1500), 168 * sim.Hour, Never},
		{map[string]string{"log.retention.hours": "1"}, 168 * sim.Hour, sim.Hour, Never},
		{map[string]string{"log.retention.hours": "1", "log.retention.minutes": "5"}, 168 * sim.Hour, 5 * sim.Minute, Never},
		{map[string]string{"log.retention.hours": "1", "log.retention.ms": "7"}, 168 * sim.Hour, sim.Ms(7), Never},
		{map[string]string{"log.retention.minutes": "5", "log.retention.ms": "7"}, 168 * sim.Hour, sim.Ms(7), Never},
		{map[string]string{"log.retention.hours": "-1"}, 168 * sim.Hour, sim.Ms(-1), Never},
		{map[string]string{"log.flush.interval.ms": "1000"}, 168 * sim.Hour, 168 * sim.Hour, sim.Second},
		{map[string]string{"log.flush.interval.ms": "99999999999999"}, 168 * sim.Hour, 168 * sim.Hour, Never},
		{map[string]string{"log.flush.interval.ms": " 0 "}, 168 * sim.Hour, 168 * sim.Hour, 0},
	} {
		b, err := ParseBroker(tc.props)
		if err != nil {
			t.Errorf("%v: %v", tc.props, err)
			continue
		}
		if b.LogRoll != tc.roll || b.LogRetention != tc.reten || b.LogFlushInterval != tc.flush {
			t.Errorf("%v: roll %s retention %s flush %s; want %s %s %s", tc.props, b.LogRoll, b.LogRetention, b.LogFlushInterval, tc.roll, tc.reten, tc.flush)
		}
	}
	if b, _ := ParseBroker(map[string]string{"leader.imbalance.check.interval.seconds": "7", "log.dir": "/d"}); b.LeaderImbalanceCheckInterval != 7*sim.Second ||
		!reflect.DeepEqual(b.LogDirs, []string{"/d"}) {
		t.Errorf("seconds property or log.dir: %s %v", b.LeaderImbalanceCheckInterval, b.LogDirs)
	}
	if b, _ := ParseBroker(map[string]string{"log.dir": "/d", "log.dirs": "/e, /f"}); !reflect.DeepEqual(b.LogDirs, []string{"/e", "/f"}) {
		t.Errorf("log.dirs should win over log.dir: %v", b.LogDirs)
	}
}

// TestRouting checks the topic./producer./consumer. prefixes and how
// unprefixed keys reach the parts.
func TestRouting(t *testing.T) {
	c, err := Parse(map[string]string{
		"min.insync.replicas": "2", "retention.ms": "1000", "request.timeout.ms": "100",
		"consumer.request.timeout.ms": "200", "topic.unclean.leader.election.enable": "true",
		"cleanup.policy": "delete,compact", "client.id": "c1", "producer.client.id": "p1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Broker.MinInsyncReplicas != 2 || c.Topic.MinInsyncReplicas != 2 {
		t.Errorf("min.insync.replicas: broker %d topic %d, want 2 and inherited 2", c.Broker.MinInsyncReplicas, c.Topic.MinInsyncReplicas)
	}
	if c.Topic.Retention != sim.Second || c.Broker.LogRetention != 168*sim.Hour {
		t.Errorf("retention.ms is a topic override: topic %s broker %s", c.Topic.Retention, c.Broker.LogRetention)
	}
	if c.Producer.RequestTimeout != sim.Ms(100) || c.Consumer.RequestTimeout != sim.Ms(200) {
		t.Errorf("request.timeout.ms: producer %s consumer %s, want 100ms and the prefixed 200ms", c.Producer.RequestTimeout, c.Consumer.RequestTimeout)
	}
	if !c.Topic.UncleanLeaderElectionEnable || c.Broker.UncleanLeaderElectionEnable {
		t.Errorf("topic.unclean.leader.election.enable: topic %v broker %v", c.Topic.UncleanLeaderElectionEnable, c.Broker.UncleanLeaderElectionEnable)
	}
	if c.Topic.CleanupPolicy != CleanupCompactDelete || !c.Topic.CleanupPolicy.Compact() || !c.Topic.CleanupPolicy.Delete() {
		t.Errorf("cleanup.policy %s", c.Topic.CleanupPolicy)
	}
	if c.Producer.ClientID != "p1" || c.Consumer.ClientID != "c1" {
		t.Errorf("client.id: producer %q consumer %q", c.Producer.ClientID, c.Consumer.ClientID)
	}
	got := c.NonDefaultPairs()
	want := []string{"cleanup.policy=compact,delete", "consumer.client.id=c1", "consumer.request.timeout.ms=200",
		"min.insync.replicas=2", "producer.client.id=p1", "producer.request.timeout.ms=100", "retention.ms=1000",
		"topic.unclean.leader.election.enable=true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NonDefaultPairs (-want +got):\n%s", diff)
	}
	a, err := Parse(map[string]string{"partition.assignment.strategy": "org.apache.kafka.clients.consumer.StickyAssignor, class org.apache.kafka.clients.consumer.RoundRobinAssignor",
		"partitioner.class": "org.apache.kafka.clients.producer.RoundRobinPartitioner", "acks": "-1", "auto.offset.reset": "EARLIEST"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Consumer.PartitionAssignmentStrategy, []Assignor{AssignorSticky, AssignorRoundRobin}) ||
		a.Producer.Partitioner != PartitionerRoundRobin || a.Producer.Acks != AcksAll || a.Consumer.AutoOffsetReset != ResetEarliest {
		t.Errorf("class names: %v %s %s %s", a.Consumer.PartitionAssignmentStrategy, a.Producer.Partitioner, a.Producer.Acks, a.Consumer.AutoOffsetReset)
	}
}

// TestPairsRoundTrip checks that Pairs and NonDefaultPairs parse back into
// the same Config, so a run report's configuration replays the run.
func TestPairsRoundTrip(t *testing.T) {
	for _, props := range []map[string]string{
		{},
		{"truncation": "hw"},
		{"truncation": "kip101", "acks": "1", "min.insync.replicas": "2", "topic.min.insync.replicas": "1"},
		{"inter.broker.protocol.version": "2.4", "log.message.format.version": "0.10.2-IV0", "unclean.leader.election.enable": "false"},
		{"log.retention.hours": "-1", "log.flush.interval.ms": "99999999999999", "flush.messages": "1", "segment.ms": "10"},
		{"linger.ms": "200000", "group.id": "g", "max.poll.interval.ms": "1000", "heartbeat.interval.ms": "100", "session.timeout.ms": "6000"},
		{"partition.assignment.strategy": "cooperative-sticky", "log.dirs": "/a,/b", "broker.rack": "r1", "client.rack": "r1",
			"kafkasim.truncate.on.leader.change.only": "true", "kafkasim.leader.epoch.fencing": "false", "retry.backoff.ms": "5"},
	} {
		c, err := Parse(props)
		if err != nil {
			t.Errorf("%v: %v", props, err)
			continue
		}
		for name, lines := range map[string][]string{"Pairs": c.Pairs(), "NonDefaultPairs": c.NonDefaultPairs()} {
			if !isSorted(lines) {
				t.Errorf("%v: %s not sorted: %v", props, name, lines)
			}
			back, err := Parse(toMap(lines))
			if err != nil {
				t.Errorf("%v: %s does not parse: %v\n%v", props, name, err, lines)
				continue
			}
			// The idempotence note tells how the producer's rule read
			// the input (acks=1 without enable.idempotence); the
			// rendered form sets enable.idempotence, so it has none.
			want := c
			want.Producer.IdempotenceNote = ""
			if diff := cmp.Diff(want, back); diff != "" {
				t.Errorf("%v: %s round trip differs (-want +got):\n%s", props, name, diff)
			}
		}
	}
}

func toMap(lines []string) map[string]string {
	m := map[string]string{}
	for _, kv := range lines {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func isSorted(lines []string) bool {
	for i := 1; i < len(lines); i++ {
		if lines[i-1] >= lines[i] {
			return false
		}
	}
	return true
}

// TestParseTopicAgainstBroker checks that topics inherit the broker's log.*
// defaults and that Overrides lists only what differs.
func TestParseTopicAgainstBroker(t *testing.T) {
	b, err := ParseBroker(map[string]string{"log.segment.bytes": "1024", "min.insync.replicas": "2", "log.flush.interval.messages": "1"})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := ParseTopic(b, map[string]string{"retention.bytes": "4096", "min.insync.replicas": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if tp.SegmentBytes != 1024 || tp.FlushMessages != 1 || tp.RetentionBytes != 4096 || tp.MinInsyncReplicas != 2 {
		t.Errorf("topic %+v", tp)
	}
	if got := tp.Overrides(b); !reflect.DeepEqual(got, []string{"retention.bytes=4096"}) {
		t.Errorf("Overrides = %v", got)
	}
	if _, err := ParseTopic(b, map[string]string{"log.segment.bytes": "1"}); err == nil || !strings.Contains(err.Error(), `did you mean "segment.bytes"`) {
		t.Errorf("broker key on a topic: %v", err)
	}
	if len(TopicProperties()) == 0 || len(ProducerProperties()) == 0 || len(ConsumerProperties()) == 0 || len(BrokerProperties()) == 0 {
		t.Error("a property list is empty")
	}
	for _, k := range Properties() {
		if _, err := Parse(map[string]string{k: "\x00"}); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind == UnknownProperty {
				t.Errorf("Properties() lists %q but Parse does not know it: %v", k, err)
			}
		}
	}
}

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"acks", "acks", 0}, {"ack", "acks", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}} {
		if got := EditDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
	if math.MaxInt32 != maxInt32 {
		t.Error("maxInt32")
	}
}

// TestGroupInstanceID: group.instance.id (KIP-345) is a modelled consumer
// property, checked as Kafka's JoinGroupRequest.validateGroupInstanceId
// checks it, and needs a group.
func TestGroupInstanceID(t *testing.T) {
	c, err := ParseConsumer(map[string]string{"group.id": "g", "group.instance.id": "host-1.a_b"})
	if err != nil || !c.Static() || c.GroupInstanceID != "host-1.a_b" {
		t.Fatalf("ParseConsumer: %+v %v", c.GroupInstanceID, err)
	}
	for _, bad := range []string{"a b", ".", "..", "é", strings.Repeat("a", 250)} {
		_, err := ParseConsumer(map[string]string{"group.id": "g", "group.instance.id": bad})
		if err == nil || !strings.Contains(err.Error(), "group.instance.id") || !strings.Contains(err.Error(), "[a-zA-Z0-9._-]") {
			t.Errorf("group.instance.id=%q: %v, want an error naming the property and what is allowed", bad, err)
		}
	}
	if _, err := ParseConsumer(map[string]string{"group.instance.id": "i1"}); err == nil || !strings.Contains(err.Error(), "group.id") {
		t.Errorf("a static member without a group: %v, want a conflict naming group.id", err)
	}
}
