package client

// This file is the record accumulator (RecordAccumulator): a queue of
// batches per partition. A record joins the partition's last open batch
// if it fits in batch.size (a record bigger than batch.size gets a batch of
// its own); a batch is ready when it is full, when a later batch exists,
// when linger.ms has passed since it was created, or on flush/close. Batches
// expire delivery.timeout.ms after they were created (KIP-91), whether
// waiting or in flight.
// Simplified vs Kafka: sizes are an upper-bound estimate of the v2
// encoding (batch header + DefaultRecord's maximal overhead + key, value
// and headers), not the exact compressed size; there is no buffer pool.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// pending is one record the application sent, not yet completed.
type pending struct {
	rec      Record
	cb       Callback
	ts       int64    // CreateTime, in ms on the producer's clock
	deadline sim.Time // while waiting for metadata: max.block.ms
}

// batch is a producer batch (ProducerBatch): records of one partition
// sent, retried and completed together.
type batch struct {
	id       uint64
	tp       storage.TopicPartition
	ps       *partitionState // tp's
	recs     []*pending
	first    [1]*pending // recs' storage while it holds one record (most batches)
	bytes    int
	created  sim.Time
	deadline sim.Time // created + delivery.timeout.ms
	closed   bool     // no more appends: drained once, or flushed
	seq      int32    // base sequence, -1 until drained by an idempotent producer
	attempts int      // produce requests that carried it
	retries  int
	retryAt  sim.Time
	unknown  bool // some attempt's outcome is unknown
	done     bool
	lastErr  error
}

// lastSeq returns the sequence of the batch's last record.
func (b *batch) lastSeq() int32 { return incrementSequence(b.seq, int32(len(b.recs))-1) }

// partitionState is one partition's queue and, for the idempotent
// producer, its sequence state.
type partitionState struct {
	tp         storage.TopicPartition
	name       string   // tpName(tp), for the logs
	queue      []*batch // not in flight; retries first, in sequence order
	inflight   []*batch // in flight, in the order sent
	nextSeq    int32
	acked      int32 // last acknowledged sequence, -1 for none
	firstAcked int32 // base sequence of the first acknowledged batch, -1 for none
	failed     error // ErrPartitionFailed's cause, once the partition failed
}

// estimateSize is an upper bound of a record's encoded size
// (DefaultRecord.sizeInUpperBound: varints at their widest).
func estimateSize(r *Record) int {
	n := storage.MaxRecordOverhead + len(r.Key) + len(r.Value) + 5
	for _, h := range r.Headers {
		n += 10 + len(h.Key) + len(h.Value)
	}
	return n
}

func (p *Producer) partitionState(tp storage.TopicPartition) *partitionState {
	ps := p.parts[tp]
	if ps == nil {
		ps = &partitionState{tp: tp, name: tpName(tp), acked: -1, firstAcked: -1}
		p.parts[tp] = ps
		i, _ := slices.BinarySearchFunc(p.partList, tp, func(x *partitionState, tp storage.TopicPartition) int { return cmpTP(x.tp, tp) })
		p.partList = slices.Insert(p.partList, i, ps)
	}
	return ps
}

