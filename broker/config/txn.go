package config

// This file holds the transaction coordinator's properties (KIP-98,
// KIP-890), with Kafka's names and defaults:
//
//	transaction.state.log.num.partitions                        50
//	transaction.state.log.replication.factor                    3
//	transaction.state.log.min.isr                               2
//	transaction.max.timeout.ms                                  900000
//	transactional.id.expiration.ms                              604800000
//	transaction.abort.timed.out.transaction.cleanup.interval.ms 10000
//	transaction.remove.expired.transaction.cleanup.interval.ms  3600000
//	transaction.version                                         2 from 4.0, 1 before
//	transaction.partition.verification.enable                   true from 3.6
//
// transaction.version stands for Kafka's finalized transaction.version
// feature: 1 (the epoch is bumped only by InitProducerId) or 2 (KIP-890
// part 2, Kafka 4.0+: EndTxn bumps it on every commit and abort).
//
// Both defaults follow inter.broker.protocol.version / metadata.version
// (release.go). transaction.version 2 below 4.0 (no metadata.version can
// finalize it), or kafkasim.transactions below 0.11, is a Conflict;
// verification may be turned on below 3.6, to ask what it would have
// changed there.
//
// kafkasim.transactions (default false) creates __transaction_state with
// the cluster's topics (package cluster), as it creates __consumer_offsets;
// Kafka creates it on the first FindCoordinator(transaction). Off, no
// broker hosts a transaction coordinator and runs without transactions are
// unchanged.

import (
	"math"
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// The transaction properties.
const (
	PropTransactionStateLogNumPartitions  = "transaction.state.log.num.partitions"
	PropTransactionStateLogReplication    = "transaction.state.log.replication.factor"
	PropTransactionStateLogMinISR         = "transaction.state.log.min.isr"
	PropTransactionMaxTimeoutMs           = "transaction.max.timeout.ms"
	PropTransactionalIDExpirationMs       = "transactional.id.expiration.ms"
	PropTransactionAbortCleanupIntervalMs = "transaction.abort.timed.out.transaction.cleanup.interval.ms"
	PropTransactionRemoveExpiredMs        = "transaction.remove.expired.transaction.cleanup.interval.ms"
	PropTransactionVersion                = "transaction.version"
	PropTransactions                      = "kafkasim.transactions"
	PropTxnPartitionVerification          = "transaction.partition.verification.enable"
)

// Txn is the transaction part of the broker configuration.
type Txn struct {
	// Enabled is kafkasim.transactions: create __transaction_state.
	Enabled bool
	// StateLogNumPartitions is transaction.state.log.num.partitions.
	// Default 50; at least 1.
	StateLogNumPartitions int
	// StateLogReplicationFactor is transaction.state.log.replication.factor.
	// Default 3; in [1, 32767].
	StateLogReplicationFactor int
	// StateLogMinISR is transaction.state.log.min.isr: the topic's
	// min.insync.replicas. Default 2; at least 1.
	StateLogMinISR int
	// MaxTimeout is transaction.max.timeout.ms. Default 900000ms; at least 1ms.
	MaxTimeout sim.Duration
	// IDExpiration is transactional.id.expiration.ms. Default 604800000ms.
	IDExpiration sim.Duration
	// AbortCleanupInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms. Default 10000ms.
	AbortCleanupInterval sim.Duration
	// RemoveExpiredInterval is
	// transaction.remove.expired.transaction.cleanup.interval.ms. Default 3600000ms.
	RemoveExpiredInterval sim.Duration
	// Version is transaction.version: 1 or 2. Default 2 from 4.0, else 1.
	Version int
	// PartitionVerification is transaction.partition.verification.enable
	// (KIP-890 part 1). Default true from 3.6.
	PartitionVerification bool
}

func defaultTxn(v Version) Txn {
	m := v.Mechanisms()
	return Txn{StateLogNumPartitions: 50, StateLogReplicationFactor: 3, StateLogMinISR: 2,
		MaxTimeout: sim.Ms(900000), IDExpiration: sim.Ms(604800000),
		AbortCleanupInterval: sim.Ms(10000), RemoveExpiredInterval: sim.Ms(3600000),
		Version: max(m.TransactionVersion, 1), PartitionVerification: m.TxnPartitionVerification}
}

// validateTxn checks the transaction properties against the release.
func (b Broker) validateTxn() error {
	v := b.InterBrokerProtocolVersion
	m := v.Mechanisms()
	switch {
	case b.Txn.Enabled && !m.Transactions:
		return conflict(PropTransactions, "true", PropInterBrokerProtocolVersion, v.String(),
			"transactions (KIP-98) arrived in Kafka 0.11.0", "inter.broker.protocol.version 0.11.0 or later, or kafkasim.transactions=false")
	case b.Txn.Version >= 2 && m.TransactionVersion < 2:
		return conflict(PropTransactionVersion, strconv.Itoa(b.Txn.Version), PropInterBrokerProtocolVersion, v.String(),
			"transaction.version 2 (KIP-890 part 2) arrived in Kafka 4.0", "inter.broker.protocol.version 4.0 or later, or transaction.version=1")
	}
	return nil
}

func txnProps() []property[Broker] {
	return []property[Broker]{
		boolProp(PropTransactions, func(b *Broker) *bool { return &b.Txn.Enabled }),
		intProp(PropTransactionStateLogNumPartitions, func(b *Broker) *int { return &b.Txn.StateLogNumPartitions }, 1, maxInt32),
		intProp(PropTransactionStateLogReplication, func(b *Broker) *int { return &b.Txn.StateLogReplicationFactor }, 1, math.MaxInt16),
		intProp(PropTransactionStateLogMinISR, func(b *Broker) *int { return &b.Txn.StateLogMinISR }, 1, maxInt32),
		msProp(PropTransactionMaxTimeoutMs, func(b *Broker) *sim.Duration { return &b.Txn.MaxTimeout }, 1, maxInt32),
		msProp(PropTransactionalIDExpirationMs, func(b *Broker) *sim.Duration { return &b.Txn.IDExpiration }, 1, maxInt32),
		msProp(PropTransactionAbortCleanupIntervalMs, func(b *Broker) *sim.Duration { return &b.Txn.AbortCleanupInterval }, 1, maxInt32),
		msProp(PropTransactionRemoveExpiredMs, func(b *Broker) *sim.Duration { return &b.Txn.RemoveExpiredInterval }, 1, maxInt32),
		intProp(PropTransactionVersion, func(b *Broker) *int { return &b.Txn.Version }, 1, 2),
		boolProp(PropTxnPartitionVerification, func(b *Broker) *bool { return &b.Txn.PartitionVerification }),
	}
}
