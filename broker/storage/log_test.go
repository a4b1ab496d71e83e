package storage

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kafkasim/kafkasim/sim"
)

func TestAppendReadAcrossSegments(t *testing.T) {
	d := newDisk(t, nil)
	l := openTestLog(t, d, smallConfig(), 0)
	appendN(t, l, 200, 0, 0)
	if l.LogEndOffset() != 200 || len(l.Segments()) < 5 {
		t.Fatalf("LEO %d, %d segments", l.LogEndOffset(), len(l.Segments()))
	}
	names, _ := d.List("/data/t-0")
	if names[0] != "00000000000000000000.index" || names[1] != "00000000000000000000.log" || names[2] != "00000000000000000000.timeindex" {
		t.Fatalf("files %v", names[:3])
	}
	for _, s := range l.Segments() {
		if s.Size > 1024 || s.IndexEntries == 0 {
			t.Fatalf("segment %+v: too large or no index entries", s)
		}
		sz, _ := d.Size(segmentFile("/data/t-0", s.BaseOffset, IndexFileSuffix))
		if sz != int64(s.IndexEntries)*IndexEntrySize {
			t.Fatalf("index file of %d bytes for %d entries", sz, s.IndexEntries)
		}
	}
	for off := int64(0); off < 200; off++ {
		data, err := l.Read(off, 1, 200)
		if err != nil {
			t.Fatal(err)
		}
		bs, err := DecodeBatches(data)
		if err != nil || len(bs) != 1 || bs[0].BaseOffset != off || !bytes.Equal(bs[0].Records[0].Value, val(off)) {
			t.Fatalf("read %d: %+v %v", off, bs, err)
		}
	}
	if got := readAll(t, l, 0); len(got) != 200 {
		t.Fatalf("read %d records", len(got))
	}
	if data, err := l.Read(200, 100, 200); err != nil || len(data) != 0 {
		t.Fatalf("read at LEO: %d bytes, %v", len(data), err)
	}
	for _, off := range []int64{-1, 201} {
		if _, err := l.Read(off, 100, 300); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("read at %d: %v", off, err)
		}
	}
}

func TestReadBounds(t *testing.T) {
	l := openTestLog(t, newDisk(t, nil), DefaultConfig(), 0)
	for i := 0; i < 10; i++ { // batches of 3 records: [0,2] [3,5] ...
		if _, err := l.AppendAsLeader([]Record{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}}, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	count := func(data []byte) (n int, first, last int64) {
		bs, err := DecodeBatches(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) == 0 {
			return 0, -1, -1
		}
		return len(bs), bs[0].BaseOffset, bs[len(bs)-1].LastOffset()
	}
	data, _ := l.Read(4, 1, 30)
	if n, first, _ := count(data); n != 1 || first != 3 {
		t.Fatalf("maxBytes 1 gives %d batches from %d; want the whole first batch (KIP-74)", n, first)
	}
	data, _ = l.Read(0, 1<<20, 9)
	if n, _, last := count(data); n != 3 || last != 8 {
		t.Fatalf("maxOffset 9: %d batches to %d, want 3 to 8", n, last)
	}
	data, _ = l.Read(0, 1<<20, 8)
	if n, _, last := count(data); n != 2 || last != 5 {
		t.Fatalf("maxOffset 8 (inside a batch): %d batches to %d, want 2 to 5", n, last)
	}
	data, _ = l.Read(9, 1<<20, 9)
	if n, _, _ := count(data); n != 0 {
		t.Fatalf("read at the bound returned %d batches", n)
	}
	one, _ := l.Read(0, 1, 30)
	data, _ = l.Read(0, 2*len(one)+5, 30)
	if n, _, _ := count(data); n != 2 {
		t.Fatalf("maxBytes for 2 batches gave %d", n)
	}
}

func TestFollowerAppendKeepsOffsetsAndEpochs(t *testing.T) {
	leader := openTestLog(t, newDisk(t, nil), smallConfig(), 0)
	appendN(t, leader, 10, 1, 0)
	appendN(t, leader, 10, 3, 0)
	follower := openTestLog(t, newDisk(t, nil), smallConfig(), 0)
	for off := int64(0); off < leader.LogEndOffset(); {
		data, err := leader.Read(off, 300, leader.LogEndOffset())
		if err != nil {
			t.Fatal(err)
		}
		info, err := follower.AppendAsFollower(data)
		if err != nil {
			t.Fatal(err)
		}
		off = info.LastOffset + 1
	}
	if follower.LogEndOffset() != 20 || !reflect.DeepEqual(follower.EpochCache().Entries(), []EpochEntry{{1, 0}, {3, 10}}) {
		t.Fatalf("follower LEO %d epochs %v", follower.LogEndOffset(), follower.EpochCache().Entries())
	}
	if e, o := follower.EndOffsetForEpoch(2); e != 1 || o != 10 {
		t.Fatalf("EndOffsetForEpoch(2) = %d, %d", e, o)
	}
	data, _ := leader.Read(5, 1, 20)
	if _, err := follower.AppendAsFollower(data); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("append below the LEO: %v", err)
	}
	b := NewBatch(20, []Record{{Value: []byte("x")}})
	enc := b.AppendTo(nil)
	enc[len(enc)-1] ^= 1
	_, err := follower.AppendAsFollower(enc)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Position != crcOffset || follower.LogEndOffset() != 20 {
		t.Fatalf("corrupt follower append: %v, LEO %d", err, follower.LogEndOffset())
	}
	// A batch after a gap (from a compacted leader) keeps its offsets.
	gap := NewBatch(25, []Record{{Value: []byte("y")}})
	if _, err := follower.AppendAsFollower(gap.AppendTo(nil)); err != nil || follower.LogEndOffset() != 26 {
		t.Fatalf("gap append: %v, LEO %d", err, follower.LogEndOffset())
	}
	if _, err := follower.Read(22, 100, 26); err != nil {
		t.Fatalf("read in the gap: %v", err)
	}
}

