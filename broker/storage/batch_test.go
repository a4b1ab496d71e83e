package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"strings"
	"testing"
)

// crc32cBitwise is CRC-32C written out bit by bit (reflected polynomial
// 0x82F63B78), to check the table-driven one against the definition.
func crc32cBitwise(b []byte) uint32 {
	crc := ^uint32(0)
	for _, c := range b {
		crc ^= uint32(c)
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x82F63B78
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

func TestCRC32CCheckValue(t *testing.T) {
	if got := CRC32C([]byte("123456789")); got != 0xE3069283 {
		t.Fatalf("CRC32C(123456789) = %#x, want 0xE3069283", got)
	}
	if got := crc32cBitwise([]byte("123456789")); got != 0xE3069283 {
		t.Fatalf("bitwise CRC32C(123456789) = %#x, want 0xE3069283", got)
	}
	if got := crc32.ChecksumIEEE([]byte("123456789")); got != 0xCBF43926 {
		t.Fatalf("CRC32(123456789) = %#x, want 0xCBF43926", got)
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBatchGolden checks a batch with fixed fields against the layout table
// of DefaultRecordBatch, field by field.
func TestBatchGolden(t *testing.T) {
	b := RecordBatch{
		BaseOffset: 5, PartitionLeaderEpoch: 3, Magic: MagicV2, Attributes: 0,
		LastOffsetDelta: 0, FirstTimestamp: 1000, MaxTimestamp: 1000,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Records: []Record{{Offset: 5, Timestamp: 1000, Key: []byte("k"), Value: []byte("v")}},
	}
	got := b.AppendTo(nil)
	want := unhex(t, `
		0000000000000005 0000003a 00000003 02 00000000
		0000 00000000 00000000000003e8 00000000000003e8
		ffffffffffffffff ffff ffffffff 00000001
		10 00 00 00 02 6b 02 76 00`)
	// The CRC at offset 17 covers bytes 21..end; compute it by definition.
	binary.BigEndian.PutUint32(want[17:], crc32cBitwise(want[21:]))
	if len(got) != 70 || !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, want)
	}
	for _, f := range []struct {
		name     string
		off, len int
		want     uint64
	}{
		{"BaseOffset", 0, 8, 5}, {"Length", 8, 4, 70 - 12}, {"PartitionLeaderEpoch", 12, 4, 3},
		{"Magic", 16, 1, 2}, {"Attributes", 21, 2, 0}, {"LastOffsetDelta", 23, 4, 0},
		{"FirstTimestamp", 27, 8, 1000}, {"MaxTimestamp", 35, 8, 1000},
		{"ProducerId", 43, 8, 1<<64 - 1}, {"ProducerEpoch", 51, 2, 1<<16 - 1},
		{"BaseSequence", 53, 4, 1<<32 - 1}, {"RecordsCount", 57, 4, 1},
	} {
		var v uint64
		for _, c := range got[f.off : f.off+f.len] {
			v = v<<8 | uint64(c)
		}
		if v != f.want {
			t.Errorf("%s at %d = %d, want %d", f.name, f.off, v, f.want)
		}
	}
	rb, n, err := DecodeBatch(got)
	if err != nil || n != 70 {
		t.Fatalf("DecodeBatch: n=%d err=%v", n, err)
	}
	if rb.CRC != binary.BigEndian.Uint32(want[17:]) || string(rb.Records[0].Key) != "k" || rb.Records[0].Offset != 5 || rb.Records[0].Timestamp != 1000 {
		t.Fatalf("decoded %+v", rb)
	}
}

// TestStampLeaderEpochKeepsCRC: the CRC excludes the epoch field.
func TestStampLeaderEpochKeepsCRC(t *testing.T) {
	b := NewBatch(0, []Record{{Value: []byte("x")}})
	enc := b.AppendTo(nil)
	StampLeaderEpoch(enc, 42)
	rb, _, err := DecodeBatch(enc)
	if err != nil || rb.PartitionLeaderEpoch != 42 {
		t.Fatalf("after stamping: epoch %d, err %v", rb.PartitionLeaderEpoch, err)
	}
}

func TestBatchRoundTrip(t *testing.T) {
	recs := []Record{
		{Timestamp: 10, Key: nil, Value: []byte("a")},
		{Timestamp: 5, Key: []byte{}, Value: nil, Headers: []Header{{"h", []byte("1")}, {"n", nil}}},
		{Timestamp: 1 << 40, Key: bytes.Repeat([]byte("k"), 300), Value: bytes.Repeat([]byte("v"), 70000)},
	}
	b := NewBatch(1<<33, recs)
	b.PartitionLeaderEpoch, b.ProducerID, b.ProducerEpoch, b.BaseSequence = 7, 99, 2, 11
	enc := b.AppendTo([]byte("prefix"))[6:]
	rb, n, err := DecodeBatch(enc)
	if err != nil || n != len(enc) {
		t.Fatal(n, err)
	}
	if rb.LastOffset() != 1<<33+2 || rb.MaxTimestamp != 1<<40 || rb.FirstTimestamp != 10 || rb.ProducerID != 99 || rb.BaseSequence != 11 {
		t.Fatalf("header %+v", rb)
	}
	for i, r := range rb.Records {
		w := recs[i]
		if r.Offset != w.Offset || r.Timestamp != w.Timestamp || !bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) ||
			!bytes.Equal(r.Value, w.Value) || (r.Value == nil) != (w.Value == nil) || len(r.Headers) != len(w.Headers) {
			t.Fatalf("record %d: %+v, want %+v", i, r, w)
		}
	}
	if rb.Records[1].Headers[1].Value != nil || string(rb.Records[1].Headers[0].Value) != "1" {
		t.Fatalf("headers %+v", rb.Records[1].Headers)
	}
}

func TestDecodeBatchErrors(t *testing.T) {
	good := NewBatch(0, []Record{{Key: []byte("k"), Value: []byte("v")}})
	enc := good.AppendTo(nil)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), enc...)) }
	for _, tc := range []struct {
		name string
		b    []byte
		pos  int64
		want string
	}{
		{"empty", nil, 0, "batch header needs"},
		{"torn", enc[:40], 0, "v2 batch header is 61"},
		{"short body", enc[:65], lengthOffset, "only 65 present"},
		{"crc", mod(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), crcOffset, "CRC-32C"},
		{"magic", mod(func(b []byte) []byte { b[16] = 3; return b }), magicOffset, "unknown magic 3"},
		{"unknown codec", mod(func(b []byte) []byte { b[22] |= 5; return b }), attributesOffset, "compression codec 5"},
		{"not gzip", mod(func(b []byte) []byte {
			b[22] |= 1
			binary.BigEndian.PutUint32(b[crcOffset:], CRC32C(b[attributesOffset:]))
			return b
		}), RecordBatchOverhead, "records compressed with gzip"},
		{"length", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 10); return b }), lengthOffset, "at least 49"},
		{"negative offset", mod(func(b []byte) []byte { b[0] = 0x80; return b }), 0, "negative base offset"},
	} {
		_, _, err := DecodeBatch(tc.b)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Position != tc.pos || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want position %d and %q", tc.name, err, tc.pos, tc.want)
		}
	}
}

