package harness

// This file lets a run whose clients create topics (serve mode: Kafka's
// auto-creation and CreateTopics, clusterSpec's clientTopics) judge those
// topics as it judges the script's own. ObserveTopic adds a topic's
// partitions, with the replicas the metadata store assigned them
// (ZooKeeper's /brokers/topics/<t>, the active KRaft controller's image),
// to the observer: from then on the invariants monitor samples their
// replicas, Status lists them, the end phase probes and reads them, and
// the final state holds them for acked-loss, divergence and the checkers
// of what clients saw.
//
// What it simplifies:
//   - A topic is observed from the moment something asks (serve asks when
//     a client's request or a broker's answer first names it, and for
//     every topic the store holds at stop and after the end phase's heal):
//     the monitor does not see its replicas before.
//   - The internal topics (__consumer_offsets, __transaction_state,
//     __share_group_state) are
//     never observed, as a script's are not probed or read: they are
//     judged through the groups and transactions that use them.
//   - A topic a client deleted is not judged on what came before its
//     deletion (checkers/deletion.go sets those operations aside, with a
//     note): Kafka removed its records on request. One deleted and created
//     again is judged from its new start.
//   - A client topic's own unclean.leader.election.enable reaches the
//     facts as the metadata store holds it when the topic is first
//     observed: the active KRaft controller's ConfigRecords, ZooKeeper's
//     /config/topics/<t> (CreateTopics writes it before the assignment).

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/broker/zk"
)

// RealClients reports whether the run's clients are real ones, outside
// the world (serve mode): the brokers then create topics for them, which
// the run observes (ObserveTopic); the run is judged from the brokers'
// side of their requests.
func (r *Runner) RealClients() bool {
	return !r.Cluster.Spec.ScriptedTopics && !r.Cluster.Spec.ManualController
}

// ObserveTopic makes sure topic is observed and judged, if the metadata
// store holds it now, and reports whether it is: a script's topic always
// is, an internal topic never, a client's once the store assigned it.
func (r *Runner) ObserveTopic(topic string) bool {
	if r.scriptTopic(topic) {
		return true
	}
	if slices.Contains(r.clientTopics, topic) {
		r.followRecreation(topic)
		return true
	}
	if !r.RealClients() || topic == coordinator.OffsetsTopic || topic == txn.StateTopic || topic == share.StateTopic {
		return false
	}
	replicas, ok := r.storedTopic(topic)
	if !ok {
		return false
	}
	r.clientTopics = append(r.clientTopics, topic)
	if r.observedIncarnation == nil {
		r.observedIncarnation = map[string]string{}
	}
	r.observedIncarnation[topic], _ = r.storedTopicIdentity(topic)
	var tps []storage.TopicPartition
	for p := range replicas {
		tps = append(tps, storage.TopicPartition{Topic: topic, Partition: int32(p)})
	}
	r.Observer.addPartitions(tps, replicas)
	r.noteTopicFacts(topic, replicas)
	return true
}

// followRecreation observes topic, a client's topic observed before, as
// the new topic it is when the metadata store holds another topic of that
// name (deleted and created again: another topic id in KRaft, another
// znode in ZooKeeper): its replicas as now assigned, and none of what was
// seen of the deleted one (Observer.recreate). The first creation's
// operations are set aside at the end (checkers/deletion.go); until the
// store holds the new topic, the deleted one stays observed as it was.
func (r *Runner) followRecreation(topic string) {
	id, ok := r.storedTopicIdentity(topic)
	if !ok || id == r.observedIncarnation[topic] {
		return
	}
	replicas, ok := r.storedTopic(topic)
	if !ok {
		return
	}
	r.observedIncarnation[topic] = id
	r.Observer.recreate(topic, replicas)
	r.noteTopicFacts(topic, replicas)
}

// storedTopicIdentity names the incarnation of topic the metadata store
// holds: its topic id in the active KRaft controller's image, the
// creation zxid of /brokers/topics/<t> in ZooKeeper (a topic deleted and
// created again under the same name gets another). ok is false when the
// store does not hold the topic or cannot be read now.
func (r *Runner) storedTopicIdentity(topic string) (string, bool) {
	if r.Cluster.Spec.KRaft() {
		_, img := r.activeQuorumImage()
		if img == nil {
			return "", false
		}
		id, ok := img.TopicID(topic)
		return string(id[:]), ok
	}
	s := r.zkServer()
	if s == nil {
		return "", false
	}
	st, ok := s.Stat(zk.TopicPath(topic))
	return strconv.FormatInt(st.Czxid, 10), ok
}

