package client

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// app is a node embedding a Producer; tests drive it with World.Act.
type app struct {
	cfg       config.Producer
	bootstrap []int32
	p         *Producer
	results   map[string]result // by record value
	order     []string          // values in callback order
}

type result struct {
	md  RecordMetadata
	err error
}

func (a *app) Start(ctx *sim.Context) {
	a.p = New(a.cfg, a.bootstrap)
	a.p.Start(ctx)
}

func (a *app) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	if !a.p.HandleMessage(ctx, from, m) {
		panic(fmt.Sprintf("app: unexpected message %s", m.Kind()))
	}
}

func (a *app) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	if !a.p.HandleTimer(ctx, id, name) {
		panic(fmt.Sprintf("app: unexpected timer %q", name))
	}
}

// record is the callback that keeps results.
func (a *app) record(value string) Callback {
	return func(ctx *sim.Context, md RecordMetadata, err error) {
		if _, dup := a.results[value]; dup {
			panic("callback ran twice for " + value)
		}
		a.results[value] = result{md, err}
		a.order = append(a.order, value)
	}
}

// fakeCluster is the state shared by the fake brokers of a test: the
// leaders they advertise and the partitions' logs. (Test-only shortcut:
// real brokers share nothing.)
type fakeCluster struct {
	brokers    []int32
	partitions map[string]int
	leaders    map[storage.TopicPartition]int32
	epochs     map[storage.TopicPartition]int32
	logs       map[storage.TopicPartition][]entry
	// idempotent turns on the broker's sequence checks (reference §4.6).
	idempotent bool
	producers  map[producerKey]*producerEntry
	nextPID    int64
	// hook, if set, may answer a partition's produce with an error code
	// before the append (appendFirst=false) or after it (true), or drop the
	// whole request (drop).
	hook func(broker int32, tp storage.TopicPartition, rb storage.RecordBatch) (code int16, appendFirst, drop bool)
	// requests counts produce batches seen per partition, with sizes.
	batches map[storage.TopicPartition][]int
	// txn, when set, is the cluster's transaction coordinator
	// (transactions_test.go).
	txn *fakeTxn
}

type entry struct {
	offset int64
	value  string
}

type producerKey struct {
	pid int64
	tp  storage.TopicPartition
}

type seqBatch struct {
	first, last int32
	offset      int64
}

// producerEntry is ProducerStateEntry: the epoch and the last 5 batches.
type producerEntry struct {
	epoch   int16
	batches []seqBatch
}

func newFakeCluster(brokers int, topics map[string]int) *fakeCluster {
	c := &fakeCluster{partitions: topics, leaders: map[storage.TopicPartition]int32{}, epochs: map[storage.TopicPartition]int32{},
		logs: map[storage.TopicPartition][]entry{}, producers: map[producerKey]*producerEntry{}, nextPID: 1000,
		batches: map[storage.TopicPartition][]int{}}
	for i := 0; i < brokers; i++ {
		c.brokers = append(c.brokers, int32(i))
	}
	for t, n := range topics {
		for p := 0; p < n; p++ {
			c.leaders[storage.TopicPartition{Topic: t, Partition: int32(p)}] = int32(p % brokers)
		}
	}
	return c
}

// values returns a partition's log values in offset order.
func (c *fakeCluster) values(tp storage.TopicPartition) []string {
	var out []string
	for _, e := range c.logs[tp] {
		out = append(out, e.value)
	}
	return out
}

// fakeBroker serves Metadata, InitProducerId and Produce from a fakeCluster.
type fakeBroker struct {
	id  int32
	c   *fakeCluster
	enc wire.Encoder
}

func (b *fakeBroker) Start(*sim.Context)                      {}
func (b *fakeBroker) Timer(*sim.Context, sim.TimerID, string) {}

func (b *fakeBroker) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	req := m.(*wire.Request)
	var resp kmsg.Response
	switch body := req.Body.(type) {
	case *kmsg.MetadataRequest:
		resp = b.metadata(body)
	case *kmsg.InitProducerIDRequest:
		r := kmsg.NewPtrInitProducerIDResponse()
		if body.TransactionalID != nil {
			resp = b.serveTxn(body) // transactions_test.go
			break
		}
		r.ProducerID, r.ProducerEpoch = b.c.nextPID, 0
		b.c.nextPID++
		resp = r
	case *kmsg.ProduceRequest:
		r, drop := b.produce(ctx, body)
		if drop || body.Acks == 0 {
			return
		}
		resp = r
	default:
		if resp = b.serveTxn(req.Body); resp == nil {
			panic("fake broker: unexpected " + req.Kind())
		}
	}
	resp.SetVersion(req.Body.GetVersion())
	ctx.Send(from, b.enc.Response(req.CorrelationID, resp))
}

