package storage

// This file encodes and decodes Kafka's message formats v0 and v1
// (LegacyRecord.java), the log format before 0.11 (log.message.format.version
// < 0.11): offset int64, message size int32, crc int32 (CRC-32, IEEE, over
// magic..end), magic int8, attributes int8, [timestamp int64, v1 only], key
// length int32, key, value length int32, value. A v0/v1 message carries no
// leader epoch, so a log in this format gives KIP-101 nothing to work with.
// Simplifications vs Kafka: no compressed wrapper messages (the codec bits
// are rejected), so each message is its own shallow "batch" in the log.

import (
	"encoding/binary"
	"hash/crc32"
)

// Sizes of legacy messages, from LegacyRecord.java.
const (
	RecordOverheadV0 = 14 // crc 4 + magic 1 + attributes 1 + key length 4 + value length 4
	RecordOverheadV1 = 22 // RecordOverheadV0 + timestamp 8
	legacyCRCOffset  = LogOverhead
	legacyAttrOffset = LogOverhead + 5
	legacyTSOffset   = LogOverhead + 6
)

// AppendLegacyTo encodes r as one message of format magic (0 or 1) at offset
// r.Offset and returns the extended slice. Headers are not representable and
// must be empty; magic 0 drops the timestamp.
func AppendLegacyTo(dst []byte, magic int8, r *Record) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Offset))
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // size and crc, patched below
	dst = append(dst, byte(magic), 0)
	if magic == MagicV1 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(r.Timestamp))
	}
	for _, b := range [][]byte{r.Key, r.Value} {
		if b == nil {
			dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)
		} else {
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
			dst = append(dst, b...)
		}
	}
	binary.BigEndian.PutUint32(dst[start+lengthOffset:], uint32(len(dst)-start-LogOverhead))
	binary.BigEndian.PutUint32(dst[start+legacyCRCOffset:], crc32.ChecksumIEEE(dst[start+magicOffset:]))
	return dst
}

// parseLegacyHeader completes h for a v0/v1 message at the start of b.
func parseLegacyHeader(b []byte, h batchHeader) (batchHeader, error) {
	min := int64(LogOverhead + RecordOverheadV0)
	if h.magic == MagicV1 {
		min = LogOverhead + RecordOverheadV1
	}
	if h.size < min {
		return h, corrupt(lengthOffset, "message size %d: a v%d message is at least %d bytes", h.size-LogOverhead, h.magic, min-LogOverhead)
	}
	if len(b) < legacyAttrOffset+1 {
		return h, corrupt(0, "%d bytes: a message header needs %d", len(b), legacyAttrOffset+1)
	}
	if c := b[legacyAttrOffset] & 0x07; c != 0 {
		return h, corrupt(legacyAttrOffset, "compression codec %d: compressed messages are not supported", c)
	}
	h.lastOffset = h.baseOffset
	h.leaderEpoch = NoPartitionLeaderEpoch
	h.maxTimestamp = NoTimestamp
	h.count = 1
	if h.magic == MagicV1 {
		if len(b) < legacyTSOffset+8 {
			return h, corrupt(0, "%d bytes: a v1 message header needs %d", len(b), legacyTSOffset+8)
		}
		h.maxTimestamp = int64(binary.BigEndian.Uint64(b[legacyTSOffset:]))
	}
	return h, nil
}

// checkLegacy checks the CRC-32 of the complete message b.
func checkLegacy(b []byte) error {
	want := binary.BigEndian.Uint32(b[legacyCRCOffset:])
	if got := crc32.ChecksumIEEE(b[magicOffset:]); got != want {
		return corrupt(legacyCRCOffset, "CRC-32 is %#08x, the header says %#08x", got, want)
	}
	return nil
}

// decodeLegacy decodes the complete, CRC-checked message b.
func decodeLegacy(b []byte, h batchHeader) (RecordBatch, error) {
	pos := legacyTSOffset
	r := Record{Offset: h.baseOffset, Timestamp: NoTimestamp}
	if h.magic == MagicV1 {
		r.Timestamp = h.maxTimestamp
		pos += 8
	}
	for i, what := range []string{"key", "value"} {
		if len(b)-pos < 4 {
			return RecordBatch{}, corrupt(int64(pos), "%s length past the end of the message", what)
		}
		n := int64(int32(binary.BigEndian.Uint32(b[pos:])))
		pos += 4
		if n == -1 {
			continue
		}
		if n < -1 || n > int64(len(b)-pos) {
			return RecordBatch{}, corrupt(int64(pos-4), "%s length %d: must be -1 or fit in the %d bytes left", what, n, len(b)-pos)
		}
		v := append([]byte{}, b[pos:pos+int(n)]...)
		pos += int(n)
		if i == 0 {
			r.Key = v
		} else {
			r.Value = v
		}
	}
	if pos != len(b) {
		return RecordBatch{}, corrupt(int64(pos), "%d bytes after the value", len(b)-pos)
	}
	return RecordBatch{
		BaseOffset: h.baseOffset, PartitionLeaderEpoch: NoPartitionLeaderEpoch, Magic: h.magic,
		CRC: binary.BigEndian.Uint32(b[legacyCRCOffset:]), Attributes: int16(b[legacyAttrOffset]),
		FirstTimestamp: r.Timestamp, MaxTimestamp: r.Timestamp,
		ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence,
		Records: []Record{r},
	}, nil
}
