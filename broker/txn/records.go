package txn

// This file encodes the records of __transaction_state as Kafka's
// TransactionLog writes them (transaction-coordinator's
// TransactionLogKey.json and TransactionLogValue.json): the key is
// version 0 {TransactionalId string}; the value is version 0 {ProducerId
// int64, ProducerEpoch int16, TransactionTimeoutMs int32, TransactionStatus
// int8, TransactionPartitions []{Topic string, PartitionIds []int32}
// (nullable: null in Empty), TransactionLastUpdateTimestampMs int64,
// TransactionStartTimestampMs int64}, or version 1 (flexible, KIP-915),
// which adds the tagged fields PreviousProducerId (0), NextProducerId (1)
// and ClientTransactionVersion (2). Transaction version 1 writes value v0,
// as every Kafka before 4.0 does; version 2 writes v1, as Kafka's
// TransactionVersion.transactionLogValueVersion (featureLevel >= 1 ? 1 : 0)
// does for TV_2. NB: kafkasim's version 1 stands for Kafka's TV_0 (and
// TV_1, which differs only in writing v1); some 4.x commits invert that
// choice (`>= 1 ? 0 : 1`), which would lose ClientTransactionVersion on a
// fail-over: kafkasim keeps the reading that loses nothing. A null value is
// the tombstone of an expired transactional.id.
//
// Simplification: Kafka groups the partitions by topic in hash-map order;
// here topics and partitions are sorted, so the bytes are a function of
// the state alone.

import (
	"encoding/binary"
	"fmt"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KeyBytes encodes TransactionLogKey v0.
func KeyBytes(transactionalID string) []byte {
	k := kmsg.NewTxnMetadataKey()
	k.Version, k.TransactionalID = 0, transactionalID
	return k.AppendTo(nil)
}

// ValueBytes encodes m as TransactionLogValue, v0 for transaction version
// 1 and v1 for version 2.
func ValueBytes(m *Metadata, transactionVersion int16) []byte {
	if m.State == Empty && len(m.TopicPartitions) > 0 {
		panic(fmt.Sprintf("txn: %s: Empty with partitions %v", m.TransactionalID, m.TopicPartitions))
	}
	v := kmsg.NewTxnMetadataValue()
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = m.ProducerID, m.ProducerEpoch, m.TxnTimeoutMs
	v.State = kmsg.TransactionState(m.State)
	v.LastUpdateTimestamp, v.StartTimestamp = m.TxnLastUpdateTimestamp, m.TxnStartTimestamp
	if m.State != Empty {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
		for _, tp := range m.TopicPartitions {
			if n := len(v.Topics); n == 0 || v.Topics[n-1].Topic != tp.Topic {
				v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic, Partitions: []int32{}})
			}
			t := &v.Topics[len(v.Topics)-1]
			t.Partitions = append(t.Partitions, tp.Partition)
		}
	}
	if transactionVersion >= 2 {
		v.Version = 1
		v.PreviousProducerID, v.NextProducerID = m.LastProducerID, m.NextProducerID
		v.ClientTransactionVersion = m.ClientTransactionVersion
	}
	return v.AppendTo(nil)
}

// Record returns the record of m's state at nowMs.
func Record(m *Metadata, transactionVersion int16, nowMs int64) storage.Record {
	r := storage.Record{Timestamp: nowMs, Key: KeyBytes(m.TransactionalID)}
	if m.State != Dead {
		r.Value = ValueBytes(m, transactionVersion)
	}
	return r
}

// Decode decodes a record of __transaction_state. It returns the
// transactional id and its metadata, nil for a tombstone.
func Decode(r storage.Record) (string, *Metadata, error) {
	if len(r.Key) < 2 {
		return "", nil, fmt.Errorf("txn: record key of %d bytes: too short for a version", len(r.Key))
	}
	if ver := int16(binary.BigEndian.Uint16(r.Key)); ver != 0 {
		return "", nil, fmt.Errorf("txn: record key version %d: want 0 (TransactionLogKey)", ver)
	}
	k := kmsg.NewTxnMetadataKey()
	if err := k.ReadFrom(r.Key); err != nil {
		return "", nil, fmt.Errorf("txn: TransactionLogKey: %w", err)
	}
	if r.Value == nil {
		return k.TransactionalID, nil, nil
	}
	if len(r.Value) < 2 {
		return "", nil, fmt.Errorf("txn: %s: value of %d bytes: too short for a version", k.TransactionalID, len(r.Value))
	}
	if ver := int16(binary.BigEndian.Uint16(r.Value)); ver < 0 || ver > 1 {
		return "", nil, fmt.Errorf("txn: %s: TransactionLogValue version %d: want 0 or 1", k.TransactionalID, ver)
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(r.Value); err != nil {
		return "", nil, fmt.Errorf("txn: %s: TransactionLogValue: %w", k.TransactionalID, err)
	}
	m := &Metadata{TransactionalID: k.TransactionalID, ProducerID: v.ProducerID, LastProducerID: v.PreviousProducerID,
		NextProducerID: v.NextProducerID, ProducerEpoch: v.ProducerEpoch, LastProducerEpoch: NoProducerEpoch,
		TxnTimeoutMs: v.TimeoutMillis, State: State(v.State), TxnStartTimestamp: v.StartTimestamp,
		TxnLastUpdateTimestamp: v.LastUpdateTimestamp, ClientTransactionVersion: v.ClientTransactionVersion}
	if m.State < Empty || m.State > PrepareEpochFence {
		return "", nil, fmt.Errorf("txn: %s: TransactionStatus %d: want 0..7", k.TransactionalID, v.State)
	}
	if m.State != Empty {
		var tps []storage.TopicPartition
		for _, t := range v.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, storage.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
		m.TopicPartitions = sortedSet(tps)
	}
	return k.TransactionalID, m, nil
}