func TestTruncateTo(t *testing.T) {
	d := newDisk(t, nil)
	l := openTestLog(t, d, smallConfig(), 0)
	appendN(t, l, 50, 1, 0)
	appendN(t, l, 50, 2, 0)
	segs := len(l.Segments())
	if err := l.TruncateTo(40); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 40 || len(l.Segments()) >= segs {
		t.Fatalf("LEO %d, %d segments (from %d)", l.LogEndOffset(), len(l.Segments()), segs)
	}
	if !reflect.DeepEqual(l.EpochCache().Entries(), []EpochEntry{{1, 0}}) {
		t.Fatalf("epochs %v", l.EpochCache().Entries())
	}
	for _, s := range l.Segments() {
		if s.BaseOffset > 40 || !d.Exists(segmentFile("/data/t-0", s.BaseOffset, LogFileSuffix)) {
			t.Fatalf("segment %+v", s)
		}
	}
	if got := readAll(t, l, 0); len(got) != 40 || got[39].Offset != 39 {
		t.Fatalf("after truncation read %d records", len(got))
	}
	appendN(t, l, 5, 3, 0)
	if got := readAll(t, l, 38); len(got) != 7 || got[2].Offset != 40 {
		t.Fatalf("appends after truncation: %+v", got)
	}
	// Truncation is durable at once.
	d.PowerLoss()
	l2 := openTestLog(t, d, smallConfig(), 0)
	if l2.LogEndOffset() != 40 {
		t.Fatalf("after power loss LEO %d, want 40 (truncation synced, tail unsynced)", l2.LogEndOffset())
	}
	if err := l2.TruncateTo(0); err != nil || l2.LogEndOffset() != 0 || len(l2.EpochCache().Entries()) != 0 {
		t.Fatalf("truncate to 0: %v LEO %d", err, l2.LogEndOffset())
	}
	if err := l2.TruncateFullyAndStartAt(500); err != nil || l2.LogStartOffset() != 500 || l2.LogEndOffset() != 500 {
		t.Fatalf("truncate fully: %v", err)
	}
	appendN(t, l2, 3, 4, 0)
	if got := readAll(t, l2, 500); len(got) != 3 || got[0].Offset != 500 {
		t.Fatalf("after restart at 500: %+v", got)
	}
}

