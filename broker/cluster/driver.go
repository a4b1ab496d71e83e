package cluster

// This file is a simple workload node for cluster tests and benchmarks: it
// sends single-record Produce requests round-robin over a topic's
// partitions at a fixed interval, each to the partition's leader as the
// latest Metadata answer names it, and records every outcome. It is not
// Kafka's producer (no batching, no retries, no idempotence: that is
// package client); it is the simplest honest source of acknowledged
// writes.

import (
	"strconv"

	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/internal/slab"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Outcome is what became of one produced record.
type Outcome struct {
	Partition int32
	Value     string
	Sent      sim.Time
	Done      sim.Time
	Offset    int64  // when acknowledged
	Error     string // Kafka error name, "timeout", or "" when acknowledged
}

// Acked reports whether the record was acknowledged.
func (o Outcome) Acked() bool { return o.Error == "" && o.Done > 0 }

// Driver produces Records records to Topic.
type Driver struct {
	Topic      string
	Partitions int
	Records    int
	ValueSize  int
	Acks       int16
	Interval   sim.Duration
	Timeout    sim.Duration
	Brokers    int

	Outcomes []Outcome

	sent      int
	enc       wire.Encoder
	corr      int32
	pending   map[int32]pending // correlation -> what waits for its answer
	timeouts  map[sim.TimerID]int32
	leaders   map[int32]int32
	metaAsked bool
	nextMeta  int
	nodes     map[int32]sim.NodeID // broker id -> node, once looked up
	values    valueChunk           // the next records' values
	record    [1]storage.Record    // scratch for the next batch
	batches   []byte               // the chunk batches are carved from
	calls     slab.Slab[produceCall]
}

// valueChunk holds the values of records first to first+valueChunkLen-1,
// made together: one string, sliced per record.
type valueChunk struct {
	first int
	str   string
	bytes []byte // str's bytes, as scratch for encoding
	ends  [valueChunkLen]int
}

const valueChunkLen = 64

// xs pads values (valueOf), a run at a time.
const xs = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

// valueOf returns record n's value, "v%07d-" of n padded with x's to
// ValueSize, and its bytes (valid until the next call; the batch encoding
// copies them).
func (d *Driver) valueOf(n int) (string, []byte) {
	c := &d.values
	if c.str == "" || n < c.first || n >= c.first+valueChunkLen {
		c.first = n
		b := c.bytes[:0]
		var digits [20]byte
		for k := range valueChunkLen {
			start := len(b)
			b = append(b, 'v')
			if num := strconv.AppendInt(digits[:0], int64(n+k), 10); len(num) < 7 {
				b = append(append(b, "0000000"[len(num):]...), num...)
			} else {
				b = append(b, num...)
			}
			b = append(b, '-')
			for pad := d.ValueSize - (len(b) - start); pad > 0; pad -= len(xs) {
				b = append(b, xs[:min(pad, len(xs))]...)
			}
			c.ends[k] = len(b)
		}
		c.bytes, c.str = b, string(b)
	}
	k := n - c.first
	start := 0
	if k > 0 {
		start = c.ends[k-1]
	}
	return c.str[start:c.ends[k]], c.bytes[start:c.ends[k]:c.ends[k]]
}

// produceCall is a Produce request of one record and its wire envelope in
// one allocation.
type produceCall struct {
	msg    wire.Request
	body   kmsg.ProduceRequest
	topics [1]kmsg.ProduceRequestTopic
	parts  [1]kmsg.ProduceRequestTopicPartition
}

const (
	timerSend    = "driver-send"
	timerTimeout = "driver-timeout"
	timerMeta    = "driver-metadata"
)

// Start implements sim.Node.
func (d *Driver) Start(ctx *sim.Context) {
	d.pending = map[int32]pending{}
	d.timeouts = map[sim.TimerID]int32{}
	d.leaders = map[int32]int32{}
	d.nodes = map[int32]sim.NodeID{}
	d.refreshMetadata(ctx)
	ctx.SetTimer(d.Interval, timerSend)
}

// call sends req to broker and returns its correlation id and timeout.
func (d *Driver) call(ctx *sim.Context, broker int32, req kmsg.Request, msg *wire.Request) (int32, sim.TimerID) {
	d.corr++
	to, ok := d.nodes[broker]
	if !ok {
		if to, ok = ctx.Lookup(server.NodeName(broker)); ok {
			d.nodes[broker] = to
		}
	}
	if ok {
		if msg == nil {
			msg = new(wire.Request)
		}
		ctx.Send(to, d.enc.RequestIn(msg, d.corr, req))
	}
	timer := ctx.SetTimer(d.Timeout, timerTimeout)
	d.timeouts[timer] = d.corr
	return d.corr, timer
}

// pending is a request waiting for its answer: the outcome it decides (-1
// for metadata) and its timeout, cancelled when the answer comes (a timer
// left to fire on an answered request was 6% of a run's events).
type pending struct {
	outcome int
	timer   sim.TimerID
}

func (d *Driver) refreshMetadata(ctx *sim.Context) {
	if d.metaAsked {
		return
	}
	d.metaAsked = true
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 7
	topic := d.Topic
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: &topic}}
	d.nextMeta = (d.nextMeta + 1) % d.Brokers
	corr, timer := d.call(ctx, int32(d.nextMeta), req, nil)
	d.pending[corr] = pending{-1, timer}
}

