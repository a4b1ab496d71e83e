package client

// This file is the sender (Sender.java): it drains ready batches into
// Produce (api key 0) v7 requests, one request per leader with at most one
// batch per partition, limited to max.in.flight.requests.per.connection
// unanswered requests per broker; it completes, retries or fails batches
// from the answers. Retriable errors (NOT_LEADER_OR_FOLLOWER,
// LEADER_NOT_AVAILABLE, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
// REQUEST_TIMED_OUT, UNKNOWN_TOPIC_OR_PARTITION, lost answers...) requeue the
// batch at the front of its partition after retry.backoff.ms while retries
// and delivery.timeout.ms allow. As in Kafka: without idempotence a retry
// after an unknown outcome may write the batch twice, and with more than
// one request in flight a retried batch may land after a later one.
// A request unanswered after request.timeout.ms closes the connection
// (NetworkClient.handleTimedOutRequests): every request in flight to that
// broker fails, outcome unknown, and metadata is refreshed. With acks=0 a
// batch completes when sent, with offset -1.
// Simplified vs Kafka: no connection setup, reconnect.backoff or
// max.request.size; the produce request's timeout is request.timeout.ms, as
// Kafka's sender sets it.

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type requestKind uint8

const (
	reqProduce requestKind = iota
	reqMetadata
	reqInitProducerID
	reqTxn // a transactional request (transactions.go)
)

// request is one request in flight.
type request struct {
	kind     requestKind
	corr     int32
	broker   int32
	node     sim.NodeID
	deadline sim.Time
	batches  []*batch  // produce
	inline   [3]*batch // batches' storage when they are few
	op       *txnOp    // transactional
}

// nodeName is a broker's node name in the simulation.
func nodeName(broker int32) string { return "b" + strconv.Itoa(int(broker)) }

// call sends body to broker and, unless it expects no answer, records r
// as in flight with a request.timeout.ms deadline.
func (p *Producer) call(ctx *sim.Context, broker int32, body kmsg.Request, r *request) {
	p.corr++
	r.corr, r.broker, r.deadline = p.corr, broker, ctx.Now().Add(p.cfg.RequestTimeout)
	node, ok := ctx.Lookup(nodeName(broker))
	r.node = node
	if ok {
		ctx.Send(node, p.enc.Request(r.corr, body))
	} else {
		r.node = -1 // unknown broker: the request times out, like one to a dead host
	}
	if r.kind == reqProduce && p.cfg.Acks == config.AcksNone {
		return
	}
	p.addRequest(r)
}

// addRequest records r as in flight. NB: r.corr is the highest yet, so r
// goes last; except after a restart of the same producer (Start starts the
// ids over): then it takes its place, and the place of a request of the
// last life with its id, as a map by id would.
func (p *Producer) addRequest(r *request) {
	if n := len(p.requests); n == 0 || p.requests[n-1].corr < r.corr {
		p.requests = append(p.requests, r)
		return
	}
	if i, found := p.findRequest(r.corr); found {
		p.requests[i] = r
	} else {
		p.requests = slices.Insert(p.requests, i, r)
	}
}

// findRequest returns the index of the request in flight with correlation
// id corr, if there is one.
func (p *Producer) findRequest(corr int32) (int, bool) {
	return slices.BinarySearchFunc(p.requests, corr, func(r *request, corr int32) int { return cmp.Compare(r.corr, corr) })
}

// inflightTo counts the produce requests in flight to broker.
func (p *Producer) inflightTo(broker int32) int {
	n := 0
	for _, r := range p.requests {
		if r.kind == reqProduce && r.broker == broker {
			n++
		}
	}
	return n
}

