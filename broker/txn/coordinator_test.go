package txn

import (
	"github.com/kafkasim/kafkasim/broker/storage"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

func leadFor(h *harness, id string) { h.lead(h.c.PartitionFor(id)) }

// TestCommitFlow: init, add, commit: PrepareCommit, markers, CompleteCommit.
func TestCommitFlow(t *testing.T) {
	for _, tv := range []int16{1, 2} {
		h := newHarness(t, testConfig(tv), true)
		leadFor(h, "t")
		r := h.init("t", 60000, 4, -1, -1)
		if r.ErrorCode != 0 || r.ProducerID != 1000 || r.ProducerEpoch != 0 {
			t.Fatalf("tv%d init: %+v", tv, r)
		}
		if c := addCode(h.add("t", 1000, 0, tp("a", 0), tp("a", 1))); c != 0 {
			t.Fatalf("add: %d", c)
		}
		e := h.end("t", 1000, 0, true, 5)
		if e.ErrorCode != 0 {
			t.Fatalf("end: %+v", e)
		}
		wantEpoch := int16(0)
		if tv == 2 {
			wantEpoch = 1 // KIP-890 part 2: bumped and returned
		}
		if e.ProducerEpoch != wantEpoch || len(h.sent) != 1 || !h.sent[0].Commit || h.sent[0].ProducerEpoch != wantEpoch || len(h.sent[0].Partitions) != 2 {
			t.Fatalf("tv%d: end %+v markers %+v", tv, e, h.sent)
		}
		m, _ := h.c.Transaction("t")
		if m.State != CompleteCommit || len(m.TopicPartitions) != 0 {
			t.Fatalf("after markers: %s", m.String())
		}
		// The stale epoch is fenced; (tv2) the previous epoch's retry of the
		// commit is answered with success.
		if c := addCode(h.add("t", 1000, wantEpoch-1, tp("a", 0))); tv == 2 && c != kerr.ProducerFenced.Code {
			t.Fatalf("stale add: %d", c)
		}
		if tv == 2 {
			if e := h.end("t", 1000, 0, true, 5); e.ErrorCode != 0 || e.ProducerEpoch != 1 {
				t.Fatalf("retried commit: %+v", e)
			}
			if e := h.end("t", 1000, 0, false, 5); e.ErrorCode != kerr.InvalidTxnState.Code {
				t.Fatalf("abort after commit with old epoch: %+v", e)
			}
		}
	}
}

// TestFenceZombie: a second InitProducerId aborts the first producer's
// open transaction (CONCURRENT_TRANSACTIONS meanwhile), and the first
// producer is fenced.
func TestFenceZombie(t *testing.T) {
	h := newHarness(t, testConfig(1), false)
	leadFor(h, "t")
	h.init("t", 60000, 4, -1, -1)
	h.drain()
	h.add("t", 1000, 0, tp("a", 0))
	h.drain()
	r := h.init("t", 60000, 4, -1, -1)
	if r != nil {
		t.Fatalf("answered before the abort was written: %+v", r)
	}
	h.deliverAppend(0, nil) // PrepareAbort with the fenced epoch
	if len(h.sent) != 1 || h.sent[0].Commit || h.sent[0].ProducerEpoch != 1 {
		t.Fatalf("markers %+v, want abort at epoch 1", h.sent)
	}
	if r2 := h.init("t", 60000, 4, -1, -1); r2.ErrorCode != kerr.ConcurrentTransactions.Code {
		t.Fatalf("init while aborting: %+v", r2)
	}
	h.drain()
	h.sync = true
	if r = h.init("t", 60000, 4, -1, -1); r == nil || r.ErrorCode != 0 || r.ProducerEpoch != 2 {
		t.Fatalf("init after the abort: %+v", r)
	}
	// The zombie's EndTxn: fenced (INVALID_PRODUCER_EPOCH before v2).
	if e := h.end("t", 1000, 0, true, 3); e.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("zombie end: %+v", e)
	}
	if e := h.end("t", 1000, 0, true, 1); e.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("zombie end v1: %+v", e)
	}
	h.init("t", 60000, 4, -1, -1)
	if m, _ := h.c.Transaction("t"); m.ProducerEpoch != 3 || m.State != Empty {
		t.Fatalf("after two inits: %s", m.String())
	}
}

