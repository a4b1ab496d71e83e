package server

// This file serves Produce (api key 0) on the leader: acks=0 (no answer),
// acks=1 (answer after the leader's append) and acks=all/-1 (answer when
// the HW passes the records, from the purgatory).
//
// Versions: v3+ (record batches v2, or v0/v1 messages for old formats).
// NOT_ENOUGH_REPLICAS refuses an acks=all write before appending when the
// ISR is below min.insync.replicas; NOT_ENOUGH_REPLICAS_AFTER_APPEND
// answers one that was appended but committed with too small an ISR;
// REQUEST_TIMED_OUT one the HW did not reach within the request's timeout.
// Simplifications: idempotence and transactions are checked elsewhere (the
// producer issue); one batch per partition per request, as Kafka's
// producer sends.

import (
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleProduce(from sim.NodeID, req *wire.Request, body *kmsg.ProduceRequest) {
	resp := kmsg.NewPtrProduceResponse()
	validAcks := body.Acks == 0 || body.Acks == 1 || body.Acks == -1
	type waiting struct {
		ti, pi   int
		required int64
	}
	var appended []waiting
	for ti, t := range body.Topics {
		rt := kmsg.ProduceResponseTopic{Topic: t.Topic}
		for pi, pd := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = pd.Partition, -1, -1, -1
			err := kerr.InvalidRequiredAcks
			if validAcks {
				var last int64
				rp.BaseOffset, last, err = b.appendToLeader(storage.TopicPartition{Topic: t.Topic, Partition: pd.Partition}, body.Acks, pd.Records)
				if err == nil {
					appended = append(appended, waiting{ti, pi, last + 1})
				}
			}
			rp.ErrorCode = errCode(err)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	d := &delayedProduce{from: from, req: req, resp: resp}
	for _, w := range appended {
		rt := &resp.Topics[w.ti]
		d.parts = append(d.parts, &producePartition{
			tp:       storage.TopicPartition{Topic: rt.Topic, Partition: rt.Partitions[w.pi].Partition},
			required: w.required, resp: &rt.Partitions[w.pi],
		})
	}
	switch {
	case body.Acks == 0:
		// No answer, ever: the client does not wait for one.
	case body.Acks == -1 && len(appended) > 0:
		b.delayProduce(d, sim.Ms(int64(body.TimeoutMillis)))
	default:
		b.respond(from, req, resp)
	}
}

// appendToLeader appends one partition's records as leader and returns the
// base and last offsets.
func (b *Broker) appendToLeader(tp storage.TopicPartition, acks int16, records []byte) (int64, int64, *kerr.Error) {
	p := b.partitions[tp]
	if err := b.checkLeader(p, -1); err != nil {
		return -1, -1, err
	}
	if acks == -1 && len(p.isr) < p.minISR {
		b.logp("not-enough-replicas", p, sim.S("isr", fmtIDs(p.isr)), sim.I("min-isr", int64(p.minISR)))
		return -1, -1, kerr.NotEnoughReplicas
	}
	header, err := storage.ParseBatchInfo(records)
	if err != nil {
		return -1, -1, kerr.CorruptMessage
	}
	if header.ProducerID >= 0 {
		first, dup, serr := p.checkSequence(header)
		if serr != nil {
			b.logp("sequence-error", p, sim.I("producer", header.ProducerID), sim.I("seq", int64(header.BaseSequence)), sim.S("error", serr.Message))
			return -1, -1, serr
		}
		if dup {
			b.logp("duplicate", p, sim.I("producer", header.ProducerID), sim.I("seq", int64(header.BaseSequence)), sim.I("offset", first))
			return first, first + int64(header.Count) - 1, nil
		}
	}
	info, err := p.log.AppendRawAsLeader(records, p.leaderEpoch, b.ctx.Now())
	if err != nil {
		return -1, -1, kerr.CorruptMessage
	}
	p.recordProducerAppend(header, info.FirstOffset, info.LastOffset)
	b.logp("append", p, sim.I("first", info.FirstOffset), sim.I("last", info.LastOffset), sim.I("epoch", int64(p.leaderEpoch)), sim.I("acks", int64(acks)))
	if p.maybeIncrementHW() {
		b.hwIncremented(p)
	} else {
		b.completeFetches() // followers' delayed fetches see the new data
	}
	return info.FirstOffset, info.LastOffset, nil
}
