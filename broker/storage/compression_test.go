package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
)

// TestCompressedBatchRoundTrip: a batch with each codec in its attributes
// decodes to the records it was built from; its records section is
// compressed (smaller than the uncompressed batch for repetitive values)
// and its CRC covers the compressed bytes.
func TestCompressedBatchRoundTrip(t *testing.T) {
	var recs []Record
	for i := 0; i < 200; i++ {
		recs = append(recs, Record{Timestamp: int64(i), Key: []byte(fmt.Sprint("key-", i%7)), Value: bytes.Repeat([]byte("value"), 20)})
	}
	plain := NewBatch(5, append([]Record(nil), recs...))
	plainBytes := plain.AppendTo(nil)
	for _, c := range []int16{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		b := NewBatch(5, append([]Record(nil), recs...))
		b.Attributes |= c
		enc := b.AppendTo(nil)
		if len(enc) >= len(plainBytes)/2 {
			t.Errorf("%s: %d bytes, uncompressed %d: not compressed", CodecName(c), len(enc), len(plainBytes))
		}
		got, n, err := DecodeBatch(enc)
		if err != nil || n != len(enc) {
			t.Fatalf("%s: %v (%d of %d bytes)", CodecName(c), err, n, len(enc))
		}
		if got.Codec() != c || len(got.Records) != len(recs) {
			t.Fatalf("%s: codec %d, %d records", CodecName(c), got.Codec(), len(got.Records))
		}
		for i, r := range got.Records {
			if r.Offset != int64(5+i) || !bytes.Equal(r.Key, recs[i].Key) || !bytes.Equal(r.Value, recs[i].Value) {
				t.Fatalf("%s: record %d = %+v", CodecName(c), i, r)
			}
		}
		info, err := ParseBatchInfo(enc)
		if err != nil || info.Count != int32(len(recs)) {
			t.Fatalf("%s: batch info %+v %v", CodecName(c), info, err)
		}
		if again := got.AppendTo(nil); !bytes.Equal(again, enc) {
			t.Errorf("%s: re-encoding differs: compression is not deterministic", CodecName(c))
		}
	}
}

// TestXerialSnappy: the Java client's snappy framing.
func TestXerialSnappy(t *testing.T) {
	plain := []byte(strings.Repeat("kafka", 100))
	framed := append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1)
	for _, chunk := range [][]byte{plain[:200], plain[200:]} {
		block := s2.EncodeSnappy(nil, chunk)
		framed = binary.BigEndian.AppendUint32(framed, uint32(len(block)))
		framed = append(framed, block...)
	}
	got, err := unsnappy(framed)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("xerial snappy: %v, %d bytes", err, len(got))
	}
	if _, err := unsnappy(framed[:len(framed)-3]); err == nil {
		t.Fatal("a cut xerial chunk decompressed")
	}
}
