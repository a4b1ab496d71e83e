package storage

// This file is a partition's log (UnifiedLog / LocalLog): its segments, the
// log start offset, the log end offset (LEO), the recovery point (everything
// below it is synced), appends as leader and as follower, roll, flush and
// truncation. The storage knows nothing of the high watermark; the caller
// passes it where Kafka's log consults it (retention).
//
// Simplifications vs Kafka, and why:
//   - A follower's fetched bytes are appended one batch at a time (Kafka
//     appends the fetched chunk at once), so a roll may fall between two
//     batches of one fetch and the index may be a little denser.
//   - Truncation (TruncateTo, TruncateFullyAndStartAt) is synced at once: the
//     cut segment's files are synced and the directory too. Kafka leaves it
//     to the next flush, so a crash could bring truncated batches back; here
//     a log after a crash is always a prefix of what it held, which is what
//     the replication checkers reason about.
//   - The flush Kafka schedules right after a roll (flushing the rolled
//     segments and the directory) is done synchronously in the roll.
//   - No LogAppendTime: timestamps are the records' own (CreateTime).
//   - The producer state (producer_state.go) follows every append; the
//     broker validates a client's batch against it (CheckProducerAppend)
//     before appending, as Kafka's analyzeAndValidateProducerState does
//     inside the append.
//   - A truncation that falls inside a batch removes the whole batch and the
//     LEO becomes that batch's base offset (Kafka sets the LEO to the target
//     and leaves a gap). Replicas truncate at batch boundaries, so the cases
//     agree in practice.

import (
	"encoding/binary"
	"fmt"
	"math"
	"path"

	"github.com/kafkasim/kafkasim/sim"
)

// Log is one partition's log on a log directory.
// Invariant: segments is non-empty and sorted by base offset, each holding
// offsets below the next one's base; logStartOffset <= LEO; recoveryPoint <=
// LEO and everything below it is synced.
type Log struct {
	fs       FS
	dir      string
	tp       TopicPartition
	cfg      Config
	magic    int8
	segments []*segment

	logStartOffset int64
	recoveryPoint  int64
	lastFlush      sim.Time
	now            sim.Time // the latest time the caller passed
	epochs         *LeaderEpochFileCache
	recovery       RecoveryInfo
	producers      producerState

	buf   []byte    // scratch for encoding leader appends
	reads readArena // the buffers Read returns
	// check is the batch a compressed leader append is decoded into to
	// validate it, reused.
	check RecordBatch
}

// AppendInfo describes an append.
type AppendInfo struct {
	FirstOffset, LastOffset int64
	MaxTimestamp            int64
	NumMessages             int
	ValidBytes              int
}

// Dir returns the partition directory.
func (l *Log) Dir() string { return l.dir }

// TopicPartition returns the partition the log holds.
func (l *Log) TopicPartition() TopicPartition { return l.tp }

// Magic returns the record format leader appends use.
func (l *Log) Magic() int8 { return l.magic }

// LogEndOffset returns the LEO: the offset the next record will get.
func (l *Log) LogEndOffset() int64 { return l.active().next }

// LogStartOffset returns the first offset a read may ask for.
func (l *Log) LogStartOffset() int64 { return l.logStartOffset }

// RecoveryPoint returns the offset below which the log is synced.
func (l *Log) RecoveryPoint() int64 { return l.recoveryPoint }

// UnflushedMessages returns LEO - recovery point, as Kafka counts them.
func (l *Log) UnflushedMessages() int64 { return l.LogEndOffset() - l.recoveryPoint }

// EpochCache returns the leader epoch cache, or nil when the log's format
// is below v2 (a v0/v1 log records no leader epochs).
func (l *Log) EpochCache() *LeaderEpochFileCache { return l.epochs }

// EndOffsetForEpoch answers OffsetsForLeaderEpoch (KIP-101) for epoch; a
// log without epoch cache answers (UndefinedEpoch, UndefinedEpochOffset),
// which sends the follower back to truncating at its high watermark.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	if l.epochs == nil {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	return l.epochs.EndOffsetFor(epoch, l.LogEndOffset())
}

// Recovery returns what opening the log found and repaired.
func (l *Log) Recovery() RecoveryInfo { return l.recovery }

// Size returns the bytes in the log's segments.
func (l *Log) Size() int64 {
	var n int64
	for _, s := range l.segments {
		n += s.size
	}
	return n
}