// TestTimeoutAbort: an open transaction past transaction.timeout.ms is
// aborted at the next check; the producer's epoch is fenced (tv1).
func TestTimeoutAbort(t *testing.T) {
	h := newHarness(t, testConfig(1), true)
	leadFor(h, "t")
	h.init("t", 1000, 4, -1, -1)
	h.add("t", 1000, 0, tp("a", 0))
	h.now = h.now.Add(11 * sim.Second)
	at, ok := h.c.NextDeadline()
	if !ok || at > h.now {
		t.Fatalf("deadline %v %v", at, ok)
	}
	h.c.Tick(h.now)
	if len(h.sent) != 1 || h.sent[0].Commit || h.sent[0].ProducerEpoch != 1 {
		t.Fatalf("markers %+v", h.sent)
	}
	if m, _ := h.c.Transaction("t"); m.State != CompleteAbort {
		t.Fatalf("state %s", m.String())
	}
	if e := h.end("t", 1000, 0, true, 3); e.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("commit after timeout: %+v", e)
	}
}

func TestInitErrors(t *testing.T) {
	h := newHarness(t, testConfig(2), true)
	if r := h.init("t", 1000, 4, -1, -1); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("not led: %+v", r)
	}
	h.c.BecomeLeader(0, h.c.PartitionFor("t"))
	if r := h.init("t", 1000, 4, -1, -1); r.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("loading: %+v", r)
	}
	h.c.Load(0, h.c.PartitionFor("t"), nil)
	if r := h.init("t", 900001, 4, -1, -1); r.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("timeout: %+v", r)
	}
	if r := h.add("u", 1, 0, tp("a", 0)); addCode(r) != kerr.NotCoordinator.Code && h.c.PartitionFor("u") != h.c.PartitionFor("t") {
		t.Fatalf("add unknown: %+v", r)
	}
	h.init("t", 1000, 4, -1, -1)
	if c := addCode(h.add("t", 999, 0, tp("a", 0))); c != kerr.InvalidProducerIDMapping.Code {
		t.Fatalf("wrong pid: %d", c)
	}
	if e := h.end("t", 1000, 0, true, 5); e.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("commit with nothing open: %+v", e)
	}
	// tv2: aborting with nothing open is allowed, and bumps.
	if e := h.end("t", 1000, 0, false, 5); e.ErrorCode != 0 || e.ProducerEpoch != 1 {
		t.Fatalf("abort with nothing open: %+v", e)
	}
}

// TestEpochExhaustion: InitProducerId at an exhausted epoch rotates to a
// new producer id.
func TestEpochExhaustion(t *testing.T) {
	h := newHarness(t, testConfig(1), true)
	leadFor(h, "t")
	h.init("t", 1000, 4, -1, -1)
	h.c.txns["t"].m.ProducerEpoch = maxEpoch - 1
	r := h.init("t", 1000, 4, -1, -1)
	if r.ErrorCode != 0 || r.ProducerID != 1001 || r.ProducerEpoch != 0 {
		t.Fatalf("rotation: %+v", r)
	}
}

// TestFailoverResendsMarkers: a new coordinator loading a PrepareCommit
// sends its markers again and completes it.
func TestFailoverResendsMarkers(t *testing.T) {
	h := newHarness(t, testConfig(2), false)
	leadFor(h, "t")
	h.init("t", 60000, 4, -1, -1)
	h.drain()
	h.add("t", 1000, 0, tp("a", 0))
	h.drain()
	h.end("t", 1000, 0, true, 5)
	h.deliverAppend(0, nil) // PrepareCommit committed; markers pending
	p := h.c.PartitionFor("t")
	h.c.Resign(h.now, p)
	h.deliverMarkers(0) // the old leadership's markers: ignored
	if len(h.appends) != 0 {
		t.Fatal("a resigned coordinator wrote")
	}
	h.sent = nil
	h.lead(p)
	if len(h.sent) != 1 || !h.sent[0].Commit || h.sent[0].ProducerEpoch != 1 {
		t.Fatalf("markers after load: %+v", h.sent)
	}
	h.drain()
	if m, _ := h.c.Transaction("t"); m.State != CompleteCommit {
		t.Fatalf("after failover: %s", m.String())
	}
}

func TestVerifyPartitions(t *testing.T) {
	h := newHarness(t, testConfig(2), true)
	leadFor(h, "t")
	h.init("t", 60000, 4, -1, -1)
	h.add("t", 1000, 0, tp("a", 0))
	errs := h.c.VerifyPartitions("t", 1000, 0, []storageTP{tp("a", 0), tp("a", 1)})
	if errs[0] != nil || errs[1] != kerr.TransactionAbortable {
		t.Fatalf("verify: %v", errs)
	}
	if errs := h.c.VerifyPartitions("t", 1000, 1, []storageTP{tp("a", 0)}); errs[0] != kerr.ProducerFenced {
		t.Fatalf("verify stale: %v", errs)
	}
}

type storageTP = storage.TopicPartition

