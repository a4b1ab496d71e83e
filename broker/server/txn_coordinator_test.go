package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/client"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// markerSink plays broker 1, the leader of the data partitions: it keeps
// every WriteTxnMarkers it gets and answers NOT_LEADER_OR_FOLLOWER to the
// first marker of each partition listed in refuseOnce, then success.
type markerSink struct {
	node       sim.NodeID
	batches    []storage.RecordBatch // produced to it, in order
	got        []kmsg.WriteTxnMarkersRequestMarker
	refuseOnce map[storage.TopicPartition]bool
}

func (s *markerSink) Start(*sim.Context)                      {}
func (s *markerSink) Timer(*sim.Context, sim.TimerID, string) {}
func (s *markerSink) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	req, ok := m.(*wire.Request)
	if !ok {
		return
	}
	if pr, ok := req.Body.(*kmsg.ProduceRequest); ok {
		s.produce(ctx, from, req, pr)
		return
	}
	body, ok := req.Body.(*kmsg.WriteTxnMarkersRequest)
	if !ok {
		panic("markerSink: unexpected " + req.Kind())
	}
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	resp.Version = body.Version
	for _, mk := range body.Markers {
		s.got = append(s.got, mk)
		rm := kmsg.WriteTxnMarkersResponseMarker{ProducerID: mk.ProducerID}
		for _, t := range mk.Topics {
			rt := kmsg.WriteTxnMarkersResponseMarkerTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				code := int16(0)
				if tp := (storage.TopicPartition{Topic: t.Topic, Partition: p}); s.refuseOnce[tp] {
					delete(s.refuseOnce, tp)
					code = kerr.NotLeaderForPartition.Code
				}
				rt.Partitions = append(rt.Partitions, kmsg.WriteTxnMarkersResponseMarkerTopicPartition{Partition: p, ErrorCode: code})
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	var enc wire.Encoder
	ctx.Send(from, enc.Reply(req, resp))
}

// describe renders the markers as "commit pid/epoch [t-0 t-1]" lines.
func (s *markerSink) describe() []string {
	var out []string
	for _, m := range s.got {
		kind := "abort"
		if m.Committed {
			kind = "commit"
		}
		var tps []string
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, fmt.Sprintf("%s-%d", t.Topic, p))
			}
		}
		out = append(out, fmt.Sprintf("%s %d/%d %v", kind, m.ProducerID, m.ProducerEpoch, tps))
	}
	return out
}

// txnCluster is broker 0 leading __transaction_state-0 (one partition) and
// a marker sink as broker 1 leading t-0 and t-1.
func txnCluster(t *testing.T, version int16) (*cluster, *markerSink) {
	c := newCluster(t, 1, func(cfg *Config) {
		cfg.Txn.NumPartitions, cfg.Txn.Version = 1, version
		cfg.Txn.AbortCheckInterval = sim.Second
	})
	sink := &markerSink{refuseOnce: map[storage.TopicPartition]bool{}}
	id, err := c.w.AddNode(NodeName(1), func() sim.Node { return sink }, sim.NodeOptions{})
	c.must(err)
	c.must(c.w.Inject(sim.Start{Node: id}))
	sink.node = id
	c.leadTxnLog(3)
	return c, sink
}

// leadTxnLog makes broker 0 the leader of __transaction_state-0 at
// leader epoch epoch and tells it where everything is.
func (c *cluster) leadTxnLog(epoch int32) {
	lai := kmsg.NewPtrLeaderAndISRRequest()
	lai.Version, lai.ControllerEpoch = 1, c.cEpoch
	lai.PartitionStates = []kmsg.LeaderAndISRRequestTopicPartition{{Topic: txn.StateTopic, Partition: 0, ControllerEpoch: c.cEpoch, Leader: 0, LeaderEpoch: epoch, ISR: []int32{0}, Replicas: []int32{0}}}
	c.call(0, lai, func(kmsg.Response) {})
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version, um.ControllerID, um.ControllerEpoch = 4, 0, c.cEpoch
	um.LiveBrokers = []kmsg.UpdateMetadataRequestLiveBroker{{ID: 0}, {ID: 1}}
	um.PartitionStates = []kmsg.UpdateMetadataRequestTopicPartition{
		{Topic: txn.StateTopic, Partition: 0, Leader: 0, LeaderEpoch: epoch, ISR: []int32{0}, Replicas: []int32{0}},
		{Topic: "t", Partition: 0, Leader: 1, LeaderEpoch: 1, ISR: []int32{1}, Replicas: []int32{1}},
		{Topic: "t", Partition: 1, Leader: 1, LeaderEpoch: 1, ISR: []int32{1}, Replicas: []int32{1}},
	}
	c.call(0, um, func(kmsg.Response) {})
}

