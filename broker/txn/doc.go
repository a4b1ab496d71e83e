// Package txn is Kafka's transaction coordinator as a pure state machine
// (KIP-98, KIP-360, KIP-588, KIP-890): the TransactionMetadata of each
// transactional.id whose __transaction_state partition this broker leads,
// and the requests that move it: InitProducerId with a transactional.id,
// AddPartitionsToTxn (the client form, v0-v3, and the v4+ batch form with
// its verifyOnly check of KIP-890 part 1), AddOffsetsToTxn, EndTxn, and
// the coordinator's own aborts of transactions past transaction.timeout.ms.
//
// Like package coordinator it never touches the network or the log itself:
// its host (broker/server/txn_coordinator.go) appends the records it asks
// for to __transaction_state with acks=all, sends the WriteTxnMarkers it
// asks for, and tells it when either is done.
//
// Each transition follows Kafka's TransactionMetadata: the new metadata is
// prepared (pending), written to the log, and only applied once the write
// is committed. While a transition is pending, requests for the id get
// CONCURRENT_TRANSACTIONS.
//
// Example (a host wiring the coordinator):
//
//	c := txn.New(txn.DefaultConfig(), txn.Env{
//		Append:        appendToTxnLog,
//		NewProducerID: allocate,
//		WriteMarkers:  sendMarkers,
//	})
//	c.BecomeLeader(now, 7)
//	c.Load(now, 7, records)
//	c.InitProducerID(now, req, reply)
package txn
