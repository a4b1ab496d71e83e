package client

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeTxn is the fake cluster's transaction coordinator: the real state
// machine (package txn) with a log and markers that complete at once, and
// a group coordinator that takes every TxnOffsetCommit.
type fakeTxn struct {
	c       *txn.Coordinator
	markers []string
	offsets []string
	pid     int64
	// plain counts batches without the transactional attribute.
	plain int
	// offsetErr answers every TxnOffsetCommit partition when set.
	offsetErr int16
}

func newFakeTxn(version int16) *fakeTxn {
	f := &fakeTxn{pid: 5000}
	cfg := txn.DefaultConfig()
	cfg.NumPartitions, cfg.Version = 1, version
	f.c = txn.New(cfg, txn.Env{
		Append:        func(_ int32, _ []storage.Record, done func(sim.Time, *kerr.Error)) { done(0, nil) },
		NewProducerID: func(done func(int64, *kerr.Error)) { f.pid++; done(f.pid-1, nil) },
		WriteMarkers: func(_ int32, m txn.Markers, done func(sim.Time)) {
			kind := "abort"
			if m.Commit {
				kind = "commit"
			}
			var tps []string
			for _, tp := range m.Partitions {
				tps = append(tps, tp.String())
			}
			f.markers = append(f.markers, fmt.Sprintf("%s %d/%d %s", kind, m.ProducerID, m.ProducerEpoch, strings.Join(tps, " ")))
			done(0)
		},
	})
	f.c.BecomeLeader(0, 0)
	if err := f.c.Load(0, 0, nil); err != nil {
		panic(err)
	}
	return f
}

// verify is the produce path's KIP-890 part 1 check.
func (f *fakeTxn) verify(rb storage.RecordBatch, tp storage.TopicPartition) int16 {
	if rb.Attributes&0x10 == 0 {
		f.plain++
		return 0
	}
	for _, id := range f.c.TransactionalIDs() {
		if m, _ := f.c.Transaction(id); m.ProducerID == rb.ProducerID {
			if err := f.c.VerifyPartitions(id, rb.ProducerID, rb.ProducerEpoch, []storage.TopicPartition{tp})[0]; err != nil {
				return err.Code
			}
			return 0
		}
	}
	return kerr.InvalidProducerIDMapping.Code
}

// serveTxn answers the transactional APIs, nil for any other request.
func (b *fakeBroker) serveTxn(body kmsg.Request) kmsg.Response {
	f := b.c.txn
	if f == nil {
		return nil
	}
	var out kmsg.Response
	switch r := body.(type) {
	case *kmsg.FindCoordinatorRequest:
		resp := kmsg.NewPtrFindCoordinatorResponse()
		resp.NodeID, resp.Host, resp.Port = 0, "b0", 9092
		out = resp
	case *kmsg.InitProducerIDRequest:
		f.c.InitProducerID(0, r, func(resp *kmsg.InitProducerIDResponse) { out = resp })
	case *kmsg.AddPartitionsToTxnRequest:
		f.c.AddPartitionsToTxn(0, r, func(resp *kmsg.AddPartitionsToTxnResponse) { out = resp })
	case *kmsg.AddOffsetsToTxnRequest:
		f.c.AddOffsetsToTxn(0, r, func(resp *kmsg.AddOffsetsToTxnResponse) { out = resp })
	case *kmsg.EndTxnRequest:
		f.c.EndTxn(0, r, func(resp *kmsg.EndTxnResponse) { out = resp })
	case *kmsg.TxnOffsetCommitRequest:
		resp := kmsg.NewPtrTxnOffsetCommitResponse()
		for _, t := range r.Topics {
			rt := kmsg.TxnOffsetCommitResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				f.offsets = append(f.offsets, fmt.Sprintf("%s %s-%d@%d gen=%d member=%s", r.Group, t.Topic, p.Partition, p.Offset, r.Generation, r.MemberID))
				rt.Partitions = append(rt.Partitions, kmsg.TxnOffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: f.offsetErr})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		out = resp
	}
	return out
}

func txnProducerConfig(id string) config.Producer {
	cfg := testConfig()
	cfg.EnableIdempotence, cfg.TransactionalID = true, id
	return cfg
}

// outcome keeps a TxnCallback's result: "" until it runs, then "ok" or the error.
func outcome(out *string) TxnCallback {
	return func(_ *sim.Context, err error) {
		if *out != "" {
			panic("transactional callback ran twice")
		}
		*out = "ok"
		if err != nil {
			*out = err.Error()
		}
	}
}

