package storage

// This file is the log's producer state for transactions
// (ProducerStateManager.java, ProducerAppendInfo.java, ProducerStateEntry):
// per producer id its epoch, last batch, coordinator epoch and the first
// offset of its ongoing transaction; the ongoing transactions ordered by
// first offset, which give the first unstable offset (the LSO is its
// minimum with the high watermark); and the `<offset>.snapshot` files in
// Kafka's format: version int16 = 1, crc32c uint32 of what follows, then
// an int32 count of entries {producerId int64, epoch int16, lastSequence
// int32, lastOffset int64, offsetDelta int32, timestamp int64,
// coordinatorEpoch int32, currentTxnFirstOffset int64}, big endian.
//
// The state is kept on every append, as leader or follower, so a new
// leader knows the ongoing transactions. A marker completes its producer's
// transaction; an ABORT also adds an AbortedTxn to the .txnindex of the
// segment holding the marker.
//
// Simplifications vs Kafka, and why:
//   - A snapshot is written (at a roll, at the new segment's base, and at a
//     clean shutdown) only once the log has held a transactional or control
//     batch: a log of plain and idempotent batches writes none, so runs
//     without transactions keep the disk layout (and the crash choices)
//     they had before transactions existed. Such a log rebuilds its state by
//     a scan of the log at open (Kafka loads the snapshot).
//   - No producer expiry (transactional.id.expiration.ms,
//     producer.id.expiration.ms): entries stay as long as the log.
//   - A truncation of a log that never held a transaction keeps the
//     entries of plain idempotent producers as they were (Kafka reloads
//     them from a snapshot): they decide nothing there, and a replay at
//     every follower truncation would cost a scan of the log.
//   - Snapshots entries are written sorted by producer id (Kafka writes its
//     hash map's order).
//   - A marker of a producer with no ongoing transaction is appended and
//     completes nothing (Kafka's completeTxn would refuse it).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
)

// SnapshotFileSuffix is the producer-state snapshot file suffix.
const SnapshotFileSuffix = ".snapshot"

const (
	producerSnapshotVersion   int16 = 1
	producerSnapshotEntrySize       = 46
	producerSnapshotHeader          = 2 + 4 + 4 // version, crc, entry count
)

// Errors of a client append refused by the producer state; the broker maps
// each to its Kafka error code.
var (
	// ErrInvalidProducerEpoch: the batch's or marker's producer epoch is
	// below the producer's (INVALID_PRODUCER_EPOCH, 2.7+ for produce).
	ErrInvalidProducerEpoch = errors.New("invalid producer epoch")
	// ErrTransactionCoordinatorFenced: a marker's coordinator epoch is
	// below the one that wrote the producer's last marker.
	ErrTransactionCoordinatorFenced = errors.New("transaction coordinator fenced")
	// ErrInvalidTxnState: a non-transactional batch from a producer whose
	// transaction is ongoing.
	ErrInvalidTxnState = errors.New("invalid transaction state")
)

// ProducerStateEntry is one producer's state, the fields of a snapshot entry.
type ProducerStateEntry struct {
	ProducerID            int64
	Epoch                 int16
	LastSequence          int32 // NoSequence when no data batch since the epoch began
	LastOffset            int64 // of the last data batch, -1 if none
	OffsetDelta           int32 // last offset - first offset of the last data batch
	Timestamp             int64 // of the last batch or marker
	CoordinatorEpoch      int32 // of the last marker, -1 if none
	CurrentTxnFirstOffset int64 // first offset of the ongoing transaction, -1 if none
}

// ongoingTxn is a transaction that has data but no marker yet.
type ongoingTxn struct {
	producerID  int64
	firstOffset int64
}

// producerState is the log's state of producers.
// Invariant: ongoing is sorted by firstOffset and holds exactly the
// entries with CurrentTxnFirstOffset >= 0.
type producerState struct {
	entries map[int64]*ProducerStateEntry
	ongoing []ongoingTxn
	// txnSeen is set once a transactional or control batch was applied or
	// a snapshot loaded: only then are snapshots written.
	txnSeen bool
}

func newProducerState() producerState {
	return producerState{entries: map[int64]*ProducerStateEntry{}}
}

func newEntry(pid int64) *ProducerStateEntry {
	return &ProducerStateEntry{ProducerID: pid, Epoch: NoProducerEpoch, LastSequence: NoSequence, LastOffset: -1,
		Timestamp: NoTimestamp, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}
}

// completedTxn is a transaction a marker ended.
type completedTxn struct {
	producerID              int64
	firstOffset, lastOffset int64
	aborted                 bool
}

