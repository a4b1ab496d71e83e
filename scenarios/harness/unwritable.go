// unwritable.go: what the run's configuration keeps from recovering by
// Kafka's design, for the liveness checker. A partition with fewer
// replicas than its min.insync.replicas refuses every acks=all write with
// NOT_ENOUGH_REPLICAS (Partition.appendRecordsToLeader), whatever heals. The
// group coordinator writes to __consumer_offsets with acks=-1
// (offsets.commit.required.acks), so a group whose offsets partition is
// such a partition can neither store its assignment (SyncGroup fails and
// the group prepares another rebalance: GroupCoordinator.doSyncGroup) nor
// commit: it never becomes Stable. Kafka's shipped kraft/server.properties
// sets offsets.topic.replication.factor=1; with a broker-wide
// min.insync.replicas=2, that is the case. Likewise __transaction_state,
// whose min.insync.replicas is transaction.state.log.min.isr (default 2):
// with transaction.state.log.replication.factor=1 alone, no transactional
// producer initializes (InitProducerId times out).

package harness

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/checkers"
)

// unwritableParts lists the partitions of every topic, internal ones
// included, with fewer replicas than their min.insync.replicas now: the
// script's and the cluster's, then those clients created (client_topics.go).
func (r *Runner) unwritableParts() []checkers.OfflinePartition {
	var out []checkers.OfflinePartition
	assigned := func(topic string) [][]int32 {
		if a, ok := r.Cluster.Assignments[topic]; ok {
			return a
		}
		var a [][]int32
		for p := int32(0); ; p++ {
			rs, ok := r.Observer.Replicas[storage.TopicPartition{Topic: topic, Partition: p}]
			if !ok {
				return a
			}
			a = append(a, rs)
		}
	}
	topics := slices.Sorted(maps.Keys(r.Cluster.Assignments))
	for _, t := range r.clientTopics {
		if _, ok := r.Cluster.Assignments[t]; !ok {
			topics = append(topics, t)
		}
	}
	for _, topic := range topics {
		for p, replicas := range assigned(topic) {
			tp := storage.TopicPartition{Topic: topic, Partition: int32(p)}
			if rf, min := len(replicas), r.minISROf(tp); rf > 0 && min > rf {
				out = append(out, checkers.OfflinePartition{Topic: topic, Partition: int32(p),
					Why: "permitted: " + tp.String() + " has " + strconv.Itoa(rf) + " replica(s) and min.insync.replicas=" + strconv.Itoa(min) +
						", so Kafka refuses every acks=all write to it (NOT_ENOUGH_REPLICAS)"})
			}
		}
	}
	return out
}

// unwritable fills l.Unwritable and l.Groups: the groups whose offsets
// partition is unwritable, and the consume-transform-produce groups when
// a __transaction_state partition is (their producers' InitProducerId and
// commits need the coordinator's writes).
func (r *Runner) unwritable(l *checkers.Liveness) {
	l.Unwritable, l.Groups = r.unwritableParts(), nil
	txnState := slices.IndexFunc(l.Unwritable, func(o checkers.OfflinePartition) bool { return o.Topic == txn.StateTopic })
	offsets := r.Cluster.Assignments[coordinator.OffsetsTopic]
	seen := map[string]bool{}
	for _, name := range r.consumers {
		id, _ := r.World.Lookup(name)
		n, ok := r.World.Node(id).(*consumerNode)
		if !ok || seen[n.s.cfg.GroupID] {
			continue
		}
		g := n.s.cfg.GroupID
		seen[g] = true
		if len(offsets) > 0 {
			tp := storage.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: int32(coordinator.CoordinatorPartition(g, len(offsets)))}
			if rf, min := len(offsets[tp.Partition]), r.minISROf(tp); rf > 0 && min > rf {
				l.Groups = append(l.Groups, checkers.UnwritableGroup{Group: g,
					Why: "permitted: the group's offsets partition " + tp.String() + " has " + strconv.Itoa(rf) + " replica(s) (offsets.topic.replication.factor=" +
						strconv.Itoa(rf) + ") and min.insync.replicas=" + strconv.Itoa(min) +
						": the coordinator's writes fail (NOT_ENOUGH_REPLICAS), so SyncGroup cannot store an assignment and no commit succeeds"})
				continue
			}
		}
		if n.ctp != nil && txnState >= 0 {
			l.Groups = append(l.Groups, checkers.UnwritableGroup{Group: g,
				Why: "permitted: the transaction coordinator cannot write (" + strings.TrimPrefix(l.Unwritable[txnState].Why, "permitted: ") +
					"), so the group's transactional producers cannot initialize or commit"})
		}
	}
}

// minISROf is the min.insync.replicas a replica of tp applies (the
// leader's, else any running replica's), 0 when no running broker holds tp.
func (r *Runner) minISROf(tp storage.TopicPartition) int {
	found := 0
	for i := range r.Cluster.Brokers {
		b := r.Cluster.Broker(i)
		if b == nil || !r.World.Up(r.Cluster.Brokers[i]) {
			continue
		}
		if p, ok := b.Partition(tp); ok {
			if p.Role() == server.Leader {
				return p.MinISR()
			}
			found = p.MinISR()
		}
	}
	return found
}