func (c *cluster) initPID(id string, timeoutMs int32) **kmsg.InitProducerIDResponse {
	out := new(*kmsg.InitProducerIDResponse)
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = 4, &id, timeoutMs
	c.call(0, req, func(r kmsg.Response) { *out = r.(*kmsg.InitProducerIDResponse) })
	c.run(20 * sim.Millisecond)
	return out
}

func (c *cluster) addParts(id string, pid int64, epoch int16, parts ...int32) int16 {
	code := int16(-100)
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, pid, epoch
	req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: parts}}
	c.call(0, req, func(r kmsg.Response) { code = r.(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode })
	c.run(20 * sim.Millisecond)
	return code
}

func (c *cluster) endTxn(id string, pid int64, epoch int16, commit bool, version int16) *kmsg.EndTxnResponse {
	var out *kmsg.EndTxnResponse
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = version, id, pid, epoch, commit
	c.call(0, req, func(r kmsg.Response) { out = r.(*kmsg.EndTxnResponse) })
	c.run(20 * sim.Millisecond)
	return out
}

// txnLog decodes __transaction_state-0 on broker 0.
func (c *cluster) txnLog() []string {
	p, ok := c.broker(0).Partition(storage.TopicPartition{Topic: txn.StateTopic, Partition: 0})
	if !ok {
		c.t.Fatal("no __transaction_state-0")
	}
	recs, err := readAll(p.log)
	c.must(err)
	var out []string
	for _, r := range recs {
		id, m, err := txn.Decode(r)
		c.must(err)
		if m == nil {
			out = append(out, id+" tombstone")
			continue
		}
		out = append(out, m.String())
	}
	return out
}

// TestTxnCoordinatorEndToEnd drives broker 0's transaction coordinator by
// hand (KIP-98): FindCoordinator(transaction), COORDINATOR_LOAD_IN_PROGRESS
// while __transaction_state-0 loads, InitProducerId, AddPartitionsToTxn,
// EndTxn(commit): the log holds Empty, Ongoing, PrepareCommit and
// CompleteCommit, and the leader of t-0/t-1 gets the commit markers (t-0
// retried after NOT_LEADER_OR_FOLLOWER). Then a zombie is fenced: a second
// InitProducerId aborts the open transaction (CONCURRENT_TRANSACTIONS until
// done, abort markers at the bumped epoch) and the first producer gets
// PRODUCER_FENCED. Last, a transaction left open past
// transaction.timeout.ms is aborted by the coordinator.
func TestTxnCoordinatorEndToEnd(t *testing.T) {
	c, sink := txnCluster(t, 1)
	sink.refuseOnce[storage.TopicPartition{Topic: "t", Partition: 0}] = true

	var fc *kmsg.FindCoordinatorResponse
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.Version, find.CoordinatorKey, find.CoordinatorType = 3, "app", 1
	c.call(0, find, func(r kmsg.Response) { fc = r.(*kmsg.FindCoordinatorResponse) })
	if r := c.initPID("app", 60000); (*r).ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("init while loading: %+v", *r)
	}
	if fc == nil || fc.ErrorCode != 0 || fc.NodeID != 0 {
		t.Fatalf("FindCoordinator(transaction): %+v", fc)
	}
	c.run(300 * sim.Millisecond) // the load
	r := *c.initPID("app", 60000)
	if r.ErrorCode != 0 || r.ProducerEpoch != 0 {
		t.Fatalf("init: %+v", r)
	}
	pid := r.ProducerID
	if code := c.addParts("app", pid, 0, 0, 1); code != 0 {
		t.Fatalf("add: %d", code)
	}
	if e := c.endTxn("app", pid, 0, true, 3); e == nil || e.ErrorCode != 0 {
		t.Fatalf("commit: %+v", e)
	}
	c.run(sim.Second)
	m, _ := c.broker(0).TxnCoordinator().Transaction("app")
	if m.State != txn.CompleteCommit {
		t.Fatalf("after the markers: %s\nmarkers %v", m.String(), sink.describe())
	}
	want := []string{
		fmt.Sprintf("commit %d/0 [t-0 t-1]", pid),
		fmt.Sprintf("commit %d/0 [t-0]", pid), // the retry after NOT_LEADER_OR_FOLLOWER
	}
	if got := sink.describe(); !slices.Equal(got, want) {
		t.Fatalf("markers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, mk := range sink.got {
		if mk.CoordinatorEpoch != 3 {
			t.Fatalf("coordinator epoch %d, want the partition's leader epoch 3", mk.CoordinatorEpoch)
		}
	}
	log := c.txnLog()
	wantLog := []string{
		fmt.Sprintf("app pid=%d epoch=0 last=-1/-1 Empty", pid),
		fmt.Sprintf("app pid=%d epoch=0 last=-1/-1 Ongoing [t-0 t-1]", pid),
		fmt.Sprintf("app pid=%d epoch=0 last=-1/-1 PrepareCommit [t-0 t-1]", pid),
		fmt.Sprintf("app pid=%d epoch=0 last=-1/-1 CompleteCommit", pid),
	}
	if !slices.Equal(log, wantLog) {
		t.Fatalf("__transaction_state:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(wantLog, "\n"))
	}

	// A zombie: the first producer opens a transaction, a second instance
	// with the same transactional.id initialises.
	sink.got = nil
	if code := c.addParts("app", pid, 0, 0); code != 0 {
		t.Fatalf("second add: %d", code)
	}
	if r := *c.initPID("app", 60000); r.ErrorCode != kerr.ConcurrentTransactions.Code {
		t.Fatalf("init over an open transaction: %+v", r)
	}
	c.run(sim.Second)
	if got, want := sink.describe(), []string{fmt.Sprintf("abort %d/1 [t-0]", pid)}; !slices.Equal(got, want) {
		t.Fatalf("fence markers %v, want %v", got, want)
	}
	r = *c.initPID("app", 60000)
	if r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != 2 {
		t.Fatalf("init after the abort: %+v", r)
	}
	if code := c.addParts("app", pid, 0, 1); code != kerr.ProducerFenced.Code {
		t.Fatalf("zombie add: %d, want PRODUCER_FENCED", code)
	}
	if e := c.endTxn("app", pid, 0, true, 1); e.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("zombie EndTxn v1: %+v, want INVALID_PRODUCER_EPOCH", e)
	}

	// A transaction past its timeout is aborted by the coordinator.
	sink.got = nil
	r = *c.initPID("slow", 1000)
	if code := c.addParts("slow", r.ProducerID, 0, 1); code != 0 {
		t.Fatalf("slow add: %d", code)
	}
	c.run(3 * sim.Second)
	if got, want := sink.describe(), []string{fmt.Sprintf("abort %d/1 [t-1]", r.ProducerID)}; !slices.Equal(got, want) {
		t.Fatalf("timeout markers %v, want %v", got, want)
	}
	if m, _ := c.broker(0).TxnCoordinator().Transaction("slow"); m.State != txn.CompleteAbort {
		t.Fatalf("after the timeout: %s", m.String())
	}
	if e := c.endTxn("slow", r.ProducerID, 0, true, 3); e.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("commit after the timeout abort: %+v", e)
	}
}

