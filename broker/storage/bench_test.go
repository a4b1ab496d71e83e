package storage

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// BenchmarkAppend appends 1 KiB records in batches of 16 as leader;
// SetBytes counts record value bytes, so MB/s is record bytes per second.
func BenchmarkAppend(b *testing.B) {
	recs := make([]Record, 16)
	for i := range recs {
		recs[i] = Record{Timestamp: 1, Key: []byte("key"), Value: make([]byte, 1024)}
	}
	cfg := DefaultConfig()
	cfg.LogDirs = []string{"/data"}
	cfg.SegmentBytes = 1024 << 20
	var l *Log
	reset := func() {
		d, _ := sim.NewDisk(sim.DiskConfig{}, nil)
		var err error
		if l, err = OpenLog(d, "/data/t-0", tp0, cfg, 0, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
	reset()
	b.SetBytes(16 * 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%1024 == 1023 { // a fresh 16 MiB log: bounds the memory the in-memory disk holds
			b.StopTimer()
			reset()
			b.StartTimer()
		}
		if _, err := l.AppendAsLeader(recs, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// xorshift is a tiny deterministic generator for benchmark offsets.
type xorshift uint64

func (x *xorshift) next() uint64 {
	*x ^= *x << 13
	*x ^= *x >> 7
	*x ^= *x << 17
	return uint64(*x)
}

// buildReadLog builds a multi-segment log of n records with 32-byte values
// in batches of 16 (1 MiB segments, the default 4096-byte index interval).
func buildReadLog(b *testing.B, n int) *Log {
	cfg := DefaultConfig()
	cfg.LogDirs = []string{"/data"}
	cfg.SegmentBytes = 1 << 20
	d, _ := sim.NewDisk(sim.DiskConfig{}, nil)
	l, err := OpenLog(d, "/data/t-0", tp0, cfg, 0, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]Record, 16)
	for i := range recs {
		recs[i] = Record{Timestamp: 1, Value: make([]byte, 32)}
	}
	for l.LogEndOffset() < int64(n) {
		if _, err := l.AppendAsLeader(recs, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
	return l
}

// BenchmarkReadRandomOffset reads the batch holding a random offset: binary
// search over segments, then over the sparse index, then a header scan.
func BenchmarkReadRandomOffset(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			l := buildReadLog(b, n)
			leo := l.LogEndOffset()
			x := xorshift(88172645463325252)
			b.ReportMetric(float64(len(l.segments)), "segments")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				off := int64(x.next() % uint64(leo))
				data, err := l.Read(off, 1, leo)
				if err != nil || len(data) == 0 {
					b.Fatalf("read %d: %d bytes, %v", off, len(data), err)
				}
			}
		})
	}
}

// BenchmarkRecovery100MB recovers a 100 MB log from recovery point 0: every
// batch is read and CRC-checked and every index rebuilt.
func BenchmarkRecovery100MB(b *testing.B) {
	cfg := DefaultConfig()
	cfg.LogDirs = []string{"/data"}
	cfg.SegmentBytes = 32 << 20
	d, _ := sim.NewDisk(sim.DiskConfig{}, nil)
	l, err := OpenLog(d, "/data/t-0", tp0, cfg, 0, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]Record, 16)
	for i := range recs {
		recs[i] = Record{Timestamp: 1, Key: []byte("key"), Value: make([]byte, 1024)}
	}
	for l.Size() < 100<<20 {
		if _, err := l.AppendAsLeader(recs, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	size, leo := l.Size(), l.LogEndOffset()
	d.PowerLoss()
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l2, err := OpenLog(d, "/data/t-0", tp0, cfg, 0, 0, 0)
		if err != nil || l2.LogEndOffset() != leo || l2.Recovery().RecoveredSegments != 4 {
			b.Fatalf("recovery: %v LEO %d segments %d", err, l2.LogEndOffset(), l2.Recovery().RecoveredSegments)
		}
	}
}
