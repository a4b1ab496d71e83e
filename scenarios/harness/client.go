package harness

// This file is the scripted client: a node that performs one produce per
// script step, the way a Kafka client does it at the protocol level — a
// Metadata request to find the leader, then a Produce to it — and records
// each operation in the history. It never retries, so a step is exactly
// one attempt: the KIP traces need that control. (The swarm scenario uses
// the full producer of package client.)
//
// The end phase's checker client shares its Metadata requests: the
// liveness phase probes every partition at once, and one Metadata request
// per probe, each answered with every partition of the topic, cost the
// square of the partition count (a 2,000-partition topic: 870 MB of
// answers in flight together). Its produces of one topic that need
// metadata while a request for that topic is in flight ride on that
// request's answer, as a real client's metadata cache would serve them.
// A rider's deadline is looked at when the shared request is (at most a
// second late); the probes of one round share one deadline anyway.

import (
	"strconv"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// definitelyNotWritten are the produce errors Kafka returns before
// appending: the record certainly is not in the log.
var definitelyNotWritten = map[int16]bool{
	kerr.NotEnoughReplicas.Code: true, kerr.InvalidRequiredAcks.Code: true, kerr.NotLeaderForPartition.Code: true,
	kerr.UnknownTopicOrPartition.Code: true, kerr.LeaderNotAvailable.Code: true, kerr.CorruptMessage.Code: true,
	kerr.FencedLeaderEpoch.Code: true, kerr.OutOfOrderSequenceNumber.Code: true, kerr.InvalidProducerEpoch.Code: true,
	kerr.MessageTooLarge.Code: true,
}

type produceCall struct {
	op       checkers.OpID
	topic    string
	part     int32
	value    string
	key      *string // nil: no key
	acks     int16
	deadline sim.Time
	broker   int32 // broker asked for metadata
	tries    int
	sentAt   sim.Time
	produced bool // the Produce was sent (else waiting for metadata)
}

// scriptClient is one named client of a script.
type scriptClient struct {
	name    string
	brokers int
	rec     *checkers.Recorder
	enc     wire.Encoder
	corr    int32
	calls   map[int32]*produceCall // by correlation id of the request in flight
	done    map[string]bool        // values whose operation completed
	acked   map[string]bool        // values acknowledged (ok)
	// outcomes are the completed operations' outcomes, by value: what an
	// 'await CLIENT ack VALUE' step reports when it is not an ack.
	outcomes map[string]produceOutcome
	timer    sim.TimerID
	// shareMetadata: produces of one topic share a Metadata request in
	// flight (the checker client; see the file's header).
	shareMetadata bool
	metaInFlight  map[string]int32         // topic -> correlation id of its Metadata request
	riders        map[int32][]*produceCall // calls waiting on another call's Metadata request
}

// produceOutcome is how one scripted produce ended.
type produceOutcome struct {
	outcome checkers.Outcome // OK, Fail (certainly not written) or Info (unknown)
	err     string           // one word: Kafka's error name, timeout, no-metadata, acks=0; "" when acknowledged
	history string           // the history's error text, when not err (Kafka's message too)
}

// kafkaOutcome is the outcome of a produce answered with a Kafka error.
func kafkaOutcome(o checkers.Outcome, code int16) produceOutcome {
	e := kerr.ErrorForCode(code)
	name := e.Error()
	if ke, ok := e.(*kerr.Error); ok {
		name = ke.Message
	}
	return produceOutcome{outcome: o, err: name, history: e.Error()}
}

// String renders an outcome for an await's error: "refused:
// NOT_ENOUGH_REPLICAS (certainly not written)".
func (o produceOutcome) String() string {
	switch o.outcome {
	case checkers.OK:
		return "acknowledged"
	case checkers.Fail:
		return "refused: " + o.err + " (certainly not written)"
	}
	return "unknown: " + o.err + " (" + unknownWhy[o.err] + "may or may not be written)"
}

// unknownWhy explains the client's own unknown outcomes.
var unknownWhy = map[string]string{"timeout": "no answer before the produce's timeout: ", "acks=0": "acks=0 is never answered: "}

func newScriptClient(name string, brokers int, rec *checkers.Recorder) *scriptClient {
	// Each record is sent on its own (its own metadata lookup, one
	// attempt, no order kept between them): declared as such, so its
	// records may land in any order but never twice.
	rec.Producer(checkers.Producer{Process: name, Independent: true})
	return &scriptClient{name: name, brokers: brokers, rec: rec, calls: map[int32]*produceCall{}, done: map[string]bool{}, acked: map[string]bool{},
		outcomes: map[string]produceOutcome{}, metaInFlight: map[string]int32{}, riders: map[int32][]*produceCall{}}
}

func (c *scriptClient) Start(ctx *sim.Context) {}

func (c *scriptClient) send(ctx *sim.Context, broker int32, req kmsg.Request, call *produceCall) {
	c.corr++
	c.calls[c.corr] = call
	if n, ok := ctx.Lookup("b" + strconv.Itoa(int(broker))); ok {
		ctx.Send(n, c.enc.Request(c.corr, req))
	}
	if c.timer == 0 {
		c.timer = ctx.SetTimer(100*sim.Millisecond, "client-tick")
	}
}

// produce starts one produce of value to topic/partition.
func (c *scriptClient) produce(ctx *sim.Context, topic string, part int32, value string, key *string, acks int16, timeout sim.Duration) {
	k := ""
	if key != nil {
		k = *key
	}
	op := c.rec.Send(ctx.Now(), c.name, topic, part, k, value, acks)
	call := &produceCall{op: op, topic: topic, part: part, value: value, key: key, acks: acks, deadline: ctx.Now().Add(timeout)}
	c.askMetadata(ctx, call)
}

func (c *scriptClient) askMetadata(ctx *sim.Context, call *produceCall) {
	if corr, ok := c.metaInFlight[call.topic]; ok && c.shareMetadata {
		call.sentAt = c.calls[corr].sentAt
		c.riders[corr] = append(c.riders[corr], call)
		return
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 7
	t := call.topic
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: &t}}
	call.broker = int32(call.tries % c.brokers)
	call.tries++
	call.sentAt = ctx.Now()
	c.send(ctx, call.broker, req, call)
	if c.shareMetadata {
		c.metaInFlight[call.topic] = c.corr
	}
}

