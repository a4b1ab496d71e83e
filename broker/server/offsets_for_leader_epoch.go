package server

// This file serves OffsetsForLeaderEpoch (api key 23) on the leader
// (KIP-101, KIP-279): the end offset of the requested epoch, that is the
// start offset of the first larger epoch, or the LEO if the requested epoch
// is the leader's latest; v1+ also name the epoch the answer is for (the
// largest one <= the requested). A log without epoch information answers
// UNDEFINED_EPOCH_OFFSET (-1) and the follower falls back to its HW.
// Versions: v0 (KIP-101), v1 (KIP-279), v2 (KIP-320 CurrentLeaderEpoch
// fencing), v3 (ReplicaID; -1 is a consumer validating its position after
// a leader change, KIP-320, answered the same way: the end offset for the
// epoch is not capped at the HW, as in Kafka).

import (
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleOffsetForLeaderEpoch(from sim.NodeID, req *wire.Request, body *kmsg.OffsetForLeaderEpochRequest) {
	resp := kmsg.NewPtrOffsetForLeaderEpochResponse()
	for _, t := range body.Topics {
		rt := kmsg.OffsetForLeaderEpochResponseTopic{Topic: t.Topic}
		for _, rq := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.LeaderEpoch, rp.EndOffset = rq.Partition, -1, -1
			p := b.partitions[storage.TopicPartition{Topic: t.Topic, Partition: rq.Partition}]
			current := int32(-1)
			if body.Version >= 2 {
				current = rq.CurrentLeaderEpoch
			}
			if err := b.checkLeader(p, current); err != nil {
				rp.ErrorCode = err.Code
			} else {
				rp.LeaderEpoch, rp.EndOffset = b.endOffsetForEpoch(p, rq.LeaderEpoch)
				b.logp("epoch-lookup", p, sim.I("requested", int64(rq.LeaderEpoch)), sim.I("epoch", int64(rp.LeaderEpoch)), sim.I("end-offset", rp.EndOffset))
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	b.respond(from, req, resp)
}

// endOffsetForEpoch is the leader's answer for epoch: the largest epoch <=
// it in the leader's epoch cache and that epoch's end offset, for
// OffsetsForLeaderEpoch and for a Fetch's divergence check
// (checkDivergence, 2.7+).
func (b *Broker) endOffsetForEpoch(p *Partition, epoch int32) (int32, int64) {
	if b.cfg.Mutants.On(mutant.OffsetsForEpochWrongEnd) {
		// NOT Kafka (mutant offsets-for-epoch-wrong-end): the end of the
		// leader's latest epoch, whatever epoch was asked for.
		if latest := b.latestEpoch(p); latest >= 0 {
			epoch = latest
		}
	}
	return p.log.EndOffsetForEpoch(epoch)
}