func TestRollByTime(t *testing.T) {
	cfg := DefaultConfig()
	cfg.LogDirs = []string{"/data"}
	cfg.SegmentMs = sim.Second
	l := openTestLog(t, newDisk(t, nil), cfg, 0)
	appendN(t, l, 3, 0, 0)
	appendN(t, l, 1, 0, sim.Time(500*sim.Millisecond))
	if len(l.Segments()) != 1 {
		t.Fatalf("rolled early: %d segments", len(l.Segments()))
	}
	appendN(t, l, 1, 0, sim.Time(1001*sim.Millisecond))
	if s := l.Segments(); len(s) != 2 || s[1].BaseOffset != 4 {
		t.Fatalf("segments %+v", s)
	}
	if l.RecoveryPoint() != 4 {
		t.Fatalf("roll flushes the rolled segment: recovery point %d", l.RecoveryPoint())
	}
}

func TestOffsetForTimestamp(t *testing.T) {
	l := openTestLog(t, newDisk(t, nil), smallConfig(), 0)
	for i := int64(0); i < 100; i++ {
		if _, err := l.AppendAsLeader([]Record{{Timestamp: 1000 + 10*i, Value: val(i)}}, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ ts, off, at int64 }{{0, 0, 1000}, {1000, 0, 1000}, {1001, 1, 1010}, {1555, 56, 1560}, {1990, 99, 1990}} {
		off, ts, ok, err := l.OffsetForTimestamp(tc.ts)
		if err != nil || !ok || off != tc.off || ts != tc.at {
			t.Errorf("offsetForTimestamp(%d) = %d@%d ok=%v err=%v, want %d@%d", tc.ts, off, ts, ok, err, tc.off, tc.at)
		}
	}
	if _, _, ok, _ := l.OffsetForTimestamp(5000); ok {
		t.Error("found a record after the last timestamp")
	}
	if off, _, _, _ := l.OffsetForTimestamp(LatestTimestamp); off != 100 {
		t.Errorf("latest = %d", off)
	}
}

func TestRetention(t *testing.T) {
	cfg := smallConfig()
	cfg.RetentionMs = sim.Ms(10000)
	l := openTestLog(t, newDisk(t, nil), cfg, 0)
	appendN(t, l, 60, 0, 0)
	appendN(t, l, 60, 1, sim.Time(20*sim.Second))
	n0 := len(l.Segments())
	if n, err := l.DeleteOldSegments(sim.Time(25*sim.Second), 0); err != nil || n != 0 {
		t.Fatalf("retention with HW 0 deleted %d (%v)", n, err)
	}
	n, err := l.DeleteOldSegments(sim.Time(25*sim.Second), l.LogEndOffset())
	if err != nil || n == 0 || l.LogStartOffset() != l.Segments()[0].BaseOffset || l.LogStartOffset() > 60 {
		t.Fatalf("time retention deleted %d (%v), log start %d", n, err, l.LogStartOffset())
	}
	if _, err := l.Read(0, 10, 200); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below the log start: %v", err)
	}
	if e, _ := l.EpochCache().EarliestEntry(); e.StartOffset != l.LogStartOffset() {
		t.Fatalf("epoch cache not truncated from start: %v", l.EpochCache().Entries())
	}
	// Size: keep at most ~2 segments, never the active one.
	l.cfg.RetentionMs, l.cfg.RetentionBytes = -1, 2048
	if _, err := l.DeleteOldSegments(sim.Time(1000*sim.Second), l.LogEndOffset()); err != nil || l.Size() > 2048+1024 || len(l.Segments()) >= n0 {
		t.Fatalf("size retention: %v, size %d", err, l.Size())
	}
	l.cfg.RetentionBytes = 0
	l.DeleteOldSegments(sim.Time(1000*sim.Second), l.LogEndOffset())
	if s := l.Segments(); len(s) != 1 || s[0].NextOffset != 120 {
		t.Fatalf("retention took the active segment: %+v", s)
	}
	// Log start offset breach.
	l2 := openTestLog(t, newDisk(t, nil), smallConfig(), 0)
	appendN(t, l2, 100, 0, 0)
	second := l2.Segments()[2].BaseOffset
	if err := l2.MaybeIncrementLogStartOffset(second + 1); err != nil {
		t.Fatal(err)
	}
	l2.DeleteOldSegments(0, 100)
	if l2.Segments()[0].BaseOffset != second || l2.LogStartOffset() != second+1 {
		t.Fatalf("log start breach: first segment %d, log start %d", l2.Segments()[0].BaseOffset, l2.LogStartOffset())
	}
	if err := l2.MaybeIncrementLogStartOffset(101); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("log start past the LEO: %v", err)
	}
}