// SegmentInfo describes a segment, for inspection and tests.
type SegmentInfo struct {
	BaseOffset, NextOffset, Size   int64
	IndexEntries, TimeIndexEntries int
}

// Segments describes the segments, oldest first.
func (l *Log) Segments() []SegmentInfo {
	out := make([]SegmentInfo, len(l.segments))
	for i, s := range l.segments {
		out[i] = SegmentInfo{s.base, s.next, s.size, len(s.index.entries), len(s.tindex.entries)}
	}
	return out
}

func (l *Log) active() *segment { return l.segments[len(l.segments)-1] }

func (l *Log) tick(now sim.Time) {
	if now > l.now {
		l.now = now
	}
}

// AppendAsLeader appends records as one batch stamped with the leader epoch,
// at offsets from the LEO on (it sets each record's Offset). With a format
// below v2 each record becomes one v0/v1 message and epoch is not recorded.
func (l *Log) AppendAsLeader(records []Record, epoch int32, now sim.Time) (AppendInfo, error) {
	b := NewBatch(0, records)
	return l.AppendBatchAsLeader(&b, epoch, now)
}

// AppendBatchAsLeader appends a producer's batch as leader: it assigns
// offsets from the LEO (setting BaseOffset and each record's Offset), stamps
// PartitionLeaderEpoch with epoch, recomputes the timestamps and keeps the
// producer fields.
func (l *Log) AppendBatchAsLeader(b *RecordBatch, epoch int32, now sim.Time) (AppendInfo, error) {
	l.tick(now)
	if len(b.Records) == 0 {
		return AppendInfo{}, fmt.Errorf("storage: append to %s: %w: no records", l.tp, ErrInvalidRecord)
	}
	if epoch < 0 && l.magic >= MagicV2 {
		return AppendInfo{}, fmt.Errorf("storage: append to %s: leader epoch %d: must be >= 0", l.tp, epoch)
	}
	leo := l.LogEndOffset()
	b.BaseOffset, b.PartitionLeaderEpoch, b.Magic = leo, epoch, MagicV2
	b.LastOffsetDelta = int32(len(b.Records) - 1)
	b.FirstTimestamp, b.MaxTimestamp = b.Records[0].Timestamp, NoTimestamp
	for i := range b.Records {
		r := &b.Records[i]
		r.Offset = leo + int64(i)
		b.MaxTimestamp = max(b.MaxTimestamp, r.Timestamp)
		if l.cfg.compact() && r.Key == nil {
			return AppendInfo{}, fmt.Errorf("storage: append to %s: %w: %w", l.tp, ErrInvalidRecord, ErrNoKey)
		}
		if l.magic < MagicV2 && len(r.Headers) > 0 {
			return AppendInfo{}, fmt.Errorf("storage: append to %s: %w: magic v%d does not support record headers", l.tp, ErrInvalidRecord, l.magic)
		}
	}
	info := AppendInfo{FirstOffset: leo, LastOffset: b.LastOffset(), MaxTimestamp: b.MaxTimestamp, NumMessages: len(b.Records)}
	if l.magic < MagicV2 {
		for i := range b.Records {
			l.buf = AppendLegacyTo(l.buf[:0], l.magic, &b.Records[i])
			if err := l.appendEncoded(l.buf); err != nil {
				return info, err
			}
			info.ValidBytes += len(l.buf)
		}
		return info, l.maybeFlushMessages()
	}
	l.buf = b.AppendTo(l.buf[:0])
	info.ValidBytes = len(l.buf)
	if err := l.appendEncoded(l.buf); err != nil {
		return info, err
	}
	return info, l.maybeFlushMessages()
}

func (l *Log) appendEncoded(data []byte) error {
	h, err := parseHeader(data)
	if err != nil {
		panic(fmt.Sprintf("storage: encoded batch does not parse: %v", err))
	}
	if h.size > l.cfg.SegmentBytes {
		return fmt.Errorf("storage: append to %s: %w: batch of %d bytes, log.segment.bytes is %d", l.tp, ErrRecordTooLarge, h.size, l.cfg.SegmentBytes)
	}
	return l.appendBatch(h, data)
}

