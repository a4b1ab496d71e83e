package client

// This file is the producer's public face (KafkaProducer): Send, Flush,
// Close, and the plumbing a host node forwards its inputs through. Like
// Kafka's producer, Send only appends to the record accumulator; a sender
// step (run) then drains ready batches into Produce requests. Kafka runs
// that step on its own I/O thread; here it runs on one wake-up timer
// ("producer-wakeup") set for the earliest deadline (linger, retry backoff,
// request, delivery and metadata timeouts), and after every answer. A Send
// wakes the sender at the same instant, not inside Send, so records sent
// together in one handler share a batch, as records sent in a burst do in
// Kafka.
// Transactions (transactional.id) are in transactions.go.
// Simplified vs Kafka: no serializers, interceptors, compression,
// buffer.memory or max.request.size; Send never blocks (a
// record whose topic has no metadata yet waits in the producer, failing
// after max.block.ms); Close is graceful only (close(0) is not offered).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// AnyPartition in Record.Partition lets the partitioner choose.
const AnyPartition int32 = -1

// TimerPrefix starts the name of every timer the producer sets; a host
// node routes timers with this prefix to HandleTimer.
const TimerPrefix = "producer-"

const timerWakeup = TimerPrefix + "wakeup"

// Header is a record header.
type Header = storage.Header

// Record is what the application sends (ProducerRecord). Partition is
// AnyPartition (-1) to let the partitioner choose; a nil Key means no key.
type Record struct {
	Topic     string
	Partition int32
	Key       []byte
	Value     []byte
	Headers   []Header
}

// RecordMetadata says where an acknowledged record was written. Offset is
// -1 when it is not known (acks=0).
type RecordMetadata struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Callback receives a record's outcome: err is nil when it was
// acknowledged, else a *SendError (see Definite and Classify). It runs
// inside the host node's handler, with its context.
type Callback func(ctx *sim.Context, md RecordMetadata, err error)

// Producer is Kafka's producer as a library embedded in a node. The node
// calls Start from its own Start and forwards messages and timers to
// HandleMessage and HandleTimer. All fields must be set before Start.
type Producer struct {
	// MetadataMaxAge is metadata.max.age.ms: metadata is refreshed at least
	// this often. Default 300000ms; 0 disables the periodic refresh.
	MetadataMaxAge sim.Duration
	// MaxBlock is max.block.ms: how long a record waits for its topic's
	// metadata before failing (definitely not written). Default 60000ms.
	MaxBlock sim.Duration
	// CorrelationBase is the first correlation id the producer uses; its
	// ids stay above it, so a node embedding several clients can tell
	// their answers apart. Default 1<<30.
	CorrelationBase int32
	// TransactionVersion is the cluster's finalized transaction.version as
	// the producer sees it (Kafka reads it from ApiVersions): 2 (KIP-890
	// part 2, 4.0+) sends AddPartitionsToTxn v5, AddOffsetsToTxn v4 and
	// EndTxn v5 and takes the epoch EndTxn returns; 1 sends v3. Default 2.
	TransactionVersion int16

	cfg       config.Producer
	bootstrap []int32
	enc       wire.Encoder
	corr      int32
	requests  []*request // in flight, sorted by correlation id
	meta      metadata
	part      *partitioner
	parts     map[storage.TopicPartition]*partitionState
	partList  []*partitionState // values of parts, sorted by partition (cmpTP)
	waiting   []*pending        // records waiting for their topic's metadata
	idem      idempotence
	txn       *transactions // nil without transactional.id (transactions.go)
	batchSeq  uint64
	pending   int // records not yet completed
	timer     sim.TimerID
	timerAt   sim.Time
	started   bool
	closing   bool
	closed    bool
	// ready and recs are the scratch of drain and encode, reused.
	ready []readyPartition
	recs  []storage.Record
	// errTexts caches errorText's texts.
	errTexts map[*kerr.Error]string
}

