package txn

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTransactionLogGolden checks the bytes against Kafka's schemas,
// field by field (TransactionLogKey.json v0, TransactionLogValue.json v0
// and v1).
func TestTransactionLogGolden(t *testing.T) {
	if got, want := KeyBytes("t1"), unhex(t, "0000 0002 7431"); !bytes.Equal(got, want) {
		t.Fatalf("key = %x, want %x", got, want)
	}
	m := &Metadata{TransactionalID: "t1", ProducerID: 1000, LastProducerID: -1, NextProducerID: -1, ProducerEpoch: 2,
		LastProducerEpoch: 1, TxnTimeoutMs: 60000, State: Ongoing,
		TopicPartitions: []storage.TopicPartition{tp("a", 0), tp("a", 1), tp("b", 7)}, TxnStartTimestamp: 3,
		TxnLastUpdateTimestamp: 5, ClientTransactionVersion: 2}
	v0 := unhex(t, `0000
		00000000000003e8 0002 0000ea60 01
		00000002 0001 61 00000002 00000000 00000001 0001 62 00000001 00000007
		0000000000000005 0000000000000003`)
	if got := ValueBytes(m, 1); !bytes.Equal(got, v0) {
		t.Fatalf("value v0 = %x\nwant        %x", got, v0)
	}
	v1 := unhex(t, `0001
		00000000000003e8 0002 0000ea60 01
		03 02 61 03 00000000 00000001 00 02 62 02 00000007 00
		0000000000000005 0000000000000003
		01 02 02 0002`)
	if got := ValueBytes(m, 2); !bytes.Equal(got, v1) {
		t.Fatalf("value v1 = %x\nwant        %x", got, v1)
	}
	// Empty: null partitions; v1 with a previous producer id (tag 0).
	e := &Metadata{TransactionalID: "t1", ProducerID: 1001, LastProducerID: 1000, NextProducerID: -1, ProducerEpoch: 0,
		TxnTimeoutMs: 1, State: Empty, TxnStartTimestamp: -1, TxnLastUpdateTimestamp: 9}
	e0 := unhex(t, "0000 00000000000003e9 0000 00000001 00 ffffffff 0000000000000009 ffffffffffffffff")
	if got := ValueBytes(e, 1); !bytes.Equal(got, e0) {
		t.Fatalf("empty v0 = %x, want %x", got, e0)
	}
	e1 := unhex(t, "0001 00000000000003e9 0000 00000001 00 00 0000000000000009 ffffffffffffffff 01 00 08 00000000000003e8")
	if got := ValueBytes(e, 2); !bytes.Equal(got, e1) {
		t.Fatalf("empty v1 = %x, want %x", got, e1)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	m := &Metadata{TransactionalID: "x", ProducerID: 7, LastProducerID: 6, NextProducerID: -1, ProducerEpoch: 3,
		LastProducerEpoch: NoProducerEpoch, TxnTimeoutMs: 100, State: PrepareCommit,
		TopicPartitions: []storage.TopicPartition{tp("a", 0), tp("b", 1)}, TxnStartTimestamp: 1, TxnLastUpdateTimestamp: 2, ClientTransactionVersion: 2}
	id, got, err := Decode(Record(m, 2, 2))
	if err != nil || id != "x" || got.String() != m.String() || got.ClientTransactionVersion != 2 || got.LastProducerID != 6 {
		t.Fatalf("decoded %q %+v %v, want %+v", id, got, err, m)
	}
	d := m.clone()
	d.State, d.TopicPartitions = Dead, nil
	if id, got, err := Decode(Record(d, 2, 3)); err != nil || id != "x" || got != nil {
		t.Fatalf("tombstone decoded %q %v %v", id, got, err)
	}
	if _, _, err := Decode(storage.Record{Key: []byte{0, 1, 0, 0}}); err == nil {
		t.Fatal("key version 1 decoded")
	}
}

// TestPartitionFor checks Kafka's placement: abs(hashCode) % partitions,
// with Utils.abs mapping Integer.MIN_VALUE to 0.
func TestPartitionFor(t *testing.T) {
	// "polygenelubricants".hashCode() == Integer.MIN_VALUE.
	for _, c := range []struct {
		id   string
		want int32
	}{{"polygenelubricants", 0}, {"", 0}, {"a", 97 % 50}, {"txn-1", 110810510 % 50}} { // "txn-1".hashCode() = 110810510
		if got := PartitionFor(c.id, 50); got != c.want {
			t.Errorf("PartitionFor(%q) = %d, want %d", c.id, got, c.want)
		}
	}
}

func TestTransitions(t *testing.T) {
	for _, c := range []struct {
		from, to State
		ok       bool
	}{{Empty, Ongoing, true}, {Ongoing, PrepareCommit, true}, {PrepareCommit, CompleteCommit, true},
		{PrepareCommit, PrepareAbort, false}, {Empty, PrepareCommit, false}, {CompleteAbort, Dead, true},
		{Ongoing, Dead, false}, {Ongoing, PrepareEpochFence, true}, {PrepareEpochFence, PrepareAbort, true},
		{Empty, PrepareAbort, true}, {CompleteCommit, Empty, true}, {PrepareAbort, CompleteCommit, false}} {
		if CanTransition(c.from, c.to) != c.ok {
			t.Errorf("%s -> %s allowed = %v, want %v", c.from, c.to, !c.ok, c.ok)
		}
	}
}