func TestCompaction(t *testing.T) {
	cfg := smallConfig()
	cfg.CleanupPolicy = CleanupCompact
	cfg.DeleteRetentionMs = sim.Ms(1000)
	d := newDisk(t, nil)
	l := openTestLog(t, d, cfg, 0)
	if _, err := l.AppendAsLeader([]Record{{Value: []byte("no key")}}, 0, 0); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("keyless record on a compacted topic: %v", err)
	}
	want := map[string]int64{}
	for i := int64(0); i < 120; i++ {
		k := "k" + itoa(i%10)
		var v []byte
		if i%10 != 3 || i < 100 {
			v = val(i)
		}
		if _, err := l.AppendAsLeader([]Record{{Timestamp: i, Key: []byte(k), Value: v}, {Timestamp: i, Key: []byte("x" + k), Value: []byte("dup")}}, 0, 0); err != nil {
			t.Fatal(err)
		}
		want[k] = 2 * i
	}
	leo := l.LogEndOffset()
	st, err := l.Compact(sim.Time(10*sim.Second), leo)
	if err != nil || st.RecordsRemoved == 0 || st.BytesAfter >= st.BytesBefore {
		t.Fatalf("compaction: %+v %v", st, err)
	}
	if l.LogEndOffset() != leo {
		t.Fatalf("compaction moved the LEO")
	}
	active := l.Segments()[len(l.Segments())-1].BaseOffset
	seen := map[string]int{}
	for _, r := range readAll(t, l, 0) {
		k := string(r.Key)
		seen[k]++
		if r.Offset < active && seen[k] > 1 {
			t.Fatalf("key %s twice below the active segment", k)
		}
		if k == "k3" && r.Offset < active {
			t.Fatalf("expired tombstone kept at %d", r.Offset)
		}
	}
	for k, off := range want {
		if k == "k3" {
			continue
		}
		if off >= active {
			continue
		}
		data, err := l.Read(off, 1, leo)
		bs, _ := DecodeBatches(data)
		if err != nil || len(bs) == 0 || bs[0].Records[0].Offset != off {
			t.Fatalf("latest %s at %d lost: %+v %v", k, off, bs, err)
		}
	}
	// The compacted log survives a power loss and reopens identically.
	before := readAll(t, l, 0)
	l.Flush()
	d.PowerLoss()
	l2 := openTestLog(t, d, cfg, 0)
	if diff := cmp.Diff(before, readAll(t, l2, 0)); diff != "" {
		t.Fatalf("compacted log changed across a crash (-before +after):\n%s", diff)
	}
}

// TestCompactionSwapRecovery: a crash after the .swap rename completes the
// swap on the next open.
func TestCompactionSwapRecovery(t *testing.T) {
	cfg := smallConfig()
	cfg.CleanupPolicy = CleanupCompact
	d := newDisk(t, nil)
	l := openTestLog(t, d, cfg, 0)
	appendN(t, l, 60, 0, 0)
	l.Flush()
	s := l.segments[0]
	data, _ := d.ReadFile(s.log)
	first, n, _ := DecodeBatch(data)
	if err := rewriteFile(d, s.log+SwapFileSuffix, data[n:]); err != nil { // drop the first batch
		t.Fatal(err)
	}
	d.Sync(s.log + SwapFileSuffix)
	d.SyncDir("/data/t-0")
	d.PowerLoss()
	l2 := openTestLog(t, d, cfg, 0)
	got := readAll(t, l2, 0)
	if got[0].Offset == first.BaseOffset || d.Exists(s.log+SwapFileSuffix) || l2.LogEndOffset() != 60 {
		t.Fatalf("swap not completed: first offset %d", got[0].Offset)
	}
}