// New returns a producer with configuration cfg that finds the cluster
// through the bootstrap brokers' ids. It panics if bootstrap is empty or
// cfg does not pass cfg.Validate (configurations come from
// config.ParseProducer, which reports those errors first).
func New(cfg config.Producer, bootstrap []int32) *Producer {
	if len(bootstrap) == 0 {
		panic("client.New: bootstrap must name at least one broker")
	}
	if err := cfg.Validate(); err != nil {
		panic("client.New: " + err.Error())
	}
	return &Producer{
		MetadataMaxAge:     sim.Ms(300000),
		MaxBlock:           sim.Ms(60000),
		CorrelationBase:    1 << 30,
		TransactionVersion: 2,
		txn:                txnFor(cfg.TransactionalID),
		cfg:                cfg,
		bootstrap:          slices.Clone(bootstrap),
		meta:               metadata{topics: map[string]*topicMeta{}},
		part:               newPartitioner(cfg.Partitioner),
		parts:              map[storage.TopicPartition]*partitionState{},
		idem:               idempotence{producerID: -1, epoch: -1},
	}
}

// Config returns the producer's configuration.
func (p *Producer) Config() config.Producer { return p.cfg }

// Start starts the producer: with enable.idempotence it asks for a
// producer id right away, as Kafka's sender does on its first loop.
func (p *Producer) Start(ctx *sim.Context) {
	p.started = true
	p.corr = p.CorrelationBase
	p.enc.Connection = ctx.Incarnation()
	ctx.Log("producer-start", sim.S("client-id", p.cfg.ClientID), sim.S("acks", p.cfg.Acks.String()),
		sim.S("idempotence", strconv.FormatBool(p.cfg.EnableIdempotence)))
	p.run(ctx)
}

// Pending returns how many sent records have not had their callback yet.
func (p *Producer) Pending() int { return p.pending }

// Closed reports whether Close has finished: every record completed.
func (p *Producer) Closed() bool { return p.closed }

// ProducerID returns the idempotent producer's id and epoch, (-1, -1)
// before InitProducerId is answered or without idempotence.
func (p *Producer) ProducerID() (int64, int16) { return p.idem.producerID, p.idem.epoch }

// Send sends a record asynchronously; cb (which may be nil: fire and
// forget) runs once with its outcome. It returns an error, and runs no
// callback, only for misuse: Send before Start or after Close, an empty
// topic, or a partition below -1.
func (p *Producer) Send(ctx *sim.Context, r Record, cb Callback) error {
	switch {
	case !p.started:
		return fmt.Errorf("client: Send before Start")
	case p.closing:
		return ErrClosed
	case r.Topic == "":
		return fmt.Errorf("client: record topic is empty (a topic name is required)")
	case r.Partition < AnyPartition:
		return fmt.Errorf("client: record partition %d: must be >= 0, or -1 (AnyPartition) for the partitioner", r.Partition)
	case p.txn != nil && p.txn.state == txnFatalError:
		return &TxnError{Op: "Send", Err: p.txn.lastErr, Fatal: true}
	case p.txn != nil && p.txn.state == txnAbortableError:
		return &TxnError{Op: "Send", Err: p.txn.lastErr}
	case p.txn != nil && p.txn.state != txnInTransaction:
		return fmt.Errorf("client: Send of a transactional producer in state %s: call BeginTransaction first", p.txn.state)
	}
	now := ctx.Now()
	rec := &pending{rec: r, cb: cb, ts: int64(now) / int64(sim.Millisecond), deadline: now.Add(p.MaxBlock)}
	p.pending++
	p.meta.want(r.Topic)
	if t := p.meta.topic(r.Topic); t != nil && len(t.partitions) > 0 {
		p.place(ctx, rec)
	} else {
		p.waiting = append(p.waiting, rec)
	}
	p.arm(ctx, now)
	return nil
}

// SendSync sends records one at a time, each only after the previous
// one's callback ran: the application loop `producer.send(r).get()` of
// Kafka's synchronous style, for a node that cannot block. each (which may
// be nil) sees every outcome and returns false to stop early; a record
// refused because Close ran meanwhile reaches each with ErrClosed. It
// returns Send's misuse error for the first record, if any.
func (p *Producer) SendSync(ctx *sim.Context, records []Record, each func(ctx *sim.Context, i int, md RecordMetadata, err error) bool) error {
	var next func(ctx *sim.Context, i int) error
	next = func(ctx *sim.Context, i int) error {
		if i >= len(records) {
			return nil
		}
		return p.Send(ctx, records[i], func(ctx *sim.Context, md RecordMetadata, err error) {
			if each == nil || each(ctx, i, md, err) {
				// NB: only ErrClosed can fail here (Close ran meanwhile);
				// the record it refused is reported like any other.
				if err := next(ctx, i+1); err != nil && each != nil {
					each(ctx, i+1, RecordMetadata{Topic: records[i+1].Topic, Partition: -1, Offset: -1}, err)
				}
			}
		})
	}
	return next(ctx, 0)
}

