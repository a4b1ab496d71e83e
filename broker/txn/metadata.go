package txn

// This file is TransactionMetadata: what the coordinator knows of one
// transactional.id, and the transitions Kafka prepares on it
// (prepareIncrementProducerEpoch, prepareProducerIdRotation,
// prepareAddPartitions, prepareAbortOrCommit, prepareComplete,
// prepareDead). A prepared transition is a copy; it is applied only once
// its record is committed to __transaction_state.
//
// Epoch exhaustion is handled as every release up to 4.1 handles it: the
// coordinator never hands out Short.MAX_VALUE on purpose (isEpochExhausted
// is MAX-1 and up, and InitProducerId or a version 2 end rotates to a new
// producer id there), and a transition that would pass Short.MAX_VALUE is
// refused with the exception Kafka throws (errEpochOverflow: an epoch
// increment at an exhausted epoch, IllegalStateException; a fence at
// MAX_VALUE, IllegalStateException; a version 2 end at MAX_VALUE, whose
// bump overflows, IllegalArgumentException). The host answers it
// UNKNOWN_SERVER_ERROR, as KafkaApis answers an unexpected exception.
// NB: KAFKA-20090 (after 4.1) lets a fence and an abort at MAX_VALUE go
// through without a bump; no release in the table has it, so it is not
// modelled.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/twmb/franz-go/pkg/kerr"
)

// NoProducerID and NoProducerEpoch are Kafka's RecordBatch.NO_PRODUCER_ID
// and NO_PRODUCER_EPOCH.
const (
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
)

// Metadata is Kafka's TransactionMetadata of one transactional.id.
//
// Invariant: TopicPartitions is sorted and holds no duplicate; it is empty
// unless State is Ongoing, PrepareCommit or PrepareAbort.
type Metadata struct {
	TransactionalID string
	ProducerID      int64
	// LastProducerID is the producer id before the latest rotation
	// (Kafka's prevProducerId; TransactionLogValue.PreviousProducerId).
	LastProducerID int64
	// NextProducerID is the id a transaction version 2 commit or abort
	// rotates to once complete, when the epoch is exhausted.
	NextProducerID    int64
	ProducerEpoch     int16
	LastProducerEpoch int16
	TxnTimeoutMs      int32
	State             State
	TopicPartitions   []storage.TopicPartition
	// TxnStartTimestamp and TxnLastUpdateTimestamp are milliseconds.
	TxnStartTimestamp      int64
	TxnLastUpdateTimestamp int64
	// ClientTransactionVersion is the transaction version (1 or 2; 0 for a
	// record that did not carry it) of the latest transition.
	ClientTransactionVersion int16
}

// maxEpoch is Short.MAX_VALUE.
const maxEpoch = math.MaxInt16

// epochExhausted is TransactionMetadata.isEpochExhausted: one epoch is
// kept back so that fencing an ongoing transaction can still bump.
func epochExhausted(e int16) bool { return e >= maxEpoch-1 }

func (m *Metadata) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s pid=%d epoch=%d last=%d/%d %s", m.TransactionalID, m.ProducerID, m.ProducerEpoch,
		m.LastProducerID, m.LastProducerEpoch, m.State)
	if len(m.TopicPartitions) > 0 {
		b.WriteString(" [")
		for i, tp := range m.TopicPartitions {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(tp.String())
		}
		b.WriteByte(']')
	}
	return b.String()
}

func (m *Metadata) clone() *Metadata {
	c := *m
	c.TopicPartitions = slices.Clone(m.TopicPartitions)
	return &c
}

// hasPartitions reports whether every tp is already in the transaction.
func (m *Metadata) hasPartitions(tps []storage.TopicPartition) bool {
	for _, tp := range tps {
		if _, ok := slices.BinarySearchFunc(m.TopicPartitions, tp, cmpTP); !ok {
			return false
		}
	}
	return true
}

func cmpTP(a, b storage.TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition) - int(b.Partition)
}

// sortedSet returns tps sorted, without duplicates.
func sortedSet(tps []storage.TopicPartition) []storage.TopicPartition {
	out := slices.Clone(tps)
	slices.SortFunc(out, cmpTP)
	return slices.Compact(out)
}

// to returns a copy of m moved to state s, panicking on a transition Kafka
// does not allow (a coordinator bug).
func (m *Metadata) to(s State) *Metadata {
	if !CanTransition(m.State, s) {
		panic(fmt.Sprintf("txn: %s: illegal transition %s -> %s", m.TransactionalID, m.State, s))
	}
	c := m.clone()
	c.State = s
	return c
}

// errEpochOverflow is a transition Kafka refuses with an exception
// because the epoch would pass Short.MAX_VALUE (see the file header).
var errEpochOverflow = kerr.UnknownServerError

