package harness

// This file says, once per run, where a property the user gave does not
// take effect: a script step that fixes the same property for what it
// sends (produce ... acks=$acks, producer p1 acks=1) wins over -set,
// -grid and -config files, as a Kafka client's own configuration wins over
// a cluster-wide one. Nothing is shown and silently ignored: each such
// step is named with its file and line and with the way to reach it (the
// script variable it reads).

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/scenarios"
)

// stepOverrides returns a note for each step key=value that overrides a
// property of set (-set, -grid and -config files merged): "acks=1 from
// -set is overridden by scripts/x.txt:19 (acks=$acks); set $acks=1".
// origins names where a key of set came from ("server.properties:7",
// "-grid"); a key without one came from -set. vars are the run's script
// variables; a step whose value, substituted, equals set's overrides
// nothing.
func stepOverrides(s *scenarios.Script, set, origins, vars map[string]string) []string {
	if len(set) == 0 {
		return nil
	}
	var notes []string
	seen := map[string]bool{}
	for _, st := range s.Steps {
		if st.Op == "swarm" {
			continue // the run's producer properties win over the swarm step's (swarm.go)
		}
		keys := make([]string, 0, len(st.KV))
		for k := range st.KV {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			given, from, ok := setValue(set, k, st.Op)
			if !ok {
				continue
			}
			raw := st.KV[k]
			val := raw
			if strings.HasPrefix(raw, "$") {
				if v, ok := vars[raw]; ok {
					val = v
				}
			}
			if val == given {
				continue
			}
			how := "the step fixes it"
			if strings.HasPrefix(raw, "$") {
				how = "set " + raw + "=" + given
			}
			origin := origins[from]
			if origin == "" {
				origin = "-set"
			}
			note := fmt.Sprintf("%s=%s from %s is overridden by %s:%d (%s %s=%s); %s", from, given, origin, s.File, st.Line, st.Op, k, raw, how)
			if !seen[note] {
				seen[note] = true
				notes = append(notes, note)
			}
		}
	}
	return notes
}

// setValue returns the value set gives the client property k of a step
// (unprefixed, or with the prefix of the client the step drives), and the
// key as set wrote it.
func setValue(set map[string]string, k, op string) (string, string, bool) {
	if strings.HasPrefix(k, "$") {
		return "", "", false
	}
	prefixes := []string{"", config.ProducerPrefix}
	if op == "consumer" || op == "subscribe" || op == "poll" {
		prefixes = []string{"", config.ConsumerPrefix}
	}
	for i := len(prefixes) - 1; i >= 0; i-- {
		if v, ok := set[prefixes[i]+k]; ok {
			return v, prefixes[i] + k, true
		}
	}
	return "", "", false
}

// producerConfig is the configuration of a producer a script declares
// (producer NAME key=value ...) in a run of b's release (and patch): the run's producer
// properties as given (-set, -producer-config), then the step's own, the
// unmodelled ones returned as key=value lines.
func producerConfig(b config.Broker, given, kv map[string]string) (config.Producer, []string, error) {
	props := config.ClientProps(given, config.ProducerPrefix)
	for k, val := range kv {
		props[k] = val
	}
	modelled, others, err := config.SplitClient(config.ProducerPrefix, b.InterBrokerProtocolVersion, props)
	if err != nil {
		return config.Producer{}, nil, err
	}
	p, err := config.ParseProducerWith(b.Mechanisms(), modelled)
	return p, others, err
}

// clientsNotModelled returns the accepted, not modelled properties of the
// clients the script declares, as "producer p1: compression.type=gzip",
// in step order.
func clientsNotModelled(s *scenarios.Script, vars, given map[string]string, v config.Version) []string {
	var out []string
	for _, st := range s.Steps {
		if (st.Op != "producer" && st.Op != "consumer") || len(st.Args) == 0 {
			continue
		}
		prefix := config.ProducerPrefix
		if st.Op == "consumer" {
			prefix = config.ConsumerPrefix
		}
		kv := st.Substitute(vars).KV
		props := map[string]string{}
		for k, val := range kv {
			if !consumerStepKeys[k] {
				props[k] = val
			}
		}
		_, others, err := config.SplitClient(prefix, v, props)
		if err != nil {
			continue // Prepare refused it already
		}
		for _, o := range others {
			out = append(out, st.Op+" "+st.Args[0]+": "+o)
		}
	}
	return out
}