// TestTxnCoordinatorFailover: a restarted coordinator loads a
// PrepareCommit from its log and sends the markers again (KIP-98's
// recovery); transaction version 2 markers carry the bumped epoch.
func TestTxnCoordinatorFailover(t *testing.T) {
	c, sink := txnCluster(t, 2)
	c.run(300 * sim.Millisecond)
	r := *c.initPID("app", 60000)
	pid := r.ProducerID
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 5
	req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: "app", ProducerID: pid, ProducerEpoch: 0,
		Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "t", Partitions: []int32{0}}}}}
	c.call(0, req, func(kmsg.Response) {})
	c.run(20 * sim.Millisecond)
	// The markers cannot reach the sink: the coordinator crashes after
	// PrepareCommit is written, and its next life loads it.
	c.must(c.w.Inject(sim.Cut{From: c.brokers[0], To: sink.node, BothWays: true}))
	e := c.endTxn("app", pid, 0, true, 5)
	if e.ErrorCode != 0 || e.ProducerEpoch != 1 {
		t.Fatalf("commit v5: %+v", e)
	}
	c.run(100 * sim.Millisecond)
	c.crash(0, false)
	c.heal()
	c.restart(0)
	c.run(10 * sim.Millisecond)
	c.leadTxnLog(4)
	c.run(sim.Second)
	if got, want := sink.describe(), []string{fmt.Sprintf("commit %d/1 [t-0]", pid)}; !slices.Equal(got, want) {
		t.Fatalf("markers after fail-over %v, want %v", got, want)
	}
	if sink.got[0].CoordinatorEpoch != 4 {
		t.Fatalf("coordinator epoch %d, want 4", sink.got[0].CoordinatorEpoch)
	}
	m, _ := c.broker(0).TxnCoordinator().Transaction("app")
	if m.State != txn.CompleteCommit || m.ProducerEpoch != 1 || m.ClientTransactionVersion != 2 {
		t.Fatalf("after fail-over: %s tv%d", m.String(), m.ClientTransactionVersion)
	}
}

