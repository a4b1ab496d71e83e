package server

// This file serves LeaderAndIsr (api key 4), the controller's command that
// makes a replica leader or follower (Kafka's
// ReplicaManager.becomeLeaderOrFollower, makeLeaders, makeFollowers).
//
// Versions: the controller sends v1 (Kafka 1.0's flat partition list); the
// fields the simulation needs are the same in every version.
// Fencing: a request from an older controller epoch is refused with
// STALE_CONTROLLER_EPOCH; a partition state whose leader epoch is not
// higher than the one the replica has is ignored with the same code, as the
// 0.11-2.x brokers did.
// KAFKA-7164: with Config.TruncateOnLeaderChangeOnly a follower that learns
// a new epoch of the same leader keeps fetching without the truncation step
// (the bug); otherwise every epoch change restarts it (the fix).

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// partitionState is the controller's view of a partition, as LeaderAndIsr
// carries it.
type partitionState struct {
	controllerEpoch int32
	leader          int32
	leaderEpoch     int32
	isr             []int32
	replicas        []int32
	zkVersion       int32
}

func (b *Broker) handleLeaderAndISR(from sim.NodeID, req *wire.Request, body *kmsg.LeaderAndISRRequest) {
	resp := kmsg.NewPtrLeaderAndISRResponse()
	// Mutant stale-controller-epoch: no controller-epoch check.
	if body.ControllerEpoch < b.controllerEpoch && !b.cfg.Mutants.On(mutant.StaleControllerEpoch) {
		b.ctx.Log("stale-controller", sim.I("epoch", int64(body.ControllerEpoch)), sim.I("seen", int64(b.controllerEpoch)))
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
		b.respond(from, req, resp)
		return
	}
	b.controllerEpoch = body.ControllerEpoch
	for _, ps := range body.PartitionStates {
		tp := storage.TopicPartition{Topic: ps.Topic, Partition: ps.Partition}
		code := b.applyPartitionState(tp, partitionState{
			controllerEpoch: ps.ControllerEpoch, leader: ps.Leader, leaderEpoch: ps.LeaderEpoch,
			isr: ps.ISR, replicas: ps.Replicas, zkVersion: ps.ZKVersion,
		})
		resp.Partitions = append(resp.Partitions, kmsg.LeaderAndISRResponseTopicPartition{Topic: ps.Topic, Partition: ps.Partition, ErrorCode: code})
	}
	b.respond(from, req, resp)
}

// getOrCreatePartition returns the replica of tp, creating its log if the
// broker has none. A new replica's HW is its checkpointed HW, capped by its
// LEO, as Kafka's Partition.getOrCreateReplica sets it.
func (b *Broker) getOrCreatePartition(tp storage.TopicPartition) *Partition {
	if p, ok := b.partitions[tp]; ok {
		return p
	}
	lc := b.logConfig(tp)
	l, err := b.logs.GetOrCreateLog(tp, lc, b.ctx.Now())
	if err == nil && lc != nil {
		// A log loaded at start took the broker's defaults; it learns its
		// topic's config now (Kafka's LogManager loads each log with its
		// topic's config).
		err = l.UpdateConfig(*lc)
	}
	if err != nil {
		panic(fmt.Sprintf("broker %d: creating the log of %s: %v", b.cfg.BrokerID, tp, err))
	}
	p := &Partition{tp: tp, name: tp.String(), log: l, leader: -1, leaderEpoch: -1, hw: min(b.hwOnDisk[tp], l.LogEndOffset()), mutants: b.cfg.Mutants}
	p.minISR = b.minISRFor(tp.Topic)
	p.unclean = b.uncleanFor(tp.Topic)
	p.strictMinISR = b.cfg.KRaft != nil && b.cfg.KRaft.ELR
	p.mutants = b.cfg.Mutants
	b.setPartition(tp, p)
	return p
}

// applyPartitionState makes this broker leader or follower of tp and
// returns the partition's error code.
func (b *Broker) applyPartitionState(tp storage.TopicPartition, st partitionState) int16 {
	p := b.getOrCreatePartition(tp)
	if st.leaderEpoch <= p.leaderEpoch && p.role != Offline {
		b.logp("stale-leader-epoch", p, sim.I("epoch", int64(st.leaderEpoch)), sim.I("current", int64(p.leaderEpoch)))
		return kerr.StaleControllerEpoch.Code
	}
	switch {
	case st.leader == b.cfg.BrokerID:
		b.makeLeader(p, st)
	case contains(st.replicas, b.cfg.BrokerID):
		b.makeFollower(p, st)
	default:
		return kerr.UnknownTopicOrPartition.Code
	}
	return 0
}

func (b *Broker) makeLeader(p *Partition, st partitionState) {
	b.removeFromFetcher(p.tp)
	p.becomeLeader(b.cfg.BrokerID, st, b.ctx.Now())
	// KIP-101 step 3 (and KIP-279): the new leader records its epoch at its
	// LEO at once, so it can answer for an epoch it has not written in.
	if b.cfg.Truncation != TruncateHW {
		if c := p.log.EpochCache(); c != nil {
			if err := c.Assign(p.leaderEpoch, p.log.LogEndOffset()); err != nil {
				panic(fmt.Sprintf("broker %d: epoch cache of %s: %v", b.cfg.BrokerID, p.tp, err))
			}
		}
	}
	b.logp("become-leader", p, sim.I("epoch", int64(p.leaderEpoch)), sim.S("isr", fmtIDs(p.isr)), sim.I("leo", p.LogEndOffset()), sim.I("hw", p.hw))
	if p.maybeIncrementHW() {
		b.hwIncremented(p)
	}
	b.tryCompleteDelayed()
	b.offsetsLeader(p)
}

func (b *Broker) makeFollower(p *Partition, st partitionState) {
	leaderChanged := p.role != Follower || p.leader != st.leader
	p.becomeFollower(st)
	b.failDelayedProduce(p.tp, kerr.NotLeaderForPartition)
	b.logp("become-follower", p, sim.I("leader", int64(st.leader)), sim.I("epoch", int64(p.leaderEpoch)), sim.I("leo", p.LogEndOffset()), sim.I("hw", p.hw))
	if !leaderChanged && b.cfg.TruncateOnLeaderChangeOnly {
		// KAFKA-7164: same leader, new epoch: no truncation step.
		b.updateFetchEpoch(p.tp, p.leaderEpoch)
		return
	}
	b.removeFromFetcher(p.tp)
	if st.leader < 0 {
		return // no leader: nothing to fetch from until the controller elects one
	}
	b.startTruncation(p)
}

func contains(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func fmtIDs(ids []int32) string {
	s := "["
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(id)
	}
	return s + "]"
}
