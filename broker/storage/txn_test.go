package storage

import (
	"encoding/hex"
	"errors"
	"reflect"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// txnBatch appends a transactional batch of n records from producer pid.
func txnBatch(t testing.TB, l *Log, pid int64, epoch int16, seq int32, n int) AppendInfo {
	t.Helper()
	var recs []Record
	for i := 0; i < n; i++ {
		recs = append(recs, Record{Timestamp: 5, Value: []byte("v")})
	}
	b := NewBatch(0, recs)
	b.Attributes = TransactionalFlagMask
	b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, epoch, seq
	raw := b.AppendTo(nil)
	if err := l.CheckProducerAppend(raw); err != nil {
		t.Fatalf("check: %v", err)
	}
	info, err := l.AppendRawAsLeader(raw, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func writeMarker(t testing.TB, l *Log, pid int64, epoch int16, coord int32, commit bool) int64 {
	t.Helper()
	info, err := l.AppendControlAsLeader(pid, epoch, coord, commit, 0, 0, 7*sim.Time(sim.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return info.FirstOffset
}

// The control batch of an ABORT is Kafka's bytes: attributes 0x30, no
// sequence, key {0, 0}, value {0, coordinator epoch}
// (MemoryRecords.withEndTransactionMarker; kafka-dump-log.sh shows
// "endTxnMarker: ABORT coordinatorEpoch: 3").
func TestControlBatchGoldenBytes(t *testing.T) {
	b := NewControlBatch(1000, 2, 3, false, 1234)
	b.BaseOffset, b.PartitionLeaderEpoch, b.Records[0].Offset = 42, 5, 42
	got := hex.EncodeToString(b.AppendTo(nil))
	want := "000000000000002a" + // base offset 42
		"00000042" + // length 66
		"00000005" + // partition leader epoch
		"02" + // magic
		"" // crc follows
	if got[:len(want)] != want {
		t.Fatalf("header %s, want prefix %s", got[:len(want)], want)
	}
	rest := got[len(want)+8:] // skip the CRC, checked below
	wantRest := "0030" +      // attributes: transactional | control
		"00000000" + // last offset delta
		"00000000000004d2" + "00000000000004d2" + // first and max timestamp
		"00000000000003e8" + // producer id 1000
		"0002" + // producer epoch
		"ffffffff" + // base sequence: none
		"00000001" + // one record
		"20" + "00" + "00" + "00" + // length 16, attributes, timestamp delta, offset delta
		"08" + "00000000" + // key: 4 bytes, version 0, type 0 ABORT
		"0c" + "000000000003" + // value: 6 bytes, version 0, coordinator epoch 3
		"00" // no headers
	if rest != wantRest {
		t.Fatalf("body\n got %s\nwant %s", rest, wantRest)
	}
	rb, _, err := DecodeBatch(b.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	m, ok, err := ReadEndTxnMarker(b.AppendTo(nil))
	if err != nil || !ok || m != (EndTxnMarker{Type: ControlAbort, CoordinatorEpoch: 3}) || rb.Attributes != 0x30 {
		t.Fatalf("decoded %+v %v %v, attrs %#x", m, ok, err, rb.Attributes)
	}
	if _, err := ParseEndTxnMarker([]byte{0, 0, 0, 2}, EndTxnMarkerValue(1)); err == nil {
		t.Fatal("control type 2 accepted as a marker")
	}
}

// Each .txnindex entry is 34 bytes: version 0, producer id, first offset,
// last offset, last stable offset (AbortedTxn.java).
func TestTxnIndexGoldenBytes(t *testing.T) {
	a := AbortedTxn{ProducerID: 7, FirstOffset: 1, LastOffset: 4, LastStableOffset: 5}
	got := hex.EncodeToString(a.AppendTo(nil))
	want := "0000" + "0000000000000007" + "0000000000000001" + "0000000000000004" + "0000000000000005"
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	back, err := DecodeAbortedTxns(a.AppendTo(a.AppendTo(nil)))
	if err != nil || len(back) != 2 || back[1] != a {
		t.Fatalf("decoded %+v %v", back, err)
	}
	if _, err := DecodeAbortedTxns(a.AppendTo(nil)[:33]); err == nil {
		t.Fatal("torn entry accepted")
	}
}

func TestProducerSnapshotRoundTrip(t *testing.T) {
	es := []ProducerStateEntry{
		{ProducerID: 1, Epoch: 0, LastSequence: 4, LastOffset: 9, OffsetDelta: 4, Timestamp: 100, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 5},
		{ProducerID: 2, Epoch: 3, LastSequence: -1, LastOffset: -1, Timestamp: 7, CoordinatorEpoch: 2, CurrentTxnFirstOffset: -1},
	}
	b := EncodeProducerSnapshot(es)
	if len(b) != 10+2*46 || hex.EncodeToString(b[:2]) != "0001" || hex.EncodeToString(b[6:10]) != "00000002" {
		t.Fatalf("snapshot %x", b)
	}
	back, err := DecodeProducerSnapshot(b)
	if err != nil || !reflect.DeepEqual(back, es) {
		t.Fatalf("decoded %+v %v", back, err)
	}
	b[20] ^= 1
	if _, err := DecodeProducerSnapshot(b); err == nil {
		t.Fatal("bad CRC accepted")
	}
}

// KIP-98: the first unstable offset is the earliest ongoing transaction's
// first offset; an ABORT adds an AbortedTxn whose LSO is the next ongoing
// transaction's first offset; the producer state fences lower epochs and
// coordinator epochs.
func TestTransactionsInTheLog(t *testing.T) {
	d := newDisk(t, nil)
	l := openTestLog(t, d, DefaultConfig(), 0)
	appendN(t, l, 2, 0, 0)      // 0, 1 plain
	txnBatch(t, l, 10, 0, 0, 2) // 2, 3 pid 10
	txnBatch(t, l, 11, 0, 0, 1) // 4 pid 11
	if f, ok := l.FirstUnstableOffset(); !ok || f != 2 {
		t.Fatalf("first unstable %d %v, want 2", f, ok)
	}
	abort := writeMarker(t, l, 10, 0, 1, false) // 5
	if f, _ := l.FirstUnstableOffset(); f != 4 {
		t.Fatalf("first unstable after abort %d, want 4", f)
	}
	want := []AbortedTxn{{ProducerID: 10, FirstOffset: 2, LastOffset: abort, LastStableOffset: 4}}
	if got := l.CollectAbortedTxns(0, 100); !reflect.DeepEqual(got, want) {
		t.Fatalf("aborted %+v, want %+v", got, want)
	}
	if got := l.CollectAbortedTxns(6, 100); len(got) != 0 {
		t.Fatalf("aborted from 6: %+v", got)
	}
	writeMarker(t, l, 11, 0, 1, true) // 6
	if _, ok := l.FirstUnstableOffset(); ok {
		t.Fatal("a transaction still ongoing")
	}
	data, _ := d.ReadFile("/data/t-0/00000000000000000000.txnindex")
	if len(data) != AbortedTxnEntrySize {
		t.Fatalf(".txnindex of %d bytes", len(data))
	}
	if _, err := l.AppendControlAsLeader(10, 0, 0, true, 0, 0, 0); !errors.Is(err, ErrTransactionCoordinatorFenced) {
		t.Fatalf("stale coordinator epoch: %v", err)
	}
	writeMarker(t, l, 10, 1, 1, false) // the coordinator fences pid 10 with epoch 1
	b := NewBatch(0, []Record{{Value: []byte("z")}})
	b.Attributes, b.ProducerID, b.ProducerEpoch, b.BaseSequence = TransactionalFlagMask, 10, 0, 2
	if err := l.CheckProducerAppend(b.AppendTo(nil)); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("old epoch: %v", err)
	}
	txnBatch(t, l, 12, 0, 0, 1)
	b.Attributes, b.ProducerID = 0, 12
	if err := l.CheckProducerAppend(b.AppendTo(nil)); !errors.Is(err, ErrInvalidTxnState) {
		t.Fatalf("plain batch in a transaction: %v", err)
	}
}

// The producer state survives a roll, a clean shutdown and a crash: a
// snapshot at each roll and at close, and a replay of the batches after
// it, which also re-adds the aborted transactions a crash lost.
func TestProducerStateRecovery(t *testing.T) {
	d := newDisk(t, nil)
	cfg := smallConfig()
	l := openTestLog(t, d, cfg, 0)
	appendN(t, l, 3, 0, 0)
	txnBatch(t, l, 10, 0, 0, 2)
	abort := writeMarker(t, l, 10, 0, 1, false)
	for len(l.Segments()) < 2 { // roll past the abort
		appendN(t, l, 1, 0, 0)
	}
	snap := l.Segments()[1].BaseOffset
	if !d.Exists(snapshotFile("/data/t-0", snap)) {
		t.Fatalf("no snapshot at the roll to %d", snap)
	}
	first := txnBatch(t, l, 11, 0, 0, 1).FirstOffset
	abort2 := writeMarker(t, l, 11, 0, 1, false)
	txnBatch(t, l, 12, 0, 0, 1)
	wantAborted := []AbortedTxn{{10, 3, abort, abort + 1}, {11, first, abort2, abort2 + 1}}
	if got := l.CollectAbortedTxns(0, l.LogEndOffset()); !reflect.DeepEqual(got, wantAborted) {
		t.Fatalf("aborted %+v, want %+v", got, wantAborted)
	}
	wantOngoing := l.LogEndOffset() - 1
	if err := l.Flush(); err != nil { // the log survives, not the .txnindex tail
		t.Fatal(err)
	}
	d.PowerLoss()
	// Lose the .txnindex past the snapshot too: the replay rebuilds it.
	if err := d.Remove(segmentFile("/data/t-0", l.Segments()[len(l.Segments())-1].BaseOffset, TxnIndexFileSuffix)); err != nil {
		t.Fatal(err)
	}
	l = openTestLog(t, d, cfg, 0)
	if f, ok := l.FirstUnstableOffset(); !ok || f != wantOngoing {
		t.Fatalf("after a crash: first unstable %d %v, want %d", f, ok, wantOngoing)
	}
	if got := l.CollectAbortedTxns(0, l.LogEndOffset()); !reflect.DeepEqual(got, wantAborted) {
		t.Fatalf("after a crash: aborted %+v, want %+v", got, wantAborted)
	}
	// Truncation below the second abort drops its entry and restores pid
	// 11's ongoing transaction.
	if err := l.TruncateTo(abort2); err != nil {
		t.Fatal(err)
	}
	if f, _ := l.FirstUnstableOffset(); f != first {
		t.Fatalf("after truncation: first unstable %d, want %d", f, first)
	}
	if got := l.CollectAbortedTxns(0, l.LogEndOffset()); !reflect.DeepEqual(got, wantAborted[:1]) {
		t.Fatalf("after truncation: aborted %+v", got)
	}
	if err := l.TruncateTo(snap - 1); err != nil {
		t.Fatal(err)
	}
	if d.Exists(snapshotFile("/data/t-0", snap)) {
		t.Fatal("snapshot past the truncation kept")
	}
	// A clean shutdown writes a snapshot at the LEO and the next open
	// loads it.
	m, err := OpenManager(d, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	ml, err := m.GetOrCreateLog(tp0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	txnBatch(t, ml, 20, 3, 0, 1)
	leo := ml.LogEndOffset()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !d.Exists(snapshotFile("/data/t-0", leo)) {
		t.Fatal("no snapshot at clean shutdown")
	}
	m, err = OpenManager(d, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	ml, _ = m.Log(tp0)
	if e, ok := ml.ProducerState(20); !ok || e.Epoch != 3 || e.CurrentTxnFirstOffset != leo-1 {
		t.Fatalf("pid 20 after clean restart: %+v %v", e, ok)
	}
}

// A log without transactions writes no snapshot and no .txnindex, so runs
// without transactions keep their files.
func TestNoTransactionsNoNewFiles(t *testing.T) {
	d := newDisk(t, nil)
	l := openTestLog(t, d, smallConfig(), 0)
	appendN(t, l, 100, 0, 0)
	names, _ := d.List("/data/t-0")
	for _, n := range names {
		if _, ok := offsetFromFilename(n, SnapshotFileSuffix); ok {
			t.Fatalf("snapshot %s written", n)
		}
		if _, ok := offsetFromFilename(n, TxnIndexFileSuffix); ok {
			t.Fatalf("txnindex %s written", n)
		}
	}
}

func snapshotFile(dir string, offset int64) string {
	return segmentFile(dir, offset, SnapshotFileSuffix)
}

// The cleaner keeps transactional batches and markers whole, so a replay
// after compaction still ends every transaction.
func TestCompactionKeepsTransactions(t *testing.T) {
	d := newDisk(t, nil)
	cfg := smallConfig()
	cfg.CleanupPolicy = CleanupCompact
	l := openTestLog(t, d, cfg, 0)
	b := NewBatch(0, []Record{{Key: []byte("k"), Value: []byte("txn")}})
	b.Attributes, b.ProducerID, b.ProducerEpoch, b.BaseSequence = TransactionalFlagMask, 10, 0, 0
	if _, err := l.AppendBatchAsLeader(&b, 0, 0); err != nil {
		t.Fatal(err)
	}
	writeMarker(t, l, 10, 0, 0, false)
	for len(l.Segments()) < 3 {
		if _, err := l.AppendAsLeader([]Record{{Key: []byte("k"), Value: []byte("plain")}}, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Compact(0, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	data, err := l.Read(0, 1<<20, l.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	bs, err := DecodeBatches(data)
	if err != nil || len(bs) < 2 || bs[0].Attributes != TransactionalFlagMask || bs[1].Attributes != TransactionalFlagMask|ControlFlagMask {
		t.Fatalf("after compaction: %d batches, %v", len(bs), err)
	}
	if got := l.CollectAbortedTxns(0, l.LogEndOffset()); len(got) != 1 {
		t.Fatalf("aborted after compaction: %+v", got)
	}
	d.PowerLoss()
	l = openTestLog(t, d, cfg, 0)
	if _, ok := l.FirstUnstableOffset(); ok {
		t.Fatal("a transaction left ongoing after compaction and recovery")
	}
}

// OpenLog loads the producer state from the snapshots it listed with the
// segments: a snapshot past the recovered LEO is deleted, the latest at or
// below it is loaded; with the log start offset past the LEO every
// snapshot goes with the truncation.
func TestOpenLogSnapshotsPastTheLEO(t *testing.T) {
	d := newDisk(t, nil)
	cfg := smallConfig()
	l := openTestLog(t, d, cfg, 0)
	appendN(t, l, 3, 0, 0)
	txnBatch(t, l, 10, 0, 0, 2)
	for len(l.Segments()) < 2 { // the roll takes a snapshot
		appendN(t, l, 1, 0, 0)
	}
	snap := l.Segments()[1].BaseOffset
	data, err := d.ReadFile(snapshotFile("/data/t-0", snap))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	leo := l.LogEndOffset()
	ahead := snapshotFile("/data/t-0", leo+5) // as if the log's tail were lost
	if err := rewriteFile(d, ahead, data); err != nil {
		t.Fatal(err)
	}
	l = openTestLog(t, d, cfg, 0)
	if d.Exists(ahead) || !d.Exists(snapshotFile("/data/t-0", snap)) {
		t.Fatalf("after the open: snapshot past the LEO kept %v, the one at %d kept %v", d.Exists(ahead), snap, d.Exists(snapshotFile("/data/t-0", snap)))
	}
	if e, ok := l.ProducerState(10); !ok || e.CurrentTxnFirstOffset != 3 {
		t.Fatalf("pid 10: %+v %v, want its ongoing transaction from offset 3", e, ok)
	}
	// A log start offset past the LEO empties the log and its snapshots.
	l, err = OpenLog(d, "/data/t-0", tp0, cfg, 0, leo+10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != leo+10 || d.Exists(snapshotFile("/data/t-0", snap)) {
		t.Fatalf("LEO %d (want %d), snapshot at %d kept %v", l.LogEndOffset(), leo+10, snap, d.Exists(snapshotFile("/data/t-0", snap)))
	}
	if _, ok := l.ProducerState(10); ok {
		t.Fatal("pid 10's state survived the log's truncation")
	}
}