func act(t *testing.T, w *sim.World, id sim.NodeID, f func(ctx *sim.Context) error) {
	t.Helper()
	var err error
	must(t, w.Act(id, func(ctx *sim.Context) { err = f(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
}

// TestTransactionalProducer (KIP-98, KIP-447, KIP-890): InitTransactions,
// a transaction whose partitions are added before their first batch and
// whose consumer offsets go through AddOffsetsToTxn and TxnOffsetCommit,
// committed once every batch is acknowledged; then an aborted one; then a
// second producer with the same transactional.id fences the first, whose
// next transaction fails fatally. With transaction version 2 each end
// bumps the epoch, and the producer takes it.
func TestTransactionalProducer(t *testing.T) {
	for _, tv := range []int16{1, 2} {
		t.Run(fmt.Sprintf("tv%d", tv), func(t *testing.T) {
			c := newFakeCluster(2, map[string]int{"t": 2})
			c.idempotent = true
			c.txn = newFakeTxn(tv)
			cfg := txnProducerConfig("app")
			if tv == 2 {
				cfg.Linger = 5 * sim.Millisecond // a batch that becomes ready after the partition is known
			}
			w, id, a := world(t, 1, sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond}, c, cfg)
			var init, offs, commit, abort string
			act(t, w, id, func(ctx *sim.Context) error {
				a.p.TransactionVersion = tv
				if err := a.p.Send(ctx, Record{Topic: "t", Partition: 0, Value: []byte("early")}, nil); err == nil {
					t.Fatal("Send before BeginTransaction accepted")
				}
				return a.p.InitTransactions(ctx, outcome(&init))
			})
			run(t, w, sim.Second)
			if init != "ok" || a.p.TransactionState() != "READY" {
				t.Fatalf("InitTransactions: %q, state %s", init, a.p.TransactionState())
			}
			pid, epoch := a.p.ProducerID()
			act(t, w, id, func(ctx *sim.Context) error {
				if err := a.p.BeginTransaction(ctx); err != nil {
					return err
				}
				for i, v := range []string{"a", "b", "c"} {
					if err := a.p.Send(ctx, Record{Topic: "t", Partition: int32(i % 2), Value: []byte(v)}, a.record(v)); err != nil {
						return err
					}
				}
				return a.p.SendOffsetsToTransaction(ctx, []TxnOffset{{Topic: "in", Partition: 0, Offset: 42, LeaderEpoch: -1}},
					GroupMetadata{GroupID: "g", Generation: 3, MemberID: "m-1"}, outcome(&offs))
			})
			act(t, w, id, func(ctx *sim.Context) error { return a.p.CommitTransaction(ctx, outcome(&commit)) })
			run(t, w, sim.Second)
			if offs != "ok" || commit != "ok" {
				t.Fatalf("offsets %q, commit %q", offs, commit)
			}
			for _, v := range []string{"a", "b", "c"} {
				if r := a.results[v]; r.err != nil || r.md.Offset < 0 {
					t.Fatalf("record %s: %+v", v, r)
				}
			}
			gp := coordinator.CoordinatorPartition("g", 50)
			wantEpoch := epoch
			if tv == 2 {
				wantEpoch = epoch + 1
			}
			want := []string{fmt.Sprintf("commit %d/%d __consumer_offsets-%d t-0 t-1", pid, wantEpoch, gp)}
			if !slices.Equal(c.txn.markers, want) {
				t.Fatalf("markers %v, want %v", c.txn.markers, want)
			}
			if got := c.txn.offsets; !slices.Equal(got, []string{"g in-0@42 gen=3 member=m-1"}) {
				t.Fatalf("TxnOffsetCommit %v", got)
			}
			if c.txn.plain != 0 {
				t.Fatalf("%d batches without the transactional attribute", c.txn.plain)
			}
			if _, e := a.p.ProducerID(); e != wantEpoch {
				t.Fatalf("producer epoch %d after the commit, want %d", e, wantEpoch)
			}

			// An aborted transaction: its batch is sent (and acknowledged),
			// then the abort markers follow.
			act(t, w, id, func(ctx *sim.Context) error {
				if err := a.p.BeginTransaction(ctx); err != nil {
					return err
				}
				return a.p.Send(ctx, Record{Topic: "t", Partition: 1, Value: []byte("d")}, a.record("d"))
			})
			run(t, w, 100*sim.Millisecond)
			act(t, w, id, func(ctx *sim.Context) error { return a.p.AbortTransaction(ctx, outcome(&abort)) })
			run(t, w, sim.Second)
			if abort != "ok" || len(c.txn.markers) != 2 || !strings.HasPrefix(c.txn.markers[1], "abort ") || !strings.HasSuffix(c.txn.markers[1], " t-1") {
				t.Fatalf("abort %q, markers %v", abort, c.txn.markers)
			}

			// A second producer with the same transactional.id fences the first.
			b := &app{cfg: txnProducerConfig("app"), bootstrap: c.brokers, results: map[string]result{}}
			bid, err := w.AddNode("producer2", func() sim.Node { return b }, sim.NodeOptions{})
			must(t, err)
			must(t, w.Inject(sim.Start{Node: bid}))
			var init2, zombie string
			run(t, w, 10*sim.Millisecond)
			act(t, w, bid, func(ctx *sim.Context) error {
				b.p.TransactionVersion = tv
				return b.p.InitTransactions(ctx, outcome(&init2))
			})
			run(t, w, sim.Second)
			if init2 != "ok" {
				t.Fatalf("second InitTransactions: %q", init2)
			}
			act(t, w, id, func(ctx *sim.Context) error {
				if err := a.p.BeginTransaction(ctx); err != nil {
					return err
				}
				if err := a.p.Send(ctx, Record{Topic: "t", Partition: 0, Value: []byte("z")}, a.record("z")); err != nil {
					return err
				}
				return a.p.CommitTransaction(ctx, outcome(&zombie))
			})
			run(t, w, sim.Second)
			if !strings.Contains(zombie, "fatal") || !strings.Contains(zombie, "PRODUCER_FENCED") || a.p.TransactionState() != "FATAL_ERROR" {
				t.Fatalf("zombie commit: %q, state %s", zombie, a.p.TransactionState())
			}
			var te *TxnError
			act(t, w, id, func(ctx *sim.Context) error {
				if err := a.p.BeginTransaction(ctx); !errors.As(err, &te) || !te.Fatal {
					t.Fatalf("BeginTransaction after fencing: %v", err)
				}
				return nil
			})
			if len(c.txn.markers) != 2 {
				t.Fatalf("the zombie's transaction reached the markers: %v", c.txn.markers)
			}
		})
	}
}

// TestTransactionalIDNeedsIdempotence: Kafka's ConfigException.
func TestTransactionalIDNeedsIdempotence(t *testing.T) {
	_, err := config.ParseProducer(map[string]string{"transactional.id": "x", "enable.idempotence": "false"})
	if err == nil || !strings.Contains(err.Error(), "transactional.id") || !strings.Contains(err.Error(), "enable.idempotence") {
		t.Fatalf("err = %v", err)
	}
	p, err := config.ParseProducer(map[string]string{"transactional.id": "x", "acks": "all"})
	if err != nil || !p.EnableIdempotence || p.TransactionTimeout != 60*sim.Second {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := config.ParseProducer(map[string]string{"transactional.id": "x", "acks": "1"}); err == nil {
		t.Fatal("a transactional producer with acks=1 accepted")
	}
}

// TestTransactionalProducerFencedMidTransaction: a second producer's
// InitTransactions lands while the first has a transaction open: the
// coordinator aborts it (CONCURRENT_TRANSACTIONS, retried by the second
// producer), and the first producer's commit is fenced.
func TestTransactionalProducerFencedMidTransaction(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	c.idempotent = true
	c.txn = newFakeTxn(1)
	w, id, a := world(t, 1, sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond}, c, txnProducerConfig("app"))
	var init, init2, commit string
	act(t, w, id, func(ctx *sim.Context) error {
		a.p.TransactionVersion = 1
		return a.p.InitTransactions(ctx, outcome(&init))
	})
	run(t, w, sim.Second)
	act(t, w, id, func(ctx *sim.Context) error {
		if err := a.p.BeginTransaction(ctx); err != nil {
			return err
		}
		return a.p.Send(ctx, Record{Topic: "t", Partition: 0, Value: []byte("a")}, a.record("a"))
	})
	run(t, w, sim.Second)
	b := &app{cfg: txnProducerConfig("app"), bootstrap: c.brokers, results: map[string]result{}}
	bid, err := w.AddNode("producer2", func() sim.Node { return b }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: bid}))
	run(t, w, 10*sim.Millisecond)
	act(t, w, bid, func(ctx *sim.Context) error {
		b.p.TransactionVersion = 1
		return b.p.InitTransactions(ctx, outcome(&init2))
	})
	run(t, w, sim.Second)
	if init2 != "ok" || len(c.txn.markers) != 1 || !strings.HasPrefix(c.txn.markers[0], "abort ") {
		t.Fatalf("second init %q, markers %v", init2, c.txn.markers)
	}
	if _, e := b.p.ProducerID(); e != 2 {
		t.Fatalf("second producer's epoch %d, want 2 (fence, then its own bump)", e)
	}
	act(t, w, id, func(ctx *sim.Context) error { return a.p.CommitTransaction(ctx, outcome(&commit)) })
	run(t, w, sim.Second)
	if !strings.Contains(commit, "PRODUCER_FENCED") || !strings.Contains(commit, "fatal") {
		t.Fatalf("the fenced producer's commit: %q", commit)
	}
	if len(traceKinds(w, "producer-txn-send")) == 0 {
		t.Fatal("no transactional request traced")
	}
}

// TestTransactionalProducerAbortableError: the group moved on
// (ILLEGAL_GENERATION on TxnOffsetCommit) is abortable: the transaction
// cannot commit, AbortTransaction ends it and the producer carries on.
func TestTransactionalProducerAbortableError(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	c.idempotent = true
	c.txn = newFakeTxn(2)
	c.txn.offsetErr = kerr.IllegalGeneration.Code
	w, id, a := world(t, 1, sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond}, c, txnProducerConfig("app"))
	var init, offs, abort, commit string
	act(t, w, id, func(ctx *sim.Context) error { return a.p.InitTransactions(ctx, outcome(&init)) })
	run(t, w, sim.Second)
	act(t, w, id, func(ctx *sim.Context) error {
		if err := a.p.BeginTransaction(ctx); err != nil {
			return err
		}
		if err := a.p.Send(ctx, Record{Topic: "t", Partition: 0, Value: []byte("a")}, a.record("a")); err != nil {
			return err
		}
		return a.p.SendOffsetsToTransaction(ctx, []TxnOffset{{Topic: "in", Offset: 1, LeaderEpoch: -1}}, GroupMetadata{GroupID: "g", Generation: 1, MemberID: "m"}, outcome(&offs))
	})
	run(t, w, sim.Second)
	if !strings.Contains(offs, "ILLEGAL_GENERATION") || strings.Contains(offs, "fatal") || a.p.TransactionState() != "ABORTABLE_ERROR" {
		t.Fatalf("offsets %q, state %s", offs, a.p.TransactionState())
	}
	act(t, w, id, func(ctx *sim.Context) error {
		if err := a.p.CommitTransaction(ctx, outcome(&commit)); err == nil {
			t.Fatal("CommitTransaction accepted in ABORTABLE_ERROR")
		}
		if err := a.p.Send(ctx, Record{Topic: "t", Partition: 0, Value: []byte("b")}, nil); err == nil {
			t.Fatal("Send accepted in ABORTABLE_ERROR")
		}
		return a.p.AbortTransaction(ctx, outcome(&abort))
	})
	run(t, w, sim.Second)
	if abort != "ok" || a.p.TransactionState() != "READY" {
		t.Fatalf("abort %q, state %s", abort, a.p.TransactionState())
	}
	if n := len(c.txn.markers); n != 1 || !strings.HasPrefix(c.txn.markers[0], "abort ") {
		t.Fatalf("markers %v", c.txn.markers)
	}
	c.txn.offsetErr = 0
	commit = ""
	act(t, w, id, func(ctx *sim.Context) error {
		if err := a.p.BeginTransaction(ctx); err != nil {
			return err
		}
		if err := a.p.Send(ctx, Record{Topic: "t", Partition: 0, Value: []byte("c")}, a.record("c")); err != nil {
			return err
		}
		return a.p.CommitTransaction(ctx, outcome(&commit))
	})
	run(t, w, sim.Second)
	if commit != "ok" || a.results["c"].err != nil {
		t.Fatalf("next transaction: commit %q, record %+v", commit, a.results["c"])
	}
}

