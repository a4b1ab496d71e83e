package storage

import (
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

func newDisk(t testing.TB, ch sim.Chooser) *sim.Disk {
	t.Helper()
	d, err := sim.NewDisk(sim.DiskConfig{}, ch)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// smallConfig is a configuration with tiny segments and index intervals,
// so that tests cross segment and index boundaries quickly.
func smallConfig() Config {
	c := DefaultConfig()
	c.LogDirs = []string{"/data"}
	c.SegmentBytes = 1024
	c.IndexIntervalBytes = 100
	return c
}

// tb is what helpers need from *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

var tp0 = TopicPartition{"t", 0}

func openTestLog(t testing.TB, fs FS, cfg Config, rp int64) *Log {
	t.Helper()
	l, err := OpenLog(fs, "/data/t-0", tp0, cfg, rp, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func val(i int64) []byte { return []byte("value-" + itoa(i)) }

// appendN appends n single-record batches as leader at epoch.
func appendN(t testing.TB, l *Log, n int, epoch int32, now sim.Time) {
	t.Helper()
	for i := 0; i < n; i++ {
		leo := l.LogEndOffset()
		if _, err := l.AppendAsLeader([]Record{{Timestamp: int64(now / sim.Time(sim.Millisecond)), Key: []byte("k" + itoa(leo%7)), Value: val(leo)}}, epoch, now); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll returns every record from offset from to the LEO, reading as a
// consumer would (one segment per Read).
func readAll(t tb, l *Log, from int64) []Record {
	t.Helper()
	var out []Record
	for off := from; off < l.LogEndOffset(); {
		data, err := l.Read(off, 1<<20, l.LogEndOffset())
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		bs, err := DecodeBatches(data)
		if err != nil {
			t.Fatalf("decode at %d: %v", off, err)
		}
		if len(bs) == 0 {
			t.Fatalf("read at %d (LEO %d) returned nothing", off, l.LogEndOffset())
		}
		for _, b := range bs {
			for _, r := range b.Records {
				if r.Offset >= off {
					out = append(out, r)
				}
			}
			off = b.NextOffset()
		}
	}
	return out
}