// prepareIncrementEpoch is prepareIncrementProducerEpoch: a new epoch for
// InitProducerId. expected is the epoch the producer says it has (-1: a
// new producer). It returns PRODUCER_FENCED when expected is neither the
// current nor the previous epoch, and errEpochOverflow at an exhausted
// epoch (Kafka's IllegalStateException "Cannot allocate any more producer
// epochs", checked before anything else, so also for a retry).
func (m *Metadata) prepareIncrementEpoch(timeoutMs int32, expected int16, nowMs int64) (*Metadata, *kerr.Error) {
	if epochExhausted(m.ProducerEpoch) {
		return nil, errEpochOverflow
	}
	c := m.to(Empty)
	switch {
	case expected == NoProducerEpoch:
		c.ProducerEpoch, c.LastProducerEpoch = m.ProducerEpoch+1, NoProducerEpoch
	case m.ProducerEpoch == NoProducerEpoch || expected == m.ProducerEpoch:
		c.ProducerEpoch, c.LastProducerEpoch = m.ProducerEpoch+1, m.ProducerEpoch
	case expected == m.LastProducerEpoch:
		// A retry of an InitProducerId that succeeded: answer it again.
	default:
		return nil, kerr.ProducerFenced
	}
	c.TxnTimeoutMs, c.TopicPartitions, c.TxnStartTimestamp, c.TxnLastUpdateTimestamp = timeoutMs, nil, -1, nowMs
	return c, nil
}

// prepareFence is prepareFenceProducerEpoch: the epoch bumped in memory
// (PrepareEpochFence, never written) so that the abort's markers fence the
// ongoing transaction's producer. It returns errEpochOverflow at
// Short.MAX_VALUE (Kafka's IllegalStateException "Cannot fence producer
// with epoch equal to Short.MaxValue since this would overflow").
func (m *Metadata) prepareFence() (*Metadata, *kerr.Error) {
	if m.ProducerEpoch == maxEpoch {
		return nil, errEpochOverflow
	}
	c := m.to(PrepareEpochFence)
	c.ProducerEpoch, c.LastProducerEpoch = m.ProducerEpoch+1, NoProducerEpoch
	return c, nil
}

// prepareRotation is prepareProducerIdRotation: a new producer id, epoch 0.
func (m *Metadata) prepareRotation(pid int64, timeoutMs int32, nowMs int64, recordLastEpoch bool) *Metadata {
	c := m.to(Empty)
	c.LastProducerID, c.ProducerID, c.ProducerEpoch = m.ProducerID, pid, 0
	c.LastProducerEpoch = NoProducerEpoch
	if recordLastEpoch {
		c.LastProducerEpoch = m.ProducerEpoch
	}
	c.TxnTimeoutMs, c.TopicPartitions, c.TxnStartTimestamp, c.TxnLastUpdateTimestamp = timeoutMs, nil, -1, nowMs
	return c
}

// prepareAddPartitions is prepareAddPartitions: the transaction is (or
// stays) Ongoing with tps added; it starts now unless it was already open.
func (m *Metadata) prepareAddPartitions(tps []storage.TopicPartition, nowMs int64, tv int16) *Metadata {
	c := m.to(Ongoing)
	if m.State.complete() {
		c.TxnStartTimestamp = nowMs
	}
	c.TopicPartitions = sortedSet(append(c.TopicPartitions, tps...))
	c.TxnLastUpdateTimestamp, c.ClientTransactionVersion = nowMs, tv
	return c
}

// prepareEnd is prepareAbortOrCommit. Transaction version 2 bumps the epoch
// (KIP-890 part 2) so that the markers and everything after them carry an
// epoch no late request of this transaction has; at Short.MAX_VALUE that
// bump overflows, and Kafka's prepareTransitionTo refuses the negative
// epoch (IllegalArgumentException "Illegal new producer epoch"):
// errEpochOverflow.
func (m *Metadata) prepareEnd(s State, tv int16, nextPID int64, nowMs int64) (*Metadata, *kerr.Error) {
	if tv >= 2 && m.ProducerEpoch == maxEpoch {
		return nil, errEpochOverflow
	}
	c := m.to(s)
	if tv >= 2 {
		c.ProducerEpoch, c.LastProducerEpoch = m.ProducerEpoch+1, m.ProducerEpoch
	}
	if len(m.TopicPartitions) == 0 || m.State.complete() {
		c.TxnStartTimestamp = nowMs // v2 may abort a transaction that added nothing
	}
	c.NextProducerID, c.TxnLastUpdateTimestamp, c.ClientTransactionVersion = nextPID, nowMs, tv
	return c, nil
}

// prepareComplete is prepareComplete: the markers are written.
func (m *Metadata) prepareComplete(nowMs int64) *Metadata {
	s := CompleteCommit
	if m.State == PrepareAbort {
		s = CompleteAbort
	}
	c := m.to(s)
	if m.ClientTransactionVersion >= 2 && m.NextProducerID != NoProducerID {
		c.LastProducerID, c.ProducerID, c.ProducerEpoch = m.ProducerID, m.NextProducerID, 0
	}
	c.NextProducerID, c.TopicPartitions, c.TxnLastUpdateTimestamp = NoProducerID, nil, nowMs
	return c
}

// prepareDead is prepareDead: the transactional.id expired.
func (m *Metadata) prepareDead() *Metadata {
	c := m.to(Dead)
	c.TopicPartitions = nil
	return c
}
