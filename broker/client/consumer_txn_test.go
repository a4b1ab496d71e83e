package client

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawNode sends hand-built requests for a test and counts the answers
// (the producer client has no transactional API yet).
type rawNode struct {
	corr     int32
	answered int
	errors   []int16
}

func (r *rawNode) Start(*sim.Context)                      {}
func (r *rawNode) Timer(*sim.Context, sim.TimerID, string) {}
func (r *rawNode) Receive(_ *sim.Context, _ sim.NodeID, m sim.Message) {
	r.answered++
	switch b := m.(*wire.Response).Body.(type) {
	case *kmsg.ProduceResponse:
		r.errors = append(r.errors, b.Topics[0].Partitions[0].ErrorCode)
	case *kmsg.WriteTxnMarkersResponse:
		r.errors = append(r.errors, b.Markers[0].Topics[0].Partitions[0].ErrorCode)
	}
}

func txnProduce(pid int64, transactional bool, values ...string) *kmsg.ProduceRequest {
	var recs []storage.Record
	for _, v := range values {
		recs = append(recs, storage.Record{Value: []byte(v)})
	}
	b := storage.NewBatch(0, recs)
	if transactional {
		b.Attributes = storage.TransactionalFlagMask
		b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, 0, 0
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 7, -1, 30000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: b.AppendTo(nil)}}}}
	return req
}

func txnMarker(pid int64, commit bool) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.Committed = pid, commit
	m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "t", Partitions: []int32{0}}}
	req.Markers = []kmsg.WriteTxnMarkersRequestMarker{m}
	return req
}

// KIP-98, Kafka's CompletedFetch: a read_committed consumer never sees the
// records of an aborted transaction nor any control record, and its
// position moves past the markers; a read_uncommitted one sees every data
// record and no control record.
func TestReadCommittedConsumerDropsAbortedTransactions(t *testing.T) {
	w, c := groupCluster(t, 1)
	tp := storage.TopicPartition{Topic: "t", Partition: 0}
	leader := -1
	for i := range c.Brokers {
		if p, ok := c.Broker(i).Partition(tp); ok && p.Role() == server.Leader {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatal("t-0 has no leader")
	}
	raw := &rawNode{}
	id, err := w.AddNode("raw", func() sim.Node { return raw }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: id}))
	reqs := []kmsg.Request{
		txnProduce(10, true, "a1", "a2"), // 0, 1: aborted below
		txnProduce(0, false, "p"),        // 2
		txnProduce(11, true, "c1"),       // 3: committed below
		txnMarker(10, false),             // 4: ABORT
		txnMarker(11, true),              // 5: COMMIT
		txnProduce(0, false, "q"),        // 6
		txnProduce(12, true, "o1"),       // 7: still ongoing: above the LSO
	}
	for _, req := range reqs {
		must(t, w.Act(id, func(ctx *sim.Context) {
			raw.corr++
			ctx.Send(c.Brokers[leader], wire.NewRequest(raw.corr, req))
		}))
		run(t, w, 500*sim.Millisecond)
	}
	if raw.answered != len(reqs) || !reflect.DeepEqual(raw.errors, make([]int16, len(reqs))) {
		t.Fatalf("answers %d, errors %v", raw.answered, raw.errors)
	}
	committed := addConsumer(t, w, "rc", "isolation.level", "read_committed")
	uncommitted := addConsumer(t, w, "ru", "group.id", "g2")
	run(t, w, 20*sim.Second)
	values := func(a *consumerApp) []string {
		var out []string
		for _, r := range a.got {
			out = append(out, fmt.Sprintf("%s@%d", r.Value, r.Offset))
		}
		return out
	}
	if got, want := values(committed), []string{"p@2", "c1@3", "q@6"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read_committed consumed %v, want %v", got, want)
	}
	if got, want := values(uncommitted), []string{"a1@0", "a2@1", "p@2", "c1@3", "q@6", "o1@7"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read_uncommitted consumed %v, want %v", got, want)
	}
	if pos, ok := committed.c.Position(TopicPartition(tp)); !ok || pos != 7 {
		t.Fatalf("read_committed position %d %v, want 7 (the LSO)", pos, ok)
	}
}

// CompletedFetch's filter on hand-built batches: an aborted transaction
// applies from its first offset to its producer's ABORT marker only (the
// producer's next transaction is read), and the position moves past
// trailing control batches once the records before them are polled.
func TestReadCommittedFilterAndPosition(t *testing.T) {
	data := func(pid int64, attrs int16, values ...string) storage.RecordBatch {
		var recs []storage.Record
		for _, v := range values {
			recs = append(recs, storage.Record{Value: []byte(v)})
		}
		b := storage.NewBatch(0, recs)
		b.Attributes, b.ProducerID, b.ProducerEpoch = attrs, pid, 0
		return b
	}
	var log []byte
	next := int64(0)
	add := func(b storage.RecordBatch) {
		b.BaseOffset = next
		for i := range b.Records {
			b.Records[i].Offset = next + int64(i)
		}
		log = b.AppendTo(log)
		next = b.NextOffset()
	}
	txn := storage.TransactionalFlagMask
	add(data(10, txn, "x1"))                         // 0 aborted
	add(data(11, txn, "y1"))                         // 1 committed
	add(storage.NewControlBatch(10, 0, 0, false, 0)) // 2 ABORT 10
	add(data(10, txn, "x2"))                         // 3 pid 10's next transaction
	add(storage.NewControlBatch(11, 0, 0, true, 0))  // 4 COMMIT 11
	add(storage.NewControlBatch(10, 0, 0, true, 0))  // 5 COMMIT 10
	batches, err := storage.DecodeBatches(log)
	must(t, err)
	for _, level := range []string{"read_committed", "read_uncommitted"} {
		w, err := sim.New(sim.Config{Seed: 1})
		must(t, err)
		id, err := w.AddNode("n", func() sim.Node { return &rawNode{} }, sim.NodeOptions{})
		must(t, err)
		must(t, w.Inject(sim.Start{Node: id}))
		run(t, w, sim.Millisecond)
		cfg, err := config.ParseConsumer(map[string]string{"isolation.level": level})
		must(t, err)
		cons, err := NewConsumer(cfg, []int32{0})
		must(t, err)
		tp := TopicPartition{Topic: "t", Partition: 0}
		must(t, w.Act(id, func(ctx *sim.Context) {
			p := &partState{tp: tp, position: 0, fetchPos: 0, skipTo: -1}
			cons.buffer(ctx, p, batches, []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 10, FirstOffset: 0}}, 0, -1)
			var got []string
			for _, r := range p.buffer {
				got = append(got, fmt.Sprintf("%s@%d", r.Value, r.Offset))
			}
			want := []string{"y1@1", "x2@3"}
			if level == "read_uncommitted" {
				want = []string{"x1@0", "y1@1", "x2@3"}
			}
			if !reflect.DeepEqual(got, want) || p.fetchPos != 6 || p.skipTo != 6 {
				t.Errorf("%s: buffered %v, fetch position %d, skip to %d; want %v, 6, 6", level, got, p.fetchPos, p.skipTo, want)
			}
		}))
	}
}