// marker decodes the marker of the control batch data (header h).
func marker(h batchHeader, data []byte) (EndTxnMarker, bool, error) {
	if h.count == 0 {
		return EndTxnMarker{}, false, nil
	}
	return ReadEndTxnMarker(data)
}

// check validates a client's (leader) append against the state, as
// ProducerAppendInfo does for AppendOrigin.CLIENT; sequence numbers are
// the broker's (package server) to check.
func (ps *producerState) check(h batchHeader, data []byte) error { return ps.checkMarker(h, data, 0) }

// checkMarker is check with the transaction version a coordinator's
// WriteTxnMarkers gave a marker (0: unknown, the legacy check). A marker of
// transaction version 2 or more must carry an epoch strictly above the
// producer's (KAFKA-19446: the coordinator bumps the epoch before writing
// the markers, so a marker at the producer's epoch is a late one of an
// earlier transaction and must not end the ongoing one), except one at the
// producer's epoch while no transaction is ongoing: a retry of a marker
// already written, which is appended again (KAFKA-19999).
func (ps *producerState) checkMarker(h batchHeader, data []byte, tv int16) error {
	if h.magic < MagicV2 || h.producerID < 0 {
		return nil
	}
	e := ps.entries[h.producerID]
	if e == nil || !h.transactional() && !h.control() && e.CurrentTxnFirstOffset < 0 {
		return nil // an idempotent batch: the broker checks its epoch and sequence
	}
	if h.producerEpoch < e.Epoch {
		return fmt.Errorf("%w: producer %d epoch %d is below the last seen epoch %d", ErrInvalidProducerEpoch, h.producerID, h.producerEpoch, e.Epoch)
	}
	if h.control() && tv >= 2 && h.producerEpoch <= e.Epoch && !(h.producerEpoch == e.Epoch && e.CurrentTxnFirstOffset < 0) {
		return fmt.Errorf("%w: producer %d epoch %d is <= the last seen epoch %d (TV%d), with a transaction ongoing from offset %d",
			ErrInvalidProducerEpoch, h.producerID, h.producerEpoch, e.Epoch, tv, e.CurrentTxnFirstOffset)
	}
	if h.control() {
		m, ok, err := marker(h, data)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidRecord, err)
		}
		if ok && e.CoordinatorEpoch > m.CoordinatorEpoch {
			return fmt.Errorf("%w: marker of producer %d has coordinator epoch %d, the last was %d", ErrTransactionCoordinatorFenced, h.producerID, m.CoordinatorEpoch, e.CoordinatorEpoch)
		}
		return nil
	}
	if e.CurrentTxnFirstOffset >= 0 && !h.transactional() {
		return fmt.Errorf("%w: non-transactional batch from producer %d, whose transaction began at offset %d", ErrInvalidTxnState, h.producerID, e.CurrentTxnFirstOffset)
	}
	return nil
}

// apply updates the state with an appended batch and returns the
// transaction its marker completed, if any. It does not validate (a
// follower's batches were validated by the leader).
func (ps *producerState) apply(h batchHeader, data []byte) (*completedTxn, error) {
	if h.magic < MagicV2 || h.producerID < 0 {
		return nil, nil
	}
	if h.transactional() || h.control() {
		ps.txnSeen = true
	}
	e := ps.entries[h.producerID]
	if e == nil {
		e = newEntry(h.producerID)
		ps.entries[h.producerID] = e
	}
	if h.control() {
		m, ok, err := marker(h, data)
		if err != nil || !ok {
			return nil, err // an empty control batch: its transaction was cleaned
		}
		first := h.baseOffset
		if e.CurrentTxnFirstOffset >= 0 {
			first = e.CurrentTxnFirstOffset
		}
		if h.producerEpoch != e.Epoch {
			e.Epoch, e.LastSequence, e.LastOffset, e.OffsetDelta = h.producerEpoch, NoSequence, -1, 0
		}
		ps.removeOngoing(h.producerID)
		e.CurrentTxnFirstOffset, e.CoordinatorEpoch, e.Timestamp = -1, m.CoordinatorEpoch, h.maxTimestamp
		return &completedTxn{producerID: h.producerID, firstOffset: first, lastOffset: h.baseOffset, aborted: !m.Commit()}, nil
	}
	e.Epoch = h.producerEpoch
	e.LastSequence = NoSequence
	if h.baseSequence >= 0 {
		e.LastSequence = int32((int64(h.baseSequence) + int64(h.count) - 1) % (1 << 31))
	}
	e.LastOffset, e.OffsetDelta, e.Timestamp = h.lastOffset, int32(h.lastOffset-h.baseOffset), h.maxTimestamp
	if h.transactional() && e.CurrentTxnFirstOffset < 0 {
		e.CurrentTxnFirstOffset = h.baseOffset
		ps.addOngoing(ongoingTxn{h.producerID, h.baseOffset})
	}
	return nil, nil
}

