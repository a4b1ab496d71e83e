package storage

// This file encodes and decodes Kafka's record batch, magic 2
// (DefaultRecordBatch.java, DefaultRecord.java), byte for byte.
// A batch whose attributes name a codec (1 gzip, 2 snappy, 3 lz4, 4 zstd)
// holds its records compressed (compression.go): AppendTo compresses them,
// decoding decompresses them. Simplification vs Kafka: no delete-horizon
// handling of attribute bit 6 (it is kept as is).

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
)

// Record format versions (the magic byte).
const (
	MagicV0 int8 = 0
	MagicV1 int8 = 1
	MagicV2 int8 = 2
)

// Sizes and positions of the v2 batch header.
const (
	LogOverhead         = 12 // BaseOffset + Length
	RecordBatchOverhead = 61 // the v2 header
	MaxRecordOverhead   = 21
	lengthOffset        = 8
	leaderEpochOffset   = 12
	magicOffset         = 16
	crcOffset           = 17
	attributesOffset    = 21
	lastOffsetDeltaOff  = 23
	firstTimestampOff   = 27
	maxTimestampOff     = 35
	producerIDOff       = 43
	producerEpochOff    = 51
	baseSequenceOff     = 53
	recordsCountOff     = 57
)

// Batch attribute bits.
const (
	CompressionCodecMask     int16 = 0x07
	TimestampTypeMask        int16 = 0x08 // 1 = LogAppendTime
	TransactionalFlagMask    int16 = 0x10
	ControlFlagMask          int16 = 0x20
	DeleteHorizonFlagMask    int16 = 0x40
	NoTimestamp              int64 = -1
	NoProducerID             int64 = -1
	NoProducerEpoch          int16 = -1
	NoSequence               int32 = -1
	NoPartitionLeaderEpoch   int32 = -1
	minRecordSize                  = 7 // smallest encoded record: 1-byte length + 6 fields
	maxRecordsPerBatchDecode       = 1 << 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC-32C (Castagnoli) of b, the checksum of v2 batches.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Header is a record header: a string key and a nullable value.
type Header struct {
	Key   string
	Value []byte
}

// Record is one record. Offset and Timestamp (milliseconds, the unit of
// Kafka's timestamps) are absolute; the encoder turns them into deltas.
// A nil Key or Value is encoded as null (length -1), a tombstone when the
// value is nil.
type Record struct {
	Offset    int64
	Timestamp int64
	Key       []byte
	Value     []byte
	Headers   []Header
}

// RecordBatch is a decoded batch, v2 or legacy. For magic 0 and 1 it holds
// one message (Records has one entry, the producer fields are unset and
// PartitionLeaderEpoch is -1).
type RecordBatch struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32 // as decoded; the encoder computes it
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	Records              []Record
}

// LastOffset returns the offset of the batch's last record.
func (b *RecordBatch) LastOffset() int64 { return b.BaseOffset + int64(b.LastOffsetDelta) }

// NextOffset returns LastOffset()+1.
func (b *RecordBatch) NextOffset() int64 { return b.LastOffset() + 1 }

// NewBatch returns a v2 batch holding records at consecutive offsets from
// baseOffset, with no producer id and no leader epoch. It sets each record's
// Offset, and the batch's timestamps from the records'.
func NewBatch(baseOffset int64, records []Record) RecordBatch {
	b := RecordBatch{
		BaseOffset: baseOffset, PartitionLeaderEpoch: NoPartitionLeaderEpoch, Magic: MagicV2,
		FirstTimestamp: NoTimestamp, MaxTimestamp: NoTimestamp,
		ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence,
		Records: records,
	}
	for i := range records {
		records[i].Offset = baseOffset + int64(i)
		if i == 0 {
			b.FirstTimestamp = records[i].Timestamp
		}
		b.MaxTimestamp = max(b.MaxTimestamp, records[i].Timestamp)
	}
	b.LastOffsetDelta = int32(max(len(records)-1, 0))
	return b
}

