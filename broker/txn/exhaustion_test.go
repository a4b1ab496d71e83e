package txn

// Spec-claim tests for producer-epoch exhaustion, as Kafka up to 4.1 has it
// (TransactionMetadata.isEpochExhausted, prepareIncrementProducerEpoch,
// prepareFenceProducerEpoch, prepareAbortOrCommit; TransactionCoordinator
// prepareInitProducerIdTransit and endTransaction; KAFKA-5283, KIP-360,
// KIP-890, KAFKA-19367, KAFKA-20090). Each test puts a transactional id at
// the limit and checks what is answered, written and sent.

import (
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// at initialises id (producer 1000), moves its epoch to epoch and, with
// ongoing, opens a transaction on a-0 at that epoch.
func at(t *testing.T, h *harness, id string, epoch int16, ongoing bool) {
	t.Helper()
	if r := h.init(id, 60000, 4, -1, -1); r.ErrorCode != 0 {
		t.Fatalf("init %s: %+v", id, r)
	}
	h.c.txns[id].m.ProducerEpoch = epoch
	if ongoing {
		if code := addCode(h.add(id, h.c.txns[id].m.ProducerID, epoch, tp("a", 0))); code != 0 {
			t.Fatalf("add %s at epoch %d: %s", id, epoch, kerr.ErrorForCode(code))
		}
	}
}

// written returns how many records the coordinator has committed for id's
// partition.
func written(h *harness, id string) int { return len(h.log[h.c.PartitionFor(id)]) }

// TestInitProducerIDAtExhaustedEpochRotatesOrRefuses: at an exhausted epoch
// (Short.MAX_VALUE-1 and up) InitProducerId gives a new producer id at
// epoch 0 when the producer brings no epoch or the current one; any other
// expected epoch, even the previous one of a retry, meets
// prepareIncrementProducerEpoch's IllegalStateException (UNKNOWN_SERVER_ERROR)
// and nothing is written.
func TestInitProducerIDAtExhaustedEpochRotatesOrRefuses(t *testing.T) {
	for _, tv := range []int16{1, 2} {
		for _, epoch := range []int16{maxEpoch - 1, maxEpoch} {
			cases := []struct {
				name     string
				expEpoch int16
				wantPID  int64
				wantErr  *kerr.Error
			}{
				{"new producer", NoProducerEpoch, 1001, nil},
				{"current epoch", epoch, 1001, nil},
				{"previous epoch (a retry)", epoch - 1, -1, kerr.UnknownServerError},
				{"old epoch", 7, -1, kerr.UnknownServerError},
			}
			for _, tc := range cases {
				h := newHarness(t, testConfig(tv), true)
				leadFor(h, "t")
				at(t, h, "t", epoch, false)
				h.c.txns["t"].m.LastProducerEpoch = epoch - 1
				before := written(h, "t")
				expPID := int64(1000)
				if tc.expEpoch == NoProducerEpoch {
					expPID = -1
				}
				r := h.init("t", 60000, 4, expPID, tc.expEpoch)
				if tc.wantErr != nil {
					if r.ErrorCode != tc.wantErr.Code || written(h, "t") != before {
						t.Fatalf("tv%d epoch %d %s: %+v, %d records written, want %s and none", tv, epoch, tc.name, r, written(h, "t")-before, tc.wantErr)
					}
					continue
				}
				if r.ErrorCode != 0 || r.ProducerID != tc.wantPID || r.ProducerEpoch != 0 {
					t.Fatalf("tv%d epoch %d %s: %+v, want producer %d epoch 0", tv, epoch, tc.name, r, tc.wantPID)
				}
				m, _ := h.c.Transaction("t")
				if m.LastProducerID != 1000 || m.State != Empty {
					t.Fatalf("tv%d epoch %d %s: after the rotation %s", tv, epoch, tc.name, m.String())
				}
			}
		}
	}
}

// TestFenceAtLastEpochTV1: a new producer fencing an ongoing transaction
// at Short.MAX_VALUE-1 bumps it to MAX_VALUE for the abort only (the
// markers carry it, the client is told CONCURRENT_TRANSACTIONS); its retry
// then finds the epoch exhausted and gets a new producer id, as
// TransactionCoordinator's comment on the Ongoing case says.
func TestFenceAtLastEpochTV1(t *testing.T) {
	h := newHarness(t, testConfig(1), true)
	leadFor(h, "t")
	at(t, h, "t", maxEpoch-1, true)
	if r := h.init("t", 60000, 4, -1, -1); r.ErrorCode != kerr.ConcurrentTransactions.Code {
		t.Fatalf("fencing init: %+v", r)
	}
	if len(h.sent) != 1 || h.sent[0].Commit || h.sent[0].ProducerID != 1000 || h.sent[0].ProducerEpoch != maxEpoch {
		t.Fatalf("abort markers %+v, want producer 1000 at epoch %d", h.sent, maxEpoch)
	}
	r := h.init("t", 60000, 4, -1, -1)
	if r.ErrorCode != 0 || r.ProducerID != 1001 || r.ProducerEpoch != 0 {
		t.Fatalf("retry after the abort: %+v, want producer 1001 epoch 0", r)
	}
}

// TestFenceAtMaxEpochIsRefused: an ongoing transaction at Short.MAX_VALUE
// cannot be fenced (prepareFenceProducerEpoch's IllegalStateException),
// under either transaction version: InitProducerId gets
// UNKNOWN_SERVER_ERROR, the timeout abort does nothing, nothing is written
// and no marker sent; the transaction stays Ongoing (KAFKA-20090's stuck
// transaction). The exception also ends that abort check: an id after it
// that timed out too waits for the next check.
func TestFenceAtMaxEpochIsRefused(t *testing.T) {
	for _, tv := range []int16{1, 2} {
		h := newHarness(t, testConfig(tv), true)
		// Two ids on the same __transaction_state partition, "t" first.
		other := ""
		for _, c := range []string{"u", "v", "w", "x", "y", "z", "ta", "tb", "tc"} {
			if h.c.PartitionFor(c) == h.c.PartitionFor("t") {
				other = c
				break
			}
		}
		if other == "" {
			t.Fatal("no id shares t's partition")
		}
		leadFor(h, "t")
		at(t, h, "t", maxEpoch, true)
		at(t, h, other, 3, true)
		before := written(h, "t")
		if r := h.init("t", 60000, 4, -1, -1); r.ErrorCode != kerr.UnknownServerError.Code {
			t.Fatalf("tv%d fencing init: %+v, want UNKNOWN_SERVER_ERROR", tv, r)
		}
		h.now = h.now.Add(61 * sim.Second)
		h.c.Tick(h.now)
		if len(h.sent) != 0 || written(h, "t") != before {
			t.Fatalf("tv%d: %d markers sent, %d records written, want none", tv, len(h.sent), written(h, "t")-before)
		}
		if m, _ := h.c.Transaction("t"); m.State != Ongoing || m.ProducerEpoch != maxEpoch {
			t.Fatalf("tv%d: after the refused fences %s", tv, m.String())
		}
		if m, _ := h.c.Transaction(other); m.State != Ongoing {
			t.Fatalf("tv%d: %s aborted in the check that met t's exception: %s", tv, other, m.String())
		}
	}
}

// TestFenceAtLastEpochTV2OverflowsTheAbort: with transaction version 2 the
// fence's abort bumps the epoch a second time (4.0.0; KAFKA-19367), so a
// fence at Short.MAX_VALUE-1 asks prepareAbortOrCommit for MAX_VALUE+1,
// which Kafka refuses (IllegalArgumentException: UNKNOWN_SERVER_ERROR),
// after it has put the fenced epoch MAX_VALUE into the cached metadata:
// the old producer is fenced, nothing is written, and every later fence is
// refused at MAX_VALUE.
func TestFenceAtLastEpochTV2OverflowsTheAbort(t *testing.T) {
	cfg := testConfig(2)
	cfg.FenceBumpsEpochTwice = true // 4.0.0
	h := newHarness(t, cfg, true)
	leadFor(h, "t")
	at(t, h, "t", maxEpoch-1, true)
	before := written(h, "t")
	if r := h.init("t", 60000, 4, -1, -1); r.ErrorCode != kerr.UnknownServerError.Code {
		t.Fatalf("fencing init: %+v, want UNKNOWN_SERVER_ERROR", r)
	}
	if m, _ := h.c.Transaction("t"); m.State != Ongoing || m.ProducerEpoch != maxEpoch || m.LastProducerEpoch != NoProducerEpoch {
		t.Fatalf("after the refused abort: %s, want Ongoing at the fenced epoch", m.String())
	}
	if code := addCode(h.add("t", 1000, maxEpoch-1, tp("b", 0))); code != kerr.ProducerFenced.Code {
		t.Fatalf("the old producer's add: %s, want PRODUCER_FENCED", kerr.ErrorForCode(code))
	}
	h.now = h.now.Add(61 * sim.Second)
	h.c.Tick(h.now)
	if len(h.sent) != 0 || written(h, "t") != before {
		t.Fatalf("%d markers sent, %d records written, want none", len(h.sent), written(h, "t")-before)
	}
}

// TestEndTxnAtMaxEpochTV2IsRefused: a version 2 EndTxn at Short.MAX_VALUE
// (an epoch a late retry can hand out, KAFKA-20090) gets a new producer id
// allocated, as the epoch is exhausted, and then meets the bump's overflow:
// UNKNOWN_SERVER_ERROR, nothing written; one epoch lower it rotates.
func TestEndTxnAtMaxEpochTV2IsRefused(t *testing.T) {
	for _, commit := range []bool{true, false} {
		h := newHarness(t, testConfig(2), true)
		leadFor(h, "t")
		at(t, h, "t", maxEpoch, true)
		before := written(h, "t")
		if e := h.end("t", 1000, maxEpoch, commit, 5); e.ErrorCode != kerr.UnknownServerError.Code {
			t.Fatalf("commit=%v end at MAX_VALUE: %+v, want UNKNOWN_SERVER_ERROR", commit, e)
		}
		if len(h.sent) != 0 || written(h, "t") != before {
			t.Fatalf("commit=%v: %d markers sent, %d records written, want none", commit, len(h.sent), written(h, "t")-before)
		}
		if m, _ := h.c.Transaction("t"); m.State != Ongoing || m.ProducerEpoch != maxEpoch {
			t.Fatalf("commit=%v: after the refused end %s", commit, m.String())
		}
	}
	h := newHarness(t, testConfig(2), true)
	leadFor(h, "t")
	at(t, h, "t", maxEpoch-1, true)
	if e := h.end("t", 1000, maxEpoch-1, false, 5); e.ErrorCode != 0 || e.ProducerID != 1001 || e.ProducerEpoch != 0 {
		t.Fatalf("abort at MAX_VALUE-1: %+v, want producer 1001 epoch 0", e)
	}
}

// TestFenceAtLastEpochTV2OneBump: from 4.0.1 (KAFKA-19367 fixed) the
// fence's bump is the abort's, so a fence at Short.MAX_VALUE-1 aborts at
// MAX_VALUE: nothing overflows, the markers are sent, the old producer is
// fenced.
func TestFenceAtLastEpochTV2OneBump(t *testing.T) {
	h := newHarness(t, testConfig(2), true)
	leadFor(h, "t")
	at(t, h, "t", maxEpoch-1, true)
	if r := h.init("t", 60000, 4, -1, -1); r.ErrorCode == kerr.UnknownServerError.Code {
		t.Fatalf("fencing init: %+v, want no overflow with one bump", r)
	}
	if m, _ := h.c.Transaction("t"); m.ProducerEpoch != maxEpoch || m.State == Ongoing {
		t.Fatalf("after the fence: %s, want the abort at MAX_VALUE", m.String())
	}
	if len(h.sent) == 0 {
		t.Fatalf("no markers sent for the abort")
	}
}