func (ps *producerState) addOngoing(t ongoingTxn) {
	i := sort.Search(len(ps.ongoing), func(i int) bool { return ps.ongoing[i].firstOffset > t.firstOffset })
	ps.ongoing = slices.Insert(ps.ongoing, i, t)
}

func (ps *producerState) removeOngoing(pid int64) {
	ps.ongoing = slices.DeleteFunc(ps.ongoing, func(t ongoingTxn) bool { return t.producerID == pid })
}

// lastStableOffset is the LSO once c completes: the first offset of the
// earliest other ongoing transaction, else the offset after c's marker
// (ProducerStateManager.lastStableOffset).
func (ps *producerState) lastStableOffset(c *completedTxn) int64 {
	for _, t := range ps.ongoing {
		if t.producerID != c.producerID {
			return t.firstOffset
		}
	}
	return c.lastOffset + 1
}

// firstUnstableOffset returns the first offset of the earliest ongoing
// transaction.
func (ps *producerState) firstUnstableOffset() (int64, bool) {
	if len(ps.ongoing) == 0 {
		return 0, false
	}
	return ps.ongoing[0].firstOffset, true
}

// sortedEntries returns the entries sorted by producer id.
func (ps *producerState) sortedEntries() []ProducerStateEntry {
	out := make([]ProducerStateEntry, 0, len(ps.entries))
	for _, e := range ps.entries {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b ProducerStateEntry) int {
		switch {
		case a.ProducerID < b.ProducerID:
			return -1
		case a.ProducerID > b.ProducerID:
			return 1
		}
		return 0
	})
	return out
}

// EncodeProducerSnapshot encodes entries in the .snapshot format.
func EncodeProducerSnapshot(entries []ProducerStateEntry) []byte {
	b := make([]byte, 0, producerSnapshotHeader+len(entries)*producerSnapshotEntrySize)
	b = binary.BigEndian.AppendUint16(b, uint16(producerSnapshotVersion))
	b = append(b, 0, 0, 0, 0) // crc, patched below
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.ProducerID))
		b = binary.BigEndian.AppendUint16(b, uint16(e.Epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(e.LastSequence))
		b = binary.BigEndian.AppendUint64(b, uint64(e.LastOffset))
		b = binary.BigEndian.AppendUint32(b, uint32(e.OffsetDelta))
		b = binary.BigEndian.AppendUint64(b, uint64(e.Timestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(e.CoordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.CurrentTxnFirstOffset))
	}
	binary.BigEndian.PutUint32(b[2:], CRC32C(b[6:]))
	return b
}

