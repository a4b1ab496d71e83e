package txn

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// harness drives a coordinator over a fake host: appends and markers are
// queued until the test delivers them (or, with sync set, done at once).
type harness struct {
	t       testing.TB
	c       *Coordinator
	now     sim.Time
	sync    bool
	nextPID int64
	log     map[int32][]storage.Record // committed records per partition
	appends []pendingAppend
	markers []pendingMarkers
	sent    []Markers // every markers request, in order
}

type pendingAppend struct {
	partition int32
	recs      []storage.Record
	done      func(sim.Time, *kerr.Error)
}

type pendingMarkers struct {
	m    Markers
	done func(sim.Time)
}

func newHarness(t testing.TB, cfg Config, sync bool) *harness {
	h := &harness{t: t, sync: sync, nextPID: 1000, log: map[int32][]storage.Record{}}
	h.c = New(cfg, Env{
		Append: func(p int32, recs []storage.Record, done func(sim.Time, *kerr.Error)) {
			h.appends = append(h.appends, pendingAppend{p, recs, done})
			if h.sync {
				h.deliverAppend(0, nil)
			}
		},
		NewProducerID: func(done func(int64, *kerr.Error)) { h.nextPID++; done(h.nextPID-1, nil) },
		WriteMarkers: func(p int32, m Markers, done func(sim.Time)) {
			h.sent = append(h.sent, m)
			h.markers = append(h.markers, pendingMarkers{m, done})
			if h.sync {
				h.deliverMarkers(0)
			}
		},
	})
	return h
}

func (h *harness) lead(p int32) {
	h.c.BecomeLeader(h.now, p)
	if err := h.c.Load(h.now, p, h.log[p]); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) deliverAppend(i int, err *kerr.Error) {
	a := h.appends[i]
	h.appends = append(h.appends[:i], h.appends[i+1:]...)
	if err == nil {
		h.log[a.partition] = append(h.log[a.partition], a.recs...)
	}
	a.done(h.now, err)
}

func (h *harness) deliverMarkers(i int) {
	m := h.markers[i]
	h.markers = append(h.markers[:i], h.markers[i+1:]...)
	m.done(h.now)
}

func (h *harness) drain() {
	for len(h.appends) > 0 || len(h.markers) > 0 {
		if len(h.appends) > 0 {
			h.deliverAppend(0, nil)
		} else {
			h.deliverMarkers(0)
		}
	}
}

func (h *harness) init(id string, timeoutMs int32, version int16, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = version, &id, timeoutMs, pid, epoch
	var got *kmsg.InitProducerIDResponse
	h.c.InitProducerID(h.now, req, func(r *kmsg.InitProducerIDResponse) { got = r })
	return got
}

func (h *harness) add(id string, pid int64, epoch int16, tps ...storage.TopicPartition) *kmsg.AddPartitionsToTxnResponse {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, pid, epoch
	for _, tp := range tps {
		req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
	}
	if h.c.cfg.Version >= 2 { // the v5 batch form: a transaction version 2 client
		req.Version = 5
		t := kmsg.AddPartitionsToTxnRequestTransaction{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch}
		for _, tp := range tps {
			t.Topics = append(t.Topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
		}
		req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{t}
	}
	var got *kmsg.AddPartitionsToTxnResponse
	h.c.AddPartitionsToTxn(h.now, req, func(r *kmsg.AddPartitionsToTxnResponse) { got = r })
	return got
}

func addCode(r *kmsg.AddPartitionsToTxnResponse) int16 {
	if r == nil {
		return -100
	}
	if r.Version >= 4 {
		return r.Transactions[0].Topics[0].Partitions[0].ErrorCode
	}
	return r.Topics[0].Partitions[0].ErrorCode
}

func (h *harness) end(id string, pid int64, epoch int16, commit bool, version int16) *kmsg.EndTxnResponse {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = version, id, pid, epoch, commit
	var got *kmsg.EndTxnResponse
	h.c.EndTxn(h.now, req, func(r *kmsg.EndTxnResponse) { got = r })
	return got
}

func tp(topic string, p int32) storage.TopicPartition {
	return storage.TopicPartition{Topic: topic, Partition: p}
}

func testConfig(version int16) Config {
	cfg := DefaultConfig()
	cfg.NumPartitions, cfg.Version = 3, version
	return cfg
}