// ignoredNotes says which of the scenario's own properties the run's
// release does not have (config.Config.Ignored): Kafka's broker logs them
// and goes on.
func ignoredNotes(cfg config.Config) []string {
	out := make([]string, 0, len(cfg.Ignored))
	for _, e := range cfg.Ignored {
		out = append(out, "the scenario's "+strings.TrimPrefix(e, "config: ")+": ignored, as Kafka ignores a property it does not know")
	}
	return out
}

// declaresConsumers reports whether the script declares a consumer of its
// own (a consumer step, or a swarm step, whose clients may consume).
func declaresConsumers(s *scenarios.Script) bool {
	for _, st := range s.Steps {
		if st.Op == "consumer" || st.Op == "swarm" {
			return true
		}
	}
	return false
}

// unusedConsumerNotes says that the run's consumer properties configure
// nothing when the script declares no consumer.
func unusedConsumerNotes(s *scenarios.Script, given map[string]string) []string {
	if declaresConsumers(s) {
		return nil
	}
	props := config.ClientProps(given, config.ConsumerPrefix)
	if len(props) == 0 {
		return nil
	}
	kv := make([]string, 0, len(props))
	for _, k := range slices.Sorted(maps.Keys(props)) {
		kv = append(kv, k+"="+props[k])
	}
	return []string{"the consumer properties " + strings.Join(kv, " ") + " configure no consumer: the scenario declares none"}
}

// unworkableNotes says when the configuration keeps Kafka from making
// progress under faults: an internal topic with fewer replicas than
// the min.insync.replicas its writes need: __consumer_offsets (the
// broker-wide min.insync.replicas) for a script with consumers, and
// __transaction_state (transaction.state.log.min.isr) for one with
// transactions. Kafka accepts either pair, and nothing that writes there
// can then complete (unwritable.go); and a single-voter KRaft quorum,
// which has no controller while its voter is down. Kafka's shipped
// server.properties files set offsets.topic.replication.factor=1, its
// kraft/server.properties one voter.
func unworkableNotes(s *scenarios.Script, b config.Broker) []string {
	var out []string
	if declaresConsumers(s) && b.OffsetsTopicReplicationFactor < b.MinInsyncReplicas {
		out = append(out, fmt.Sprintf("offsets.topic.replication.factor=%d is below min.insync.replicas=%d: every write to __consumer_offsets fails with NOT_ENOUGH_REPLICAS, so consumer groups cannot become Stable or commit (Kafka accepts the pair; the liveness checker permits what follows)",
			b.OffsetsTopicReplicationFactor, b.MinInsyncReplicas))
	}
	if b.Txn.Enabled && b.Txn.StateLogReplicationFactor < b.Txn.StateLogMinISR {
		out = append(out, fmt.Sprintf("transaction.state.log.replication.factor=%d is below transaction.state.log.min.isr=%d: every write to __transaction_state fails with NOT_ENOUGH_REPLICAS, so no transactional producer initializes or commits (Kafka accepts the pair; the checkers permit what follows)",
			b.Txn.StateLogReplicationFactor, b.Txn.StateLogMinISR))
	}
	if vs, err := config.ParseVoters(b.KRaft.ControllerQuorumVoters); err == nil && b.KRaftMode() && len(vs) == 1 {
		// Kafka's quickstart kraft/server.properties: one voter.
		out = append(out, fmt.Sprintf("controller.quorum.voters names one voter, node %d (%s): the quorum tolerates no failure; while it is down no controller elects a leader or changes an ISR, so a step awaiting either times out",
			vs[0].ID, server.NodeName(vs[0].ID)))
	}
	return out
}

