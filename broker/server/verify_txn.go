package server

// This file is the partition leader's side of KIP-890 part 1 (3.6+,
// transaction.partition.verification.enable): before it appends the first
// transactional batch of a producer that has no ongoing transaction in the
// partition, the leader asks the transaction coordinator whether the
// partition was added to the producer's transaction (Kafka's
// AddPartitionsToTxnManager sends AddPartitionsToTxn v4 with
// VerifyOnly), and refuses the batch with INVALID_TXN_STATE if not. This
// closes the hanging-transaction hole of KAFKA-14402: a late batch of an
// aborted transaction would otherwise start a new transaction that no
// marker ever ends, holding the LSO back for good.
//
// The coordinator plugs in through TxnVerifier; with none set, every batch
// is accepted at once, as in Kafka before 3.6. Simplification: Kafka keeps
// a VerificationGuard per producer and re-checks it at append time so that
// a marker between the verification and the append voids it; here the
// append after a positive answer is not re-checked.

import (
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TxnVerifier answers KIP-890's question for a partition leader: has
// partition tp been added to the ongoing transaction of producer
// (producerID, producerEpoch) of transactionalID? It calls done exactly
// once, at once or later (from another input of this broker), with nil to
// append the batch or an error for the produce answer (INVALID_TXN_STATE
// when the partition is not in the transaction; Kafka also passes
// coordinator errors such as NOT_COORDINATOR through).
type TxnVerifier interface {
	VerifyTxn(transactionalID string, producerID int64, producerEpoch int16, tp storage.TopicPartition, done func(*kerr.Error))
}

// SetTxnVerifier installs the transaction coordinator's verifier (nil:
// accept at once). A broker is made fresh at each start: set it when the
// broker starts.
func (b *Broker) SetTxnVerifier(v TxnVerifier) { b.txnVerifier = v }

// verifyTxn starts the verification of partition tp's batch when one is
// needed and reports whether it did; produceOne runs after a positive answer,
// and st's step ends either way. A batch that needs none (not
// transactional, a producer with an ongoing transaction here, no
// verifier, or a replica that is not leader, which the append refuses)
// is left to the caller.
func (b *Broker) verifyTxn(st *produceState, ti, pi int, tp storage.TopicPartition, records []byte) bool {
	if b.txnVerifier == nil {
		return false
	}
	p := b.partitions[tp]
	if p == nil || p.role != Leader {
		return false
	}
	h, err := storage.ParseBatchInfo(records)
	if err != nil || !h.IsTransactional() || h.IsControl() || h.ProducerID < 0 || p.log.HasOngoingTxn(h.ProducerID) {
		return false
	}
	txnID := ""
	if st.body.TransactionID != nil {
		txnID = *st.body.TransactionID
	}
	st.pending++
	b.txnVerifier.VerifyTxn(txnID, h.ProducerID, h.ProducerEpoch, tp, func(verr *kerr.Error) {
		if verr != nil {
			st.resp.Topics[ti].Partitions[pi].ErrorCode = verr.Code
			b.logp("txn-verification-failed", p, sim.I("producer", h.ProducerID), sim.S("error", verr.Message))
		} else {
			b.produceOne(st, ti, pi)
		}
		b.produceStepDone(st)
	})
	return true
}