func TestFlushPolicy(t *testing.T) {
	cfg := smallConfig()
	cfg.FlushIntervalMessages = 10
	d := newDisk(t, nil)
	l := openTestLog(t, d, cfg, 0)
	appendN(t, l, 25, 0, 0)
	if l.RecoveryPoint() < 20 || l.UnflushedMessages() >= 10 {
		t.Fatalf("recovery point %d", l.RecoveryPoint())
	}
	rp := l.RecoveryPoint()
	d.PowerLoss()
	l2 := openTestLog(t, d, cfg, 0)
	if l2.LogEndOffset() != rp {
		t.Fatalf("after power loss LEO %d, want the synced point %d", l2.LogEndOffset(), rp)
	}
	cfg2 := smallConfig()
	cfg2.FlushIntervalMs = sim.Second
	l3 := openTestLog(t, newDisk(t, nil), cfg2, 0)
	appendN(t, l3, 3, 0, 0)
	l3.MaybeFlush(sim.Time(999 * sim.Millisecond))
	if l3.RecoveryPoint() != 0 {
		t.Fatal("flushed before log.flush.interval.ms")
	}
	l3.MaybeFlush(sim.Time(sim.Second))
	if l3.RecoveryPoint() != 3 {
		t.Fatal("did not flush after log.flush.interval.ms")
	}
}

func TestRecoveryTruncatesCorruptBatch(t *testing.T) {
	d := newDisk(t, nil)
	l := openTestLog(t, d, smallConfig(), 0)
	appendN(t, l, 100, 0, 0)
	l.Flush()
	segs := l.Segments()
	bad := segs[2]
	// Corrupt the third batch of the third segment.
	data, _ := d.ReadFile(segmentFile("/data/t-0", bad.BaseOffset, LogFileSuffix))
	_, n1, _ := DecodeBatch(data)
	_, n2, _ := DecodeBatch(data[n1:])
	pos := int64(n1 + n2)
	if err := d.Corrupt(segmentFile("/data/t-0", bad.BaseOffset, LogFileSuffix), pos+40, 3); err != nil {
		t.Fatal(err)
	}
	l2 := openTestLog(t, d, smallConfig(), 0)
	if l2.LogEndOffset() != bad.BaseOffset+2 || len(l2.Segments()) != 3 {
		t.Fatalf("LEO %d, segments %d; want %d, 3", l2.LogEndOffset(), len(l2.Segments()), bad.BaseOffset+2)
	}
	rec := l2.Recovery()
	var ce *CorruptError
	if len(rec.Problems) == 0 || !errors.As(rec.Problems[0], &ce) || ce.Position != pos+crcOffset || !strings.HasSuffix(ce.File, FilenamePrefixFromOffset(bad.BaseOffset)+".log") {
		t.Fatalf("problems %v", rec.Problems)
	}
	if len(readAll(t, l2, 0)) != int(bad.BaseOffset+2) {
		t.Fatal("recovered log does not read back")
	}
	// From the recovery point on only: a corrupt batch below it is not seen.
	l3 := openTestLog(t, d, smallConfig(), l2.LogEndOffset())
	if l3.Recovery().RecoveredSegments != 1 {
		t.Fatalf("recovered %d segments from the recovery point", l3.Recovery().RecoveredSegments)
	}
}