// TestFenceTV2: with transaction version 2 a coordinator abort (here the
// transaction timeout) bumps the epoch once from 4.0.1: the markers carry
// epoch 1 and the old producer's abort at epoch 0 is a retry of the
// completed abort. Kafka 4.0.0 bumped it twice (KAFKA-19367: the fence,
// then the abort's own bump): the markers carry 2, the old producer's
// abort is fenced, and an abort at 1 passes as a retry.
func TestFenceTV2(t *testing.T) {
	for _, twice := range []bool{false, true} {
		cfg := testConfig(2)
		cfg.FenceBumpsEpochTwice = twice
		h := newHarness(t, cfg, true)
		leadFor(h, "t")
		h.init("t", 1000, 4, -1, -1)
		h.add("t", 1000, 0, tp("a", 0))
		h.now = h.now.Add(11 * sim.Second)
		h.c.Tick(h.now)
		want := int16(1)
		if twice {
			want = 2
		}
		if len(h.sent) != 1 || h.sent[0].Commit || h.sent[0].ProducerEpoch != want || h.sent[0].TransactionVersion != 2 {
			t.Fatalf("twice=%v: markers %+v, want an abort at epoch %d", twice, h.sent, want)
		}
		e := h.end("t", 1000, 0, false, 5)
		if twice && e.ErrorCode != kerr.ProducerFenced.Code {
			t.Fatalf("4.0.0: old producer's abort: %+v, want PRODUCER_FENCED", e)
		}
		if !twice && (e.ErrorCode != 0 || e.ProducerEpoch != 1) {
			t.Fatalf("4.0.1: old producer's abort: %+v, want a retry answered at epoch 1", e)
		}
		if !twice {
			continue
		}
		if e := h.end("t", 1000, 1, false, 5); e.ErrorCode != 0 || e.ProducerEpoch != 2 {
			t.Fatalf("abort at the epoch before the last bump (a retry): %+v", e)
		}
	}
}

// TestIDExpiration: an id without a transaction, untouched for
// transactional.id.expiration.ms, is deleted with a tombstone at the next
// check (Kafka's removeExpiredTransactionalIds).
func TestIDExpiration(t *testing.T) {
	cfg := testConfig(1)
	cfg.IDExpiration, cfg.ExpireCheckInterval = 60*sim.Second, 10*sim.Second
	h := newHarness(t, cfg, true)
	leadFor(h, "t")
	h.init("t", 1000, 4, -1, -1)
	h.now = h.now.Add(55 * sim.Second)
	h.c.Tick(h.now)
	if _, ok := h.c.Transaction("t"); !ok {
		t.Fatal("expired early")
	}
	h.now = h.now.Add(10 * sim.Second)
	h.c.Tick(h.now)
	if _, ok := h.c.Transaction("t"); ok {
		t.Fatal("not expired")
	}
	p := h.c.PartitionFor("t")
	last := h.log[p][len(h.log[p])-1]
	if id, m, err := Decode(last); err != nil || id != "t" || m != nil {
		t.Fatalf("last record %q %v %v, want t's tombstone", id, m, err)
	}
	if r := h.init("t", 1000, 4, -1, -1); r.ErrorCode != 0 || r.ProducerID == 1000 {
		t.Fatalf("init after expiry: %+v (want a new producer id)", r)
	}
}

// TestEndTxnRotatesAtExhaustedEpoch: with transaction version 2 an end at
// an exhausted epoch gets a new producer id (KIP-890): the markers carry
// the last epoch, the answer the new id at epoch 0, and Complete* holds it.
func TestEndTxnRotatesAtExhaustedEpoch(t *testing.T) {
	h := newHarness(t, testConfig(2), true)
	leadFor(h, "t")
	h.init("t", 60000, 4, -1, -1)
	h.c.txns["t"].m.ProducerEpoch = maxEpoch - 1
	h.add("t", 1000, maxEpoch-1, tp("a", 0))
	e := h.end("t", 1000, maxEpoch-1, true, 5)
	if e.ErrorCode != 0 || e.ProducerID != 1001 || e.ProducerEpoch != 0 {
		t.Fatalf("end: %+v", e)
	}
	if len(h.sent) != 1 || h.sent[0].ProducerID != 1000 || h.sent[0].ProducerEpoch != maxEpoch {
		t.Fatalf("markers %+v", h.sent)
	}
	m, _ := h.c.Transaction("t")
	if m.ProducerID != 1001 || m.ProducerEpoch != 0 || m.LastProducerID != 1000 || m.State != CompleteCommit {
		t.Fatalf("after the end: %s", m.String())
	}
	// The retry of that end (old id, last epoch) is answered, not fenced.
	if e := h.end("t", 1000, maxEpoch-1, true, 5); e.ErrorCode != 0 || e.ProducerID != 1001 {
		t.Fatalf("retry: %+v", e)
	}
}
