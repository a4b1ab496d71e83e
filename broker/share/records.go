package share

// This file is the record format of __share_group_state (KIP-932), as
// Kafka's share coordinator writes it through CoordinatorRecordSerde: a
// record's key is an int16 record type (0 ShareSnapshot, 1 ShareUpdate)
// then the key struct; its value an int16 value version (0) then the
// value struct. The structs follow share-coordinator's
// ShareSnapshotKey/Value.json and ShareUpdateKey/Value.json: the keys are
// not flexible (GroupId as an int16-length string, TopicId 16 bytes,
// Partition int32), the values are flexible (compact arrays, tagged
// fields): SnapshotEpoch uint16, StateEpoch int32 (snapshot only),
// LeaderEpoch int32, StartOffset int64, StateBatches of FirstOffset int64,
// LastOffset int64, DeliveryState int8, DeliveryCount int16.
//
// NB: the schemas were read from the Kafka source this project can reach,
// a trunk snapshot of October 2024 (before 4.0); later releases may have
// added fields (timestamps, KIP-1226's delivery-complete count), which
// this format does not carry. A tombstone (nil value) deletes a key's
// state (DeleteShareGroupState).

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kafkasim/kafkasim/broker/coordinator"
)

// StateTopic is the share coordinator's topic.
const StateTopic = "__share_group_state"

// Record types of __share_group_state (the key's version prefix).
const (
	RecordShareSnapshot int16 = 0
	RecordShareUpdate   int16 = 1
)

// StateKey names a share-partition's persisted state.
type StateKey struct {
	Group     string
	TopicID   [16]byte
	Partition int32
}

// StateValue is a ShareSnapshot's (or ShareUpdate's) value.
type StateValue struct {
	SnapshotEpoch uint16
	StateEpoch    int32 // ShareSnapshot only
	LeaderEpoch   int32
	StartOffset   int64
	Batches       []StateBatch
}

// EncodeKey returns the record key of k for record type typ.
func EncodeKey(typ int16, k StateKey) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(typ))
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.Group)))
	b = append(b, k.Group...)
	b = append(b, k.TopicID[:]...)
	return binary.BigEndian.AppendUint32(b, uint32(k.Partition))
}

// EncodeValue returns the record value of v for record type typ
// (ShareUpdate carries no StateEpoch).
func EncodeValue(typ int16, v StateValue) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0) // value version 0
	b = binary.BigEndian.AppendUint16(b, v.SnapshotEpoch)
	if typ == RecordShareSnapshot {
		b = binary.BigEndian.AppendUint32(b, uint32(v.StateEpoch))
	}
	b = binary.BigEndian.AppendUint32(b, uint32(v.LeaderEpoch))
	b = binary.BigEndian.AppendUint64(b, uint64(v.StartOffset))
	b = binary.AppendUvarint(b, uint64(len(v.Batches))+1)
	for _, s := range v.Batches {
		b = binary.BigEndian.AppendUint64(b, uint64(s.FirstOffset))
		b = binary.BigEndian.AppendUint64(b, uint64(s.LastOffset))
		b = append(b, byte(s.DeliveryState))
		b = binary.BigEndian.AppendUint16(b, uint16(s.DeliveryCount))
		b = append(b, 0) // no tagged fields
	}
	return append(b, 0) // no tagged fields
}

var errShort = errors.New("record too short")

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errShort
		return make([]byte, max(n, 0))
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
func (r *reader) u16() uint16 { return binary.BigEndian.Uint16(r.take(2)) }
func (r *reader) i32() int32  { return int32(binary.BigEndian.Uint32(r.take(4))) }
func (r *reader) i64() int64  { return int64(binary.BigEndian.Uint64(r.take(8))) }
func (r *reader) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}
func (r *reader) tags() {
	for n := r.uv(); n > 0 && r.err == nil; n-- {
		r.uv()
		r.take(int(r.uv()))
	}
}

// DecodeKey returns a record key's type and key.
func DecodeKey(b []byte) (int16, StateKey, error) {
	r := &reader{b: b}
	typ := int16(r.u16())
	if r.err == nil && typ != RecordShareSnapshot && typ != RecordShareUpdate {
		return typ, StateKey{}, fmt.Errorf("record type %d: not ShareSnapshot (0) or ShareUpdate (1)", typ)
	}
	var k StateKey
	k.Group = string(r.take(int(r.u16())))
	copy(k.TopicID[:], r.take(16))
	k.Partition = r.i32()
	return typ, k, r.err
}

// DecodeValue returns a record value of record type typ.
func DecodeValue(typ int16, b []byte) (StateValue, error) {
	r := &reader{b: b}
	var v StateValue
	if ver := r.u16(); r.err == nil && ver != 0 {
		return v, fmt.Errorf("value version %d: only 0 is known", ver)
	}
	v.SnapshotEpoch = r.u16()
	if typ == RecordShareSnapshot {
		v.StateEpoch = r.i32()
	}
	v.LeaderEpoch = r.i32()
	v.StartOffset = r.i64()
	n := int(r.uv()) - 1
	for i := 0; i < n && r.err == nil; i++ {
		var s StateBatch
		s.FirstOffset, s.LastOffset = r.i64(), r.i64()
		s.DeliveryState = int8(r.take(1)[0])
		s.DeliveryCount = int16(r.u16())
		r.tags()
		v.Batches = append(v.Batches, s)
	}
	r.tags()
	return v, r.err
}

// CoordinatorKey is Kafka's SharePartitionKey.asCoordinatorKey: the key
// FindCoordinator (key type 2) and the partition choice use.
func CoordinatorKey(k StateKey) string {
	return k.Group + ":" + uuidString(k.TopicID) + ":" + fmt.Sprint(k.Partition)
}

// uuidString is Kafka's Uuid.toString: URL-safe base64 without padding.
func uuidString(id [16]byte) string {
	const enc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	out := make([]byte, 0, 22)
	for i := 0; i < 16; i += 3 {
		var n uint32
		k := min(3, 16-i)
		for j := 0; j < 3; j++ {
			n <<= 8
			if j < k {
				n |= uint32(id[i+j])
			}
		}
		for j := 0; j < k+1; j++ {
			out = append(out, enc[(n>>(18-6*j))&63])
		}
	}
	return string(out)
}

// StatePartition returns the __share_group_state partition of k among n:
// Utils.abs(CoordinatorKey(k).hashCode()) % n, as Kafka's share
// coordinator chooses it (the group coordinator's rule).
func StatePartition(k StateKey, n int) int32 {
	return int32(coordinator.CoordinatorPartition(CoordinatorKey(k), n))
}