// Flush makes every batch that holds records sent so far ready now,
// whatever linger.ms says (KafkaProducer.flush without the blocking:
// watch Pending, or the callbacks, to see the records complete).
func (p *Producer) Flush(ctx *sim.Context) {
	for _, ps := range p.partList {
		if len(ps.queue) > 0 {
			ps.queue[len(ps.queue)-1].closed = true
		}
	}
	p.arm(ctx, ctx.Now())
}

// Close stops accepting records and flushes; the producer closes once
// every record has completed (Closed reports it).
func (p *Producer) Close(ctx *sim.Context) {
	if p.closing {
		return
	}
	p.closing = true
	ctx.Log("producer-close", sim.I("pending", int64(p.pending)))
	p.Flush(ctx)
	p.maybeClosed(ctx)
}

func (p *Producer) maybeClosed(ctx *sim.Context) {
	if p.closing && !p.closed && p.pending == 0 {
		p.closed = true
		if p.timer != 0 {
			ctx.CancelTimer(p.timer)
			p.timer = 0
		}
		ctx.Log("producer-closed")
	}
}

// HandleMessage processes m if it is an answer to one of the producer's
// requests (a duplicate or late answer included) and reports whether it was.
func (p *Producer) HandleMessage(ctx *sim.Context, from sim.NodeID, m sim.Message) bool {
	resp, ok := m.(*wire.Response)
	if !ok || !p.started || resp.CorrelationID < p.CorrelationBase || resp.CorrelationID > p.corr {
		return false
	}
	i, ok := p.findRequest(resp.CorrelationID)
	if !ok || p.requests[i].node != from || resp.Connection != p.enc.Connection {
		// Late (its request failed already), duplicated, or written to the
		// connection of this node's previous life (wire.Response).
		return true
	}
	req := p.requests[i]
	p.requests = slices.Delete(p.requests, i, i+1)
	p.handleResponse(ctx, req, resp.Body)
	p.run(ctx)
	return true
}

// HandleTimer processes the producer's timers and reports whether id was one.
func (p *Producer) HandleTimer(ctx *sim.Context, id sim.TimerID, name string) bool {
	if !strings.HasPrefix(name, TimerPrefix) || id != p.timer {
		return false
	}
	p.timer = 0
	p.run(ctx)
	return true
}

// run is the sender's step: expire what is due, ask for a producer id and
// metadata when needed, drain ready batches, and set the wake-up timer.
func (p *Producer) run(ctx *sim.Context) {
	if p.closed {
		return
	}
	p.expireRequests(ctx)
	p.expireBatches(ctx)
	p.maybeInitProducerID(ctx)
	p.maybeSendTxn(ctx)
	p.drain(ctx)
	p.maybeSendMetadata(ctx)
	p.maybeClosed(ctx)
	if !p.closed {
		if at, ok := p.nextWakeup(ctx.Now()); ok {
			p.arm(ctx, at)
		}
	}
}

// arm makes sure the wake-up timer fires no later than at.
func (p *Producer) arm(ctx *sim.Context, at sim.Time) {
	now := ctx.Now()
	at = max(at, now)
	if p.timer != 0 {
		if p.timerAt <= at {
			return
		}
		ctx.CancelTimer(p.timer)
	}
	p.timer, p.timerAt = ctx.SetTimer(at.Sub(now), timerWakeup), at
}

// nextWakeup returns the earliest time the sender has something to do.
func (p *Producer) nextWakeup(now sim.Time) (sim.Time, bool) {
	var at sim.Time
	found := false
	take := func(t sim.Time) {
		if !found || t < at {
			at, found = t, true
		}
	}
	for _, r := range p.requests {
		take(r.deadline)
	}
	for _, w := range p.waiting {
		take(w.deadline)
	}
	for _, ps := range p.partList {
		for _, b := range ps.queue {
			take(b.deadline)
		}
		for _, b := range ps.inflight {
			take(b.deadline)
		}
		if t, ok := p.readyAt(ps); ok && p.txnWakeFor(ps) {
			take(t)
		}
	}
	if t, ok := p.metadataDue(); ok {
		take(t)
	}
	if t, ok := p.initDue(); ok {
		take(t)
	}
	if t, ok := p.txnDue(); ok {
		take(t)
	}
	return max(at, now), found
}
