package server

// This file changes the ISR from the leader's side (Kafka's
// Partition.maybeShrinkIsr / maybeExpandIsr): a follower that has not
// caught up within replica.lag.time.max.ms leaves the ISR; one that reached
// the HW (and, with KIP-320, the start of the leader's epoch) joins it. The
// leader writes the new ISR to the partition's state znode with its
// zkVersion (a conditional write that fails if the controller changed the
// state meanwhile) and keeps its leader epoch: in ZooKeeper mode a
// leader-initiated ISR change does not bump the epoch. While the write is
// out, the HW counts the joining follower already (partition.go), so it
// never joins below the HW.

import (
	"slices"

	"github.com/kafkasim/kafkasim/sim"
)

// maybeShrinkISRs runs every replica.lag.time.max.ms / 2.
func (b *Broker) maybeShrinkISRs() {
	for _, p := range b.Partitions() {
		if p.role != Leader || p.isrUpdateInFlight {
			continue
		}
		out := p.outOfSync(b.ctx.Now(), b.cfg.ReplicaLagTimeMax)
		if len(out) == 0 {
			continue
		}
		newISR := slices.DeleteFunc(slices.Clone(p.isr), func(id int32) bool { return slices.Contains(out, id) })
		b.logp("isr-shrink", p, sim.S("isr", fmtIDs(p.isr)), sim.S("new-isr", fmtIDs(newISR)), sim.S("out-of-sync", fmtIDs(out)))
		b.updateISR(p, newISR)
	}
}

// maybeExpandISR adds r to the ISR if it has caught up.
func (b *Broker) maybeExpandISR(p *Partition, r *remoteReplica) {
	if p.isrUpdateInFlight || !p.canJoinISR(r, b.cfg.KIP320) {
		return
	}
	newISR := append(slices.Clone(p.isr), r.id)
	slices.Sort(newISR)
	b.logp("isr-expand", p, sim.S("isr", fmtIDs(p.isr)), sim.S("new-isr", fmtIDs(newISR)), sim.I("follower-leo", r.leo))
	b.updateISR(p, newISR)
}

// updateISR writes newISR for p: to ZooKeeper with a version check, to
// the KRaft controller (alter_partition.go), or at once when the broker
// runs without either.
func (b *Broker) updateISR(p *Partition, newISR []int32) {
	if b.kraftMode() {
		b.alterPartition(p, newISR)
		return
	}
	if b.cfg.ZooKeeper == "" {
		b.isrUpdated(p, newISR, p.zkVersion+1)
		return
	}
	p.isrUpdateInFlight, p.pendingISR = true, newISR
	epoch := p.leaderEpoch
	b.writePartitionState(p, newISR, func(version int32, ok bool) {
		p.isrUpdateInFlight, p.pendingISR = false, nil
		if p.role != Leader || p.leaderEpoch != epoch {
			return // leadership moved on while the write was out
		}
		if !ok {
			b.logp("isr-update-rejected", p, sim.I("zk-version", int64(p.zkVersion)))
			if p.maybeIncrementHW() { // no longer held back by the joining follower
				b.hwIncremented(p)
			}
			return
		}
		b.isrUpdated(p, newISR, version)
		b.notifyISRChange(p)
	})
}

func (b *Broker) isrUpdated(p *Partition, isr []int32, version int32) {
	p.isr = isr
	p.zkVersion = version
	b.logp("isr", p, sim.S("isr", fmtIDs(isr)), sim.I("zk-version", int64(version)))
	if p.maybeIncrementHW() {
		b.hwIncremented(p)
	}
}
