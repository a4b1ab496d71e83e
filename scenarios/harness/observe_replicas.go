package harness

// This file is the observer's index of the replicas it watches: which
// replicas each broker holds, and each replica's *server.Partition.

import "github.com/kafkasim/kafkasim/broker/server"

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
