package server

// This file is the leader's idempotent-producer state per partition
// (Kafka's ProducerStateManager and ProducerAppendInfo, reference §4.6):
// per producer id, its epoch and the metadata of its last 5 batches, so a
// retried batch is recognised (DUPLICATE: the original offset is returned
// and nothing is appended) and a gap refused (OUT_OF_ORDER_SEQUENCE_NUMBER).
//
// Simplifications, and why: the state is rebuilt from the log's batch
// headers whenever the replica becomes leader (Kafka keeps it on followers
// too and snapshots it to disk); the result is the same, the cost is a scan
// of the log per leader change. No UNKNOWN_PRODUCER_ID: a producer with no
// state may start at any sequence (the "empty state" rule of §4.6).
// Transactions (ongoing transactions, markers, the LSO) are the log's
// producer state (package storage), kept on leaders and followers alike;
// a marker here only moves the producer to its epoch with no batches, as
// ProducerStateEntry.maybeUpdateProducerEpoch does.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/twmb/franz-go/pkg/kerr"
)

// batchesToRetain is ProducerStateEntry.NUM_BATCHES_TO_RETAIN.
const batchesToRetain = 5

type producerBatch struct {
	firstSeq, lastSeq       int32
	firstOffset, lastOffset int64
}

type producerEntry struct {
	epoch   int16
	batches []producerBatch // oldest first, at most batchesToRetain
}

func (e *producerEntry) add(b producerBatch) {
	e.batches = append(e.batches, b)
	if len(e.batches) > batchesToRetain {
		e.batches = append(e.batches[:0], e.batches[len(e.batches)-batchesToRetain:]...)
	}
}

// rebuildProducers reads every batch header of p's log into fresh state.
func (p *Partition) rebuildProducers() {
	p.producers = map[int64]*producerEntry{}
	err := p.log.Batches(p.log.LogStartOffset(), func(info storage.BatchInfo) {
		if info.ProducerID < 0 {
			return
		}
		if info.IsControl() {
			p.producerMarker(info)
			return
		}
		e := p.producers[info.ProducerID]
		if e == nil || info.ProducerEpoch > e.epoch {
			e = &producerEntry{epoch: info.ProducerEpoch}
			p.producers[info.ProducerID] = e
		}
		e.add(producerBatch{info.BaseSequence, info.LastSequence(), info.BaseOffset, info.LastOffset})
	})
	if err != nil {
		panic(fmt.Sprintf("rebuilding producer state of %s: %v", p.tp, err))
	}
}

// checkSequence validates an idempotent batch against the producer state.
// It returns (duplicate's first offset, true, nil) for a retried batch.
// With the planted bug mutant.SequenceCheckOff (NOT Kafka) on, only the
// epoch is checked: any sequence is appended, a retry as a new batch.
func (p *Partition) checkSequence(info storage.BatchInfo, m mutant.Set) (int64, bool, *kerr.Error) {
	e := p.producers[info.ProducerID]
	if e == nil {
		return 0, false, nil // no state: any sequence starts it
	}
	switch {
	case info.ProducerEpoch < e.epoch:
		if p.mutants.On(mutant.ZombieNotFenced) {
			return 0, false, nil // NOT Kafka: a fenced producer's batch is accepted
		}
		return 0, false, kerr.InvalidProducerEpoch
	case m.On(mutant.SequenceCheckOff):
		return 0, false, nil
	case info.ProducerEpoch > e.epoch:
		if info.BaseSequence != 0 {
			return 0, false, kerr.OutOfOrderSequenceNumber
		}
		return 0, false, nil
	}
	last := info.LastSequence()
	for _, b := range e.batches {
		if b.firstSeq == info.BaseSequence && b.lastSeq == last {
			return b.firstOffset, true, nil
		}
	}
	if n := len(e.batches); n > 0 {
		prev := e.batches[n-1].lastSeq
		inSeq := info.BaseSequence == prev+1 || (info.BaseSequence == 0 && prev == 1<<31-1)
		if !inSeq {
			return 0, false, kerr.OutOfOrderSequenceNumber
		}
	}
	return 0, false, nil
}

// recordProducerAppend adds an appended batch to the producer state.
func (p *Partition) recordProducerAppend(info storage.BatchInfo, firstOffset, lastOffset int64) {
	if info.ProducerID < 0 || p.producers == nil {
		return
	}
	if info.IsControl() {
		p.producerMarker(info)
		return
	}
	e := p.producers[info.ProducerID]
	if e == nil || info.ProducerEpoch > e.epoch {
		e = &producerEntry{epoch: info.ProducerEpoch}
		p.producers[info.ProducerID] = e
	}
	e.add(producerBatch{info.BaseSequence, info.LastSequence(), firstOffset, lastOffset})
}

// producerMarker applies a transaction marker: a new epoch starts with no
// batches; the marker's own sequence (none) is not recorded.
func (p *Partition) producerMarker(info storage.BatchInfo) {
	if e := p.producers[info.ProducerID]; e == nil || info.ProducerEpoch > e.epoch {
		p.producers[info.ProducerID] = &producerEntry{epoch: info.ProducerEpoch}
	}
}