// untrack forgets corr's Metadata request as the one in flight for its
// topic and returns the calls that rode on it.
func (c *scriptClient) untrack(corr int32, call *produceCall) []*produceCall {
	if c.metaInFlight[call.topic] == corr {
		delete(c.metaInFlight, call.topic)
	}
	riders := c.riders[corr]
	delete(c.riders, corr)
	return riders
}

// finish records how call ended: in the history (rec), for awaits, and in
// the trace, so that the timeline shows refused and unknown produces with
// their error as it shows acknowledgements.
func (c *scriptClient) finish(ctx *sim.Context, call *produceCall, o produceOutcome) {
	now := ctx.Now()
	hist := o.err
	if o.history != "" {
		hist = o.history
	}
	switch o.outcome {
	case checkers.Fail:
		c.rec.Fail(call.op, now, hist)
		ctx.Log("client-fail", sim.S("client", c.name), sim.S("value", call.value), sim.S("error", o.err))
	case checkers.Info:
		c.rec.Info(call.op, now, hist)
		ctx.Log("client-unknown", sim.S("client", c.name), sim.S("value", call.value), sim.S("error", o.err))
	}
	c.done[call.value] = true
	c.outcomes[call.value] = o
}

func (c *scriptClient) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	r, ok := m.(*wire.Response)
	if !ok {
		return
	}
	call, ok := c.calls[r.CorrelationID]
	if !ok {
		return
	}
	delete(c.calls, r.CorrelationID)
	now := ctx.Now()
	switch body := r.Body.(type) {
	case *kmsg.MetadataResponse:
		riders := c.untrack(r.CorrelationID, call)
		c.onMetadata(ctx, call, body)
		for _, rc := range riders {
			c.onMetadata(ctx, rc, body)
		}
	case *kmsg.ProduceResponse:
		p := body.Topics[0].Partitions[0]
		switch {
		case p.ErrorCode == 0:
			c.rec.Acked(call.op, now, p.BaseOffset)
			c.acked[call.value] = true
			ctx.Log("client-ack", sim.S("client", c.name), sim.S("value", call.value), sim.I("offset", p.BaseOffset))
			c.finish(ctx, call, produceOutcome{outcome: checkers.OK})
		case definitelyNotWritten[p.ErrorCode] && !(p.ErrorCode == kerr.NotLeaderForPartition.Code && call.acks == -1):
			// NB: with acks=all, NOT_LEADER_OR_FOLLOWER also answers records
			// appended and then abandoned by a leader that lost leadership.
			c.finish(ctx, call, kafkaOutcome(checkers.Fail, p.ErrorCode))
		default:
			c.finish(ctx, call, kafkaOutcome(checkers.Info, p.ErrorCode))
		}
	}
}

