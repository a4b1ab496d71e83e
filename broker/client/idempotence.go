package client

// This file is the idempotent producer (KIP-98 without transactions; the
// TransactionManager of Kafka 2.x in its idempotent-only role). Before its
// first batch the producer asks any broker for a producer id with
// InitProducerId (api key 22) v1, TransactionalID null. Each partition's
// batches get consecutive sequence numbers when first drained (starting at
// 0, wrapping at 2^31-1 to 0) and keep them on every retry, so the broker
// can drop a retry it already appended. Answers:
//   - DUPLICATE_SEQUENCE_NUMBER: success (the broker has the batch).
//   - OUT_OF_ORDER_SEQUENCE_NUMBER for a batch that is not the next after
//     the last acknowledged sequence: an earlier batch is missing at the
//     broker (lost or being retried); retry, in sequence order.
//   - OUT_OF_ORDER_SEQUENCE_NUMBER for the next batch, UNKNOWN_PRODUCER_ID
//     or INVALID_PRODUCER_EPOCH: a real gap; the batch fails, and the
//     partition with it.
// Ordering: a partition sends a retried batch only when it is the lowest
// unacknowledged one, and new batches only when no retry waits and fewer
// than 5 batches are in flight (the broker remembers the last 5 per
// producer), so batches reach the log in sequence order.
//
// Adapted to the simulated network, whose links may drop one message and
// deliver the next (TCP never does): (1) while none of a partition's
// batches has been acknowledged, only one is in flight, because a broker
// with no state for the producer accepts any first sequence and a second
// batch overtaking a lost first one would open a gap for good; (2) an
// OUT_OF_ORDER_SEQUENCE_NUMBER for a batch lying between acknowledged
// sequences means its own answer was lost and its retry fell out of the
// broker's last-5 window: it is written, and completes with offset -1
// (Classify: unknown), as Kafka's client completes DUPLICATE_SEQUENCE_NUMBER.
//
// Simplified vs Kafka: a partition whose batch fails after its sequence was
// used (a real gap, retries exhausted, delivery.timeout.ms expired with the
// batch sent) fails for good: its later records fail with
// ErrPartitionFailed — as Kafka 2.0–2.4's fatal OutOfOrderSequenceException
// did. KIP-360's epoch bump (Kafka 2.5+: bump the epoch, restart the
// partition's sequences at 0, keep going) and Kafka 2.x's "unresolved
// sequence" wait are not implemented. A failed InitProducerId is retried
// after retry.backoff.ms, forever.

