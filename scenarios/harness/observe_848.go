package harness

// This file feeds the invariants monitor's KIP-848 checks
// (checkers/invariants_kip848.go): after every event of a run with a
// group.protocol=consumer member, each live coordinator's consumer groups
// and each running consumer's view of its membership.

import (
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/client"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/checkers"
)

// watch848 is what the feed remembers between events.
type watch848 struct {
	on       bool // a consumer-protocol member exists
	coords   map[int32]*coordinator.Coordinator
	coordGen map[int32]int64 // a broker's coordinator processes
	nodes    map[string]*consumerNode
	lives    map[string]int
}

// tpStrings renders a coordinator's partitions as the monitor takes them.
func tpStrings(ps []coordinator.TopicPartition) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Topic+"-"+strconv.Itoa(int(p.Partition)))
	}
	slices.Sort(out)
	return out
}

// clientTPStrings renders a client's partitions as the monitor takes them.
func clientTPStrings(ps []client.TopicPartition) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Topic+"-"+strconv.Itoa(int(p.Partition)))
	}
	slices.Sort(out)
	return out
}

// observeGroups feeds the monitor the consumer groups after an event.
func (r *Runner) observeGroups() {
	w := &r.w848
	if !w.on {
		for _, s := range r.consumerSettings {
			if s.cfg.GroupProtocol == config.GroupProtocolConsumer {
				w.on = true
			}
		}
		if !w.on {
			return
		}
		w.coords, w.coordGen, w.nodes, w.lives = map[int32]*coordinator.Coordinator{}, map[int32]int64{}, map[string]*consumerNode{}, map[string]int{}
	}
	var groups []checkers.GroupSnapshot
	for i, id := range r.Cluster.Brokers {
		b := r.Cluster.Broker(i)
		if b == nil || b.Halted() || !r.World.Up(id) || b.Coordinator() == nil {
			continue
		}
		c := b.Coordinator()
		if w.coords[int32(i)] != c {
			w.coords[int32(i)] = c
			w.coordGen[int32(i)]++
		}
		for _, g := range c.ConsumerGroupIDs() {
			v, ok := c.ConsumerGroupView(g)
			if !ok {
				continue
			}
			s := checkers.GroupSnapshot{Coordinator: int32(i), Life: w.coordGen[int32(i)]<<32 | v.Load, Group: g, State: v.State,
				Epoch: v.Epoch, AssignmentEpoch: v.AssignmentEpoch, Partitions: v.Partitions}
			for _, m := range v.Members {
				s.Members = append(s.Members, checkers.GroupMemberSnapshot{ID: m.ID, Epoch: m.Epoch, Stable: m.State == coordinator.MemberStable,
					Subscribed: m.Subscribed, Assigned: tpStrings(m.Assigned), Pending: tpStrings(m.Pending), Target: tpStrings(m.Target),
					Held: tpStrings(v.Held[m.ID])})
			}
			groups = append(groups, s)
		}
	}
	var clients []checkers.ClientSnapshot
	for _, name := range r.consumers {
		id, _ := r.World.Lookup(name)
		n, ok := r.World.Node(id).(*consumerNode)
		if !ok || !r.World.Up(id) || n.c == nil || n.c.Closed() {
			continue
		}
		if w.nodes[name] != n {
			w.nodes[name] = n
			w.lives[name]++
		}
		epoch, member := n.c.Generation()
		clients = append(clients, checkers.ClientSnapshot{Process: name, Life: w.lives[name], Group: n.s.cfg.GroupID, Member: member,
			Epoch: epoch, Owned: clientTPStrings(n.c.Assignment()), Classic: n.s.cfg.GroupProtocol != config.GroupProtocolConsumer})
	}
	r.Observer.monitor.ObserveGroups(r.World.Events(), r.World.Now(), groups, clients)
}