// AppendAsFollower appends batches fetched from the leader as they are,
// keeping their offsets and leader epochs. data is one or more whole
// batches (any magic); every batch is checked (length, magic, CRC, offsets
// increasing from the LEO on) before any is written.
func (l *Log) AppendAsFollower(data []byte) (AppendInfo, error) {
	var in [4]batchHeader // most fetches bring a few batches: no allocation
	hs := in[:0]
	next := l.LogEndOffset()
	info := AppendInfo{FirstOffset: -1, LastOffset: -1, MaxTimestamp: NoTimestamp}
	for pos := int64(0); pos < int64(len(data)); {
		h, err := parseHeader(data[pos:])
		if err == nil && h.size > int64(len(data))-pos {
			err = corrupt(lengthOffset, "batch of %d bytes, only %d present", h.size, int64(len(data))-pos)
		}
		if err == nil {
			err = checkBatch(data[pos:pos+h.size], h)
		}
		if err != nil {
			return AppendInfo{}, fmt.Errorf("storage: follower append to %s: %w", l.tp, inFile(err, "", pos))
		}
		if h.baseOffset < next {
			return AppendInfo{}, fmt.Errorf("storage: follower append to %s: %w: batch at offset %d, but the log end offset is %d", l.tp, ErrInvalidRecord, h.baseOffset, next)
		}
		if h.size > l.cfg.SegmentBytes {
			return AppendInfo{}, fmt.Errorf("storage: follower append to %s: %w: batch of %d bytes, log.segment.bytes is %d", l.tp, ErrRecordTooLarge, h.size, l.cfg.SegmentBytes)
		}
		if info.FirstOffset < 0 {
			info.FirstOffset = h.baseOffset
		}
		info.LastOffset, info.MaxTimestamp = h.lastOffset, max(info.MaxTimestamp, h.maxTimestamp)
		info.NumMessages += int(h.count)
		info.ValidBytes += int(h.size)
		next = h.lastOffset + 1
		hs = append(hs, h)
		pos += h.size
	}
	var pos int64
	for _, h := range hs {
		if err := l.appendBatch(h, data[pos:pos+h.size]); err != nil {
			return info, err
		}
		pos += h.size
	}
	return info, l.maybeFlushMessages()
}

// appendBatch writes one checked batch: roll if needed, record its leader
// epoch (before the data, as Kafka does), append.
func (l *Log) appendBatch(h batchHeader, data []byte) error {
	if err := l.maybeRoll(h); err != nil {
		return err
	}
	if l.epochs != nil && h.magic >= MagicV2 && h.leaderEpoch >= 0 {
		if err := l.epochs.Assign(h.leaderEpoch, h.baseOffset); err != nil {
			return err
		}
	}
	if err := l.active().append(h, data, l.cfg.IndexIntervalBytes); err != nil {
		return err
	}
	return l.applyProducerState(h, data, l.active())
}

func (l *Log) maybeFlushMessages() error {
	if l.UnflushedMessages() >= l.cfg.FlushIntervalMessages {
		return l.Flush()
	}
	return nil
}

// maybeRoll rolls the active segment if the batch h would not fit, the
// segment is older than log.roll.ms, an index is full, or h's offsets are
// too far from the base offset for 32-bit relative offsets
// (LogSegment.shouldRoll).
func (l *Log) maybeRoll(h batchHeader) error {
	s := l.active()
	var waited int64 // ms
	if s.rollingBase >= 0 {
		waited = h.maxTimestamp - s.rollingBase
	} else {
		waited = l.now.Sub(s.created).Milliseconds()
	}
	tooFar := h.lastOffset-s.base > maxRelativeOffset
	if s.size == 0 && !tooFar {
		return nil
	}
	if s.size > l.cfg.SegmentBytes-h.size || waited > l.cfg.SegmentMs.Milliseconds() ||
		s.index.isFull() || s.tindex.isFull() || tooFar {
		return l.roll(max(l.LogEndOffset(), h.baseOffset))
	}
	return nil
}

// Roll starts a new segment at the LEO if the active one is not empty
// (UnifiedLog.roll), flushing the rolled segments.
func (l *Log) Roll() error {
	if l.active().size == 0 {
		return nil
	}
	return l.roll(l.LogEndOffset())
}

// roll starts a new active segment at base and flushes the rolled ones.
func (l *Log) roll(base int64) error {
	s := l.active()
	if s.size == 0 {
		// An empty active segment is replaced, as in Kafka's LocalLog.roll.
		if err := s.remove(); err != nil {
			return err
		}
		l.segments = l.segments[:len(l.segments)-1]
	} else if err := s.onBecomeInactive(); err != nil {
		return err
	}
	ns, err := createSegment(l.fs, l.dir, base, &l.cfg, l.now)
	if err != nil {
		return err
	}
	l.segments = append(l.segments, ns)
	if err := l.flushTo(base); err != nil {
		return err
	}
	return l.takeSnapshot()
}