// TestTransactionalProducerBumpsAfterSequenceGap (KIP-360, transaction
// version 1): a batch that fails with its sequence number used leaves a
// gap; the abort is followed by InitProducerId with the current id and
// epoch, and the partition starts again at sequence 0 with the new epoch.
func TestTransactionalProducerBumpsAfterSequenceGap(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	c.idempotent = true
	c.txn = newFakeTxn(1)
	failed := false
	c.hook = func(_ int32, _ storage.TopicPartition, rb storage.RecordBatch) (int16, bool, bool) {
		if string(rb.Records[0].Value) == "bad" && !failed {
			failed = true
			return kerr.UnknownProducerID.Code, false, false
		}
		return 0, false, false
	}
	w, id, a := world(t, 1, sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond}, c, txnProducerConfig("app"))
	var init, abort, commit string
	act(t, w, id, func(ctx *sim.Context) error {
		a.p.TransactionVersion = 1
		return a.p.InitTransactions(ctx, outcome(&init))
	})
	run(t, w, sim.Second)
	_, e0 := a.p.ProducerID()
	act(t, w, id, func(ctx *sim.Context) error {
		if err := a.p.BeginTransaction(ctx); err != nil {
			return err
		}
		return a.p.Send(ctx, Record{Topic: "t", Partition: 0, Value: []byte("bad")}, a.record("bad"))
	})
	run(t, w, sim.Second)
	if a.results["bad"].err == nil || a.p.TransactionState() != "ABORTABLE_ERROR" {
		t.Fatalf("bad record %+v, state %s", a.results["bad"], a.p.TransactionState())
	}
	act(t, w, id, func(ctx *sim.Context) error { return a.p.AbortTransaction(ctx, outcome(&abort)) })
	run(t, w, sim.Second)
	if _, e := a.p.ProducerID(); abort != "ok" || e != e0+1 {
		t.Fatalf("abort %q, epoch %d, want %d (bumped by InitProducerId)", abort, e, e0+1)
	}
	act(t, w, id, func(ctx *sim.Context) error {
		if err := a.p.BeginTransaction(ctx); err != nil {
			return err
		}
		if err := a.p.Send(ctx, Record{Topic: "t", Partition: 0, Value: []byte("good")}, a.record("good")); err != nil {
			return err
		}
		return a.p.CommitTransaction(ctx, outcome(&commit))
	})
	run(t, w, sim.Second)
	if commit != "ok" || a.results["good"].err != nil {
		t.Fatalf("after the bump: commit %q, record %+v", commit, a.results["good"])
	}
}