func appendVarint(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

func varintSize(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

func bytesSize(b []byte) int {
	if b == nil {
		return varintSize(-1)
	}
	return varintSize(int64(len(b))) + len(b)
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return appendVarint(dst, -1)
	}
	return append(appendVarint(dst, int64(len(b))), b...)
}

// recordBodySize returns the size of r after its length field.
func recordBodySize(r *Record, tsDelta, offDelta int64) int {
	n := 1 + varintSize(tsDelta) + varintSize(offDelta) + bytesSize(r.Key) + bytesSize(r.Value) + varintSize(int64(len(r.Headers)))
	for _, h := range r.Headers {
		n += varintSize(int64(len(h.Key))) + len(h.Key) + bytesSize(h.Value)
	}
	return n
}

// EncodedSize returns the length of b's encoding by AppendTo.
func (b *RecordBatch) EncodedSize() int {
	n := RecordBatchOverhead
	for i := range b.Records {
		r := &b.Records[i]
		body := recordBodySize(r, r.Timestamp-b.FirstTimestamp, r.Offset-b.BaseOffset)
		n += varintSize(int64(body)) + body
	}
	return n
}

// Codec returns the compression codec of b's attributes (CodecNone, ...).
func (b *RecordBatch) Codec() int16 { return b.Attributes & CompressionCodecMask }

// AppendTo encodes b (magic 2) at the end of dst, computing Length, the
// record count and the CRC, and returns the extended slice. Record offsets
// and timestamps are encoded relative to BaseOffset and FirstTimestamp.
// With a codec in the attributes the records are compressed with it.
func (b *RecordBatch) AppendTo(dst []byte) []byte {
	if c := b.Codec(); c != CodecNone {
		plain := *b
		plain.Attributes &^= CompressionCodecMask
		raw := plain.AppendTo(nil)
		z, err := compress(c, raw[RecordBatchOverhead:])
		if err != nil {
			panic(fmt.Sprintf("storage: compressing a batch with %s: %v", CodecName(c), err)) // a codec parseHeader accepts always compresses
		}
		start := len(dst)
		dst = append(append(dst, raw[:RecordBatchOverhead]...), z...)
		binary.BigEndian.PutUint16(dst[start+attributesOffset:], uint16(b.Attributes))
		binary.BigEndian.PutUint32(dst[start+lengthOffset:], uint32(len(dst)-start-LogOverhead))
		binary.BigEndian.PutUint32(dst[start+crcOffset:], CRC32C(dst[start+attributesOffset:]))
		return dst
	}
	dst = slices.Grow(dst, b.EncodedSize())
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.BaseOffset))
	dst = append(dst, 0, 0, 0, 0) // Length, patched below
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.PartitionLeaderEpoch))
	dst = append(dst, byte(MagicV2), 0, 0, 0, 0) // CRC patched below
	dst = binary.BigEndian.AppendUint16(dst, uint16(b.Attributes))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.LastOffsetDelta))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.FirstTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.MaxTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.ProducerID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(b.ProducerEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.BaseSequence))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b.Records)))
	for i := range b.Records {
		r := &b.Records[i]
		tsDelta, offDelta := r.Timestamp-b.FirstTimestamp, r.Offset-b.BaseOffset
		dst = appendVarint(dst, int64(recordBodySize(r, tsDelta, offDelta)))
		dst = append(dst, 0) // record attributes, unused
		dst = appendVarint(dst, tsDelta)
		dst = appendVarint(dst, offDelta)
		dst = appendBytes(dst, r.Key)
		dst = appendBytes(dst, r.Value)
		dst = appendVarint(dst, int64(len(r.Headers)))
		for _, h := range r.Headers {
			dst = appendVarint(dst, int64(len(h.Key)))
			dst = append(dst, h.Key...)
			dst = appendBytes(dst, h.Value)
		}
	}
	binary.BigEndian.PutUint32(dst[start+lengthOffset:], uint32(len(dst)-start-LogOverhead))
	binary.BigEndian.PutUint32(dst[start+crcOffset:], CRC32C(dst[start+attributesOffset:]))
	return dst
}

// StampLeaderEpoch sets the PartitionLeaderEpoch of the v2 batch at the
// start of batch. The CRC does not cover the field, so, as in Kafka's
// DefaultRecordBatch.setPartitionLeaderEpoch, it stays valid.
func StampLeaderEpoch(batch []byte, epoch int32) {
	binary.BigEndian.PutUint32(batch[leaderEpochOffset:], uint32(epoch))
}

