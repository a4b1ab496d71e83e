package storage

import (
	"bytes"
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
}
