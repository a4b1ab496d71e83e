package client

// This file is the consumer's KIP-320 truncation detection (Kafka 2.1+:
// SubscriptionState's AWAIT_VALIDATION state, OffsetsForLeaderEpochClient
// and maybeCompleteValidation). When metadata shows a partition's leader or
// leader epoch changed, a position whose last consumed record has a leader
// epoch is validated before the next fetch: OffsetsForLeaderEpoch v3
// (ReplicaID -1, CurrentLeaderEpoch from metadata) asks the leader for the
// end offset of that epoch. Buffered records of the partition are dropped
// and refetched from the position, as Kafka drops completed fetches of a
// partition that is no longer fetchable. The answer:
//   - end offset >= position: the position is valid; fetching resumes;
//   - end offset < position: the log was truncated under the consumer.
//     With auto.offset.reset earliest or latest the position moves to the
//     end offset, the first offset known to diverge (Kafka 2.4+
//     seekValidated); with none, Poll returns a *LogTruncationError
//     (ErrLogTruncation) and the partition waits for a seek;
//   - no end offset for the epoch (UNDEFINED): reset by auto.offset.reset,
//     or with none the same error without a divergent offset;
//   - FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
//     no answer: refresh metadata and retry after retry.backoff.ms;
//     UNKNOWN_LEADER_EPOCH: retry (the broker has not heard of the epoch).
// A leader change also drops the KIP-392 preferred read replica. All of it
// runs only with kafkasim.truncation.detection (a 2.1+ client against
// brokers with KIP-320).

import (
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// leadersChanged compares each assigned partition's leader and epoch with
// the ones its position was last checked against (after a metadata
// update), as Kafka's maybeValidatePositionForCurrentLeader.
func (c *Consumer) leadersChanged(ctx *sim.Context) {
	for _, p := range c.parts {
		t := c.meta.topic(p.tp.Topic)
		if t == nil || int(p.tp.Partition) >= len(t.partitions) {
			continue
		}
		cur := t.partitions[p.tp.Partition]
		if cur.leader < 0 || cur == p.leaderSeen {
			continue
		}
		seen := p.leaderSeen
		p.leaderSeen = cur
		if seen.leader < 0 {
			continue // not fetched yet: nothing to compare with
		}
		if p.readReplica >= 0 {
			c.clearReadReplica(ctx, p, "leader-change")
		}
		// NB: mutant.NoRewindOnTruncation skips the validation as a
		// pre-2.1 client does, on a release that has it.
		if !c.cfg.TruncationDetection || c.cfg.Mutants.On(mutant.NoRewindOnTruncation) || p.posEpoch < 0 || p.position < 0 || cur.epoch < 0 || p.needCommitted || p.needReset {
			continue
		}
		p.validate, p.buffer, p.fetchPos, p.lookup = true, nil, p.position, false
		p.retryAt = 0
		p.epoch++ // fetches in flight are answered for the old position
		ctx.Log("consumer-validate", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()),
			sim.I("position", p.position), sim.I("epoch", int64(p.posEpoch)), sim.I("leader", int64(cur.leader)), sim.I("leader-epoch", int64(cur.epoch)))
	}
}

// validatePositions sends OffsetsForLeaderEpoch for the positions awaiting
// validation.
func (c *Consumer) validatePositions(ctx *sim.Context) {
	now := ctx.Now()
	for _, p := range c.parts {
		if !p.validate || p.lookup || now < p.retryAt {
			continue
		}
		t := c.meta.topic(p.tp.Topic)
		if t == nil || int(p.tp.Partition) >= len(t.partitions) || t.partitions[p.tp.Partition].leader < 0 {
			c.meta.want(p.tp.Topic)
			c.meta.needUpdate = true
			continue
		}
		cur := t.partitions[p.tp.Partition]
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.Version, req.ReplicaID = 3, -1
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = p.tp.Partition, cur.epoch, p.posEpoch
		req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: p.tp.Topic, Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{rp}}}
		p.lookup = true
		epoch, position := p.epoch, p.position
		c.call(ctx, cur.leader, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
			if p.epoch != epoch || c.part(p.tp) != p {
				return
			}
			p.lookup = false
			r, _ := resp.(*kmsg.OffsetForLeaderEpochResponse)
			if err != nil || r == nil || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
				p.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
				c.meta.needUpdate = true
				return
			}
			ans := r.Topics[0].Partitions[0]
			if e := kerr.ErrorForCode(ans.ErrorCode); e != nil {
				p.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
				if e != kerr.UnknownLeaderEpoch {
					c.meta.needUpdate = true
				}
				return
			}
			c.completeValidation(ctx, p, position, ans.LeaderEpoch, ans.EndOffset)
		})
	}
}

// completeValidation is maybeCompleteValidation: compare the leader's end
// offset for the last consumed epoch with the position.
func (c *Consumer) completeValidation(ctx *sim.Context, p *partState, position int64, epoch int32, end int64) {
	p.validate = false
	undefined := end < 0 || epoch < 0
	if !undefined && end >= position {
		ctx.Log("consumer-validated", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()), sim.I("position", position), sim.I("end-offset", end))
		return
	}
	reset := c.cfg.AutoOffsetReset != config.ResetNone
	ctx.Log("consumer-truncation-detected", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()),
		sim.I("position", position), sim.I("epoch", int64(p.posEpoch)), sim.I("end-offset", end), sim.I("end-epoch", int64(epoch)),
		sim.S("reset", boolString(reset)))
	if c.OnTruncation != nil {
		c.OnTruncation(ctx, p.tp, position, end)
	}
	switch {
	case !reset:
		if c.fatal == nil {
			c.fatal = &LogTruncationError{TopicPartition: p.tp, Position: position, DivergentOffset: end}
		}
		p.fetchPos = -1 // not fetched again until the application seeks
	case undefined:
		p.position, p.fetchPos, p.posEpoch, p.needReset = -1, -1, -1, true
	default:
		p.position, p.fetchPos, p.posEpoch = end, end, epoch
	}
}
