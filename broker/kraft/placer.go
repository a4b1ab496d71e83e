package kraft

// This file places a new topic's replicas as Kafka's StripedReplicaPlacer
// (metadata/.../placement/StripedReplicaPlacer.java, KIP-631) does: brokers
// grouped by rack (racks sorted by name, no-rack first), each rack's
// unfenced and fenced brokers sorted, with random starting offsets; the
// first replica of each partition is an unfenced broker from the next
// rack, the others stripe across the following racks (unfenced before
// fenced); after as many partitions as there are unfenced brokers the
// lists are reshuffled. Random draws come from the node's stream
// (ctx.Rand), so placement is a function of the seed.
//
// Simplified: java.util.Random's exact sequence is not reproduced, so the
// same seed does not give Kafka's placement, only its shape. Brokers in
// controlled shutdown are left out (ClusterDescriber.usableBrokers).

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

type usableBroker struct {
	id     int32
	rack   string
	fenced bool
}

// usableBrokers are the registered brokers new replicas may be placed on
// (those not in controlled shutdown), as placeReplicas takes them.
func (c *Controller) usableBrokers() []usableBroker {
	var usable []usableBroker
	for _, b := range c.working.img.Brokers() {
		if !b.InControlledShutdown {
			usable = append(usable, usableBroker{id: b.ID, rack: b.Rack, fenced: b.Fenced})
		}
	}
	return usable
}

type brokerList struct {
	brokers              []int32
	index, offset, epoch int
}

func (l *brokerList) initialize(r *rand.Rand) {
	if len(l.brokers) > 0 {
		sort.Slice(l.brokers, func(a, b int) bool { return l.brokers[a] < l.brokers[b] })
		l.offset = r.IntN(len(l.brokers))
	}
}

func (l *brokerList) shuffle(r *rand.Rand) {
	r.Shuffle(len(l.brokers), func(a, b int) { l.brokers[a], l.brokers[b] = l.brokers[b], l.brokers[a] })
}

func (l *brokerList) next(epoch int) int32 {
	if len(l.brokers) == 0 {
		return -1
	}
	if l.epoch != epoch {
		l.epoch, l.index, l.offset = epoch, 0, (l.offset+1)%len(l.brokers)
	}
	if l.index >= len(l.brokers) {
		return -1
	}
	b := l.brokers[(l.index+l.offset)%len(l.brokers)]
	l.index++
	return b
}

type rackEntry struct{ fenced, unfenced brokerList }

func (r *rackEntry) next(epoch int) int32 {
	if b := r.unfenced.next(epoch); b >= 0 {
		return b
	}
	return r.fenced.next(epoch)
}

type rackList struct {
	r               *rand.Rand
	racks           map[string]*rackEntry
	names           []string
	total, unfenced int
	epoch, offset   int
}

func newRackList(r *rand.Rand, brokers []usableBroker) *rackList {
	l := &rackList{r: r, racks: map[string]*rackEntry{}}
	for _, b := range brokers {
		e := l.racks[b.rack]
		if e == nil {
			e = &rackEntry{}
			l.racks[b.rack] = e
			l.names = append(l.names, b.rack)
		}
		if b.fenced {
			e.fenced.brokers = append(e.fenced.brokers, b.id)
		} else {
			e.unfenced.brokers = append(e.unfenced.brokers, b.id)
			l.unfenced++
		}
		l.total++
	}
	sort.Strings(l.names)
	for _, n := range l.names {
		l.racks[n].fenced.initialize(r)
		l.racks[n].unfenced.initialize(r)
	}
	if len(l.names) > 0 {
		l.offset = r.IntN(len(l.names))
	}
	return l
}

func (l *rackList) place(rf int) []int32 {
	if l.epoch == l.unfenced && l.unfenced > 1 {
		l.r.Shuffle(len(l.names), func(a, b int) { l.names[a], l.names[b] = l.names[b], l.names[a] })
		for _, n := range sortedNames(l.racks) {
			l.racks[n].fenced.shuffle(l.r)
			l.racks[n].unfenced.shuffle(l.r)
		}
		l.epoch = 0
	}
	if l.offset == len(l.names) {
		l.offset = 0
	}
	var out []int32
	first := l.offset
	for {
		if b := l.racks[l.names[first]].unfenced.next(l.epoch); b >= 0 {
			out = append(out, b)
			break
		}
		first = (first + 1) % len(l.names)
	}
	idx := l.offset
	for len(out) < rf {
		b := int32(-1)
		for b < 0 {
			if idx == first {
				first = -1
			} else {
				b = l.racks[l.names[idx]].next(l.epoch)
			}
			idx = (idx + 1) % len(l.names)
		}
		out = append(out, b)
	}
	l.epoch++
	l.offset++
	return out
}

// placeReplicas returns partitions replica lists of rf replicas.
func placeReplicas(r *rand.Rand, brokers []usableBroker, partitions, rf int) ([][]int32, error) {
	l := newRackList(r, brokers)
	switch {
	case rf <= 0:
		return nil, fmt.Errorf("invalid replication factor %d: the replication factor must be positive", rf)
	case l.unfenced == 0:
		return nil, fmt.Errorf("all brokers are currently fenced")
	case rf > l.total:
		return nil, fmt.Errorf("the target replication factor of %d cannot be reached because only %d broker(s) are registered", rf, l.total)
	}
	out := make([][]int32, partitions)
	for p := range out {
		out[p] = l.place(rf)
	}
	return out, nil
}

func sortedNames[V any](m map[string]V) []string {
	ns := make([]string, 0, len(m))
	for n := range m {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}
