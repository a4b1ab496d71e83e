package txn

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"pgregory.net/rapid"
)

// txnModel is the client-visible specification of one transactional id
// under a coordinator whose writes and markers always succeed at once: the
// current and previous epoch, whether a transaction is open and with which
// partitions, and how the last one ended.
type txnModel struct {
	tv          int16
	epoch, last int16
	open        bool
	parts       []storage.TopicPartition
	lastEnd     string // "", "commit", "abort"
	twice       bool   // KAFKA-19367: a v2 fence-and-abort bumps twice
	wantMarkers []Markers
}

// TestCoordinatorMatchesModel drives the coordinator with random
// InitProducerId, AddPartitionsToTxn and EndTxn requests (current or stale
// epochs) and compares every answer and every marker request with the
// model; after each step a coordinator loaded from the log alone must hold
// the same metadata (what fail-over relies on).
func TestCoordinatorMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tv := int16(rapid.IntRange(1, 2).Draw(rt, "tv"))
		cfg := testConfig(tv)
		cfg.FenceBumpsEpochTwice = rapid.Bool().Draw(rt, "kafka19367")
		h := newHarness(t, cfg, true)
		leadFor(h, "t")
		r := h.init("t", 60000, 4, -1, -1)
		if r.ErrorCode != 0 || r.ProducerEpoch != 0 {
			rt.Fatalf("first init: %+v", r)
		}
		m := &txnModel{tv: tv, epoch: 0, twice: cfg.FenceBumpsEpochTwice}
		all := []storage.TopicPartition{tp("a", 0), tp("a", 1), tp("b", 0)}
		steps := rapid.IntRange(1, 30).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			epoch := m.epoch - int16(rapid.IntRange(0, 1).Draw(rt, "stale"))
			switch op := rapid.IntRange(0, 2).Draw(rt, "op"); op {
			case 0:
				r := h.init("t", 60000, 4, -1, -1)
				want, wantEpoch := m.initProducer()
				if r.ErrorCode != errCode(want) || (want == nil && r.ProducerEpoch != wantEpoch) {
					rt.Fatalf("step %d init: got %d epoch %d, want %v epoch %d", i, r.ErrorCode, r.ProducerEpoch, want, wantEpoch)
				}
			case 1:
				p := all[rapid.IntRange(0, len(all)-1).Draw(rt, "tp")]
				got := addCode(h.add("t", 1000, epoch, p))
				if want := m.add(epoch, p); got != errCode(want) {
					rt.Fatalf("step %d add %s epoch %d: got %d, want %v", i, p, epoch, got, want)
				}
			case 2:
				commit := rapid.Bool().Draw(rt, "commit")
				r := h.end("t", 1000, epoch, commit, 5)
				want, wantEpoch := m.end(epoch, commit)
				if r.ErrorCode != errCode(want) || (want == nil && r.ProducerEpoch != wantEpoch) {
					rt.Fatalf("step %d end(commit=%v, epoch %d): got %d epoch %d, want %v epoch %d", i, commit, epoch, r.ErrorCode, r.ProducerEpoch, want, wantEpoch)
				}
			}
			if len(h.sent) != len(m.wantMarkers) {
				rt.Fatalf("step %d: %d marker requests, want %d", i, len(h.sent), len(m.wantMarkers))
			}
			for k := range h.sent {
				g, w := h.sent[k], m.wantMarkers[k]
				if g.Commit != w.Commit || g.ProducerEpoch != w.ProducerEpoch || !slices.Equal(g.Partitions, w.Partitions) {
					rt.Fatalf("markers %d: got %+v, want %+v", k, g, w)
				}
			}
			checkReplay(rt, h)
		}
	})
}

func (m *txnModel) initProducer() (*kerr.Error, int16) {
	if m.open {
		// The fence bumps the epoch; on 4.0.0 version 2's abort bumps it
		// again (KAFKA-19367).
		m.epoch++
		if m.tv >= 2 && m.twice {
			m.epoch++
		}
		m.markers(false, m.epoch)
		m.open, m.parts, m.lastEnd = false, nil, "abort"
		return kerr.ConcurrentTransactions, 0
	}
	m.epoch++
	m.lastEnd = ""
	return nil, m.epoch
}

func (m *txnModel) add(epoch int16, p storage.TopicPartition) *kerr.Error {
	if epoch != m.epoch {
		return kerr.ProducerFenced
	}
	m.open = true
	m.parts = sortedSet(append(m.parts, p))
	return nil
}

func (m *txnModel) markers(commit bool, epoch int16) {
	m.wantMarkers = append(m.wantMarkers, Markers{Commit: commit, ProducerEpoch: epoch, Partitions: m.parts})
}

func (m *txnModel) end(epoch int16, commit bool) (*kerr.Error, int16) {
	kind := "abort"
	if commit {
		kind = "commit"
	}
	finish := func() (*kerr.Error, int16) {
		if m.tv >= 2 {
			m.epoch++
		}
		m.markers(commit, m.epoch)
		m.open, m.parts, m.lastEnd = false, nil, kind
		return nil, m.epoch
	}
	if m.tv < 2 {
		switch {
		case epoch != m.epoch:
			return kerr.ProducerFenced, 0
		case m.open:
			return finish()
		case m.lastEnd == kind:
			return nil, m.epoch
		}
		return kerr.InvalidTxnState, 0
	}
	// Version 2: an open or empty transaction takes the current epoch only;
	// a completed one also the epoch before its bump (a retry).
	retry := epoch+1 == m.epoch
	switch {
	case m.open || m.lastEnd == "":
		if epoch != m.epoch {
			return kerr.ProducerFenced, 0
		}
		if m.open || !commit {
			return finish()
		}
		return kerr.InvalidTxnState, 0
	case !retry && epoch != m.epoch:
		return kerr.ProducerFenced, 0
	case kind == m.lastEnd && retry:
		return nil, m.epoch
	case !commit && !retry:
		return finish() // a new abort, of nothing
	}
	return kerr.InvalidTxnState, 0
}

// checkReplay loads a fresh coordinator from the committed log and
// compares what the log carries with the live metadata.
func checkReplay(rt *rapid.T, h *harness) {
	p := h.c.PartitionFor("t")
	c := New(h.c.cfg, h.c.env)
	c.BecomeLeader(h.now, p)
	if err := c.Load(h.now, p, h.log[p]); err != nil {
		rt.Fatal(err)
	}
	live, _ := h.c.Transaction("t")
	got, ok := c.Transaction("t")
	if !ok {
		rt.Fatalf("replay lost %s", live.String())
	}
	live.LastProducerEpoch, got.LastProducerEpoch = 0, 0 // not in the record
	if h.c.cfg.Version < 2 {                             // value v0 has no tagged fields
		live.LastProducerID, live.NextProducerID, live.ClientTransactionVersion = got.LastProducerID, got.NextProducerID, got.ClientTransactionVersion
	}
	if live.String() != got.String() || live.TxnStartTimestamp != got.TxnStartTimestamp || live.TxnTimeoutMs != got.TxnTimeoutMs ||
		live.ClientTransactionVersion != got.ClientTransactionVersion || live.LastProducerID != got.LastProducerID {
		rt.Fatalf("replayed %+v, live %+v", got, live)
	}
}