// drain sends one Produce request per leader holding ready batches.
func (p *Producer) drain(ctx *sim.Context) {
	now := ctx.Now()
	// NB: the ready partitions go to a reused slice, sorted by leader
	// (stably: each leader's in p.partList order), in place of a map of slices
	// per call. The slice is taken, so a drain reentered from a callback
	// gets its own.
	ready := p.ready[:0]
	p.ready = nil
	for _, ps := range p.partList {
		tp := ps.tp
		if len(ps.queue) == 0 {
			continue
		}
		leader := p.meta.leader(tp.Topic, tp.Partition)
		if leader < 0 {
			p.meta.needUpdate = true // unknownLeaderTopics
			continue
		}
		if at, ok := p.readyAt(ps); !ok || at > now {
			continue
		}
		if !p.txnCanSend(ps) {
			continue // AddPartitionsToTxn first
		}
		ready = append(ready, readyPartition{leader, ps})
	}
	slices.SortStableFunc(ready, func(a, b readyPartition) int { return cmp.Compare(a.leader, b.leader) })
	for i := 0; i < len(ready); {
		leader, j := ready[i].leader, i
		for j < len(ready) && ready[j].leader == leader {
			j++
		}
		group := ready[i:j]
		i = j
		if p.inflightTo(leader) >= p.cfg.MaxInFlightRequestsPerConnection {
			continue
		}
		// NB: the request is made here so that its batches can live in
		// it (one allocation for both, in the common case of a few).
		req := &request{kind: reqProduce}
		batches := req.inline[:0]
		if len(group) > len(req.inline) {
			batches = make([]*batch, 0, len(group))
		}
		for _, r := range group {
			ps := r.ps
			b := ps.queue[0]
			ps.queue = ps.queue[1:]
			b.closed = true
			if p.cfg.EnableIdempotence && b.seq < 0 {
				p.assignSequence(ps, b)
			}
			ps.inflight = append(ps.inflight, b)
			batches = append(batches, b)
		}
		req.batches = batches
		p.sendProduce(ctx, leader, req)
	}
	clear(ready)
	p.ready = ready[:0]
}

// readyPartition is a partition drain found ready, with its leader.
type readyPartition struct {
	leader int32
	ps     *partitionState
}

// sendProduce sends r's batches (sorted by partition) to leader.
func (p *Producer) sendProduce(ctx *sim.Context, leader int32, r *request) {
	batches := r.batches
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = int16(p.cfg.Acks)
	req.TimeoutMillis = int32(p.cfg.RequestTimeout.Milliseconds())
	if p.txn != nil {
		// Kafka's Sender sets it; the leader's KIP-890 verification asks
		// the transaction coordinator about this id.
		id := p.txn.id
		req.TransactionID = &id
	}
	for _, b := range batches {
		b.attempts++
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != b.tp.Topic {
			// NB: room for all the batches, the usual case being one topic.
			req.Topics = append(req.Topics, kmsg.ProduceRequestTopic{Topic: b.tp.Topic,
				Partitions: make([]kmsg.ProduceRequestTopicPartition, 0, len(batches))})
		}
		t := &req.Topics[len(req.Topics)-1]
		t.Partitions = append(t.Partitions, kmsg.ProduceRequestTopicPartition{Partition: b.tp.Partition, Records: p.encode(b)})
	}
	p.call(ctx, leader, req, r)
	for _, b := range batches {
		ctx.Log("produce-send", sim.S("partition", b.ps.name), sim.I("broker", int64(leader)), sim.I("batch", int64(b.id)),
			sim.I("records", int64(len(b.recs))), sim.I("base-seq", int64(b.seq)), sim.I("attempt", int64(b.attempts)), sim.I("corr", int64(r.corr)))
	}
	if p.cfg.Acks == config.AcksNone {
		// No answer will come: Kafka completes the batch once it is sent,
		// with offset -1 (outcome unknown).
		for _, b := range batches {
			p.completeBatch(ctx, b.ps, b, -1)
		}
	}
}