// produce appends every batch (no checks) and answers with its offset.
func (s *markerSink) produce(ctx *sim.Context, from sim.NodeID, req *wire.Request, body *kmsg.ProduceRequest) {
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = body.Version
	for _, t := range body.Topics {
		rt := kmsg.ProduceResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rbs, err := storage.DecodeBatches(p.Records)
			if err != nil {
				panic(err)
			}
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.BaseOffset = p.Partition, int64(len(s.batches))
			s.batches = append(s.batches, rbs...)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	var enc wire.Encoder
	ctx.Send(from, enc.Reply(req, resp))
}

// txnApp is a node embedding a transactional producer.
type txnApp struct {
	p *client.Producer
}

func (a *txnApp) Start(ctx *sim.Context) { a.p.Start(ctx) }
func (a *txnApp) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	if !a.p.HandleMessage(ctx, from, m) {
		panic("txnApp: unexpected " + m.Kind())
	}
}
func (a *txnApp) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	if !a.p.HandleTimer(ctx, id, name) {
		panic("txnApp: unexpected timer " + name)
	}
}

// TestTxnProducerEndToEnd: the real transactional producer (package
// client) against broker 0's coordinator, with broker 1 (the sink) leading
// t-0 and t-1: InitTransactions, BeginTransaction, sends to both
// partitions (each added with AddPartitionsToTxn before its first batch,
// every batch transactional at the producer's epoch), CommitTransaction:
// the coordinator's log and the commit markers at the sink show it, at
// transaction versions 1 and 2.
func TestTxnProducerEndToEnd(t *testing.T) {
	for _, tv := range []int16{1, 2} {
		t.Run(fmt.Sprintf("tv%d", tv), func(t *testing.T) {
			c, sink := txnCluster(t, tv)
			c.run(300 * sim.Millisecond)
			cfg := config.DefaultProducer()
			cfg.TransactionalID, cfg.Linger = "app", 2*sim.Millisecond
			p := client.New(cfg, []int32{0})
			p.TransactionVersion = tv
			a := &txnApp{p: p}
			id, err := c.w.AddNode("producer", func() sim.Node { return a }, sim.NodeOptions{})
			c.must(err)
			c.must(c.w.Inject(sim.Start{Node: id}))
			var init, commit string
			done := func(out *string) client.TxnCallback {
				return func(_ *sim.Context, err error) {
					*out = "ok"
					if err != nil {
						*out = err.Error()
					}
				}
			}
			c.must(c.w.Act(id, func(ctx *sim.Context) { c.must(p.InitTransactions(ctx, done(&init))) }))
			c.run(sim.Second)
			if init != "ok" {
				t.Fatalf("InitTransactions: %q", init)
			}
			acked := 0
			c.must(c.w.Act(id, func(ctx *sim.Context) {
				c.must(p.BeginTransaction(ctx))
				for i, v := range []string{"a", "b", "c"} {
					c.must(p.Send(ctx, client.Record{Topic: "t", Partition: int32(i % 2), Value: []byte(v)},
						func(_ *sim.Context, _ client.RecordMetadata, err error) {
							if err == nil {
								acked++
							}
						}))
				}
				c.must(p.CommitTransaction(ctx, done(&commit)))
			}))
			c.run(sim.Second)
			pid, epoch := p.ProducerID()
			if commit != "ok" || acked != 3 {
				t.Fatalf("commit %q, %d acked", commit, acked)
			}
			for _, b := range sink.batches {
				if b.Attributes&0x10 == 0 || b.ProducerID != pid || b.ProducerEpoch != 0 {
					t.Fatalf("batch attributes %#x producer %d/%d, want transactional at %d/0", b.Attributes, b.ProducerID, b.ProducerEpoch, pid)
				}
			}
			wantEpoch := int16(0)
			if tv == 2 {
				wantEpoch = 1
			}
			if got, want := sink.describe(), []string{fmt.Sprintf("commit %d/%d [t-0 t-1]", pid, wantEpoch)}; !slices.Equal(got, want) {
				t.Fatalf("markers %v, want %v", got, want)
			}
			if epoch != wantEpoch {
				t.Fatalf("producer epoch %d after the commit, want %d", epoch, wantEpoch)
			}
			log := c.txnLog()
			want := []string{
				fmt.Sprintf("app pid=%d epoch=0 last=-1/-1 Empty", pid),
				fmt.Sprintf("app pid=%d epoch=0 last=-1/-1 Ongoing [t-0 t-1]", pid),
				fmt.Sprintf("app pid=%d epoch=%d last=-1/-1 PrepareCommit [t-0 t-1]", pid, wantEpoch),
				fmt.Sprintf("app pid=%d epoch=%d last=-1/-1 CompleteCommit", pid, wantEpoch),
			}
			if len(log) == 5 { // the two partitions were added in two requests
				want = slices.Insert(want, 1, fmt.Sprintf("app pid=%d epoch=0 last=-1/-1 Ongoing [t-0]", pid))
			}
			if !slices.Equal(log, want) {
				t.Fatalf("__transaction_state:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
