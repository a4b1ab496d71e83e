package storage

import (
	"strings"
	"testing"
)

// mustPanic runs f and fails unless it panics with a message holding want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic, want one naming %q", want)
		}
		if msg, _ := r.(string); !strings.Contains(msg, want) {
			t.Fatalf("panic %v, want one naming %q", r, want)
		}
	}()
	f()
}

func newOffsetIndex(t *testing.T, base int64, max int) (*offsetIndex, FS) {
	d := newDisk(t, nil)
	x := &offsetIndex{file: "/d/0.index", base: base, maxEntries: max}
	if err := d.Create(x.file); err != nil {
		t.Fatal(err)
	}
	return x, d
}

func newTimeIndex(t *testing.T, base int64, max int) (*timeIndex, FS) {
	d := newDisk(t, nil)
	x := &timeIndex{file: "/d/0.timeindex", base: base, maxEntries: max}
	if err := d.Create(x.file); err != nil {
		t.Fatal(err)
	}
	return x, d
}

// TestOffsetIndexRefusesWhatKafkaRefuses: OffsetIndex.append throws on a
// full index, an offset not larger than the last entry's and an offset an
// entry cannot hold; each is a panic here, and the entry is not written.
func TestOffsetIndexRefusesWhatKafkaRefuses(t *testing.T) {
	x, fs := newOffsetIndex(t, 100, 3)
	for i, e := range []indexEntry{{100, 0}, {105, 40}} {
		if err := x.append(fs, e.offset, e.pos); err != nil {
			t.Fatal(err)
		}
		if len(x.entries) != i+1 {
			t.Fatalf("after appending %v: %d entries, want %d", e, len(x.entries), i+1)
		}
	}
	mustPanic(t, "no larger than the last offset appended (105) (InvalidOffsetException)", func() { _ = x.append(fs, 105, 80) })
	mustPanic(t, "no larger than the last offset appended (105) (InvalidOffsetException)", func() { _ = x.append(fs, 104, 80) })
	mustPanic(t, "IndexOffsetOverflowException", func() { _ = x.append(fs, 100+maxRelativeOffset+1, 80) })
	if err := x.append(fs, 100+maxRelativeOffset, 80); err != nil {
		t.Fatal(err)
	}
	mustPanic(t, "attempt to append to a full index (size = 3)", func() { _ = x.append(fs, 100+maxRelativeOffset+1, 90) })
	if data, _ := fs.ReadFile(x.file); len(data) != 3*IndexEntrySize {
		t.Fatalf("index file holds %d bytes, want the 3 accepted entries (%d)", len(data), 3*IndexEntrySize)
	}

	// An empty index takes any offset at or past its base, none below.
	y, fs := newOffsetIndex(t, 100, 3)
	mustPanic(t, "IndexOffsetOverflowException", func() { _ = y.append(fs, 99, 0) })
	if err := y.append(fs, 150, 0); err != nil || len(y.entries) != 1 {
		t.Fatalf("first entry past base: err %v, %d entries", err, len(y.entries))
	}
}

// TestTimeIndexSkipsOrRefusesAsKafka: TimeIndex.maybeAppend skips a
// timestamp equal to the last entry's (a closed or rolled segment writes
// its last entry again), and throws on a timestamp or an offset below the
// last entry's and on a full index, keeping the last slot for the entry of
// a roll (skipFullCheck).
func TestTimeIndexSkipsOrRefusesAsKafka(t *testing.T) {
	x, fs := newTimeIndex(t, 100, 3)
	if err := x.maybeAppend(fs, NoTimestamp, 100, false); err != nil || len(x.entries) != 0 {
		t.Fatalf("no timestamp (v0 messages): err %v, %d entries, want none", err, len(x.entries))
	}
	if err := x.maybeAppend(fs, 1000, 101, false); err != nil || len(x.entries) != 1 {
		t.Fatalf("first entry: err %v, %d entries", err, len(x.entries))
	}
	// Skipped, not refused: the same timestamp again, at the same or a
	// later offset.
	for _, off := range []int64{101, 104} {
		if err := x.maybeAppend(fs, 1000, off, false); err != nil || len(x.entries) != 1 {
			t.Fatalf("equal timestamp at offset %d: err %v, %d entries, want it skipped", off, err, len(x.entries))
		}
	}
	mustPanic(t, "timestamp (999) to slot 1 no larger than the last timestamp appended (1000) (IllegalStateException)",
		func() { _ = x.maybeAppend(fs, 999, 110, false) })
	mustPanic(t, "offset (100) to slot 1 no larger than the last offset appended (101) (InvalidOffsetException)",
		func() { _ = x.maybeAppend(fs, 2000, 100, false) })
	if err := x.maybeAppend(fs, 2000, 110, false); err != nil || len(x.entries) != 2 {
		t.Fatalf("second entry: err %v, %d entries", err, len(x.entries))
	}
	// 2 of 3 entries: full for an ordinary append, one slot left for a roll.
	mustPanic(t, "attempt to append to a full time index (size = 2)", func() { _ = x.maybeAppend(fs, 3000, 120, false) })
	if err := x.maybeAppend(fs, 3000, 120, true); err != nil || len(x.entries) != 3 {
		t.Fatalf("roll entry in the kept slot: err %v, %d entries", err, len(x.entries))
	}
	// Closing the rolled segment writes its last entry again: skipped.
	if err := x.maybeAppend(fs, 3000, 120, true); err != nil || len(x.entries) != 3 {
		t.Fatalf("last entry again: err %v, %d entries, want it skipped", err, len(x.entries))
	}
	mustPanic(t, "no slot left", func() { _ = x.maybeAppend(fs, 4000, 130, true) })
	if data, _ := fs.ReadFile(x.file); len(data) != 3*TimeIndexEntrySize {
		t.Fatalf("time index file holds %d bytes, want the 3 accepted entries (%d)", len(data), 3*TimeIndexEntrySize)
	}

	y, fs := newTimeIndex(t, 100, 3)
	mustPanic(t, "IndexOffsetOverflowException", func() { _ = y.maybeAppend(fs, 5, 100+maxRelativeOffset+1, false) })
}

// TestLogNeverMeetsAFullIndex: a log whose indexes hold few entries rolls
// its segment before either index refuses an append, as UnifiedLog.maybeRoll
// does, so ordinary appends, a roll and recovery never panic.
func TestLogNeverMeetsAFullIndex(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.IndexIntervalBytes = 0
	cfg.SegmentIndexBytes = 4 * TimeIndexEntrySize // 6 offset entries, 4 time entries
	d := newDisk(t, nil)
	l := openTestLog(t, d, cfg, 0)
	for i := int64(0); i < 40; i++ {
		// Rising timestamps, so the time index fills before the offset index.
		if _, err := l.AppendAsLeader([]Record{{Timestamp: 1000 + i, Value: val(i)}}, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	check := func(l *Log, when string) {
		t.Helper()
		segs := l.Segments()
		if len(segs) < 10 {
			t.Fatalf("%s: %d segments, want the small time index to roll them", when, len(segs))
		}
		for _, s := range segs {
			if s.IndexEntries > 6 || s.TimeIndexEntries > 4 {
				t.Fatalf("%s: segment %+v holds more entries than its index can", when, s)
			}
		}
		if got := readAll(t, l, 0); len(got) != 40 {
			t.Fatalf("%s: read %d records, want 40", when, len(got))
		}
	}
	check(l, "after appends")
	// Recovery from offset 0 rebuilds every index from the .log.
	check(openTestLog(t, d, cfg, 0), "after recovery")
}