// batchHeader is what the log needs to know about a batch (any magic)
// without decoding its records.
type batchHeader struct {
	baseOffset   int64
	lastOffset   int64
	size         int64 // LogOverhead + Length
	magic        int8
	leaderEpoch  int32 // -1 for magic < 2
	maxTimestamp int64 // -1 for magic 0
	count        int32 // 1 for magic < 2
	// The producer fields and attributes of a v2 batch; NoProducerID,
	// NoProducerEpoch, NoSequence and 0 below magic 2.
	attrs         int16
	producerID    int64
	producerEpoch int16
	baseSequence  int32
}

func (h *batchHeader) transactional() bool { return h.attrs&TransactionalFlagMask != 0 }
func (h *batchHeader) control() bool       { return h.attrs&ControlFlagMask != 0 }

func corrupt(pos int64, format string, args ...any) error {
	return &CorruptError{Position: pos, Reason: fmt.Sprintf(format, args...)}
}

// parseHeader reads the header of the batch at the start of b, which holds
// at least its first 17 bytes, and checks what the header alone can tell:
// the length, the magic, the compression codec and the offsets. It does not
// check the CRC.
func parseHeader(b []byte) (batchHeader, error) {
	if len(b) < magicOffset+1 {
		return batchHeader{}, corrupt(0, "%d bytes: a batch header needs at least %d", len(b), magicOffset+1)
	}
	var h batchHeader
	h.baseOffset = int64(binary.BigEndian.Uint64(b))
	length := int64(int32(binary.BigEndian.Uint32(b[lengthOffset:])))
	h.size = LogOverhead + length
	h.magic = int8(b[magicOffset])
	h.producerID, h.producerEpoch, h.baseSequence = NoProducerID, NoProducerEpoch, NoSequence
	if h.baseOffset < 0 {
		return h, corrupt(0, "negative base offset %d", h.baseOffset)
	}
	switch h.magic {
	case MagicV2:
		if h.size < RecordBatchOverhead {
			return h, corrupt(lengthOffset, "batch length %d: a v2 batch is at least %d bytes", length, RecordBatchOverhead-LogOverhead)
		}
		if len(b) < RecordBatchOverhead {
			return h, corrupt(0, "%d bytes: a v2 batch header is %d", len(b), RecordBatchOverhead)
		}
		attrs := int16(binary.BigEndian.Uint16(b[attributesOffset:]))
		if c := attrs & CompressionCodecMask; c > CodecZstd {
			return h, corrupt(attributesOffset, "compression codec %d: allowed 0 (none), 1 (gzip), 2 (snappy), 3 (lz4), 4 (zstd)", c)
		}
		h.attrs = attrs
		h.producerID = int64(binary.BigEndian.Uint64(b[producerIDOff:]))
		h.producerEpoch = int16(binary.BigEndian.Uint16(b[producerEpochOff:]))
		h.baseSequence = int32(binary.BigEndian.Uint32(b[baseSequenceOff:]))
		delta := int32(binary.BigEndian.Uint32(b[lastOffsetDeltaOff:]))
		if delta < 0 {
			return h, corrupt(lastOffsetDeltaOff, "negative last offset delta %d", delta)
		}
		h.lastOffset = h.baseOffset + int64(delta)
		if h.lastOffset < h.baseOffset {
			return h, corrupt(lastOffsetDeltaOff, "last offset overflows")
		}
		h.leaderEpoch = int32(binary.BigEndian.Uint32(b[leaderEpochOffset:]))
		h.maxTimestamp = int64(binary.BigEndian.Uint64(b[maxTimestampOff:]))
		h.count = int32(binary.BigEndian.Uint32(b[recordsCountOff:]))
		if h.count < 0 || attrs&CompressionCodecMask == 0 && int64(h.count) > (h.size-RecordBatchOverhead)/minRecordSize {
			return h, corrupt(recordsCountOff, "record count %d does not fit in a batch of %d bytes", h.count, h.size)
		}
	case MagicV0, MagicV1:
		return parseLegacyHeader(b, h)
	default:
		return h, corrupt(magicOffset, "unknown magic %d (allowed: 0, 1, 2)", h.magic)
	}
	return h, nil
}

