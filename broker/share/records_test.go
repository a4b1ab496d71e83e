package share

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// TestShareSnapshotRecordBytes pins the __share_group_state record format
// to share-coordinator's ShareSnapshotKey.json (record type 0, not
// flexible) and ShareSnapshotValue.json (version 0, flexible) as the
// project's Kafka snapshot defines them, field by field.
func TestShareSnapshotRecordBytes(t *testing.T) {
	k := StateKey{Group: "g", TopicID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, Partition: 3}
	wantKey := "0000" + // record type 0: ShareSnapshot
		"0001" + "67" + // GroupId "g" (int16 length)
		"0102030405060708090a0b0c0d0e0f10" + // TopicId
		"00000003" // Partition
	if got := hex.EncodeToString(EncodeKey(RecordShareSnapshot, k)); got != wantKey {
		t.Fatalf("key %s, want %s", got, wantKey)
	}
	v := StateValue{SnapshotEpoch: 2, StateEpoch: 1, LeaderEpoch: 7, StartOffset: 5,
		Batches: []StateBatch{{FirstOffset: 5, LastOffset: 6, DeliveryState: 0, DeliveryCount: 1}, {FirstOffset: 7, LastOffset: 7, DeliveryState: 4, DeliveryCount: 2}}}
	wantValue := "0000" + // value version 0
		"0002" + // SnapshotEpoch uint16
		"00000001" + // StateEpoch
		"00000007" + // LeaderEpoch
		"0000000000000005" + // StartOffset
		"03" + // StateBatches: compact array of 2
		"0000000000000005" + "0000000000000006" + "00" + "0001" + "00" +
		"0000000000000007" + "0000000000000007" + "04" + "0002" + "00" +
		"00" // no tagged fields
	if got := hex.EncodeToString(EncodeValue(RecordShareSnapshot, v)); got != wantValue {
		t.Fatalf("value %s, want %s", got, wantValue)
	}
	typ, k2, err := DecodeKey(EncodeKey(RecordShareSnapshot, k))
	if err != nil || typ != RecordShareSnapshot || k2 != k {
		t.Fatalf("decode key: %d %+v %v", typ, k2, err)
	}
	v2, err := DecodeValue(RecordShareSnapshot, EncodeValue(RecordShareSnapshot, v))
	if err != nil || v2.StateEpoch != 1 || v2.StartOffset != 5 || len(v2.Batches) != 2 || v2.Batches[1] != v.Batches[1] {
		t.Fatalf("decode value: %+v %v", v2, err)
	}
	// ShareUpdate: record type 1, no StateEpoch.
	upd := EncodeValue(RecordShareUpdate, v)
	if !bytes.Equal(upd[:4], []byte{0, 0, 0, 2}) || !bytes.Equal(upd[4:8], []byte{0, 0, 0, 7}) {
		t.Fatalf("update value %x", upd)
	}
	if _, _, err := DecodeKey([]byte{0, 9}); err == nil {
		t.Fatal("record type 9 decoded")
	}
	if _, err := DecodeValue(RecordShareSnapshot, []byte{0, 0, 1}); err == nil {
		t.Fatal("a truncated value decoded")
	}
}

// TestStateStoreFencing: the share coordinator refuses a write from an
// older leader epoch (FENCED_LEADER_EPOCH) or state epoch
// (FENCED_STATE_EPOCH), and a read records the reader's leader epoch.
func TestStateStoreFencing(t *testing.T) {
	s := NewStateStore(1)
	k := StateKey{Group: "g", Partition: 0}
	if _, err := s.Write(k, StateValue{}); err == nil {
		t.Fatal("write to a partition not led")
	}
	if err := s.Load(0, nil); err != nil {
		t.Fatal(err)
	}
	rec, err := s.Write(k, StateValue{StateEpoch: 1, LeaderEpoch: 3, StartOffset: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(rec); err != nil {
		t.Fatal(err)
	}
	upd, ok, err := s.Read(k, 5)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := s.Apply(upd); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(k, StateValue{StateEpoch: 1, LeaderEpoch: 4}); err == nil || err.Message != "FENCED_LEADER_EPOCH" {
		t.Fatalf("write at leader epoch 4 after a read at 5: %v", err)
	}
	if _, err := s.Write(k, StateValue{StateEpoch: 0, LeaderEpoch: 5}); err == nil || err.Message != "FENCED_STATE_EPOCH" {
		t.Fatalf("write at state epoch 0: %v", err)
	}
	// A fail-over: a new store loads the log and reads the same state.
	s2 := NewStateStore(1)
	if err := s2.Load(0, []Record{rec}); err != nil {
		t.Fatal(err)
	}
	// ... with the leader epoch the read wrote (5): 4 is fenced still.
	if err := s2.Load(0, []Record{rec, upd}); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Write(k, StateValue{StateEpoch: 1, LeaderEpoch: 4}); err == nil {
		t.Fatal("leader epoch 4 after a fail-over: not fenced")
	}
	// A write appended before a read commits after it: the leader epoch
	// stays the read's.
	if err := s2.Apply(rec); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s2.Read(k, 4); err == nil {
		t.Fatal("read at 4 after a committed read at 5")
	}
	if v, ok := s2.Peek(k); !ok || v.StartOffset != 10 || v.StateEpoch != 1 || v.LeaderEpoch != 5 {
		t.Fatalf("after load: %+v %v", v, ok)
	}
	del, _ := s2.Delete(k)
	if err := s2.Apply(del); err != nil {
		t.Fatal(err)
	}
	if _, ok := s2.Peek(k); ok {
		t.Fatal("state after its tombstone")
	}
}
