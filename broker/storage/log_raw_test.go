package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// AppendRawAsLeader must store exactly what AppendBatchAsLeader stores for
// the same batch, and refuse corrupt bytes.
func TestAppendRawAsLeaderMatchesDecodedPath(t *testing.T) {
	open := func() *Log {
		d, _ := sim.NewDisk(sim.DiskConfig{}, nil)
		cfg := DefaultConfig()
		cfg.LogDirs = []string{"/d"}
		m, err := OpenManager(d, cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		l, err := m.GetOrCreateLog(TopicPartition{Topic: "t", Partition: 0}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	raw, decoded := open(), open()
	for i, vals := range [][]string{{"a"}, {"b", "c", "d"}, {"e"}} {
		var recs []Record
		for _, v := range vals {
			recs = append(recs, Record{Timestamp: int64(i), Key: []byte("k"), Value: []byte(v)})
		}
		b := NewBatch(0, recs)
		wire := b.AppendTo(nil)
		if _, err := raw.AppendRawAsLeader(wire, 3, 0); err != nil {
			t.Fatal(err)
		}
		b2, _, _ := DecodeBatch(wire)
		if _, err := decoded.AppendBatchAsLeader(&b2, 3, 0); err != nil {
			t.Fatal(err)
		}
	}
	x, _ := raw.Read(0, 1<<20, raw.LogEndOffset())
	y, _ := decoded.Read(0, 1<<20, decoded.LogEndOffset())
	if !bytes.Equal(x, y) || raw.LogEndOffset() != 5 {
		t.Fatalf("raw and decoded appends differ (LEO %d vs %d)", raw.LogEndOffset(), decoded.LogEndOffset())
	}
	b := NewBatch(0, []Record{{Value: []byte("z")}})
	bad := b.AppendTo(nil)
	bad[len(bad)-1] ^= 1
	if _, err := raw.AppendRawAsLeader(bad, 3, 0); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("corrupt batch: %v", err)
	}
	if raw.LogEndOffset() != 5 {
		t.Fatal("a refused batch changed the log")
	}

	// A compressed batch is stored as produced, its codec kept; one whose
	// records do not decompress is refused (LogValidator), its CRC good.
	gz := NewBatch(0, []Record{{Value: []byte("g1")}, {Value: []byte("g2")}})
	gz.Attributes |= CodecGzip
	if _, err := raw.AppendRawAsLeader(gz.AppendTo(nil), 3, 0); err != nil {
		t.Fatalf("a gzip batch: %v", err)
	}
	stored, _ := raw.Read(5, 1<<20, raw.LogEndOffset())
	if got, _, err := DecodeBatch(stored); err != nil || got.Codec() != CodecGzip || len(got.Records) != 2 {
		t.Fatalf("the gzip batch was stored as codec %d with %d records (%v)", got.Codec(), len(got.Records), err)
	}
	plain := NewBatch(0, []Record{{Value: []byte("plain")}})
	notGzip := plain.AppendTo(nil)
	binary.BigEndian.PutUint16(notGzip[attributesOffset:], uint16(CodecGzip))
	binary.BigEndian.PutUint32(notGzip[crcOffset:], CRC32C(notGzip[attributesOffset:]))
	if _, err := raw.AppendRawAsLeader(notGzip, 3, 0); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("a gzip batch whose records are not gzip: %v, want ErrInvalidRecord", err)
	}
	if raw.LogEndOffset() != 7 {
		t.Fatalf("LEO %d after the refused gzip batch, want 7", raw.LogEndOffset())
	}
}