// checkBatch validates the complete batch b (len(b) == h.size): its CRC.
func checkBatch(b []byte, h batchHeader) error {
	if h.magic < MagicV2 {
		return checkLegacy(b)
	}
	want := binary.BigEndian.Uint32(b[crcOffset:])
	if got := CRC32C(b[attributesOffset:]); got != want {
		return corrupt(crcOffset, "CRC-32C is %#08x, the header says %#08x", got, want)
	}
	return nil
}

// DecodeBatch decodes the batch (any magic) at the start of b and returns it
// with its size in bytes. It checks the CRC and every length, and never
// panics: bad bytes give a *CorruptError whose Position is relative to b.
func DecodeBatch(b []byte) (RecordBatch, int, error) {
	var rb RecordBatch
	n, err := decodeBatch(b, &rb, false)
	if err != nil && n == 0 {
		return RecordBatch{}, 0, err
	}
	return rb, n, err // NB: a legacy message's error comes with its size

}

// DecodeBatchView decodes the batch at the start of b into rb as
// DecodeBatch does, with the same checks, but copies nothing: rb.Records
// reuses its capacity and the records' keys, values and header values
// alias b. It is for a reader that looks at the records and keeps none of
// their bytes (the harness's observer converts each value to a string).
// On an error rb is left in an unspecified state.
func DecodeBatchView(b []byte, rb *RecordBatch) (int, error) {
	return decodeBatch(b, rb, true)
}

// decodeBatch is DecodeBatch and, with view, DecodeBatchView.
func decodeBatch(b []byte, rb *RecordBatch, view bool) (int, error) {
	h, err := parseHeader(b)
	if err != nil {
		return 0, err
	}
	if h.size > int64(len(b)) {
		return 0, corrupt(lengthOffset, "batch of %d bytes, only %d present", h.size, len(b))
	}
	b = b[:h.size]
	if err := checkBatch(b, h); err != nil {
		return 0, err
	}
	if h.magic < MagicV2 {
		lb, err := decodeLegacy(b, h)
		*rb = lb
		return int(h.size), err
	}
	records := rb.Records[:0]
	if !view {
		records = make([]Record, 0, h.count)
	}
	*rb = RecordBatch{
		BaseOffset:           h.baseOffset,
		PartitionLeaderEpoch: h.leaderEpoch,
		Magic:                MagicV2,
		CRC:                  binary.BigEndian.Uint32(b[crcOffset:]),
		Attributes:           int16(binary.BigEndian.Uint16(b[attributesOffset:])),
		LastOffsetDelta:      int32(h.lastOffset - h.baseOffset),
		FirstTimestamp:       int64(binary.BigEndian.Uint64(b[firstTimestampOff:])),
		MaxTimestamp:         h.maxTimestamp,
		ProducerID:           int64(binary.BigEndian.Uint64(b[producerIDOff:])),
		ProducerEpoch:        int16(binary.BigEndian.Uint16(b[producerEpochOff:])),
		BaseSequence:         int32(binary.BigEndian.Uint32(b[baseSequenceOff:])),
	}
	d := decoder{b: b, pos: RecordBatchOverhead}
	if c := rb.Codec(); c != CodecNone {
		plain, err := Decompress(c, b[RecordBatchOverhead:])
		if err != nil {
			return 0, corrupt(RecordBatchOverhead, "records compressed with %s: %v", CodecName(c), err)
		}
		if int64(h.count) > int64(len(plain))/minRecordSize {
			return 0, corrupt(recordsCountOff, "record count %d does not fit in %d decompressed bytes", h.count, len(plain))
		}
		// NB: the decompressed records are a fresh buffer: neither a view
		// nor a copy aliases b.
		d = decoder{b: plain, pos: 0}
		view = true
	}
	if !view && h.count > 0 {
		// NB: one copy of the batch, which the records' keys and values
		// alias (each capped at its length), rather than one allocation
		// per key and value: nothing aliases b, as DecodeBatch promises.
		d.b = slices.Clone(b)
	}
	for i := int32(0); i < h.count; i++ {
		r, err := d.record(rb)
		if err != nil {
			return 0, err
		}
		records = append(records, r)
	}
	rb.Records = records
	if d.pos != len(d.b) {
		return 0, corrupt(int64(d.pos), "%d bytes after the last of %d records", len(d.b)-d.pos, h.count)
	}
	return int(h.size), nil
}