// Flush syncs the log up to its end and advances the recovery point.
func (l *Log) Flush() error { return l.flushTo(l.LogEndOffset()) }

// MaybeFlush flushes when log.flush.interval.ms has passed since the last
// flush (Kafka's log flusher).
func (l *Log) MaybeFlush(now sim.Time) error {
	l.tick(now)
	if l.cfg.FlushIntervalMs == Never || l.UnflushedMessages() == 0 || now.Sub(l.lastFlush) < l.cfg.FlushIntervalMs {
		return nil
	}
	return l.Flush()
}

// flushTo syncs the segments holding offsets in [recovery point, offset)
// and the directory, and moves the recovery point to offset.
func (l *Log) flushTo(offset int64) error {
	if offset <= l.recoveryPoint {
		return nil
	}
	for i, s := range l.segments {
		if s.base >= offset {
			break
		}
		if i+1 < len(l.segments) && l.segments[i+1].base <= l.recoveryPoint {
			continue
		}
		if err := s.flush(); err != nil {
			return err
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return err
	}
	l.recoveryPoint = offset
	l.lastFlush = l.now
	return nil
}

// TruncateTo removes every batch holding an offset >= target, whole later
// segments included, and the epoch cache entries from the new LEO on. A
// target at or past the LEO is a no-op; a target below the first segment
// truncates the log fully and restarts it at target.
func (l *Log) TruncateTo(target int64) error {
	if target < 0 {
		return fmt.Errorf("storage: truncate %s to %d: the offset must be >= 0", l.tp, target)
	}
	if target >= l.LogEndOffset() {
		return nil
	}
	if target < l.segments[0].base {
		return l.TruncateFullyAndStartAt(target)
	}
	for len(l.segments) > 1 && l.active().base > target {
		if err := l.active().remove(); err != nil {
			return err
		}
		l.segments = l.segments[:len(l.segments)-1]
	}
	s := l.active()
	if _, err := s.truncateTo(target); err != nil {
		return err
	}
	if err := s.flush(); err != nil {
		return err
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return err
	}
	leo := l.LogEndOffset()
	l.recoveryPoint = min(l.recoveryPoint, leo)
	l.logStartOffset = min(l.logStartOffset, leo)
	if l.epochs != nil {
		if err := l.epochs.TruncateFromEnd(leo); err != nil {
			return err
		}
	}
	if !l.producers.txnSeen {
		return nil // see producer_state.go: nothing transactional to undo
	}
	return l.loadProducerState(false)
}

// TruncateFullyAndStartAt deletes every segment and restarts the log empty
// at offset (a follower whose fetch offset fell below the leader's log start).
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("storage: truncate %s fully and start at %d: the offset must be >= 0", l.tp, offset)
	}
	for _, s := range l.segments {
		if err := s.remove(); err != nil {
			return err
		}
	}
	s, err := createSegment(l.fs, l.dir, offset, &l.cfg, l.now)
	if err != nil {
		return err
	}
	l.segments = []*segment{s}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return err
	}
	l.logStartOffset, l.recoveryPoint = offset, offset
	if err := l.deleteSnapshotsAfter(-1); err != nil {
		return err
	}
	l.producers = newProducerState()
	if l.epochs != nil {
		return l.epochs.Clear()
	}
	return nil
}

// MaybeIncrementLogStartOffset moves the log start offset up to offset
// (DeleteRecords, or a follower following its leader's log start); segments
// wholly below it go at the next retention pass.
func (l *Log) MaybeIncrementLogStartOffset(offset int64) error {
	if offset <= l.logStartOffset {
		return nil
	}
	if offset > l.LogEndOffset() {
		return fmt.Errorf("storage: %s: %w: cannot move the log start offset to %d, past the log end offset %d", l.tp, ErrOffsetOutOfRange, offset, l.LogEndOffset())
	}
	l.logStartOffset = offset
	if l.epochs != nil {
		return l.epochs.TruncateFromStart(offset)
	}
	return nil
}

// Delete removes the log's files (the partition was deleted or moved).
func (l *Log) Delete() error {
	names, err := l.fs.List(l.dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := l.fs.Remove(path.Join(l.dir, n)); err != nil {
			return err
		}
	}
	l.segments = l.segments[:1]
	return l.fs.SyncDir(l.dir)
}

// noRecovery is the recovery point that skips recovery (a clean shutdown).
const noRecovery = math.MaxInt64

