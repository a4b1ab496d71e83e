package server

// This file changes the ISR in KRaft mode: the partition leader sends
// AlterPartition (api key 56, KIP-497; v3 carries each member's broker
// epoch, KIP-903) to the active controller with the partition epoch it
// knows, and takes the new ISR only from the controller's answer (or the
// metadata log). While the request is out the ISR is the larger of the two
// for the HW (partition.go's pendingISR), as Kafka's "maximal ISR". Kafka's
// AlterPartitionManager retries on NOT_CONTROLLER and timeouts until the
// controller answers. An answer with a partition error is handled as
// Partition.handleAlterPartitionError does: INELIGIBLE_REPLICA and
// OPERATION_NOT_ATTEMPTED say the change was not applied, so the leader
// goes back to its committed ISR; FENCED_LEADER_EPOCH,
// INVALID_UPDATE_VERSION, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST and
// NEW_LEADER_ELECTED leave the change pending (a retried request may have
// been applied already: the maximal ISR stays for the HW) until the
// metadata log brings the partition's state; any other error is retried.
// So a leader cut off from the controllers (a zombie after
// fencing) can never shrink its ISR: acks=all produce to it cannot
// complete.

import (
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) alterPartition(p *Partition, newISR []int32) {
	l := b.kraft.life
	p.isrUpdateInFlight, p.pendingISR = true, newISR
	epoch := p.leaderEpoch
	retry := func() {
		id := b.ctx.SetTimer(lifecycleRetryBackoff, timerLifecycleAlter)
		l.alterRetry[id] = p.tp
	}
	ctl := l.controller()
	id, known := b.kraft.meta.img.TopicID(p.tp.Topic)
	if ctl < 0 || l.epoch < 0 || !known {
		retry()
		return
	}
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 3
	req.BrokerID, req.BrokerEpoch = b.cfg.BrokerID, l.epoch
	part := kmsg.AlterPartitionRequestTopicPartition{Partition: p.tp.Partition, LeaderEpoch: epoch, PartitionEpoch: p.zkVersion}
	for _, r := range newISR {
		be := int64(-1)
		if bs, ok := b.kraft.meta.img.Broker(r); ok {
			be = bs.Epoch
		}
		part.NewEpochISR = append(part.NewEpochISR, kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{BrokerID: r, BrokerEpoch: be})
	}
	req.Topics = []kmsg.AlterPartitionRequestTopic{{TopicID: id, Partitions: []kmsg.AlterPartitionRequestTopicPartition{part}}}
	b.send(ctl, req, b.cfg.ControllerTimeout, func(resp kmsg.Response, err error) {
		if p.role != Leader || p.leaderEpoch != epoch {
			p.isrUpdateInFlight, p.pendingISR = false, nil
			return // leadership moved on while the request was out
		}
		r, _ := resp.(*kmsg.AlterPartitionResponse)
		if err != nil || r == nil || r.ErrorCode == kerr.NotController.Code || r.ErrorCode == kerr.RequestTimedOut.Code {
			retry()
			return
		}
		code := r.ErrorCode
		var got *kmsg.AlterPartitionResponseTopicPartition
		if code == 0 && len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			got = &r.Topics[0].Partitions[0]
			code = got.ErrorCode
		}
		if code != 0 || got == nil {
			b.logp("isr-update-rejected", p, sim.S("error", errName(code, nil)), sim.I("partition-epoch", int64(p.zkVersion)))
			switch code {
			case kerr.IneligibleReplica.Code, kerr.OperationNotAttempted.Code:
				p.isrUpdateInFlight, p.pendingISR = false, nil // not applied: back to the committed ISR
				if p.maybeIncrementHW() {
					b.hwIncremented(p)
				}
			case kerr.FencedLeaderEpoch.Code, kerr.InvalidUpdateVersion.Code, kerr.UnknownTopicOrPartition.Code,
				kerr.InvalidRequest.Code, kerr.NewLeaderElected.Code:
				// Maybe applied: pending until the metadata log says.
			default:
				retry()
			}
			return
		}
		p.isrUpdateInFlight, p.pendingISR = false, nil
		if got.LeaderEpoch != epoch {
			// Partition.handleAlterPartitionUpdate ignores a state at
			// another leader epoch: below metadata.version 3.6-IV0 the
			// controller bumps it on a shrink (KAFKA-15021) and the
			// metadata log brings the new epoch.
			b.logp("isr-update-new-epoch", p, sim.I("leader-epoch", int64(got.LeaderEpoch)))
			return
		}
		if got.PartitionEpoch <= p.zkVersion {
			return // the metadata log brought this change already
		}
		b.isrUpdated(p, got.ISR, got.PartitionEpoch)
	})
}