// noteTopicFacts sets the facts a client topic's replicas and own
// configs decide.
func (r *Runner) noteTopicFacts(topic string, replicas [][]int32) {
	if rf := len(replicas[0]); rf != r.Observer.Facts.ReplicationFactor {
		// NB: 0 is "the partition's own replicas" (checkers.Facts): the
		// topics' replication factors differ.
		r.Observer.Facts.ReplicationFactor = 0
	}
	if r.storedTopicConfig(topic, "unclean.leader.election.enable") == "true" {
		r.Observer.Facts.UncleanElectionEnabled = true
	}
}

// storedTopicConfig returns a topic's own config name as the metadata
// store holds it: the active KRaft controller's image, or ZooKeeper's
// /config/topics/<t> ("" when it has none, or cannot be read now).
func (r *Runner) storedTopicConfig(topic, name string) string {
	if r.Cluster.Spec.KRaft() {
		if _, img := r.activeQuorumImage(); img != nil {
			if v, ok := img.Config(metadata.ResourceTopic, topic, name); ok {
				return v
			}
		}
		return ""
	}
	s := r.zkServer()
	if s == nil {
		return ""
	}
	data, _, ok := s.Get(zk.TopicConfigPath(topic))
	var ec zk.EntityConfig
	if !ok || json.Unmarshal(data, &ec) != nil {
		return ""
	}
	return ec.Config[name]
}

// ObserveClientTopics observes every topic the metadata store holds now.
func (r *Runner) ObserveClientTopics() {
	if !r.RealClients() {
		return
	}
	for _, t := range r.storedTopicNames() {
		r.ObserveTopic(t)
	}
}

// scriptTopic reports whether topic is one of the script's.
func (r *Runner) scriptTopic(topic string) bool {
	return slices.ContainsFunc(r.s.Topics, func(t scenarios.TopicSpec) bool { return t.Name == topic })
}

// storedTopic returns topic's replicas per partition as the metadata
// store assigned them; ok is false when the store does not hold the topic
// (or cannot be read now: ZooKeeper down, no active KRaft controller).
func (r *Runner) storedTopic(topic string) ([][]int32, bool) {
	if r.Cluster.Spec.KRaft() {
		_, img := r.activeQuorumImage()
		if img == nil || img.NumPartitions(topic) == 0 {
			return nil, false
		}
		out := make([][]int32, img.NumPartitions(topic))
		for p := range out {
			st, ok := img.Partition(topic, int32(p))
			if !ok || len(st.Replicas) == 0 {
				return nil, false
			}
			out[p] = slices.Clone(st.Replicas)
		}
		return out, true
	}
	s := r.zkServer()
	if s == nil {
		return nil, false
	}
	data, _, ok := s.Get(zk.TopicPath(topic))
	if !ok {
		return nil, false
	}
	var ta zk.TopicAssignment
	if json.Unmarshal(data, &ta) != nil || len(ta.Partitions) == 0 {
		return nil, false
	}
	out := make([][]int32, len(ta.Partitions))
	for p := range out {
		rs, ok := ta.Partitions[int32(p)]
		if !ok || len(rs) == 0 {
			return nil, false // partitions are 0..n-1, each with replicas
		}
		out[p] = slices.Clone(rs)
	}
	return out, true
}

// storedTopicNames returns the topics the metadata store holds, sorted
// (nil when it cannot be read now).
func (r *Runner) storedTopicNames() []string {
	if r.Cluster.Spec.KRaft() {
		if _, img := r.activeQuorumImage(); img != nil {
			return img.TopicNames()
		}
		return nil
	}
	if s := r.zkServer(); s != nil {
		return s.Children(zk.BrokerTopicsPath)
	}
	return nil
}

// zkServer returns the ZooKeeper server when it runs (ZooKeeper mode).
func (r *Runner) zkServer() *zk.Server {
	if r.Cluster.ZK < 0 || !r.World.Up(r.Cluster.ZK) {
		return nil
	}
	s, _ := r.World.Node(r.Cluster.ZK).(*zk.Server)
	return s
}