// checkTopicConfigs checks the topic lines' Kafka topic configs that
// kafkasim does not model against release v: one the release does not
// have, or a value its validator refuses, is an error at the line.
func checkTopicConfigs(s *scenarios.Script, v config.Version) error {
	for _, t := range s.Topics {
		for _, k := range slices.Sorted(maps.Keys(t.Unmodelled)) {
			if err := config.CheckTopicConfig(v, k, t.Unmodelled[k]); err != nil {
				return fmt.Errorf("%s:%d: topic %s: %w", s.File, t.Line, t.Name, err)
			}
		}
	}
	return nil
}

// topicsNotModelled lists the topic lines' accepted, not modelled
// configs as "topic t: max.compaction.lag.ms=60000".
func topicsNotModelled(s *scenarios.Script) []string {
	var out []string
	for _, t := range s.Topics {
		for _, k := range slices.Sorted(maps.Keys(t.Unmodelled)) {
			out = append(out, "topic "+t.Name+": "+k+"="+t.Unmodelled[k])
		}
	}
	return out
}

// topicLineConfigs renders the topic lines' own modelled configs for the
// run's header, one entry per topic: "topic t: max.message.bytes=2000000
// min.insync.replicas=2".
func topicLineConfigs(s *scenarios.Script) []string {
	var out []string
	for _, t := range s.Topics {
		if len(t.Config) == 0 {
			continue
		}
		kv := make([]string, 0, len(t.Config))
		for _, k := range slices.Sorted(maps.Keys(t.Config)) {
			kv = append(kv, k+"="+t.Config[k])
		}
		out = append(out, "topic "+t.Name+": "+strings.Join(kv, " "))
	}
	return out
}

// givenDefaults returns the given settings (script variables apart) that
// the non-default configuration pairs leave out because their value is
// the default, key=value sorted by key, and apart, the given client
// (producer, consumer) settings whose value is not their default: the
// broker's pairs do not hold those, and they are no default. The
// properties accepted but not modelled are left out too: they have their
// own line, and their value need not be the default.
func givenDefaults(given map[string]string, pairs, notModelled []string) (defaults, clientSet []string) {
	shown := map[string]bool{}
	for _, p := range append(slices.Clone(pairs), notModelled...) {
		k, _, _ := strings.Cut(p, "=")
		shown[k] = true
	}
	for k, v := range given {
		if strings.HasPrefix(k, "$") || shown[k] || shown[strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(k, config.TopicPrefix), config.ProducerPrefix), config.ConsumerPrefix)] {
			continue
		}
		if isDefault, client := clientDefault(k, v); client && !isDefault {
			clientSet = append(clientSet, k+"="+v)
			continue
		}
		defaults = append(defaults, k+"="+v)
	}
	sort.Strings(defaults)
	sort.Strings(clientSet)
	return defaults, clientSet
}

// clientDefault reports whether k is a producer or consumer property
// (client) and whether v is its default (Kafka's, as ParseProducer and
// ParseConsumer give it; a value they refuse is no default). A bare name
// both clients have is a default only if it is one for both.
func clientDefault(k, v string) (isDefault, client bool) {
	name := k
	producer, consumer := true, true
	switch {
	case strings.HasPrefix(k, config.ProducerPrefix):
		name, consumer = strings.TrimPrefix(k, config.ProducerPrefix), false
	case strings.HasPrefix(k, config.ConsumerPrefix):
		name, producer = strings.TrimPrefix(k, config.ConsumerPrefix), false
	}
	producer = producer && slices.Contains(config.ProducerProperties(), name)
	consumer = consumer && slices.Contains(config.ConsumerProperties(), name)
	if !producer && !consumer {
		return false, false
	}
	isDefault = true
	if producer {
		def, _ := config.ParseProducer(nil)
		got, err := config.ParseProducer(map[string]string{name: v})
		isDefault = err == nil && reflect.DeepEqual(def, got)
	}
	if consumer && isDefault {
		def, _ := config.ParseConsumer(nil)
		got, err := config.ParseConsumer(map[string]string{name: v})
		isDefault = err == nil && reflect.DeepEqual(def, got)
	}
	return isDefault, true
}
