package controller

// This file is KafkaController's ReplicaLeaderElection event for an
// ElectLeaders request (KIP-183 preferred, KIP-460 unclean; 2.4+): an
// unknown partition is UNKNOWN_TOPIC_OR_PARTITION; a preferred election
// of a partition led by its first replica, or an unclean election of one
// whose leader is live, ELECTION_NOT_NEEDED; a preferred election makes
// the first replica leader when it is live and in the ISR (else
// PREFERRED_LEADER_NOT_AVAILABLE); an unclean election takes the first
// live replica in the ISR, else the first live replica whatever
// unclean.leader.election.enable says (its ISR becomes just it: the
// OfflinePartitionLeaderElectionStrategy with allowUnclean), else
// ELIGIBLE_LEADERS_NOT_AVAILABLE. The new states are written and
// announced before done runs.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ElectLeaders elects leaders for tps (preferred, or unclean) and calls
// done with each partition's error (nil: elected), in tps' order. An
// inactive controller answers NOT_CONTROLLER for all. NB: done does not
// run if the controller resigns before the election is written.
func (c *Controller) ElectLeaders(ctx *sim.Context, tps []TP, unclean bool, done func([]*kerr.Error)) {
	c.ctx = ctx
	errs := make([]*kerr.Error, len(tps))
	if !c.active {
		for i := range errs {
			errs[i] = kerr.NotController
		}
		done(errs)
		return
	}
	c.enqueue("replica-leader-election", func(next func()) {
		var ds []decision
		for i, tp := range tps {
			p, ok := c.partitions[tp]
			switch {
			case !ok || !p.hasState || len(p.replicas) == 0:
				errs[i] = kerr.UnknownTopicOrPartition
				continue
			case !unclean && p.state.Leader == p.replicas[0]:
				errs[i] = kerr.ElectionNotNeeded
				continue
			case unclean && p.state.Leader >= 0 && c.isLive(p.state.Leader):
				errs[i] = kerr.ElectionNotNeeded
				continue
			}
			st := p.state
			if !unclean {
				pref := p.replicas[0]
				if !c.isLive(pref) || !slices.Contains(st.ISR, pref) {
					errs[i] = kerr.PreferredLeaderNotAvailable
					continue
				}
				ds = append(ds, decision{tp: tp, why: "preferred", state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: pref, Version: 1, LeaderEpoch: c.electedEpoch(st, pref), ISR: st.ISR}})
				continue
			}
			d, ok := c.electAnyLive(tp, p)
			if !ok {
				errs[i] = kerr.EligibleLeadersNotAvailable
				continue
			}
			ds = append(ds, d)
		}
		c.log("elect-leaders", sim.S("type", map[bool]string{false: "preferred", true: "unclean"}[unclean]), sim.I("partitions", int64(len(tps))), sim.I("elected", int64(len(ds))))
		c.writeDecisions(ds, func() {
			if len(ds) > 0 {
				c.announce(decided(ds))
			}
			next()
			done(errs)
		})
	})
}

// electAnyLive elects a leaderless partition's leader from the live ISR,
// else from any live replica (unclean).
func (c *Controller) electAnyLive(tp TP, p *partition) (decision, bool) {
	st := p.state
	for _, r := range p.replicas {
		if c.isLive(r) && slices.Contains(st.ISR, r) {
			isr := slices.DeleteFunc(slices.Clone(st.ISR), func(id int32) bool { return !c.isLive(id) })
			return decision{tp: tp, why: "offline", state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: r, Version: 1, LeaderEpoch: c.electedEpoch(st, r), ISR: isr}}, true
		}
	}
	for _, r := range p.replicas {
		if c.isLive(r) {
			return decision{tp: tp, why: "unclean", unclean: true, state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: r, Version: 1, LeaderEpoch: c.electedEpoch(st, r), ISR: []int32{r}}}, true
		}
	}
	return decision{}, false
}

// TopicPartitions returns every partition the controller knows, sorted.
func (c *Controller) TopicPartitions() []TP { return c.sortedTPs() }