// DecodeProducerSnapshot decodes a .snapshot file, checking its version,
// CRC and length.
func DecodeProducerSnapshot(b []byte) ([]ProducerStateEntry, error) {
	if len(b) < producerSnapshotHeader {
		return nil, corrupt(0, "%d bytes: a producer snapshot is at least %d", len(b), producerSnapshotHeader)
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != producerSnapshotVersion {
		return nil, corrupt(0, "producer snapshot version %d: only %d is known", v, producerSnapshotVersion)
	}
	if got, want := CRC32C(b[6:]), binary.BigEndian.Uint32(b[2:]); got != want {
		return nil, corrupt(2, "CRC-32C is %#08x, the header says %#08x", got, want)
	}
	n := int64(int32(binary.BigEndian.Uint32(b[6:])))
	if n < 0 || int64(len(b)-producerSnapshotHeader) != n*producerSnapshotEntrySize {
		return nil, corrupt(6, "%d entries in %d bytes of entries", n, len(b)-producerSnapshotHeader)
	}
	out := make([]ProducerStateEntry, 0, n)
	for pos := producerSnapshotHeader; pos < len(b); pos += producerSnapshotEntrySize {
		e := b[pos:]
		out = append(out, ProducerStateEntry{
			ProducerID:            int64(binary.BigEndian.Uint64(e)),
			Epoch:                 int16(binary.BigEndian.Uint16(e[8:])),
			LastSequence:          int32(binary.BigEndian.Uint32(e[10:])),
			LastOffset:            int64(binary.BigEndian.Uint64(e[14:])),
			OffsetDelta:           int32(binary.BigEndian.Uint32(e[22:])),
			Timestamp:             int64(binary.BigEndian.Uint64(e[26:])),
			CoordinatorEpoch:      int32(binary.BigEndian.Uint32(e[34:])),
			CurrentTxnFirstOffset: int64(binary.BigEndian.Uint64(e[38:])),
		})
	}
	return out, nil
}

// load replaces the state with a snapshot's entries.
func (ps *producerState) load(entries []ProducerStateEntry) {
	*ps = newProducerState()
	ps.txnSeen = true
	for _, e := range entries {
		e := e
		ps.entries[e.ProducerID] = &e
		if e.CurrentTxnFirstOffset >= 0 {
			ps.addOngoing(ongoingTxn{e.ProducerID, e.CurrentTxnFirstOffset})
		}
	}
}

// snapshotOffsets lists the offsets of the log's .snapshot files, ascending.
func (l *Log) snapshotOffsets() ([]int64, error) {
	names, err := listDir(l.fs, l.dir)
	if err != nil {
		return nil, err
	}
	return snapshotOffsetsIn(names), nil
}

// snapshotOffsetsIn returns the offsets of the snapshot files among a
// directory's names, ascending.
func snapshotOffsetsIn(names []string) []int64 {
	var out []int64
	for _, n := range names {
		if o, ok := offsetFromFilename(n, SnapshotFileSuffix); ok {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out
}

// takeSnapshot writes the producer state at the LEO to <LEO>.snapshot and
// syncs it (ProducerStateManager.takeSnapshot), if the log has held
// transactions.
func (l *Log) takeSnapshot() error {
	if !l.producers.txnSeen {
		return nil
	}
	f := segmentFile(l.dir, l.LogEndOffset(), SnapshotFileSuffix)
	if err := rewriteFile(l.fs, f, EncodeProducerSnapshot(l.producers.sortedEntries())); err != nil {
		return err
	}
	if err := l.fs.Sync(f); err != nil {
		return err
	}
	return l.fs.SyncDir(l.dir)
}

// deleteSnapshotsAfter removes the snapshots past offset.
func (l *Log) deleteSnapshotsAfter(offset int64) error {
	_, err := l.keepSnapshotsUpTo(offset)
	return err
}

// keepSnapshotsUpTo is deleteSnapshotsAfter, returning the offsets of the
// snapshots left, ascending (snapshotOffsets after it, without listing
// the directory again).
func (l *Log) keepSnapshotsUpTo(offset int64) ([]int64, error) {
	offs, err := l.snapshotOffsets()
	if err != nil {
		return nil, err
	}
	return l.keepSnapshotsIn(offs, offset)
}

// keepSnapshotsIn is keepSnapshotsUpTo with the snapshots' offsets, offs
// (ascending), already listed; it reuses offs.
func (l *Log) keepSnapshotsIn(offs []int64, offset int64) ([]int64, error) {
	kept := offs[:0]
	for _, o := range offs {
		if o > offset {
			if err := l.fs.Remove(segmentFile(l.dir, o, SnapshotFileSuffix)); err != nil {
				return nil, err
			}
			continue
		}
		kept = append(kept, o)
	}
	if len(kept) < len(offs) {
		return kept, l.fs.SyncDir(l.dir)
	}
	return kept, nil
}

// deleteSnapshotsBefore removes the snapshots below offset, the first
// segment's base after retention (ProducerStateManager.deleteSnapshotsBefore).
func (l *Log) deleteSnapshotsBefore(offset int64) error {
	offs, err := l.snapshotOffsets()
	if err != nil {
		return err
	}
	removed := false
	for _, o := range offs {
		if o < offset {
			if err := l.fs.Remove(segmentFile(l.dir, o, SnapshotFileSuffix)); err != nil {
				return err
			}
			removed = true
		}
	}
	if removed {
		return l.fs.SyncDir(l.dir)
	}
	return nil
}

// loadProducerState rebuilds the producer state at the LEO
// (ProducerStateManager.truncateAndReload + UnifiedLog.loadProducerState):
// snapshots past the LEO are deleted, the latest valid one at or below it
// is loaded and the batches after it are replayed, re-adding aborted
// transactions the .txnindex files lack. With skipScan (a clean shutdown
// and no snapshot) the state starts empty at the LEO.
func (l *Log) loadProducerState(skipScan bool) error {
	offs, err := l.snapshotOffsets()
	if err != nil {
		return err
	}
	return l.loadProducerStateFrom(skipScan, offs)
}

// loadProducerStateFrom is loadProducerState with the offsets of the
// snapshots on disk, offs (ascending), already listed: OpenLog has just
// listed the directory (a listing scans every file of the disk).
func (l *Log) loadProducerStateFrom(skipScan bool, offs []int64) error {
	leo := l.LogEndOffset()
	offs, err := l.keepSnapshotsIn(offs, leo)
	if err != nil {
		return err
	}
	l.producers = newProducerState()
	from := l.logStartOffset
	for i := len(offs) - 1; i >= 0; i-- {
		f := segmentFile(l.dir, offs[i], SnapshotFileSuffix)
		data, err := l.fs.ReadFile(f)
		if err != nil {
			return err
		}
		entries, derr := DecodeProducerSnapshot(data)
		if derr != nil {
			l.recovery.Problems = append(l.recovery.Problems, inFile(derr, f, 0))
			if err := l.fs.Remove(f); err != nil {
				return err
			}
			continue
		}
		l.producers.load(entries)
		from = max(offs[i], l.logStartOffset)
		break
	}
	if skipScan && len(offs) == 0 {
		return nil
	}
	return l.replayProducers(from)
}

// replayProducers applies every batch from offset from to the LEO.
func (l *Log) replayProducers(from int64) error {
	leo := l.LogEndOffset()
	for off := from; off < leo; {
		data, err := l.Read(off, 1<<20, leo)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			break
		}
		for len(data) > 0 {
			h, err := parseHeader(data)
			if err != nil {
				return err
			}
			if err := l.applyProducerState(h, data[:h.size], l.segments[l.floorSegment(h.baseOffset)]); err != nil {
				return err
			}
			data = data[h.size:]
			off = h.lastOffset + 1
		}
	}
	return nil
}

// applyProducerState applies one batch appended to (or found in) segment
// s, recording an aborted transaction in s's .txnindex.
func (l *Log) applyProducerState(h batchHeader, data []byte, s *segment) error {
	if h.magic < MagicV2 || h.producerID < 0 {
		return nil
	}
	c, err := l.producers.apply(h, data)
	if err != nil {
		return fmt.Errorf("storage: %s: marker at offset %d: %w", l.tp, h.baseOffset, err)
	}
	if c == nil {
		return nil
	}
	if c.aborted {
		if err := s.txn.append(l.fs, AbortedTxn{ProducerID: c.producerID, FirstOffset: c.firstOffset, LastOffset: c.lastOffset,
			LastStableOffset: l.producers.lastStableOffset(c)}); err != nil {
			return err
		}
	}
	return nil
}

// ProducerState returns the state of producer pid, if the log knows it.
func (l *Log) ProducerState(pid int64) (ProducerStateEntry, bool) {
	e, ok := l.producers.entries[pid]
	if !ok {
		return ProducerStateEntry{}, false
	}
	return *e, true
}

// ProducerStates returns every producer's state, sorted by producer id.
func (l *Log) ProducerStates() []ProducerStateEntry { return l.producers.sortedEntries() }

// FirstUnstableOffset returns the first offset of the earliest ongoing
// transaction; ok is false when none is ongoing. The LSO is its minimum
// with the high watermark.
func (l *Log) FirstUnstableOffset() (int64, bool) { return l.producers.firstUnstableOffset() }

// HasOngoingTxn reports whether producer pid has a transaction in the log
// without a marker yet.
func (l *Log) HasOngoingTxn(pid int64) bool {
	e := l.producers.entries[pid]
	return e != nil && e.CurrentTxnFirstOffset >= 0
}

// CheckProducerAppend validates a client batch (one whole v2 batch) as the
// leader's producer state would before appending it: it returns an error
// wrapping ErrInvalidProducerEpoch, ErrTransactionCoordinatorFenced or
// ErrInvalidTxnState, or nil.
func (l *Log) CheckProducerAppend(batch []byte) error {
	h, err := parseHeader(batch)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRecord, err)
	}
	return l.producers.check(h, batch)
}

// CollectAbortedTxns returns the aborted transactions overlapping
// [fetchOffset, upperBound), from the .txnindex of the segment holding
// fetchOffset and the later ones (UnifiedLog.collectAbortedTransactions).
func (l *Log) CollectAbortedTxns(fetchOffset, upperBound int64) []AbortedTxn {
	var out []AbortedTxn
	for _, s := range l.segments[l.floorSegment(fetchOffset):] {
		var done bool
		if out, done = s.txn.collect(out, fetchOffset, upperBound); done {
			break
		}
	}
	return out
}
