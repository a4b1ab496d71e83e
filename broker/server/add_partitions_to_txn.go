package server

// This file serves AddPartitionsToTxn (api key 24): v0-v3, the client's
// form (one transaction; PRODUCER_FENCED from v2, KIP-588), and v4-v5, the
// broker's batch form (KIP-890): entries with VerifyOnly only check that
// their partitions are in the ongoing transaction (KIP-890 part 1), the
// others add them (v5: a transaction version 2 client).
//
// It also holds the produce path's side of KIP-890 part 1:
// VerifyTxnPartitions asks the coordinator of a transactional id whether a
// transactional produce's partitions are in its transaction, with a v4
// VerifyOnly request (or directly, when this broker is the coordinator),
// as Kafka's AddPartitionsToTxnManager does before appending.
//
// Simplifications: no ACLs, no check that the topics exist; verification
// requests are not batched across produces.

import (
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleAddPartitionsToTxn(from sim.NodeID, req *wire.Request, body *kmsg.AddPartitionsToTxnRequest) {
	b.txn.coord.AddPartitionsToTxn(b.ctx.Now(), body, func(r *kmsg.AddPartitionsToTxnResponse) { b.respond(from, req, r) })
}

// txnVerifyTimeout is how long a verification request may take
// (request.timeout.ms).
const txnVerifyTimeout = 30 * sim.Second

// VerifyTxnPartitions checks, for the produce path (KIP-890 part 1), that
// each of tps is in the ongoing transaction of transactionalID with
// producer (pid, epoch), and calls done with one error per partition (nil:
// verified). The errors are the coordinator's: INVALID_TXN_STATE (the
// partition was not added), PRODUCER_FENCED, INVALID_PRODUCER_ID_MAPPING,
// CONCURRENT_TRANSACTIONS, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
// COORDINATOR_NOT_AVAILABLE (no known coordinator, or the request failed).
// Mapping them to the Produce response's codes is the produce path's (Kafka
// 3.6+ answers INVALID_TXN_STATE, 4.0 TRANSACTION_ABORTABLE, and turns the
// coordinator errors into NOT_ENOUGH_REPLICAS so the producer retries).
// done may run inside the call.
func (b *Broker) VerifyTxnPartitions(transactionalID string, pid int64, epoch int16, tps []storage.TopicPartition, done func([]*kerr.Error)) {
	all := func(err *kerr.Error) {
		out := make([]*kerr.Error, len(tps))
		for i := range out {
			out[i] = err
		}
		done(out)
	}
	ps, ok := b.metadata.partitions[storage.TopicPartition{Topic: txn.StateTopic, Partition: b.txn.coord.PartitionFor(transactionalID)}]
	switch {
	case !ok || ps.Leader < 0:
		all(kerr.CoordinatorNotAvailable)
		return
	case ps.Leader == b.cfg.BrokerID:
		done(b.txn.coord.VerifyPartitions(transactionalID, pid, epoch, tps))
		return
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	t := kmsg.AddPartitionsToTxnRequestTransaction{TransactionalID: transactionalID, ProducerID: pid, ProducerEpoch: epoch, VerifyOnly: true}
	for _, tp := range tps {
		if n := len(t.Topics); n == 0 || t.Topics[n-1].Topic != tp.Topic {
			t.Topics = append(t.Topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: tp.Topic})
		}
		tt := &t.Topics[len(t.Topics)-1]
		tt.Partitions = append(tt.Partitions, tp.Partition)
	}
	req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{t}
	b.send(ps.Leader, req, txnVerifyTimeout, func(r kmsg.Response, err error) {
		if err != nil {
			all(kerr.CoordinatorNotAvailable)
			return
		}
		resp := r.(*kmsg.AddPartitionsToTxnResponse)
		if resp.ErrorCode != 0 {
			all(kerr.TypedErrorForCode(resp.ErrorCode))
			return
		}
		out := make([]*kerr.Error, len(tps))
		for i, tp := range tps {
			out[i] = kerr.CoordinatorNotAvailable
			for _, rt := range resp.Transactions {
				for _, top := range rt.Topics {
					for _, p := range top.Partitions {
						if rt.TransactionalID == transactionalID && top.Topic == tp.Topic && p.Partition == tp.Partition {
							out[i] = nil
							if p.ErrorCode != 0 {
								out[i] = kerr.TypedErrorForCode(p.ErrorCode)
							}
						}
					}
				}
			}
		}
		done(out)
	})
}