func (b *fakeBroker) metadata(body *kmsg.MetadataRequest) *kmsg.MetadataResponse {
	r := kmsg.NewPtrMetadataResponse()
	for _, id := range b.c.brokers {
		r.Brokers = append(r.Brokers, kmsg.MetadataResponseBroker{NodeID: id, Host: fmt.Sprintf("b%d", id), Port: 9092})
	}
	for _, rt := range body.Topics {
		name := *rt.Topic
		t := kmsg.MetadataResponseTopic{Topic: &name}
		n, ok := b.c.partitions[name]
		if !ok {
			t.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
		for p := 0; p < n; p++ {
			tp := storage.TopicPartition{Topic: name, Partition: int32(p)}
			rp := kmsg.MetadataResponseTopicPartition{Partition: int32(p), Leader: b.c.leaders[tp], LeaderEpoch: b.c.epochs[tp]}
			if rp.Leader < 0 {
				rp.ErrorCode = kerr.LeaderNotAvailable.Code
			}
			t.Partitions = append(t.Partitions, rp)
		}
		r.Topics = append(r.Topics, t)
	}
	return r
}

func (b *fakeBroker) produce(ctx *sim.Context, body *kmsg.ProduceRequest) (*kmsg.ProduceResponse, bool) {
	r := kmsg.NewPtrProduceResponse()
	for _, t := range body.Topics {
		rt := kmsg.ProduceResponseTopic{Topic: t.Topic}
		for _, pd := range t.Partitions {
			tp := storage.TopicPartition{Topic: t.Topic, Partition: pd.Partition}
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.BaseOffset = pd.Partition, -1
			rbs, err := storage.DecodeBatches(pd.Records)
			if err != nil || len(rbs) != 1 {
				panic(fmt.Sprintf("fake broker: bad records: %v (%d batches)", err, len(rbs)))
			}
			rb := rbs[0]
			b.c.batches[tp] = append(b.c.batches[tp], len(rb.Records))
			code, appendFirst, drop := int16(0), false, false
			if b.c.txn != nil {
				code = b.c.txn.verify(rb, tp)
			}
			if b.c.hook != nil && code == 0 {
				code, appendFirst, drop = b.c.hook(b.id, tp, rb)
			}
			switch {
			case drop:
				return nil, true
			case b.c.leaders[tp] != b.id:
				rp.ErrorCode = kerr.NotLeaderForPartition.Code
			case code != 0 && !appendFirst:
				rp.ErrorCode = code
			default:
				rp.ErrorCode, rp.BaseOffset = b.append(tp, rb)
				if rp.ErrorCode == 0 && code != 0 {
					rp.ErrorCode, rp.BaseOffset = code, -1
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		r.Topics = append(r.Topics, rt)
	}
	return r, false
}

// append applies the sequence rules of reference §4.6 when the producer id
// is set, then appends.
func (b *fakeBroker) append(tp storage.TopicPartition, rb storage.RecordBatch) (int16, int64) {
	log := b.c.logs[tp]
	base := int64(len(log))
	if b.c.idempotent && rb.ProducerID >= 0 {
		key := producerKey{rb.ProducerID, tp}
		e := b.c.producers[key]
		first := rb.BaseSequence
		last := incrementSequence(first, int32(len(rb.Records))-1)
		if e != nil {
			for _, sb := range e.batches {
				if sb.first == first && sb.last == last {
					return 0, sb.offset // duplicate: the original offset
				}
			}
		}
		switch {
		case e != nil && rb.ProducerEpoch < e.epoch:
			return kerr.InvalidProducerEpoch.Code, -1
		case e == nil || rb.ProducerEpoch != e.epoch:
			// New producer or epoch: firstSeq must be 0 unless there is
			// no state.
			if first != 0 && e != nil {
				return kerr.OutOfOrderSequenceNumber.Code, -1
			}
			e = &producerEntry{epoch: rb.ProducerEpoch}
			b.c.producers[key] = e
		default:
			lastSeq := e.batches[len(e.batches)-1].last
			if !(first == lastSeq+1 || (first == 0 && lastSeq == 2147483647)) {
				return kerr.OutOfOrderSequenceNumber.Code, -1
			}
		}
		e.batches = append(e.batches, seqBatch{first, last, base})
		if len(e.batches) > 5 {
			e.batches = e.batches[1:]
		}
	}
	for i, rec := range rb.Records {
		log = append(log, entry{offset: base + int64(i), value: string(rec.Value)})
	}
	b.c.logs[tp] = log
	return 0, base
}

// world builds a world with the fake cluster's brokers and an app node.
func world(t *testing.T, seed uint64, link sim.LinkConfig, c *fakeCluster, cfg config.Producer) (*sim.World, sim.NodeID, *app) {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed, KeepTrace: true, Link: link})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range c.brokers {
		b := &fakeBroker{id: id, c: c}
		nid, err := w.AddNode(fmt.Sprintf("b%d", id), func() sim.Node { return b }, sim.NodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		must(t, w.Inject(sim.Start{Node: nid}))
	}
	a := &app{cfg: cfg, bootstrap: c.brokers, results: map[string]result{}}
	id, err := w.AddNode("producer", func() sim.Node { return a }, sim.NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must(t, w.Inject(sim.Start{Node: id}))
	return w, id, a
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// run runs the world and fails the test on a panic.
func run(t *testing.T, w *sim.World, d sim.Duration) {
	t.Helper()
	if res := w.RunFor(d); res.Reason == sim.Panicked {
		t.Fatalf("%v\n%s", res.Panic, res.Panic.Stack)
	}
}

// send makes the app send records now.
func send(t *testing.T, w *sim.World, id sim.NodeID, a *app, recs ...Record) {
	t.Helper()
	must(t, w.Act(id, func(ctx *sim.Context) {
		for _, r := range recs {
			if err := a.p.Send(ctx, r, a.record(string(r.Value))); err != nil {
				t.Fatal(err)
			}
		}
	}))
}

// testConfig is a producer configuration with short timeouts.
func testConfig() config.Producer {
	cfg := config.DefaultProducer()
	cfg.EnableIdempotence = false
	cfg.RequestTimeout = 200 * sim.Millisecond
	cfg.DeliveryTimeout = 5 * sim.Second
	cfg.RetryBackoff = 20 * sim.Millisecond
	return cfg
}

// traceKinds returns the trace lines of the given kind.
func traceKinds(w *sim.World, kind string) []string {
	var out []string
	for _, r := range w.Trace().Records() {
		if r.Kind == kind {
			out = append(out, r.String())
		}
	}
	return out
}