func cmpTP(a, b storage.TopicPartition) int {
	switch {
	case a.Topic < b.Topic:
		return -1
	case a.Topic > b.Topic:
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}

// placeWaiting places the records that were waiting for metadata, in the
// order they were sent, once their topic is known.
func (p *Producer) placeWaiting(ctx *sim.Context) {
	keep := p.waiting[:0]
	for _, w := range p.waiting {
		if t := p.meta.topic(w.rec.Topic); t != nil && len(t.partitions) > 0 {
			p.place(ctx, w)
		} else {
			keep = append(keep, w)
		}
	}
	clear(p.waiting[len(keep):])
	p.waiting = keep
	if len(p.waiting) > 0 {
		p.meta.needUpdate = true
	}
}

// place picks the record's partition and appends it to the accumulator.
func (p *Producer) place(ctx *sim.Context, w *pending) {
	t := p.meta.topic(w.rec.Topic)
	n := len(t.partitions)
	part := w.rec.Partition
	if part >= int32(n) {
		p.completeRecord(ctx, w, -1, -1, &SendError{Err: kerr.UnknownTopicOrPartition, Definite: true})
		return
	}
	if part == AnyPartition {
		part = p.part.partition(ctx, w.rec.Topic, w.rec.Key, n, t.avail)
		// KIP-480 abortOnNewBatch: a sticky record that would open a new
		// batch moves the topic to another partition first.
		if p.part.usesSticky(w.rec.Key) && !p.fitsOpenBatch(storage.TopicPartition{Topic: w.rec.Topic, Partition: part}, w) {
			part = p.part.nextSticky(ctx, w.rec.Topic, part, n, t.avail)
		}
	}
	tp := storage.TopicPartition{Topic: w.rec.Topic, Partition: part}
	ps := p.partitionState(tp)
	if ps.failed != nil {
		p.completeRecord(ctx, w, part, -1, &SendError{Err: ps.failed, Definite: true})
		return
	}
	size := estimateSize(&w.rec)
	if !p.fitsOpenBatch(tp, w) {
		now := ctx.Now()
		p.batchSeq++
		b := &batch{id: p.batchSeq, tp: tp, ps: ps, created: now,
			deadline: now.Add(p.cfg.DeliveryTimeout), seq: -1, bytes: storage.RecordBatchOverhead}
		b.recs = b.first[:0]
		ps.queue = append(ps.queue, b)
	}
	b := ps.queue[len(ps.queue)-1]
	b.recs = append(b.recs, w)
	b.bytes += size
}

// fitsOpenBatch reports whether w can join the last batch of tp.
func (p *Producer) fitsOpenBatch(tp storage.TopicPartition, w *pending) bool {
	ps := p.parts[tp]
	if ps == nil || len(ps.queue) == 0 {
		return false
	}
	b := ps.queue[len(ps.queue)-1]
	return !b.closed && b.bytes+estimateSize(&w.rec) <= p.cfg.BatchSize
}

// readyAt returns when the first batch of ps may be drained, if nothing but
// time holds it back; false when it waits for something else (a leader, an
// answer, a producer id, an in-flight slot).
func (p *Producer) readyAt(ps *partitionState) (sim.Time, bool) {
	if len(ps.queue) == 0 || !p.canDrain(ps) {
		return 0, false
	}
	b := ps.queue[0]
	at := b.created.Add(p.cfg.Linger)
	if b.closed || len(ps.queue) > 1 || b.bytes >= p.cfg.BatchSize || p.closing {
		at = b.created
	}
	if b.retries > 0 {
		at = b.retryAt
	}
	return at, true
}

// canDrain reports whether the first batch of ps could be sent now, time
// apart: its leader is known and has an in-flight slot, and ordering rules
// allow it.
func (p *Producer) canDrain(ps *partitionState) bool {
	leader := p.meta.leader(ps.tp.Topic, ps.tp.Partition)
	if leader < 0 || p.inflightTo(leader) >= p.cfg.MaxInFlightRequestsPerConnection {
		return false
	}
	if p.cfg.EnableIdempotence {
		return p.idempotentCanDrain(ps)
	}
	// guaranteeMessageOrder: with one request in flight per connection,
	// Kafka also mutes the partition while a batch of it is in flight, so
	// a leader change cannot let a later batch overtake.
	return p.cfg.MaxInFlightRequestsPerConnection > 1 || len(ps.inflight) == 0
}

// expireBatches fails the batches and waiting records whose deadline has
// passed (KIP-91: in flight or not).
func (p *Producer) expireBatches(ctx *sim.Context) {
	now := ctx.Now()
	keep := p.waiting[:0]
	for _, w := range p.waiting {
		if w.deadline <= now {
			ctx.Log("produce-fail", sim.S("topic", w.rec.Topic), sim.S("error", "max.block.ms: no metadata"), sim.S("definite", "true"))
			p.completeRecord(ctx, w, w.rec.Partition, -1, &SendError{Err: ErrDeliveryTimeout, Definite: true})
		} else {
			keep = append(keep, w)
		}
	}
	clear(p.waiting[len(keep):])
	p.waiting = keep
	for _, ps := range p.partList {
		if !anyExpired(ps.inflight, now) && !anyExpired(ps.queue, now) {
			continue // the common case: nothing to fail, nothing to copy
		}
		for _, b := range append(slices.Clone(ps.inflight), ps.queue...) {
			if b.deadline <= now {
				p.failBatch(ctx, ps, b, ErrDeliveryTimeout) // does nothing if done already
			}
		}
	}
}

// anyExpired reports whether a batch of bs is past its deadline at now.
func anyExpired(bs []*batch, now sim.Time) bool {
	for _, b := range bs {
		if b.deadline <= now {
			return true
		}
	}
	return false
}

// completeRecord runs a record's callback.
func (p *Producer) completeRecord(ctx *sim.Context, w *pending, partition int32, offset int64, err error) {
	p.pending--
	if w.cb != nil {
		w.cb(ctx, RecordMetadata{Topic: w.rec.Topic, Partition: partition, Offset: offset}, err)
	}
}
