package server

// This file serves Produce (api key 0) on the leader: acks=0 (no answer),
// acks=1 (answer after the leader's append) and acks=all/-1 (answer when
// the HW passes the records, from the purgatory).
//
// Versions: v3+ (record batches v2, or v0/v1 messages for old formats).
// NOT_ENOUGH_REPLICAS refuses an acks=all write before appending when the
// ISR is below min.insync.replicas; NOT_ENOUGH_REPLICAS_AFTER_APPEND
// answers one that was appended but committed with too small an ISR;
// REQUEST_TIMED_OUT one the HW did not reach within the request's timeout;
// MESSAGE_TOO_LARGE a batch above the topic's max.message.bytes
// (topic_config.go).
// Idempotent sequences are checked in producer_state.go; a transactional
// batch is checked against the log's producer state: an epoch below the
// producer's is INVALID_PRODUCER_EPOCH (every version: 2.7 replaced the
// fatal PRODUCER_FENCED answer with it, KIP-588), a plain batch while the
// producer's transaction is ongoing INVALID_TXN_STATE, a control batch from
// a client INVALID_RECORD. KIP-890 part 1 (3.6+,
// transaction.partition.verification.enable): the first transactional
// batch of a producer with no ongoing transaction in the partition waits
// for the TxnVerifier (txn_verify.go) before it is appended.
// Simplifications: one batch per partition per request, as Kafka's
// producer sends.

import (
	"errors"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleProduce(from sim.NodeID, req *wire.Request, body *kmsg.ProduceRequest) {
	st := b.produceStates.New()
	st.from, st.req, st.body, st.pending = from, req, body, 1
	st.appended = st.appendedIn[:0]
	resp := &st.ans.body
	*resp = kmsg.NewProduceResponse()
	st.resp = resp
	validAcks := body.Acks == 0 || body.Acks == 1 || body.Acks == -1
	n := 0
	for _, t := range body.Topics {
		n += len(t.Partitions)
	}
	resp.Topics = st.ans.topics[:0]
	if len(body.Topics) > len(st.ans.topics) {
		resp.Topics = make([]kmsg.ProduceResponseTopic, 0, len(body.Topics))
	}
	flat := st.ans.parts[:0]
	if n > len(st.ans.parts) {
		flat = make([]kmsg.ProduceResponseTopicPartition, 0, n)
	}
	for _, t := range body.Topics {
		start := len(flat)
		for _, pd := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = pd.Partition, -1, -1, -1
			flat = append(flat, rp)
		}
		resp.Topics = append(resp.Topics, kmsg.ProduceResponseTopic{Topic: t.Topic, Partitions: flat[start:len(flat):len(flat)]})
	}
	for ti, t := range body.Topics {
		for pi, pd := range t.Partitions {
			rp := &resp.Topics[ti].Partitions[pi]
			if !validAcks {
				rp.ErrorCode = kerr.InvalidRequiredAcks.Code
				continue
			}
			tp := storage.TopicPartition{Topic: t.Topic, Partition: pd.Partition}
			if b.verifyTxn(st, ti, pi, tp, pd.Records) {
				continue
			}
			b.produceOne(st, ti, pi)
		}
	}
	b.produceStepDone(st)
}

// produceState is a Produce request being served: its partitions are
// appended one by one, some after a KIP-890 verification answers. It is
// the node's own, allocated in one block with its delayed produce, room
// for one partition inline everywhere, and its answer (ans), which leaves
// the node once sent: nothing in the block is written after that.
type produceState struct {
	from       sim.NodeID
	req        *wire.Request
	body       *kmsg.ProduceRequest
	resp       *kmsg.ProduceResponse // &ans.body
	appended   []waitingPartition
	appendedIn [1]waitingPartition
	pending    int // verifications outstanding, +1 while the request is read

	delayed delayedProduce
	waitIn  [1]producePartition
	waitPtr [1]*producePartition
	ans     produceAnswer
}

// produceAnswer is a Produce response and its wire envelope.
type produceAnswer struct {
	msg    wire.Response
	body   kmsg.ProduceResponse
	topics [1]kmsg.ProduceResponseTopic
	parts  [1]kmsg.ProduceResponseTopicPartition
}

type waitingPartition struct {
	ti, pi   int
	required int64
}

// produceOne appends partition (ti, pi) of the request.
func (b *Broker) produceOne(st *produceState, ti, pi int) {
	t := &st.body.Topics[ti]
	pd := &t.Partitions[pi]
	rp := &st.resp.Topics[ti].Partitions[pi]
	var last int64
	var err *kerr.Error
	tp := storage.TopicPartition{Topic: t.Topic, Partition: pd.Partition}
	rp.BaseOffset, last, err = b.appendToLeader(tp, st.body.Acks, pd.Records)
	if err == nil {
		st.appended = append(st.appended, waitingPartition{ti, pi, last + 1})
		rp.LogStartOffset = b.partitions[tp].log.LogStartOffset() // v5+ (KIP-107)
	}
	rp.ErrorCode = errCode(err)
}