// Timer implements sim.Node.
func (d *Driver) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	switch name {
	case timerSend:
		if d.sent < d.Records {
			d.send(ctx)
			ctx.SetTimer(d.Interval, timerSend)
		}
	case timerMeta:
		d.refreshMetadata(ctx)
	case timerTimeout:
		corr, ok := d.timeouts[id]
		if !ok {
			return
		}
		delete(d.timeouts, id)
		if pd, ok := d.pending[corr]; ok {
			i := pd.outcome
			delete(d.pending, corr)
			if i < 0 {
				d.metaAsked = false
				ctx.SetTimer(100*sim.Millisecond, timerMeta)
				return
			}
			d.Outcomes[i].Error, d.Outcomes[i].Done = "timeout", ctx.Now()
			d.refreshMetadata(ctx)
		}
	}
}

func (d *Driver) send(ctx *sim.Context) {
	p := int32(d.sent % d.Partitions)
	value, v := d.valueOf(d.sent)
	d.sent++
	d.Outcomes = append(d.Outcomes, Outcome{Partition: p, Value: value, Sent: ctx.Now(), Offset: -1})
	i := len(d.Outcomes) - 1
	leader, ok := d.leaders[p]
	if !ok || leader < 0 {
		d.Outcomes[i].Error, d.Outcomes[i].Done = kerr.LeaderNotAvailable.Error(), ctx.Now()
		d.refreshMetadata(ctx)
		return
	}
	d.record[0] = storage.Record{Timestamp: ctx.Now().Sub(0).Milliseconds(), Value: v} // copied by the encoding
	b := storage.NewBatch(0, d.record[:])
	c := d.calls.New()
	c.body = kmsg.NewProduceRequest()
	req := &c.body
	req.Version = 7
	req.Acks = d.Acks
	req.TimeoutMillis = int32(d.Timeout.Milliseconds())
	// The batch is carved from a shared chunk, never written again once
	// sent (messages are immutable).
	if need := b.EncodedSize(); cap(d.batches)-len(d.batches) < need {
		d.batches = make([]byte, 0, max(16<<10, need))
	}
	start := len(d.batches)
	d.batches = b.AppendTo(d.batches)
	c.parts[0] = kmsg.ProduceRequestTopicPartition{Partition: p, Records: d.batches[start:len(d.batches):len(d.batches)]}
	c.topics[0] = kmsg.ProduceRequestTopic{Topic: d.Topic, Partitions: c.parts[:]}
	req.Topics = c.topics[:]
	d.record[0] = storage.Record{}
	corr, timer := d.call(ctx, leader, req, &c.msg)
	if d.Acks == 0 {
		d.Outcomes[i].Error, d.Outcomes[i].Done = "acks=0", ctx.Now() // unknown by design
		return
	}
	d.pending[corr] = pending{i, timer}
}

// Receive implements sim.Node.
func (d *Driver) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	r, ok := m.(*wire.Response)
	if !ok {
		return
	}
	pd, ok := d.pending[r.CorrelationID]
	if !ok {
		return
	}
	i := pd.outcome
	delete(d.pending, r.CorrelationID)
	ctx.CancelTimer(pd.timer)
	delete(d.timeouts, pd.timer)
	switch body := r.Body.(type) {
	case *kmsg.MetadataResponse:
		d.metaAsked = false
		for _, t := range body.Topics {
			for _, p := range t.Partitions {
				d.leaders[p.Partition] = p.Leader
			}
		}
		if len(body.Topics) == 0 || len(body.Topics[0].Partitions) == 0 {
			ctx.SetTimer(100*sim.Millisecond, timerMeta)
		}
	case *kmsg.ProduceResponse:
		o := &d.Outcomes[i]
		o.Done = ctx.Now()
		rp := body.Topics[0].Partitions[0]
		if rp.ErrorCode != 0 {
			o.Error = kerr.ErrorForCode(rp.ErrorCode).Error()
			d.refreshMetadata(ctx)
			return
		}
		o.Offset = rp.BaseOffset
	}
}
