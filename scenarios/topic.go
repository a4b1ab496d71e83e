package scenarios

// This file parses a script's 'topic' header line and bounds what it may
// ask for, so that a cluster the simulator cannot build (a replica on a
// broker that does not exist, two replicas on one broker, millions of
// partitions) is refused at parse time, naming what is allowed.

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/config/catalog"
)

// Bounds of a script's cluster.
const (
	// MaxBrokers is the most brokers a script may ask for.
	MaxBrokers = 64
	// MaxControllers is the most dedicated KRaft controllers (cluster.Spec).
	MaxControllers = 9
	// MaxPartitions is the most partitions of one topic: each is a log per
	// replica on the virtual disk, and a run keeps every one in memory.
	MaxPartitions = 10000
	// maxTopicName is Kafka's limit on a topic name's length (249).
	maxTopicName = 249
)

// topicNameRE is what Kafka allows in a topic name (Topic.validate).
var topicNameRE = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// TopicConfigPrefix may start a topic config on a topic line, as
// kafka-topics --config writes them: config.max.message.bytes=2000000.
const TopicConfigPrefix = "config."

// topicKeys are the keys a topic line may give.
var topicKeys = []string{"partitions", "rf", "assignment"}

const topicUsage = "topic: want 'topic NAME partitions=N rf=N [assignment=1,0;2,1] [topic property=value ...]'"

// topicLine parses 'topic NAME partitions=N rf=N [assignment=...] [topic
// property=value ...]' against the brokers the script declared before it.
// A topic property (min.insync.replicas, unclean.leader.election.enable,
// max.message.bytes, compression.type, cleanup.policy, retention.ms, ...:
// config.TopicProperties) is the topic's own config; its value is checked
// here against the latest release's defaults, and again with the run's
// release and settings when the cluster is built.
func (s *Script) topicLine(kv map[string]string, pos []string) (TopicSpec, error) {
	if len(pos) != 1 {
		return TopicSpec{}, fmt.Errorf("%s", topicUsage)
	}
	t := TopicSpec{Name: pos[0], Partitions: 1, ReplicationFactor: 1}
	if err := checkTopicName(t.Name); err != nil {
		return t, err
	}
	for _, other := range s.Topics {
		if other.Name == t.Name {
			return t, fmt.Errorf("topic %s defined twice", t.Name)
		}
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys) // NB: the first unknown key named is the same every time
	for _, k := range keys {
		if contains(topicKeys, k) {
			continue
		}
		name := strings.TrimPrefix(k, TopicConfigPrefix)
		switch {
		case contains(config.TopicProperties(), name):
			if t.Config == nil {
				t.Config = map[string]string{}
			}
			t.Config[name] = kv[k]
		case catalog.Anywhere(catalog.Topic, name):
			// Checked against the run's release by harness.Prepare.
			if t.Unmodelled == nil {
				t.Unmodelled = map[string]string{}
			}
			t.Unmodelled[name] = kv[k]
		default:
			msg := fmt.Sprintf("topic %s: unknown key %q (allowed: %s, or a Kafka topic config, with or without %s: %s, ...)", t.Name, k, strings.Join(topicKeys, ", "), TopicConfigPrefix, strings.Join(config.TopicProperties(), ", "))
			if near := nearest(name, append(append([]string{}, topicKeys...), catalog.Names(catalog.Topic, newestCatalog())...)); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			return t, fmt.Errorf("%s", msg)
		}
	}
	if _, err := config.ParseTopic(config.DefaultBroker(), t.Config); err != nil {
		return t, fmt.Errorf("topic %s: %w", t.Name, err)
	}
	if s.Brokers == 0 {
		return t, fmt.Errorf("topic %s: no 'brokers N' line before it (the replication factor and the assignment are checked against the brokers)", t.Name)
	}
	var err error
	if v, ok := kv["partitions"]; ok {
		if t.Partitions, err = strconv.Atoi(v); err != nil || t.Partitions < 1 || t.Partitions > MaxPartitions {
			return t, fmt.Errorf("partitions=%q: want a number in [1, %d]", v, MaxPartitions)
		}
	}
	if v, ok := kv["rf"]; ok {
		if t.ReplicationFactor, err = strconv.Atoi(v); err != nil || t.ReplicationFactor < 1 || t.ReplicationFactor > s.Brokers {
			return t, fmt.Errorf("rf=%q: want a number in [1, %d] (the replication factor is at most the %d brokers)", v, s.Brokers, s.Brokers)
		}
	}
	if v, ok := t.Config[config.PropMinInsyncReplicas]; ok {
		if n, _ := strconv.Atoi(v); n > t.ReplicationFactor {
			return t, fmt.Errorf("topic %s: min.insync.replicas=%s above rf=%d: every acks=all produce would fail with NOT_ENOUGH_REPLICAS (allowed: 1 to %d)", t.Name, v, t.ReplicationFactor, t.ReplicationFactor)
		}
	}
	if v, ok := kv["assignment"]; ok {
		if t.Assignment, err = parseAssignment(v, t.ReplicationFactor, s.Brokers); err != nil {
			return t, err
		}
		if len(t.Assignment) != t.Partitions {
			return t, fmt.Errorf("assignment=%q lists %d partitions, the topic has %d", v, len(t.Assignment), t.Partitions)
		}
	}
	return t, nil
}

// checkTopicName applies Kafka's rules: 1 to 249 of [a-zA-Z0-9._-], not
// "." or "..".
func checkTopicName(name string) error {
	switch {
	case name == "." || name == "..":
		return fmt.Errorf("topic name %q: Kafka refuses \".\" and \"..\"", name)
	case len(name) > maxTopicName:
		return fmt.Errorf("topic name of %d characters: Kafka allows at most %d", len(name), maxTopicName)
	case !topicNameRE.MatchString(name):
		return fmt.Errorf("topic name %q: Kafka allows only ASCII letters, digits, '.', '_' and '-'", name)
	}
	return nil
}

// parseAssignment parses "1,0;0,1": per partition, rf distinct broker ids
// below brokers.
func parseAssignment(v string, rf, brokers int) ([][]int32, error) {
	var out [][]int32
	for p, part := range strings.Split(v, ";") {
		if p >= MaxPartitions {
			return nil, fmt.Errorf("assignment=%q: more than %d partitions", v, MaxPartitions)
		}
		var rs []int32
		for _, id := range strings.Split(part, ",") {
			n, err := strconv.Atoi(id)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("assignment=%q: want broker ids like 1,0;0,1, got %q", v, id)
			}
			if n >= brokers {
				return nil, fmt.Errorf("assignment=%q: partition %d names broker %d, but the brokers are 0..%d", v, p, n, brokers-1)
			}
			for _, r := range rs {
				if r == int32(n) {
					return nil, fmt.Errorf("assignment=%q: partition %d names broker %d twice (each replica on its own broker)", v, p, n)
				}
			}
			rs = append(rs, int32(n))
		}
		if len(rs) != rf {
			return nil, fmt.Errorf("assignment=%q: partition %d has %d replicas, the replication factor is %d (rf=%d)", v, p, len(rs), rf, rf)
		}
		out = append(out, rs)
	}
	return out, nil
}

// newestCatalog is the newest release the property catalog has tables for
// (4.1: 4.2 and 4.3 have none yet, broker/config/release.go).
func newestCatalog() string {
	rs := catalog.Releases()
	return rs[len(rs)-1]
}
