// Package client is Kafka's producer (KafkaProducer, Kafka 2.x–3.x) and
// consumer (KafkaConsumer: consumer*.go, see NewConsumer — subscribe or
// assign, Poll, Seek, commitSync/commitAsync/auto-commit, rebalance
// listener, heartbeats, with the group leader running package assignor;
// fetch from a rack's replica, KIP-392; truncation detection, KIP-320) as
// libraries a simulation node embeds. The producer has the key partitioner (Murmur2,
// PartitionForKey — bit-exact with Kafka's Java code), the keyless
// partitioners (sticky, round-robin, uniform sticky), the record
// accumulator (batch.size, linger.ms), the sender (acks,
// max.in.flight.requests.per.connection, request.timeout.ms, retries,
// retry.backoff.ms, delivery.timeout.ms), metadata refresh, and the
// idempotent producer (InitProducerId, producer id and epoch, per-partition
// sequence numbers), and the transactional producer (transactional.id:
// InitTransactions, BeginTransaction, SendOffsetsToTransaction,
// CommitTransaction, AbortTransaction; transactions.go). Its configuration
// is config.Producer.
//
// The producer talks to brokers named "b<id>" with wire.Request and
// wire.Response carrying franz-go's kmsg bodies: Metadata v7, Produce v7,
// InitProducerId v1 (v4 with a transactional.id), FindCoordinator v3,
// AddPartitionsToTxn v3/v5, AddOffsetsToTxn v3/v4, TxnOffsetCommit v3,
// EndTxn v3/v5. Like the ZooKeeper client, it is driven by its host:
//
//	type app struct{ p *client.Producer }
//
//	func (a *app) Start(ctx *sim.Context) {
//		cfg := config.DefaultProducer()
//		cfg.EnableIdempotence = false
//		cfg.Acks = config.AcksAll
//		a.p = client.New(cfg, []int32{0, 1, 2}) // bootstrap brokers b0, b1, b2
//		a.p.Start(ctx)
//		// Asynchronous with a callback:
//		a.p.Send(ctx, client.Record{Topic: "t", Partition: client.AnyPartition, Value: []byte("v1")},
//			func(ctx *sim.Context, md client.RecordMetadata, err error) {
//				switch client.Classify(md, err) {
//				case client.OutcomeOK: // written at md.Partition, md.Offset
//				case client.OutcomeFail: // certainly not written
//				case client.OutcomeUnknown: // maybe written: a timeout, a lost answer, ...
//				}
//			})
//		// Fire and forget: no callback.
//		a.p.Send(ctx, client.Record{Topic: "t", Partition: client.AnyPartition, Value: []byte("v2")}, nil)
//		// Synchronous: each record only after the previous one completed.
//		a.p.SendSync(ctx, []client.Record{{Topic: "t", Partition: 0, Value: []byte("v3")}, {Topic: "t", Partition: 0, Value: []byte("v4")}},
//			func(ctx *sim.Context, i int, md client.RecordMetadata, err error) bool { return err == nil })
//	}
//
// A transactional producer (cfg.TransactionalID = "app") calls
// InitTransactions once, then per transaction BeginTransaction, Send...,
// and CommitTransaction or AbortTransaction; each call that Kafka blocks
// on takes a TxnCallback instead:
//
//	a.p.InitTransactions(ctx, func(ctx *sim.Context, err error) {
//		a.p.BeginTransaction(ctx)
//		a.p.Send(ctx, client.Record{Topic: "t", Partition: 0, Value: []byte("v")}, nil)
//		a.p.CommitTransaction(ctx, func(ctx *sim.Context, err error) {
//			// err: nil, or a *client.TxnError (Fatal: close; else abort)
//		})
//	})
//
// Consume-transform-produce (KIP-447) puts a read_committed consumer
// (group.id, enable.auto.commit=false) and a transactional producer in one
// node: per transaction, Poll, BeginTransaction, Send one output per
// input, then SendOffsetsToTransaction with the next offset of each
// partition polled (last offset + 1) and the consumer's group metadata,
// then CommitTransaction; after an abort, Seek back to the positions
// before the Poll:
//
//	gen, member := a.c.Generation()
//	a.p.SendOffsetsToTransaction(ctx, []client.TxnOffset{{Topic: "in", Partition: 0, Offset: next, LeaderEpoch: -1}},
//		client.GroupMetadata{GroupID: "g", Generation: gen, MemberID: member}, cb)
//
//	func (a *app) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
//		if !a.p.HandleMessage(ctx, from, m) {
//			// the node's own messages...
//		}
//	}
//
//	func (a *app) Timer(ctx *sim.Context, id sim.TimerID, name string) {
//		if !a.p.HandleTimer(ctx, id, name) { // names starting with TimerPrefix
//			// the node's own timers...
//		}
//	}
//
// Outcomes: a callback's error is nil (acknowledged) or a *SendError whose
// Definite field says the record was certainly not written; Classify maps
// a callback's arguments to ok / fail / info for histories (errors.go
// states the rule).
//
// Trace: the producer logs "produce-send", "produce-ack", "produce-retry",
// "produce-fail", "producer-metadata", "producer-disconnect",
// "producer-init-id", "produce-partition-failed" and, when transactional,
// "producer-txn-state", "producer-txn-send", "producer-txn-added" and
// "producer-txn-error", with the partition as
// "topic-partition" and the producer's batch number.
//
// Determinism: no goroutines, clocks or global random sources; maps are
// never iterated where the order could reach a decision (partitions are
// kept sorted); the sticky partitioner draws from ctx.Rand.
package client