import (
	"fmt"
	"math"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxInFlightPerPartition is ProducerStateEntry.NUM_BATCHES_TO_RETAIN.
const maxInFlightPerPartition = 5

// idempotence is the producer id state.
type idempotence struct {
	producerID  int64
	epoch       int16
	inflight    bool
	attempted   bool
	lastAttempt sim.Time
}

// initDue returns when InitProducerId should be sent, if it should.
func (p *Producer) initDue() (sim.Time, bool) {
	id := &p.idem
	if !p.cfg.EnableIdempotence || id.producerID >= 0 || id.inflight || p.txn != nil {
		return 0, false
	}
	if id.attempted {
		return id.lastAttempt.Add(p.cfg.RetryBackoff), true
	}
	return 0, true
}

// maybeInitProducerID sends InitProducerId if due.
func (p *Producer) maybeInitProducerID(ctx *sim.Context) {
	at, due := p.initDue()
	if !due || at > ctx.Now() {
		return
	}
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = 1
	req.TransactionalID = nil
	req.TransactionTimeoutMillis = 60000 // transaction.timeout.ms's default; unused without transactions
	p.idem.inflight, p.idem.attempted, p.idem.lastAttempt = true, true, ctx.Now()
	p.call(ctx, p.metadataBroker(), req, &request{kind: reqInitProducerID})
}

// handleInitProducerID applies an InitProducerId answer.
func (p *Producer) handleInitProducerID(ctx *sim.Context, resp *kmsg.InitProducerIDResponse) {
	switch {
	case resp == nil:
		p.initFailed(ctx, kerr.NetworkException)
	case resp.ErrorCode != 0:
		p.initFailed(ctx, kerr.ErrorForCode(resp.ErrorCode))
	default:
		p.idem.inflight = false
		p.idem.producerID, p.idem.epoch = resp.ProducerID, resp.ProducerEpoch
		ctx.Log("producer-init-id", sim.I("producer-id", resp.ProducerID), sim.I("epoch", int64(resp.ProducerEpoch)))
	}
}

// initFailed schedules another InitProducerId, to another broker.
func (p *Producer) initFailed(ctx *sim.Context, err error) {
	p.idem.inflight = false
	p.meta.cursor++
	ctx.Log("producer-init-id-failed", sim.S("error", err.Error()))
}

// idempotentCanDrain applies the ordering rules to the first batch of ps.
func (p *Producer) idempotentCanDrain(ps *partitionState) bool {
	if p.idem.producerID < 0 || ps.failed != nil {
		return false
	}
	b := ps.queue[0]
	if b.seq < 0 {
		if ps.acked < 0 && len(ps.inflight) > 0 {
			// Until the broker has acknowledged one batch of the partition
			// it holds no state for the producer and accepts any sequence:
			// a second batch overtaking a lost first one would leave a gap.
			return false
		}
		return len(ps.inflight) < maxInFlightPerPartition
	}
	for _, x := range ps.inflight {
		if !x.done && seqBefore(x.seq, b.seq) {
			return false
		}
	}
	return true
}

// assignSequence gives b the partition's next sequence numbers.
func (p *Producer) assignSequence(ps *partitionState, b *batch) {
	b.seq = ps.nextSeq
	ps.nextSeq = incrementSequence(ps.nextSeq, int32(len(b.recs)))
}

// sequenceAcked records that the broker has b.
func (p *Producer) sequenceAcked(ps *partitionState, b *batch) {
	if ps.firstAcked < 0 {
		ps.firstAcked = b.seq
	}
	if last := b.lastSeq(); ps.acked < 0 || seqBefore(ps.acked, last) {
		ps.acked = last
	}
}

// idemVerdict is what an error means for an idempotent batch.
type idemVerdict uint8

const (
	idemAsKafka idemVerdict = iota // kerr's retriable flag decides
	idemRetry                      // retry, whatever kerr says
	idemFatal                      // fail the batch and its partition
	idemWritten                    // the broker has the batch: success, offset unknown
)

// idempotentError classifies an error of the idempotent producer.
func (p *Producer) idempotentError(ps *partitionState, b *batch, err *kerr.Error) idemVerdict {
	switch err {
	case kerr.OutOfOrderSequenceNumber:
		// The broker accepts a producer's batches only in sequence, so once
		// a batch at or before b's first sequence and one at or after its
		// last were acknowledged, b is in the log: its own answer was lost
		// and the retry fell out of the broker's last-5 window.
		if ps.firstAcked >= 0 && !seqBefore(b.seq, ps.firstAcked) && !seqBefore(ps.acked, b.lastSeq()) {
			return idemWritten
		}
		if b.seq != incrementSequence(ps.acked, 1) {
			return idemRetry // an earlier batch is missing at the broker
		}
		return idemFatal
	case kerr.UnknownProducerID, kerr.InvalidProducerEpoch:
		return idemFatal
	}
	return idemAsKafka
}

// failPartition fails ps for good after one of its sequenced batches
// failed: queued batches fail now, new records at Send.
func (p *Producer) failPartition(ctx *sim.Context, ps *partitionState, cause error) {
	ps.failed = fmt.Errorf("%w (partition %s: %v)", ErrPartitionFailed, ps.name, cause)
	ctx.Log("produce-partition-failed", sim.S("partition", ps.name), sim.S("cause", cause.Error()))
	for len(ps.queue) > 0 {
		p.failBatch(ctx, ps, ps.queue[0], ps.failed)
	}
}

// incrementSequence is DefaultRecordBatch.incrementSequence: seq+inc,
// wrapping past Integer.MAX_VALUE to 0.
func incrementSequence(seq, inc int32) int32 {
	if seq > math.MaxInt32-inc {
		return inc - (math.MaxInt32 - seq) - 1
	}
	return seq + inc
}

// seqBefore reports whether sequence a comes before b, allowing for the
// wrap (the two are less than 2^30 apart).
func seqBefore(a, b int32) bool {
	d := (int64(b) - int64(a)) & math.MaxInt32
	return d != 0 && d < 1<<30
}