// encode renders b as a v2 record batch, with the idempotent producer's
// id, epoch and base sequence. Each attempt gets its own copy, since the
// broker may stamp the partition leader epoch into the bytes it receives.
func (p *Producer) encode(b *batch) []byte {
	// NB: the records go through a reused slice: AppendTo copies them into
	// the bytes sent, and the slice is cleared after.
	recs := p.recs[:0]
	for _, w := range b.recs {
		recs = append(recs, storage.Record{Timestamp: w.ts, Key: w.rec.Key, Value: w.rec.Value, Headers: w.rec.Headers})
	}
	rb := storage.NewBatch(0, recs)
	if b.seq >= 0 {
		rb.ProducerID, rb.ProducerEpoch, rb.BaseSequence = p.idem.producerID, p.idem.epoch, b.seq
	}
	if p.txn != nil {
		rb.Attributes |= transactionalAttribute
	}
	if c := p.cfg.CompressionType.Codec(); c > 0 {
		rb.Attributes |= c // compression.type: the records go compressed (storage/compression.go)
	}
	out := rb.AppendTo(nil)
	clear(recs)
	p.recs = recs[:0]
	return out
}

// errorText returns err.Error(), remembered for Kafka's errors (whose
// Error formats its text anew each time: the sender logs one per retry).
func (p *Producer) errorText(err error) string {
	ke, ok := err.(*kerr.Error)
	if !ok {
		return err.Error()
	}
	if s, ok := p.errTexts[ke]; ok {
		return s
	}
	if p.errTexts == nil {
		p.errTexts = map[*kerr.Error]string{}
	}
	s := ke.Error()
	p.errTexts[ke] = s
	return s
}

func tpName(tp storage.TopicPartition) string {
	return tp.Topic + "-" + strconv.Itoa(int(tp.Partition))
}

// handleResponse dispatches an answer to its request's kind.
func (p *Producer) handleResponse(ctx *sim.Context, r *request, body kmsg.Response) {
	switch r.kind {
	case reqMetadata:
		if resp, ok := body.(*kmsg.MetadataResponse); ok {
			p.handleMetadata(ctx, resp)
		} else {
			p.metadataFailed()
		}
	case reqInitProducerID:
		resp, _ := body.(*kmsg.InitProducerIDResponse)
		p.handleInitProducerID(ctx, resp)
	case reqTxn:
		p.handleTxnResponse(ctx, r, body)
	case reqProduce:
		resp, _ := body.(*kmsg.ProduceResponse)
		for _, b := range r.batches {
			code, base := int16(-1), int64(-1)
			if resp != nil {
				code, base = findPartition(resp, b.tp)
			}
			if code < 0 { // the partition is missing from the answer
				p.batchError(ctx, b, kerr.NetworkException, true)
				continue
			}
			p.batchAnswered(ctx, b, code, base)
		}
	}
}

// findPartition returns tp's error code and base offset in resp, or -1.
func findPartition(resp *kmsg.ProduceResponse, tp storage.TopicPartition) (int16, int64) {
	for _, t := range resp.Topics {
		if t.Topic != tp.Topic {
			continue
		}
		for _, rp := range t.Partitions {
			if rp.Partition == tp.Partition {
				return rp.ErrorCode, rp.BaseOffset
			}
		}
	}
	return -1, -1
}

// batchAnswered applies one partition's answer to b.
func (p *Producer) batchAnswered(ctx *sim.Context, b *batch, code int16, base int64) {
	ps := b.ps
	if code == 0 || (p.cfg.EnableIdempotence && code == kerr.DuplicateSequenceNumber.Code) {
		// DUPLICATE_SEQUENCE_NUMBER: the broker already has the batch.
		p.completeBatch(ctx, ps, b, base)
		return
	}
	err := kerr.TypedErrorForCode(code)
	if err == nil {
		err = &kerr.Error{Message: "UNKNOWN_ERROR_CODE_" + strconv.Itoa(int(code)), Code: code}
	}
	p.batchError(ctx, b, err, !definiteRefusal(err, p.cfg.Acks))
}

