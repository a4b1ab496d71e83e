package controller

// This file handles the controller's events: brokers coming and going
// (onBrokerStartup / onBrokerFailure), new topics, ISR changes written by
// leaders, preferred-replica election requests and the periodic automatic
// leader rebalance.

import (
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

func (c *Controller) onBrokerChange(done func()) {
	c.readBrokers(func(live []int32, epochs map[int32]int64) {
		old, oldEpochs := c.live, c.epochs
		c.epochs = epochs
		var added, dead, bounced []int32
		for _, id := range live {
			switch e, ok := oldEpochs[id]; {
			case !slices.Contains(old, id):
				added = append(added, id)
			case ok && e != epochs[id]:
				// KIP-380 (2.2+): registered again since the controller
				// last looked — it died and came back between two reads of
				// /brokers/ids. Without broker epochs (KAFKA-1120) the
				// controller missed it and never told it its partitions.
				bounced = append(bounced, id)
			}
		}
		for _, id := range old {
			if !slices.Contains(live, id) {
				dead = append(dead, id)
			}
		}
		if c.env.Mutants.On(mutant.NoFenceOnSessionExpiry) && (len(dead) > 0 || len(bounced) > 0) {
			// Mutant no-fence-on-session-expiry: an expired session goes
			// unnoticed — its registration's deletion, and the new
			// registration of a broker that came back (KIP-380's broker
			// epoch): the broker stays live, leader and in the ISRs.
			c.log("broker-change-ignored", sim.S("dead", ids(dead)), sim.S("bounced", ids(bounced)))
			live = slices.Concat(live, dead)
			slices.Sort(live)
			dead, bounced = nil, nil
		}
		if len(added) == 0 && len(dead) == 0 && len(bounced) == 0 {
			c.live = live
			done()
			return
		}
		c.log("broker-change", sim.S("live", ids(live)), sim.S("added", ids(added)), sim.S("dead", ids(dead)), sim.S("bounced", ids(bounced)))
		for _, id := range slices.Concat(dead, added, bounced) {
			delete(c.channels, id) // a dead broker's queue goes; a restarted one starts fresh
		}
		// onBrokerFailure: elect where the leader died, then drop the dead
		// followers from the ISRs; onBrokerStartup: partitions that had no
		// live replica may come online. A bounced broker fails first, then
		// starts up.
		all := c.sortedTPs()
		fail := func(then func()) {
			c.bringOnline(all, func() { c.writeDecisions(c.removeFromISR(all), then) })
		}
		startup := func() {
			c.live = live
			fail(func() {
				// Every live broker learns the new epochs of its partitions;
				// the new ones learn everything.
				c.announce(all)
				done()
			})
		}
		if len(bounced) == 0 {
			startup()
			return
		}
		c.live = slices.DeleteFunc(slices.Clone(live), func(id int32) bool { return slices.Contains(bounced, id) })
		fail(startup)
	})
}

func (c *Controller) onTopicChange(done func()) {
	c.readTopics(func(fresh []string) {
		var tps []TP
		for _, tp := range c.sortedTPs() {
			if slices.Contains(fresh, tp.Topic) {
				tps = append(tps, tp)
			}
		}
		if len(tps) == 0 {
			done()
			return
		}
		c.log("new-topics", sim.S("topics", joinStrings(fresh)))
		c.bringOnline(tps, func() {
			c.announce(tps)
			done()
		})
	})
}

// onIsrChange reads the ISR-change notifications leaders wrote, refreshes
// those partitions' states, deletes the notifications and sends
// UpdateMetadata.
func (c *Controller) onIsrChange(done func()) {
	c.env.ZK.GetChildren(c.ctx, zk.IsrChangeNotificationPath, true, c.guard(func(r *zk.Response) {
		children := r.Children
		var changed []TP
		next := barrier(len(children), func() {
			slices.SortFunc(changed, func(a, b TP) int {
				if lessTP(a, b) {
					return -1
				}
				if lessTP(b, a) {
					return 1
				}
				return 0
			})
			changed = slices.Compact(changed)
			refreshed := barrier(len(changed), func() {
				if len(changed) > 0 {
					c.sendUpdateMetadata(c.live)
				}
				c.completeReassignments(done)
			})
			for _, tp := range changed {
				if _, ok := c.partitions[tp]; ok {
					c.readState(tp, refreshed)
				} else {
					refreshed()
				}
			}
		})
		for _, ch := range children {
			path := zk.IsrChangeNotificationPath + "/" + ch
			c.env.ZK.GetData(c.ctx, path, false, c.guard(func(r *zk.Response) {
				var l zk.PartitionList
				if r.Code == zk.Ok && zk.Decode(r.Data, &l) == nil {
					for _, p := range l.Partitions {
						changed = append(changed, TP{p.Topic, p.Partition})
					}
				}
				c.env.ZK.Delete(c.ctx, path, zk.AnyVersion, c.guard(func(*zk.Response) {}))
				next()
			}))
		}
	}))
}

// onPreferredElection serves /admin/preferred_replica_election.
func (c *Controller) onPreferredElection(done func()) {
	c.env.ZK.GetData(c.ctx, zk.PreferredReplicaElectionPath, true, c.guard(func(r *zk.Response) {
		if r.Code != zk.Ok {
			c.env.ZK.Exists(c.ctx, zk.PreferredReplicaElectionPath, true, c.guard(func(*zk.Response) {}))
			done()
			return
		}
		var l zk.PartitionList
		var tps []TP
		if zk.Decode(r.Data, &l) == nil {
			for _, p := range l.Partitions {
				tps = append(tps, TP{p.Topic, p.Partition})
			}
		}
		c.electPreferred(tps, func() {
			c.env.ZK.Delete(c.ctx, zk.PreferredReplicaElectionPath, zk.AnyVersion, c.guard(func(*zk.Response) {
				c.env.ZK.Exists(c.ctx, zk.PreferredReplicaElectionPath, true, c.guard(func(*zk.Response) {}))
				done()
			}))
		})
	}))
}

// electPreferred moves leadership of tps to their preferred replica where
// it is live, in the ISR and not leading already.
func (c *Controller) electPreferred(tps []TP, then func()) {
	var ds []decision
	for _, tp := range tps {
		p, ok := c.partitions[tp]
		if !ok || !p.hasState || len(p.replicas) == 0 {
			continue
		}
		pref := p.replicas[0]
		if p.state.Leader == pref || !c.isLive(pref) || !slices.Contains(p.state.ISR, pref) {
			continue
		}
		ds = append(ds, decision{tp: tp, why: "preferred", state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: pref, Version: 1, LeaderEpoch: c.electedEpoch(p.state, pref), ISR: p.state.ISR}})
	}
	c.writeDecisions(ds, func() {
		if len(ds) > 0 {
			c.announce(decided(ds))
		}
		then()
	})
}

func (c *Controller) armRebalance() {
	if c.env.AutoRebalance && c.env.RebalanceInterval > 0 && c.rebalanceTimer == 0 {
		c.rebalanceTimer = c.ctx.SetTimer(c.env.RebalanceInterval, TimerName)
	}
}

// onAutoRebalance elects preferred leaders on brokers whose share of
// partitions not led by their preferred replica passes
// leader.imbalance.per.broker.percentage.
func (c *Controller) onAutoRebalance(done func()) {
	c.armRebalance()
	var tps []TP
	for _, b := range c.live {
		var preferredHere, notLed []TP
		for _, tp := range c.sortedTPs() {
			p := c.partitions[tp]
			if len(p.replicas) > 0 && p.replicas[0] == b && p.hasState {
				preferredHere = append(preferredHere, tp)
				if p.state.Leader != b {
					notLed = append(notLed, tp)
				}
			}
		}
		if len(preferredHere) > 0 && len(notLed)*100/len(preferredHere) > c.env.ImbalancePercent {
			tps = append(tps, notLed...)
		}
	}
	c.electPreferred(tps, done)
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func ids(xs []int32) string {
	s := "["
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += itoa(x)
	}
	return s + "]"
}

func joinStrings(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += x
	}
	return s
}