func TestRecoveryRebuildsBadIndex(t *testing.T) {
	d := newDisk(t, nil)
	l := openTestLog(t, d, smallConfig(), 0)
	appendN(t, l, 60, 0, 0)
	l.Flush()
	idx := segmentFile("/data/t-0", 0, IndexFileSuffix)
	// Point an entry past the end of the log.
	if err := d.WriteAt(idx, 4, []byte{0x7f, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	l2 := openTestLog(t, d, smallConfig(), 60)
	var ce *CorruptError
	if len(l2.Recovery().Problems) != 1 || !errors.As(l2.Recovery().Problems[0], &ce) || ce.File != idx || ce.Position != 0 || !strings.Contains(ce.Reason, "past the log") {
		t.Fatalf("problems %v", l2.Recovery().Problems)
	}
	if got := readAll(t, l2, 0); len(got) != 60 {
		t.Fatalf("read %d records after the index rebuild", len(got))
	}
}

func TestTornTailAfterPowerLoss(t *testing.T) {
	d, err := sim.NewDisk(sim.DiskConfig{TearProbability: 1}, sim.NewRandom(7))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		l := openTestLog(t, d, smallConfig(), 0)
		rp := l.LogEndOffset()
		l.Flush()
		appendN(t, l, 7, 0, 0)
		d.PowerLoss()
		l2 := openTestLog(t, d, smallConfig(), 0)
		if l2.LogEndOffset() < rp || l2.LogEndOffset() > rp+7 {
			t.Fatalf("round %d: LEO %d outside [%d, %d]", i, l2.LogEndOffset(), rp, rp+7)
		}
		for _, r := range readAll(t, l2, 0) {
			if !bytes.Equal(r.Value, val(r.Offset)) {
				t.Fatalf("round %d: record %d holds %q", i, r.Offset, r.Value)
			}
		}
	}
}

func TestLegacyFormatLog(t *testing.T) {
	cfg := smallConfig()
	cfg.MessageFormatVersion = "0.10.2"
	d := newDisk(t, nil)
	if err := writeFileAtomic(d, "/data/t-0/leader-epoch-checkpoint", []byte("0\n1\n0 0\n")); err != nil {
		t.Fatal(err)
	}
	l := openTestLog(t, d, cfg, 0)
	if l.EpochCache() != nil || d.Exists("/data/t-0/leader-epoch-checkpoint") {
		t.Fatal("a v1 log keeps a leader epoch cache")
	}
	if _, err := l.AppendAsLeader([]Record{{Timestamp: 5, Value: []byte("a")}, {Timestamp: 6, Value: []byte("b")}}, 3, 0); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 100, 3, 0)
	if e, o := l.EndOffsetForEpoch(3); e != UndefinedEpoch || o != UndefinedEpochOffset {
		t.Fatalf("a v1 log answers OffsetsForLeaderEpoch with %d, %d", e, o)
	}
	data, _ := l.Read(1, 1, 10)
	bs, err := DecodeBatches(data)
	if err != nil || len(bs) != 1 || bs[0].Magic != MagicV1 || bs[0].Records[0].Timestamp != 6 || string(bs[0].Records[0].Value) != "b" {
		t.Fatalf("v1 read: %+v %v", bs, err)
	}
	if _, err := l.AppendAsLeader([]Record{{Value: []byte("h"), Headers: []Header{{"a", nil}}}}, 0, 0); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("headers on v1: %v", err)
	}
	l.Flush()
	d.PowerLoss()
	l2 := openTestLog(t, d, cfg, 0)
	if l2.LogEndOffset() != 102 || len(readAll(t, l2, 0)) != 102 {
		t.Fatalf("v1 log recovered to %d", l2.LogEndOffset())
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.SegmentBytes = 10 }, "log.segment.bytes = 10: must be in [14, 2147483647]"},
		{func(c *Config) { c.RetentionBytes = -2 }, "log.retention.bytes = -2"},
		{func(c *Config) { c.FlushIntervalMessages = 0 }, "log.flush.interval.messages = 0"},
		{func(c *Config) { c.CleanupPolicy = "forever" }, `log.cleanup.policy = "forever"`},
		{func(c *Config) { c.MessageFormatVersion = "0.7.0" }, `log.message.format.version = "0.7.0"`},
		{func(c *Config) { c.LogDirs = []string{"/a", "/a/b"} }, "log.dirs"},
		{func(c *Config) { c.LogDirs = nil }, "log.dirs"},
		{func(c *Config) { c.SegmentMs = 0 }, "log.roll.ms = 0"},
	} {
		c := DefaultConfig()
		tc.mod(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
	for v, want := range map[string]int8{"0.8.2": 0, "0.9.0": 0, "0.10.0": 1, "0.10.2-IV0": 1, "0.11.0": 2, "2.8": 2, "3.0-IV1": 2} {
		if m, err := MagicForFormatVersion(v); err != nil || m != want {
			t.Errorf("format %s: %d %v", v, m, err)
		}
	}
}
