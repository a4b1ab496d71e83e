package kraft

// This file serves AlterPartitionRequest (api key 56; KIP-497, v3 with
// NewIsrWithEpochs per KIP-903) as Kafka 4.0's
// ReplicationControlManager.alterPartition / validateAlterPartitionData,
// in its order: stale broker epoch (STALE_BROKER_EPOCH, whole request);
// unknown topic (UNKNOWN_TOPIC_ID from v2, else UNKNOWN_TOPIC_OR_PARTITION)
// or partition; a leader or partition epoch above the controller's
// (NOT_CONTROLLER: the requester knows a newer controller); a lower leader
// epoch (FENCED_LEADER_EPOCH); a requester that is not the leader
// (INVALID_REQUEST, as Kafka); a lower partition epoch
// (INVALID_UPDATE_VERSION); an ISR with replicas outside the assignment,
// duplicates, or without the leader (INVALID_REQUEST); RECOVERING with
// more than one ISR member, or RECOVERED -> RECOVERING (INVALID_REQUEST);
// ISR members not registered, shutting down, fenced, or with another
// broker epoch (INELIGIBLE_REPLICA from v2, else OPERATION_NOT_ATTEMPTED).
// A valid request writes a PartitionChangeRecord (if anything changes) and
// is answered with the new state once it commits.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (c *Controller) alterPartition(ctx *sim.Context, req *kmsg.AlterPartitionRequest, reply func(kmsg.Response)) {
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	fail := func(e *kerr.Error) {
		resp.ErrorCode = e.Code
		resp.Topics = nil
		reply(resp)
	}
	if b, ok := c.working.img.Broker(req.BrokerID); !ok || b.Epoch != req.BrokerEpoch {
		fail(kerr.StaleBrokerEpoch)
		return
	}
	var recs []metadata.Record
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionResponseTopic()
		rt.Topic, rt.TopidID = t.Topic, t.TopicID
		name, known := t.Topic, false
		if req.Version > 1 {
			name, known = c.working.img.TopicName(t.TopicID)
		} else {
			_, known = c.working.img.TopicID(t.Topic)
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionResponseTopicPartition()
			rp.Partition = p.Partition
			if !known {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				if req.Version > 1 {
					rp.ErrorCode = kerr.UnknownTopicID.Code
				}
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			newISR := p.NewEpochISR
			if req.Version < 3 {
				newISR = nil
				for _, r := range p.NewISR {
					newISR = append(newISR, kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{BrokerID: r, BrokerEpoch: -1})
				}
			}
			cur, ok := c.working.img.Partition(name, p.Partition)
			result := "ok"
			if e := c.validateAlterPartition(req, cur, ok, p, newISR); e != nil {
				rp.ErrorCode = e.Code
				result = e.Message
			} else {
				ch := c.newChange(cur, nil)
				ch.targetISR = ch.targetISR[:0]
				for _, m := range newISR {
					ch.targetISR = append(ch.targetISR, m.BrokerID)
				}
				ch.targetLRS = p.LeaderRecoveryState
				state := cur
				if rec := ch.build(); rec != nil {
					logChange(ctx, cur, rec, "alter-partition", false)
					if err := c.working.replay(rec, 0); err != nil {
						panic(fmt.Sprintf("kraft: AlterPartition record does not fit: %v", err))
					}
					recs = append(recs, rec)
					state, _ = c.working.img.Partition(name, p.Partition)
				}
				if state.Leader != req.BrokerID {
					rp.ErrorCode = kerr.NewLeaderElected.Code
					if req.Version <= 1 {
						rp.ErrorCode = kerr.FencedLeaderEpoch.Code
					}
					result = "NEW_LEADER_ELECTED"
				} else {
					rp.LeaderID, rp.LeaderEpoch, rp.PartitionEpoch = state.Leader, state.LeaderEpoch, state.PartitionEpoch
					rp.ISR, rp.LeaderRecoveryState = slices.Clone(state.ISR), state.LeaderRecoveryState
				}
			}
			ctx.Log("alter-partition", sim.S("partition", fmt.Sprintf("%s-%d", name, p.Partition)), sim.I("broker", int64(req.BrokerID)), sim.S("result", result))
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	// The records were replayed above, one by one, so that a request
	// touching a partition twice sees its own change; write must not
	// replay them again.
	c.writeReplayed(ctx, recs, func() { reply(resp) }, fail)
}

func (c *Controller) validateAlterPartition(req *kmsg.AlterPartitionRequest, cur metadata.PartitionState, ok bool, p kmsg.AlterPartitionRequestTopicPartition, newISR []kmsg.AlterPartitionRequestTopicPartitionNewEpochISR) *kerr.Error {
	// Mutant alter-partition-stale-epoch: a lower leader or partition
	// epoch than the controller's passes.
	stale := c.cfg.Mutants.On(mutant.AlterPartitionStaleEpoch)
	switch {
	case !ok:
		return kerr.UnknownTopicOrPartition
	case p.LeaderEpoch > cur.LeaderEpoch || p.PartitionEpoch > cur.PartitionEpoch:
		return kerr.NotController
	case p.LeaderEpoch < cur.LeaderEpoch && !stale:
		return kerr.FencedLeaderEpoch
	case req.BrokerID != cur.Leader:
		return kerr.InvalidRequest
	case p.PartitionEpoch < cur.PartitionEpoch && !stale:
		return kerr.InvalidUpdateVersion
	}
	ids := make([]int32, len(newISR))
	for i, m := range newISR {
		ids[i] = m.BrokerID
		if !contains(cur.Replicas, m.BrokerID) || contains(ids[:i], m.BrokerID) {
			return kerr.InvalidRequest
		}
	}
	switch {
	case !contains(ids, cur.Leader):
		return kerr.InvalidRequest
	case p.LeaderRecoveryState == metadata.Recovering && len(ids) > 1:
		return kerr.InvalidRequest
	case cur.LeaderRecoveryState == metadata.Recovered && p.LeaderRecoveryState == metadata.Recovering:
		return kerr.InvalidRequest
	}
	for _, m := range newISR {
		b, ok := c.working.img.Broker(m.BrokerID)
		if !ok || b.InControlledShutdown || b.Fenced || (m.BrokerEpoch != -1 && m.BrokerEpoch != b.Epoch) {
			if req.Version > 1 {
				return kerr.IneligibleReplica
			}
			return kerr.OperationNotAttempted
		}
	}
	return nil
}