func TestLegacyGolden(t *testing.T) {
	r := Record{Offset: 7, Timestamp: 1000, Key: []byte("k"), Value: []byte("v")}
	got := AppendLegacyTo(nil, MagicV1, &r)
	want := unhex(t, `0000000000000007 00000018 00000000 01 00 00000000000003e8 00000001 6b 00000001 76`)
	binary.BigEndian.PutUint32(want[12:], crc32.ChecksumIEEE(want[16:]))
	if !bytes.Equal(got, want) {
		t.Fatalf("v1 message\n%x\nwant\n%x", got, want)
	}
	v0 := AppendLegacyTo(nil, MagicV0, &Record{Offset: 1, Value: []byte("v")})
	if len(v0) != LogOverhead+RecordOverheadV0+1 {
		t.Fatalf("v0 message of %d bytes", len(v0))
	}
	for _, b := range [][]byte{got, v0} {
		rb, n, err := DecodeBatch(b)
		if err != nil || n != len(b) || len(rb.Records) != 1 || string(rb.Records[0].Value) != "v" {
			t.Fatalf("decode legacy: %+v %d %v", rb, n, err)
		}
	}
	bad := append([]byte(nil), got...)
	bad[len(bad)-1] ^= 4
	if _, _, err := DecodeBatch(bad); err == nil || !strings.Contains(err.Error(), "CRC-32 is") {
		t.Fatalf("corrupt v1 message: %v", err)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	b := NewBatch(3, []Record{{Key: []byte("k"), Value: []byte("v"), Headers: []Header{{"a", []byte("b")}}}, {Value: nil}})
	f.Add(b.AppendTo(nil))
	f.Add(AppendLegacyTo(nil, MagicV1, &Record{Offset: 1, Key: []byte("k"), Value: []byte("v")}))
	f.Add(AppendLegacyTo(nil, MagicV0, &Record{Offset: 1, Value: []byte("v")}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rb, n, err := DecodeBatch(data)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *CorruptError", err)
			}
			return
		}
		if n <= 0 || n > len(data) {
			t.Fatalf("size %d of %d bytes", n, len(data))
		}
		// A batch that decodes re-encodes to the same bytes when it was
		// written by this encoder's rules (v2, canonical varints).
		if rb.Magic == MagicV2 {
			again, _, err := DecodeBatch(rb.AppendTo(nil))
			if err != nil || len(again.Records) != len(rb.Records) {
				t.Fatalf("re-encoded batch does not decode: %v", err)
			}
		}
	})
}
