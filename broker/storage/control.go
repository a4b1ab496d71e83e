package storage

// This file encodes and decodes control batches: the transaction markers
// (KIP-98) a partition leader appends when a transaction ends, in Kafka's
// exact format (ControlRecordType.java, EndTransactionMarker.java). A
// control batch is a v2 batch with attribute bits 4 (transactional) and 5
// (control) set, the producer id and epoch of the transaction, no sequence,
// and one record whose key is {version int16 = 0, type int16} (0 ABORT,
// 1 COMMIT) and whose value is {version int16 = 0, coordinator_epoch
// int32}, all big endian.

import (
	"encoding/binary"
	"fmt"
)

// ControlRecordType is the type in a control record's key.
type ControlRecordType int16

// The control record types (ControlRecordType.java). Only ABORT and COMMIT
// are transaction markers.
const (
	ControlAbort  ControlRecordType = 0
	ControlCommit ControlRecordType = 1
)

func (t ControlRecordType) String() string {
	switch t {
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	}
	return fmt.Sprintf("UNKNOWN(%d)", int16(t))
}

// controlKeyVersion and endTxnMarkerVersion are the only versions Kafka
// writes (ControlRecordType.CURRENT_CONTROL_RECORD_KEY_VERSION,
// EndTransactionMarker.CURRENT_END_TXN_MARKER_VERSION).
const (
	controlKeyVersion   int16 = 0
	endTxnMarkerVersion int16 = 0
)

// EndTxnMarker is a decoded transaction marker.
type EndTxnMarker struct {
	Type             ControlRecordType
	CoordinatorEpoch int32
}

// Commit reports whether the marker commits its transaction.
func (m EndTxnMarker) Commit() bool { return m.Type == ControlCommit }

// ControlRecordKey returns the 4-byte key of a control record of type t.
func ControlRecordKey(t ControlRecordType) []byte {
	k := binary.BigEndian.AppendUint16(nil, uint16(controlKeyVersion))
	return binary.BigEndian.AppendUint16(k, uint16(t))
}

// EndTxnMarkerValue returns the 6-byte value of a transaction marker.
func EndTxnMarkerValue(coordinatorEpoch int32) []byte {
	v := binary.BigEndian.AppendUint16(nil, uint16(endTxnMarkerVersion))
	return binary.BigEndian.AppendUint32(v, uint32(coordinatorEpoch))
}

// NewControlBatch returns the marker batch that ends producerID's
// transaction (MemoryRecords.withEndTransactionMarker): transactional and
// control bits set, no sequence, one record at baseOffset with timestamp
// (milliseconds). The leader assigns the real offset and leader epoch.
func NewControlBatch(producerID int64, producerEpoch int16, coordinatorEpoch int32, commit bool, timestamp int64) RecordBatch {
	t := ControlAbort
	if commit {
		t = ControlCommit
	}
	b := NewBatch(0, []Record{{Timestamp: timestamp, Key: ControlRecordKey(t), Value: EndTxnMarkerValue(coordinatorEpoch)}})
	b.Attributes = TransactionalFlagMask | ControlFlagMask
	b.ProducerID, b.ProducerEpoch, b.BaseSequence = producerID, producerEpoch, NoSequence
	return b
}

// ParseEndTxnMarker decodes a control record's key and value. It fails on
// a key or value too short, an unknown key version, a type that is not a
// marker, or a value of an unknown version.
func ParseEndTxnMarker(key, value []byte) (EndTxnMarker, error) {
	if len(key) < 4 {
		return EndTxnMarker{}, fmt.Errorf("control record key of %d bytes: at least 4 expected", len(key))
	}
	if v := int16(binary.BigEndian.Uint16(key)); v != controlKeyVersion {
		return EndTxnMarker{}, fmt.Errorf("control record key version %d: only %d is known", v, controlKeyVersion)
	}
	t := ControlRecordType(binary.BigEndian.Uint16(key[2:]))
	if t != ControlAbort && t != ControlCommit {
		return EndTxnMarker{}, fmt.Errorf("control record type %d is not a transaction marker (allowed: 0 ABORT, 1 COMMIT)", int16(t))
	}
	if len(value) < 6 {
		return EndTxnMarker{}, fmt.Errorf("end transaction marker of %d bytes: at least 6 expected", len(value))
	}
	if v := int16(binary.BigEndian.Uint16(value)); v != endTxnMarkerVersion {
		return EndTxnMarker{}, fmt.Errorf("end transaction marker version %d: only %d is known", v, endTxnMarkerVersion)
	}
	return EndTxnMarker{Type: t, CoordinatorEpoch: int32(binary.BigEndian.Uint32(value[2:]))}, nil
}

// ReadEndTxnMarker decodes the marker of the whole control batch at the
// start of batch (CRC checked); ok is false for an empty control batch.
func ReadEndTxnMarker(batch []byte) (m EndTxnMarker, ok bool, err error) {
	rb, _, err := DecodeBatch(batch)
	if err != nil {
		return m, false, err
	}
	if rb.Attributes&ControlFlagMask == 0 {
		return m, false, fmt.Errorf("batch at offset %d is not a control batch", rb.BaseOffset)
	}
	if len(rb.Records) == 0 {
		return m, false, nil
	}
	m, err = ParseEndTxnMarker(rb.Records[0].Key, rb.Records[0].Value)
	return m, err == nil, err
}
