package controller

// This file elects partition leaders and writes partition state
// (PartitionStateMachine, PartitionLeaderElectionAlgorithms, and
// ReplicaStateMachine's ISR removal, 0.11 to 2.x):
//   - a new partition: leader = the first live replica of the assignment,
//     ISR = the live replicas, leader epoch 0;
//   - an offline partition (no leader, or a dead one): the first replica of
//     the assignment that is live and in the ISR; failing that, with
//     unclean.leader.election.enable, the first live replica (ISR = just
//     it); failing that, no leader (-1), keeping the last ISR member;
//   - a dead follower leaves the ISR (never emptying it);
//   - preferred election: the first replica of the assignment, if live and
//     in the ISR.
// Every change bumps the leader epoch. Writes are ZooKeeper multis headed by
// a check of /controller_epoch's version: a deposed controller's writes
// fail and it resigns.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

// decision is the new state of one partition.
type decision struct {
	tp      TP
	state   zk.PartitionState
	unclean bool
	why     string
}

// bringOnline elects leaders for partitions that need one (new, leaderless,
// or led by a dead broker), writes the new states, and calls then.
func (c *Controller) bringOnline(tps []TP, then func()) {
	var ds []decision
	for _, tp := range tps {
		p := c.partitions[tp]
		if !p.hasState {
			var isr []int32
			for _, r := range p.replicas {
				if c.isLive(r) {
					isr = append(isr, r)
				}
			}
			if len(isr) == 0 {
				continue // no live replica: stays new until one comes up
			}
			ds = append(ds, decision{tp: tp, why: "new", state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: isr[0], Version: 1, LeaderEpoch: 0, ISR: isr}})
			continue
		}
		if p.state.Leader >= 0 && c.isLive(p.state.Leader) {
			continue
		}
		if d, ok := c.electOffline(tp, p); ok {
			ds = append(ds, d)
		}
	}
	c.writeDecisions(ds, then)
}

// electOffline picks a leader for a partition whose leader is missing.
func (c *Controller) electOffline(tp TP, p *partition) (decision, bool) {
	st := p.state
	outOfISR := c.env.Mutants.On(mutant.CleanElectionOutOfISR)
	for _, r := range p.replicas {
		if c.isLive(r) && (slices.Contains(st.ISR, r) || outOfISR) {
			isr := slices.DeleteFunc(slices.Clone(st.ISR), func(id int32) bool { return !c.isLive(id) })
			if !slices.Contains(isr, r) {
				// Mutant clean-election-out-of-isr: a replica outside the
				// ISR leads as if clean, and joins the ISR it leads.
				isr = append(isr, r)
			}
			return decision{tp: tp, why: "offline", state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: r, Version: 1, LeaderEpoch: c.electedEpoch(st, r), ISR: isr}}, true
		}
	}
	if c.env.Unclean != nil && c.env.Unclean(tp.Topic) {
		for _, r := range p.replicas {
			if c.isLive(r) {
				return decision{tp: tp, why: "unclean", unclean: true, state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: r, Version: 1, LeaderEpoch: c.electedEpoch(st, r), ISR: []int32{r}}}, true
			}
		}
	}
	if st.Leader == zk.NoLeader {
		return decision{}, false // already offline and nothing changed
	}
	isr := st.ISR
	if len(isr) > 1 {
		isr = slices.DeleteFunc(slices.Clone(isr), func(id int32) bool { return !c.isLive(id) })
		if len(isr) == 0 {
			isr = []int32{st.Leader}
		}
	}
	return decision{tp: tp, why: "no-eligible-leader", state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: zk.NoLeader, Version: 1, LeaderEpoch: st.LeaderEpoch + 1, ISR: isr}}, true
}

// electedEpoch is the leader epoch of st's partition once leader leads
// it: one more than st's. Mutant leader-epoch-not-bumped keeps st's epoch
// when the leader changes.
func (c *Controller) electedEpoch(st zk.PartitionState, leader int32) int32 {
	if leader != st.Leader && c.env.Mutants.On(mutant.LeaderEpochNotBumped) {
		return st.LeaderEpoch
	}
	return st.LeaderEpoch + 1
}

// removeFromISR drops followers that are not live from the ISRs of the
// given partitions.
func (c *Controller) removeFromISR(tps []TP) []decision {
	var ds []decision
	for _, tp := range tps {
		p := c.partitions[tp]
		if !p.hasState || p.state.Leader < 0 || !c.isLive(p.state.Leader) {
			continue
		}
		isr := slices.DeleteFunc(slices.Clone(p.state.ISR), func(id int32) bool { return !c.isLive(id) })
		if len(isr) == len(p.state.ISR) || len(isr) == 0 {
			continue
		}
		ds = append(ds, decision{tp: tp, why: "isr-removal", state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: p.state.Leader, Version: 1, LeaderEpoch: p.state.LeaderEpoch + 1, ISR: isr}})
	}
	return ds
}

// writeDecisions writes each decision (creating the state znode of a new
// partition) fenced by the controller epoch, updates the cache, and calls
// then once all writes are done. A write that finds the controller epoch
// moved resigns; one that finds the state changed re-reads it.
func (c *Controller) writeDecisions(ds []decision, then func()) {
	next := barrier(len(ds), then)
	for _, d := range ds {
		d := d
		p := c.partitions[d.tp]
		path := zk.TopicPartitionStatePath(d.tp.Topic, d.tp.Partition)
		data := zk.Encode(d.state)
		check := zk.CheckOp(zk.ControllerEpochPath, c.epochZkVersion)
		apply := func(ops []zk.Op) {
			c.env.ZK.Multi(c.ctx, ops, c.guard(func(r *zk.Response) {
				switch {
				case r.Code == zk.Ok:
					p.state, p.hasState = d.state, true
					p.zkVersion = r.Results[1].Stat.Version
					c.log("partition-state", sim.S("partition", d.tp.Topic+"-"+itoa(d.tp.Partition)), sim.S("why", d.why),
						sim.I("leader", int64(d.state.Leader)), sim.I("leader-epoch", int64(d.state.LeaderEpoch)), sim.S("isr", ids(d.state.ISR)))
					if d.unclean {
						c.log("unclean-election", sim.S("partition", d.tp.Topic+"-"+itoa(d.tp.Partition)), sim.I("leader", int64(d.state.Leader)), sim.I("leader-epoch", int64(d.state.LeaderEpoch)))
					}
					next()
				case len(r.Results) > 0 && r.Results[0].Code != zk.Ok:
					c.Resign(c.ctx, "controller epoch moved")
				default:
					c.log("partition-state-conflict", sim.S("partition", d.tp.Topic+"-"+itoa(d.tp.Partition)), sim.S("code", r.Code.String()))
					c.readState(d.tp, next)
				}
			}))
		}
		if p.hasState {
			apply([]zk.Op{check, zk.SetDataOp(path, data, p.zkVersion)})
			continue
		}
		parent := zk.TopicPartitionPath(d.tp.Topic, d.tp.Partition)
		c.env.ZK.CreateRecursive(c.ctx, parent, nil, c.guard(func(*zk.Response) {
			apply([]zk.Op{check, zk.CreateOp(path, data, zk.Persistent)})
		}))
	}
}