// batchError handles a failed attempt of b: retry it or fail it.
func (p *Producer) batchError(ctx *sim.Context, b *batch, err error, unknown bool) {
	ps := b.ps
	b.unknown = b.unknown || unknown
	b.lastErr = err
	ke, _ := err.(*kerr.Error)
	if ke == nil || invalidatesMetadata(ke) {
		p.meta.needUpdate = true
	}
	if b.done {
		p.removeInflight(ps, b)
		return
	}
	if ke == kerr.MessageTooLarge && len(b.recs) > 1 && b.seq < 0 && p.txn == nil {
		p.splitAndRequeue(ctx, ps, b)
		return
	}
	retriable := ke == nil || ke.Retriable
	if p.cfg.EnableIdempotence && ke != nil {
		switch p.idempotentError(ps, b, ke) {
		case idemFatal:
			p.failBatch(ctx, ps, b, err)
			return
		case idemWritten:
			p.completeBatch(ctx, ps, b, -1)
			return
		case idemRetry:
			retriable = true
		}
	}
	if retriable && ps.failed == nil && b.retries < p.cfg.Retries && ctx.Now() < b.deadline {
		p.removeInflight(ps, b)
		b.retries++
		if p.cfg.Mutants.On(mutant.ProducerRetryNewSequence) && b.seq >= 0 {
			// The planted bug (NOT Kafka): the retry is sequenced anew
			// when drained, as a batch the broker has never seen.
			b.seq = -1
		}
		b.retryAt = ctx.Now().Add(p.cfg.RetryBackoff)
		p.requeue(ps, b)
		ctx.Log("produce-retry", sim.S("partition", b.ps.name), sim.I("batch", int64(b.id)), sim.S("error", p.errorText(err)),
			sim.I("retry", int64(b.retries)), sim.S("unknown", strconv.FormatBool(b.unknown)))
		return
	}
	p.failBatch(ctx, ps, b, err)
}

// splitAndRequeue is Kafka's Sender answer to MESSAGE_TOO_LARGE for a
// batch of more than one record (RecordAccumulator.splitAndReenqueue): the
// batch is split and its records go back to the front of the queue, here
// one record per batch (Kafka splits by batch.size), keeping their
// creation time and delivery deadline. A record alone in its batch that is
// still too large then fails. NB: only without sequence numbers: Kafka
// re-sequences the split batches of an idempotent producer, which is not
// modelled; there the batch fails as a whole (MESSAGE_TOO_LARGE is not
// retriable).
func (p *Producer) splitAndRequeue(ctx *sim.Context, ps *partitionState, b *batch) {
	p.removeInflight(ps, b)
	b.done = true
	parts := make([]*batch, 0, len(b.recs))
	for _, w := range b.recs {
		p.batchSeq++
		nb := &batch{id: p.batchSeq, tp: b.tp, ps: ps, created: b.created, deadline: b.deadline, seq: -1,
			bytes: storage.RecordBatchOverhead + estimateSize(&w.rec), closed: true, unknown: b.unknown}
		nb.recs = append(nb.first[:0], w)
		parts = append(parts, nb)
	}
	ps.queue = slices.Insert(ps.queue, 0, parts...)
	ctx.Log("produce-split", sim.S("partition", ps.name), sim.I("batch", int64(b.id)), sim.I("records", int64(len(b.recs))))
}

// requeue puts a batch to retry at the front of its queue (reenqueue);
// the idempotent producer keeps the queue's sequenced batches in
// sequence order (insertInSequenceOrder).
func (p *Producer) requeue(ps *partitionState, b *batch) {
	i := 0
	if p.cfg.EnableIdempotence {
		for i < len(ps.queue) && ps.queue[i].seq >= 0 && seqBefore(ps.queue[i].seq, b.seq) {
			i++
		}
	}
	ps.queue = slices.Insert(ps.queue, i, b)
}

func (p *Producer) removeInflight(ps *partitionState, b *batch) {
	ps.inflight = slices.DeleteFunc(ps.inflight, func(x *batch) bool { return x == b })
}