// TestTransactionalProducerAbortRetriesBatchInFlight: a batch in flight
// when AbortTransaction is called, answered with a retriable error
// (NOT_ENOUGH_REPLICAS_AFTER_APPEND) after it, is retried with its
// sequence number while the transaction aborts, as Kafka's sender drains
// the sequenced batches of a partition in the transaction
// (isSendToPartitionAllowed; abortUndrainedBatches leaves them); once it is
// answered, EndTxn(abort) goes and AbortTransaction returns.
func TestTransactionalProducerAbortRetriesBatchInFlight(t *testing.T) {
	for _, tv := range []int16{1, 2} {
		t.Run(fmt.Sprintf("tv%d", tv), func(t *testing.T) {
			c := newFakeCluster(1, map[string]int{"t": 1})
			c.idempotent = true
			c.txn = newFakeTxn(tv)
			attempts := 0
			c.hook = func(_ int32, _ storage.TopicPartition, rb storage.RecordBatch) (int16, bool, bool) {
				if string(rb.Records[0].Value) == "a" {
					if attempts++; attempts == 1 {
						return kerr.NotEnoughReplicasAfterAppend.Code, true, false
					}
				}
				return 0, false, false
			}
			w, id, a := world(t, 1, sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond}, c, txnProducerConfig("app"))
			var init, abort string
			act(t, w, id, func(ctx *sim.Context) error {
				a.p.TransactionVersion = tv
				return a.p.InitTransactions(ctx, outcome(&init))
			})
			run(t, w, sim.Second)
			act(t, w, id, func(ctx *sim.Context) error {
				if err := a.p.BeginTransaction(ctx); err != nil {
					return err
				}
				return a.p.Send(ctx, Record{Topic: "t", Partition: 0, Value: []byte("a")}, a.record("a"))
			})
			ps := a.p.partitionState(storage.TopicPartition{Topic: "t", Partition: 0})
			for i := 0; len(ps.inflight) == 0; i++ {
				if i == 1000 {
					t.Fatal("the batch was never sent")
				}
				run(t, w, 100*sim.Microsecond)
			}
			act(t, w, id, func(ctx *sim.Context) error { return a.p.AbortTransaction(ctx, outcome(&abort)) })
			run(t, w, 5*sim.Second)
			if attempts != 2 {
				t.Fatalf("the batch was sent %d times, want 2 (a retry while aborting)", attempts)
			}
			if abort != "ok" || a.p.TransactionState() != "READY" {
				t.Fatalf("abort %q, state %s: EndTxn(abort) waits for a batch that is never sent", abort, a.p.TransactionState())
			}
			if n := len(c.txn.markers); n != 1 || !strings.HasPrefix(c.txn.markers[0], "abort ") {
				t.Fatalf("markers %v", c.txn.markers)
			}
		})
	}
}