// onMetadata sends call's Produce to the leader body names, or fails it
// when none is named.
func (c *scriptClient) onMetadata(ctx *sim.Context, call *produceCall, body *kmsg.MetadataResponse) {
	now := ctx.Now()
	leader := int32(-1)
	for _, t := range body.Topics {
		for _, p := range t.Partitions {
			if p.Partition == call.part {
				leader = p.Leader
			}
		}
	}
	if leader < 0 {
		c.finish(ctx, call, produceOutcome{outcome: checkers.Fail, err: "LEADER_NOT_AVAILABLE"})
		return
	}
	c.rec.SetLeader(call.op, leader)
	b := newBatch(call.value, call.key, now)
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = call.acks
	req.TimeoutMillis = int32(max(call.deadline.Sub(now), sim.Millisecond).Milliseconds())
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: call.topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: call.part, Records: b}}}}
	ctx.Log("client-produce", sim.S("client", c.name), sim.S("value", call.value), sim.I("leader", int64(leader)), sim.I("acks", int64(call.acks)))
	if call.acks == 0 {
		if n, ok := ctx.Lookup("b" + strconv.Itoa(int(leader))); ok {
			c.corr++
			ctx.Send(n, c.enc.Request(c.corr, req))
		}
		c.finish(ctx, call, produceOutcome{outcome: checkers.Info, err: "acks=0"})
		return
	}
	call.produced = true
	c.send(ctx, leader, req, call)
}

// Timer expires calls past their deadline: a produce sent and unanswered
// is unknown; one whose metadata never came was never sent.
func (c *scriptClient) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	c.timer = 0
	now := ctx.Now()
	var due []int32
	for corr, call := range c.calls {
		if now >= call.deadline || (!call.produced && now.Sub(call.sentAt) >= sim.Second) {
			due = append(due, corr)
		}
	}
	sortInt32(due)
	for _, corr := range due {
		call := c.calls[corr]
		delete(c.calls, corr)
		var riders []*produceCall
		if !call.produced {
			riders = c.untrack(corr, call)
		}
		for _, call := range append([]*produceCall{call}, riders...) {
			switch {
			case c.done[call.value]:
			case call.produced:
				c.finish(ctx, call, produceOutcome{outcome: checkers.Info, err: "timeout", history: "request timed out"})
			case now >= call.deadline:
				c.finish(ctx, call, produceOutcome{outcome: checkers.Fail, err: "no-metadata", history: "no metadata"})
			default:
				c.askMetadata(ctx, call) // unanswered for a second: ask another broker
			}
		}
	}
	if len(c.calls) > 0 && c.timer == 0 {
		c.timer = ctx.SetTimer(100*sim.Millisecond, "client-tick")
	}
}

func sortInt32(xs []int32) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// newBatch encodes one record (key nil: no key) as a v2 batch.
func newBatch(value string, key *string, now sim.Time) []byte {
	r := storage.Record{Timestamp: int64(now) / int64(sim.Millisecond), Value: []byte(value)}
	if key != nil {
		r.Key = []byte(*key)
	}
	b := storage.NewBatch(0, []storage.Record{r})
	return b.AppendTo(nil)
}