// produceStepDone ends one outstanding step of st; after the last it
// answers or waits in the purgatory.
func (b *Broker) produceStepDone(st *produceState) {
	if st.pending--; st.pending > 0 {
		return
	}
	resp := st.resp
	d := &st.delayed
	*d = delayedProduce{from: st.from, req: st.req, resp: resp, ans: &st.ans.msg, parts: st.waitPtr[:0]}
	for i, w := range st.appended {
		rt := &resp.Topics[w.ti]
		var pp *producePartition
		if i < len(st.waitIn) {
			pp = &st.waitIn[i]
		} else {
			pp = new(producePartition)
		}
		*pp = producePartition{
			tp:       storage.TopicPartition{Topic: rt.Topic, Partition: rt.Partitions[w.pi].Partition},
			required: w.required, resp: &rt.Partitions[w.pi],
		}
		d.parts = append(d.parts, pp)
	}
	switch {
	case st.body.Acks == 0:
		// No answer, ever: the client does not wait for one.
	case st.body.Acks == -1 && len(st.appended) > 0:
		b.delayProduce(d, sim.Ms(int64(st.body.TimeoutMillis)))
	default:
		b.answer(d)
	}
}

// appendToLeader appends one partition's records as leader and returns the
// base and last offsets.
func (b *Broker) appendToLeader(tp storage.TopicPartition, acks int16, records []byte) (int64, int64, *kerr.Error) {
	p := b.partition(tp)
	if err := b.checkLeader(p, -1); err != nil {
		return -1, -1, err
	}
	if acks == -1 && len(p.isr) < p.minISR && !b.cfg.Mutants.On(mutant.AcksAllBelowMinISR) {
		b.logp("not-enough-replicas", p, sim.S("isr", fmtIDs(p.isr)), sim.I("min-isr", int64(p.minISR)))
		return -1, -1, kerr.NotEnoughReplicas
	}
	if !b.checkMessageSize(p, len(records)) {
		return -1, -1, kerr.MessageTooLarge
	}
	header, err := storage.ParseBatchInfo(records)
	if err != nil {
		return -1, -1, kerr.CorruptMessage
	}
	if header.IsControl() {
		return -1, -1, kerr.InvalidRecord // clients may not write control batches (LogValidator)
	}
	if header.ProducerID >= 0 {
		first, dup, serr := p.checkSequence(header, b.cfg.Mutants)
		if serr != nil {
			b.logp("sequence-error", p, sim.I("producer", header.ProducerID), sim.I("seq", int64(header.BaseSequence)), sim.S("error", serr.Message))
			return -1, -1, serr
		}
		if dup {
			b.logp("duplicate", p, sim.I("producer", header.ProducerID), sim.I("seq", int64(header.BaseSequence)), sim.I("offset", first))
			return first, first + int64(header.Count) - 1, nil
		}
		if terr := p.checkProducerAppend(records); terr != nil {
			b.logp("txn-append-error", p, sim.I("producer", header.ProducerID), sim.I("producer-epoch", int64(header.ProducerEpoch)), sim.S("error", terr.Message))
			return -1, -1, terr
		}
	}
	records, kerrStored := b.storedForm(p, records, header.Attributes&storage.CompressionCodecMask)
	if kerrStored != nil {
		return -1, -1, kerrStored
	}
	info, err := p.log.AppendRawAsLeader(records, p.leaderEpoch, b.ctx.Now())
	if err != nil {
		if errors.Is(err, storage.ErrNoKey) {
			// A compacted topic refuses records without key: INVALID_RECORD
			// from 2.4 (KIP-467), CORRUPT_MESSAGE before (the
			// InvalidRecordException of LogValidator was a
			// CorruptRecordException).
			b.logp("no-key-on-compacted-topic", p)
			if b.cfg.release() >= config.V2_4 {
				return -1, -1, kerr.InvalidRecord
			}
		}
		if errors.Is(err, storage.ErrRecordTooLarge) {
			return -1, -1, kerr.RecordListTooLarge // above segment.bytes (RecordBatchTooLargeException)
		}
		return -1, -1, kerr.CorruptMessage
	}
	p.recordProducerAppend(header, info.FirstOffset, info.LastOffset)
	b.logp("append", p, sim.I("first", info.FirstOffset), sim.I("last", info.LastOffset), sim.I("epoch", int64(p.leaderEpoch)), sim.I("acks", int64(acks)))
	b.leaderAppended(p)
	return info.FirstOffset, info.LastOffset, nil
}

// leaderAppended moves the HW after a leader append, or wakes the
// followers' delayed fetches.
func (b *Broker) leaderAppended(p *Partition) {
	if p.maybeIncrementHW() {
		b.hwIncremented(p)
	} else {
		b.completeFetches() // followers' delayed fetches see the new data
	}
}

// checkProducerAppend is the log's producer-state check of a client's
// (or the group coordinator's) transactional append, as its Kafka error.
func (p *Partition) checkProducerAppend(records []byte) *kerr.Error {
	err := txnAppendError(p.log.CheckProducerAppend(records))
	if err == kerr.InvalidProducerEpoch && p.mutants.On(mutant.ZombieNotFenced) {
		return nil // NOT Kafka: a fenced producer's epoch is not checked
	}
	return err
}

// txnAppendError maps the log's producer-state refusal to its Kafka error.
func txnAppendError(err error) *kerr.Error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch
	case errors.Is(err, storage.ErrTransactionCoordinatorFenced):
		return kerr.TransactionCoordinatorFenced
	case errors.Is(err, storage.ErrInvalidTxnState):
		return kerr.InvalidTxnState
	}
	return kerr.CorruptMessage
}