// DecodeBatches decodes every batch in b, as returned by Log.Read.
func DecodeBatches(b []byte) ([]RecordBatch, error) {
	var out []RecordBatch
	for pos := 0; pos < len(b); {
		rb, n, err := DecodeBatch(b[pos:])
		if err != nil {
			return out, inFile(err, "", int64(pos))
		}
		out = append(out, rb)
		pos += n
	}
	return out, nil
}

// decoder reads the records of a v2 batch.
// Its keys and values alias b: decodeBatch gives it a copy of the
// batch unless the caller asked for a view.
type decoder struct {
	b   []byte
	pos int
}

func (d *decoder) varint(what string) (int64, error) {
	v, n := binary.Varint(d.b[d.pos:])
	if n <= 0 {
		return 0, corrupt(int64(d.pos), "bad varint for %s", what)
	}
	d.pos += n
	return v, nil
}

// bytes reads a varint length and that many bytes (nil for length -1).
func (d *decoder) bytes(what string, end int) ([]byte, error) {
	at := d.pos
	n, w := binary.Varint(d.b[d.pos:])
	if w <= 0 {
		// NB: the message is built here only: a what+" length" argument to
		// varint would allocate once per field decoded.
		return nil, corrupt(int64(d.pos), "bad varint for %s length", what)
	}
	d.pos += w
	if n == -1 {
		return nil, nil
	}
	if n < -1 || n > int64(end-d.pos) {
		return nil, corrupt(int64(at), "%s length %d: must be -1 or fit in the %d bytes left", what, n, end-d.pos)
	}
	v := d.b[d.pos : d.pos+int(n) : d.pos+int(n)]
	d.pos += int(n)
	return v, nil
}

func (d *decoder) record(rb *RecordBatch) (Record, error) {
	at := d.pos
	length, err := d.varint("record length")
	if err != nil {
		return Record{}, err
	}
	if length < minRecordSize-1 || length > int64(len(d.b)-d.pos) {
		return Record{}, corrupt(int64(at), "record length %d: must be in [%d, %d]", length, minRecordSize-1, len(d.b)-d.pos)
	}
	end := d.pos + int(length)
	d.pos++ // attributes, unused
	var r Record
	tsDelta, err := d.varint("timestamp delta")
	if err != nil {
		return r, err
	}
	offDelta, err := d.varint("offset delta")
	if err != nil {
		return r, err
	}
	if offDelta < 0 || offDelta > int64(rb.LastOffsetDelta) {
		return r, corrupt(int64(at), "offset delta %d outside [0, %d]", offDelta, rb.LastOffsetDelta)
	}
	r.Offset = rb.BaseOffset + offDelta
	r.Timestamp = rb.FirstTimestamp + tsDelta
	if r.Key, err = d.bytes("key", end); err != nil {
		return r, err
	}
	if r.Value, err = d.bytes("value", end); err != nil {
		return r, err
	}
	hat := d.pos
	nh, err := d.varint("header count")
	if err != nil {
		return r, err
	}
	if nh < 0 || nh > int64(end-d.pos)/2 {
		return r, corrupt(int64(hat), "header count %d does not fit in the record", nh)
	}
	if nh > 0 {
		r.Headers = make([]Header, 0, nh)
	}
	for i := int64(0); i < nh; i++ {
		k, err := d.bytes("header key", end)
		if err != nil {
			return r, err
		}
		if k == nil {
			return r, corrupt(int64(d.pos), "null header key")
		}
		v, err := d.bytes("header value", end)
		if err != nil {
			return r, err
		}
		r.Headers = append(r.Headers, Header{Key: string(k), Value: v})
	}
	if d.pos != end {
		return r, corrupt(int64(at), "record length %d, but its fields take %d bytes", length, d.pos-(end-int(length)))
	}
	return r, nil
}