// AppendRawAsLeader appends one producer batch as leader from its wire
// bytes, as Kafka's LogValidator does for uncompressed v2 batches: it checks
// the header and the CRC, then sets the base offset and the partition
// leader epoch in a copy of the bytes (neither is covered by the CRC) and
// appends it. An uncompressed batch's records are not decoded; a
// compressed one's are, to refuse records that do not decompress (the
// batch is stored as produced all the same). A log in an older format, or a
// compacted one (which must check every key), takes the decoding path of
// AppendBatchAsLeader.
func (l *Log) AppendRawAsLeader(data []byte, epoch int32, now sim.Time) (AppendInfo, error) {
	h, err := parseHeader(data)
	if err == nil && h.size != int64(len(data)) {
		err = corrupt(lengthOffset, "batch of %d bytes in %d bytes of records: one whole batch expected", h.size, len(data))
	}
	if err == nil {
		err = checkBatch(data, h)
	}
	if err != nil {
		return AppendInfo{}, fmt.Errorf("storage: append to %s: %w: %w", l.tp, ErrInvalidRecord, err)
	}
	if l.magic < MagicV2 || h.magic < MagicV2 || l.cfg.compact() {
		b, _, err := DecodeBatch(data)
		if err != nil {
			return AppendInfo{}, fmt.Errorf("storage: append to %s: %w: %w", l.tp, ErrInvalidRecord, err)
		}
		return l.AppendBatchAsLeader(&b, epoch, now)
	}
	if h.count < 1 || int64(h.count) != h.lastOffset-h.baseOffset+1 {
		return AppendInfo{}, fmt.Errorf("storage: append to %s: %w: %d records but last offset delta %d", l.tp, ErrInvalidRecord, h.count, h.lastOffset-h.baseOffset)
	}
	if h.attrs&CompressionCodecMask != CodecNone {
		// NB: as LogValidator, the leader reads a compressed batch's
		// records before it stores the batch as produced: records that do
		// not decompress, or decompress to other than the header's count,
		// are refused, never stored for every reader to trip on.
		if _, err := DecodeBatchView(data, &l.check); err != nil {
			return AppendInfo{}, fmt.Errorf("storage: append to %s: %w: %w", l.tp, ErrInvalidRecord, err)
		}
	}
	if epoch < 0 {
		return AppendInfo{}, fmt.Errorf("storage: append to %s: leader epoch %d: must be >= 0", l.tp, epoch)
	}
	l.tick(now)
	leo := l.LogEndOffset()
	l.buf = append(l.buf[:0], data...)
	binary.BigEndian.PutUint64(l.buf, uint64(leo))
	StampLeaderEpoch(l.buf, epoch)
	info := AppendInfo{FirstOffset: leo, LastOffset: leo + int64(h.count) - 1, MaxTimestamp: h.maxTimestamp, NumMessages: int(h.count), ValidBytes: len(l.buf)}
	if err := l.appendEncoded(l.buf); err != nil {
		return info, err
	}
	return info, l.maybeFlushMessages()
}

// AppendControlAsLeader appends the transaction marker that ends producer
// pid's transaction (commit or abort), stamped with the leader epoch, after
// checking it against the producer state: a producer epoch below the
// producer's gives ErrInvalidProducerEpoch, a coordinator epoch below the
// last marker's ErrTransactionCoordinatorFenced. tv is the marker's
// transaction version as the leader checks it (0 for the legacy check;
// 2: the epoch must be above the producer's, see checkMarker). The
// marker's timestamp is now, in milliseconds.
func (l *Log) AppendControlAsLeader(pid int64, producerEpoch int16, coordinatorEpoch int32, commit bool, tv int16, epoch int32, now sim.Time) (AppendInfo, error) {
	if l.magic < MagicV2 {
		return AppendInfo{}, fmt.Errorf("storage: append a transaction marker to %s: %w: magic v%d has no control batches", l.tp, ErrInvalidRecord, l.magic)
	}
	l.tick(now)
	b := NewControlBatch(pid, producerEpoch, coordinatorEpoch, commit, int64(now)/int64(sim.Millisecond))
	l.buf = b.AppendTo(l.buf[:0])
	h, err := parseHeader(l.buf)
	if err == nil {
		err = l.producers.checkMarker(h, l.buf, tv)
	}
	if err != nil {
		return AppendInfo{}, fmt.Errorf("storage: append a transaction marker to %s: %w", l.tp, err)
	}
	return l.AppendBatchAsLeader(&b, epoch, now)
}