// completeBatch acknowledges b's records at base, base+1, ...
func (p *Producer) completeBatch(ctx *sim.Context, ps *partitionState, b *batch, base int64) {
	p.removeInflight(ps, b)
	if p.cfg.EnableIdempotence && b.seq >= 0 {
		p.sequenceAcked(ps, b)
	}
	if b.done {
		return // expired already: its records were failed
	}
	b.done = true
	ctx.Log("produce-ack", sim.S("partition", b.ps.name), sim.I("batch", int64(b.id)), sim.I("base-offset", base),
		sim.I("records", int64(len(b.recs))), sim.I("attempts", int64(b.attempts)))
	for i, w := range b.recs {
		off := int64(-1)
		if base >= 0 {
			off = base + int64(i)
		}
		p.completeRecord(ctx, w, b.tp.Partition, off, nil)
	}
}

// failBatch fails b's records with err.
func (p *Producer) failBatch(ctx *sim.Context, ps *partitionState, b *batch, err error) {
	if b.done {
		return
	}
	b.done = true
	if slices.Contains(ps.inflight, b) {
		if err == ErrDeliveryTimeout {
			b.unknown = true // KIP-91 expires it in flight: its answer will not count
		}
		p.removeInflight(ps, b)
	} else {
		ps.queue = slices.DeleteFunc(ps.queue, func(x *batch) bool { return x == b })
	}
	definite := !b.unknown
	ctx.Log("produce-fail", sim.S("partition", b.ps.name), sim.I("batch", int64(b.id)), sim.S("error", p.errorText(err)),
		sim.S("definite", strconv.FormatBool(definite)), sim.I("attempts", int64(b.attempts)))
	for _, w := range b.recs {
		p.completeRecord(ctx, w, b.tp.Partition, -1, &SendError{Err: err, Definite: definite, Attempts: b.attempts})
	}
	if p.cfg.EnableIdempotence && b.seq >= 0 && ps.failed == nil {
		p.failPartition(ctx, ps, err)
	}
	p.txnBatchFailed(ctx, b, err)
}

// expireRequests fails the requests past request.timeout.ms: each closes
// its broker's connection, failing everything in flight on it.
func (p *Producer) expireRequests(ctx *sim.Context) {
	now := ctx.Now()
	var brokers []int32
	for _, r := range p.requests {
		if r.deadline <= now && !slices.Contains(brokers, r.broker) {
			brokers = append(brokers, r.broker)
		}
	}
	slices.Sort(brokers)
	for _, b := range brokers {
		p.disconnect(ctx, b, now)
	}
}

// HandleDisconnect is told that node reset the connection (its process is
// gone: sim.Disconnectable): everything in flight to it fails at once with
// ErrDisconnected, retriable, as Kafka's NetworkClient fails the requests
// of a connection it finds closed.
func (p *Producer) HandleDisconnect(ctx *sim.Context, node sim.NodeID) {
	if !p.started {
		return
	}
	broker := int32(-1)
	for _, r := range p.requests {
		if r.node == node {
			broker = r.broker
			break
		}
	}
	if broker >= 0 {
		p.disconnect(ctx, broker, ctx.Now())
	}
}

// disconnect fails every request in flight to broker, in the order sent.
func (p *Producer) disconnect(ctx *sim.Context, broker int32, now sim.Time) {
	var rs []*request
	for _, r := range p.requests { // NB: in correlation id order, the order sent
		if r.broker == broker {
			rs = append(rs, r)
		}
	}
	ctx.Log("producer-disconnect", sim.I("broker", int64(broker)), sim.I("in-flight", int64(len(rs))))
	p.meta.needUpdate = true
	for _, r := range rs {
		// NB: one at a time, as each is handled: a callback run below sees
		// the rest still in flight.
		if i, ok := p.findRequest(r.corr); ok {
			p.requests = slices.Delete(p.requests, i, i+1)
		}
		err := ErrDisconnected
		if r.deadline <= now {
			err = ErrRequestTimeout
		}
		switch r.kind {
		case reqMetadata:
			p.metadataFailed()
		case reqInitProducerID:
			p.initFailed(ctx, err)
		case reqTxn:
			p.handleTxnResponse(ctx, r, nil)
		case reqProduce:
			for _, b := range r.batches {
				p.batchError(ctx, b, err, true)
			}
		}
	}
}
