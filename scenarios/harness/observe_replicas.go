package harness

// This file is the observer's index of the replicas it watches: which
// replicas each broker holds, and each replica's *server.Partition.

import (
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
)

// replicaRef is a broker's replica as last looked up.
type replicaRef struct {
	b *server.Broker
	p *server.Partition
}

// replicaOf returns broker b's replica of tps[k] (its i-th replica), nil
// if it has none. NB: the lookup hashes the topic name, and the observer
// makes it for every replica of every broker an event touched; so the
// answer is kept while it must be the same: same broker instance (a
// restart makes a new one), and a replica not Offline (a broker sets its
// replica Offline before it drops it, and never touches it after).
func (o *Observer) replicaOf(k, i int, b *server.Broker) *server.Partition {
	if o.refs == nil {
		o.refs = make([][]replicaRef, len(o.Partitions))
		for k := range o.Partitions {
			o.refs[k] = make([]replicaRef, len(o.reps[k]))
		}
	}
	ref := &o.refs[k][i]
	if ref.b == b && ref.p != nil && ref.p.Role() != server.Offline {
		return ref.p
	}
	p, _ := b.Partition(o.Partitions[k])
	ref.b, ref.p = b, p
	return p
}

// replicaAt names the i-th replica of tps[k].
type replicaAt struct{ k, i int }

// indexReplicas lists each broker's replicas (onBroker, by broker id
// below len(o.stale)) and the replicas of the brokers past it
// (unknownBroker), when o.stale has grown since the last time.
func (o *Observer) indexReplicas() {
	if o.onBroker != nil && len(o.onBroker) == len(o.stale) {
		return
	}
	o.onBroker, o.unknownBroker = make([][]replicaAt, len(o.stale)), nil
	for k := range o.Partitions {
		for i, id := range o.reps[k] {
			if int(id) >= 0 && int(id) < len(o.stale) {
				o.onBroker[id] = append(o.onBroker[id], replicaAt{k, i})
			} else {
				o.unknownBroker = append(o.unknownBroker, replicaAt{k, i})
			}
		}
	}
}

// addPartitions starts observing tps, replicas[i] being tps[i]'s (a topic
// a client created: client_topics.go). Every per-partition slice grows
// with them, so the next observation compares them as it compared every
// partition at the first.
func (o *Observer) addPartitions(tps []storage.TopicPartition, replicas [][]int32) {
	for i, tp := range tps {
		o.Partitions = append(o.Partitions, tp)
		o.Replicas[tp] = replicas[i]
		o.reps = append(o.reps, replicas[i])
		if o.prev != nil {
			seen := make([]replicaSeen, len(replicas[i]))
			seen[0].role = 254 // never a role: the first observation differs
			o.prev = append(o.prev, seen)
		}
		if o.refs != nil {
			o.refs = append(o.refs, make([]replicaRef, len(replicas[i])))
		}
		if o.snapBuf != nil {
			o.snapBuf = append(o.snapBuf, nil)
			o.committedBuf = append(o.committedBuf, nil)
		}
		if o.topEpoch != nil {
			o.topEpoch = append(o.topEpoch, 0)
		}
		if o.passed != nil {
			o.passed = append(o.passed, nil)
		}
		if o.zkViews != nil {
			o.zkViews = append(o.zkViews, zkView{})
		}
		if o.kraftViews != nil {
			o.kraftViews = append(o.kraftViews, checkers.ControllerView{})
		}
	}
	// The brokers' index of replicas is rebuilt at the next observation,
	// and every broker's replicas compared there (the new partitions'
	// brokers may have run no handler since).
	o.onBroker = nil
	for i := range o.touched {
		o.touched[i] = ^uint64(0)
	}
}

// recreate observes topic, deleted and created again, as the new topic:
// its partitions on replicas (replicas[p] is partition p's), with nothing
// kept of what was seen of the deleted one (the last observations, the
// replicas looked up, the leaders' epochs and committed records, the
// controller's views, the monitor's watch). A partition the new topic
// lacks (created again with fewer) is gone: the end phase owes it
// nothing; one it adds is observed as a new topic's is.
func (o *Observer) recreate(topic string, replicas [][]int32) {
	have := 0
	for k, tp := range o.Partitions {
		if tp.Topic != topic {
			continue
		}
		have++
		o.monitor.Forget(tp.Topic, tp.Partition)
		if int(tp.Partition) >= len(replicas) {
			if o.gone == nil {
				o.gone = map[storage.TopicPartition]bool{}
			}
			o.gone[tp] = true
			continue
		}
		delete(o.gone, tp)
		reps := replicas[tp.Partition]
		o.Replicas[tp], o.reps[k] = reps, reps
		if o.prev != nil {
			o.prev[k] = make([]replicaSeen, len(reps))
			o.prev[k][0].role = 254 // never a role: the next observation differs
		}
		if o.refs != nil {
			o.refs[k] = make([]replicaRef, len(reps))
		}
		if o.snapBuf != nil {
			o.snapBuf[k], o.committedBuf[k] = nil, nil
		}
		if o.topEpoch != nil {
			o.topEpoch[k] = 0
		}
		if o.passed != nil {
			o.passed[k] = nil
		}
		if o.zkViews != nil {
			o.zkViews[k] = zkView{}
		}
		if o.kraftViews != nil {
			o.kraftViews[k] = checkers.ControllerView{}
		}
		if k < len(o.leaders) {
			o.leaders[k] = leaderSeen{}
		}
		for rk := range o.readTo {
			if rk.tp == k {
				delete(o.readTo, rk)
			}
		}
		delete(o.logs, tp)
	}
	var tps []storage.TopicPartition
	var more [][]int32
	for p := have; p < len(replicas); p++ {
		tps = append(tps, storage.TopicPartition{Topic: topic, Partition: int32(p)})
		more = append(more, replicas[p])
	}
	// addPartitions also has every broker's replicas compared at the next
	// observation, on the new index.
	o.addPartitions(tps, more)
}

// forgetMonitored drops the invariants monitor's watch of topic's
// partitions (a topic deleted: what it kept is owed nothing).
func (o *Observer) forgetMonitored(topic string) {
	for _, tp := range o.Partitions {
		if tp.Topic == topic {
			o.monitor.Forget(tp.Topic, tp.Partition)
		}
	}
}
