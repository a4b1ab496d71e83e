package storage

// This file opens a partition log after a start or a crash (LogLoader.java,
// LogSegment.recover): it deletes leftovers (.tmp, .cleaned, .deleted,
// orphan indexes), completes an interrupted compaction swap, loads the
// segments below the recovery point with their indexes, and recovers every
// segment from the one holding the recovery point on: each batch is checked
// (length, magic, CRC, increasing offsets), the segment is cut at the first
// invalid or torn batch, later segments are deleted, and the indexes are
// rebuilt. The epoch cache is then reconciled with the log's start and end.
// The producer state is then loaded from the latest snapshot at or below
// the LEO and the batches after it replayed (producer_state.go), which
// re-adds aborted transactions a crash took from the .txnindex files.
// Simplifications vs Kafka: an index that fails
// its check below the recovery point is rebuilt (Kafka does the same after
// sanityCheck) and reported in RecoveryInfo. Unlike Kafka, the repairs are
// synced before the log is used: Kafka leaves a recovered segment's
// truncation to a later flush, which never comes if the recovery point is
// already past the segment, so a second crash brings the torn bytes back
// below the recovery point (found by this package's model test).

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/internal/cleanpath"
	"github.com/kafkasim/kafkasim/sim"
)

// RecoveryInfo reports what opening a log found and repaired.
type RecoveryInfo struct {
	// RecoveredSegments counts the segments scanned batch by batch.
	RecoveredSegments int
	// TruncatedBytes counts the bytes cut from the log (invalid or torn
	// batches, and the segments deleted after them).
	TruncatedBytes int64
	// Problems lists what was wrong, each naming the file and position.
	Problems []error
}

// OpenLog opens (or creates) the log of partition tp in directory dir.
// recoveryPoint is the offset below which the log was synced (from
// recovery-point-offset-checkpoint; math.MaxInt64 after a clean shutdown,
// 0 to recover everything); logStartOffset comes from
// log-start-offset-checkpoint (0 if absent).
func OpenLog(fs FS, dir string, tp TopicPartition, cfg Config, recoveryPoint, logStartOffset int64, now sim.Time) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return openLog(fs, dir, tp, cfg, recoveryPoint, logStartOffset, now)
}

// openLog is OpenLog with cfg validated: the Manager opens every log with
// the configuration it validated when it opened (a broker start opens each
// of its logs, and an exploration starts brokers thousands of times).
func openLog(fs FS, dir string, tp TopicPartition, cfg Config, recoveryPoint, logStartOffset int64, now sim.Time) (*Log, error) {
	magic, _ := MagicForFormatVersion(cfg.MessageFormatVersion) // checked by Validate
	fs = withMutants(fs, cfg.Mutants)
	l := &Log{fs: fs, dir: dir, tp: tp, cfg: cfg, magic: magic, now: now, lastFlush: now, producers: newProducerState()}
	names, fresh, err := l.cleanLeftovers()
	if err != nil {
		return nil, err
	}
	if !fresh {
		if names, err = listDir(fs, dir); err != nil {
			return nil, err
		}
	}
	// NB: nothing below writes a snapshot, and only TruncateFullyAndStartAt
	// removes any (every one): the listing's snapshots are those on disk
	// when the producer state is loaded.
	snapshots := snapshotOffsetsIn(names)
	var bases []int64
	for _, n := range names {
		if b, ok := offsetFromFilename(n, LogFileSuffix); ok {
			bases = append(bases, b)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	for _, b := range bases {
		s := segmentStruct(fs, dir, b, &l.cfg, now)
		if s.size, err = fs.Size(s.log); err != nil {
			return nil, err
		}
		l.segments = append(l.segments, s)
	}
	if err := l.loadSegments(recoveryPoint); err != nil {
		return nil, err
	}
	if len(l.segments) == 0 {
		s, err := createSegment(fs, dir, max(logStartOffset, 0), &l.cfg, now)
		if err != nil {
			return nil, err
		}
		l.segments = []*segment{s}
		if err := fs.SyncDir(dir); err != nil {
			return nil, err
		}
	}
	leo := l.LogEndOffset()
	l.logStartOffset = max(logStartOffset, l.segments[0].base)
	l.recoveryPoint = min(max(recoveryPoint, 0), leo)
	epochFile := cleanpath.Join(dir, LeaderEpochFile)
	if magic >= MagicV2 {
		if l.epochs, err = NewLeaderEpochFileCache(fs, epochFile); err != nil {
			return nil, err
		}
	} else if fs.Exists(epochFile) {
		if err := fs.Remove(epochFile); err != nil {
			return nil, err
		}
	}
	if l.logStartOffset > leo {
		l.recovery.Problems = append(l.recovery.Problems, fmt.Errorf("storage: %s: log start offset %d is past the recovered log end offset %d: restarting the log empty there", dir, l.logStartOffset, leo))
		if err := l.TruncateFullyAndStartAt(l.logStartOffset); err != nil {
			return nil, err
		}
		snapshots = nil
	}
	if l.epochs != nil {
		if err := l.epochs.TruncateFromEnd(l.LogEndOffset()); err != nil {
			return nil, err
		}
		if err := l.epochs.TruncateFromStart(l.logStartOffset); err != nil {
			return nil, err
		}
	}
	if err := l.loadProducerStateFrom(recoveryPoint == noRecovery, snapshots); err != nil {
		return nil, err
	}
	return l, nil
}

func listDir(fs FS, dir string) ([]string, error) {
	if !fs.IsDir(dir) {
		return nil, nil
	}
	return fs.List(dir)
}

// cleanLeftovers deletes temporary files and completes interrupted swaps.
// It returns the directory's names after, fresh when it changed nothing
// since it listed them (the caller lists again otherwise): a directory
// listing scans every file of the disk, and most opens find nothing to
// clean.
func (l *Log) cleanLeftovers() (names []string, fresh bool, err error) {
	names, err = listDir(l.fs, l.dir)
	if err != nil {
		return nil, false, err
	}
	changed := false
	for _, n := range names {
		if !strings.HasSuffix(n, TmpFileSuffix) && !strings.HasSuffix(n, CleanedFileSuffix) && !strings.HasSuffix(n, DeletedFileSuffix) && !strings.HasSuffix(n, SwapFileSuffix) {
			continue // the common case: no leftover, and no path to build
		}
		full := cleanpath.Join(l.dir, n)
		switch {
		case strings.HasSuffix(n, TmpFileSuffix), strings.HasSuffix(n, CleanedFileSuffix), strings.HasSuffix(n, DeletedFileSuffix):
			changed = true
			if err := l.fs.Remove(full); err != nil {
				return nil, false, err
			}
		case strings.HasSuffix(n, LogFileSuffix+SwapFileSuffix):
			changed = true
			// The .swap was complete (synced) before its rename: it replaces
			// the segment it was cleaned from.
			target := strings.TrimSuffix(full, SwapFileSuffix)
			base := strings.TrimSuffix(target, LogFileSuffix)
			for _, f := range []string{target, base + IndexFileSuffix, base + TimeIndexFileSuffix} { // the .txnindex stays
				if l.fs.Exists(f) {
					if err := l.fs.Remove(f); err != nil {
						return nil, false, err
					}
				}
			}
			if err := l.fs.Rename(full, target); err != nil {
				return nil, false, err
			}
		case strings.HasSuffix(n, SwapFileSuffix):
			changed = true
			if err := l.fs.Remove(full); err != nil {
				return nil, false, err
			}
		}
	}
	if changed {
		if names, err = listDir(l.fs, l.dir); err != nil {
			return nil, false, err
		}
	}
	fresh = true
	for _, n := range names {
		for _, suf := range []string{IndexFileSuffix, TimeIndexFileSuffix, TxnIndexFileSuffix} {
			if b, ok := offsetFromFilename(n, suf); ok && !l.fs.Exists(segmentFile(l.dir, b, LogFileSuffix)) {
				fresh = false
				if err := l.fs.Remove(cleanpath.Join(l.dir, n)); err != nil {
					return nil, false, err
				}
			}
		}
	}
	return names, fresh, l.fs.SyncDir(l.dir)
}

// loadSegments loads the segments below the one holding recoveryPoint and
// recovers that one and every later one.
func (l *Log) loadSegments(recoveryPoint int64) error {
	first := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].base > recoveryPoint }) - 1
	first = max(first, 0)
	if recoveryPoint == noRecovery { // a clean shutdown: nothing to recover
		first = len(l.segments)
	}
	var scratch []byte
	for i := 0; i < len(l.segments); i++ {
		s := l.segments[i]
		if i >= first && i == len(l.segments)-1 && l.cfg.Mutants.On(mutant.RecoverySkipsLastSegment) {
			return s.loadUnrecovered()
		}
		if i < first {
			err := s.load()
			if err == nil {
				continue
			}
			l.recovery.Problems = append(l.recovery.Problems, err)
		}
		l.recovery.RecoveredSegments++
		cut, err := s.recover(l.cfg.IndexIntervalBytes, &scratch)
		if err != nil {
			return err
		}
		// NB: the repair is synced at once. The recovery point may already
		// lie past this segment, so no later flush would sync it, and a
		// second crash would bring the torn bytes back below it.
		if err := s.flush(); err != nil {
			return err
		}
		if cut == nil {
			continue
		}
		l.recovery.Problems = append(l.recovery.Problems, cut)
		l.recovery.TruncatedBytes += cut.truncated
		for _, later := range l.segments[i+1:] {
			l.recovery.TruncatedBytes += later.size
			l.recovery.Problems = append(l.recovery.Problems, fmt.Errorf("storage: deleted segment %s after the truncation of %s", later.log, s.log))
			if err := later.remove(); err != nil {
				return err
			}
		}
		l.segments = l.segments[:i+1]
		if err := l.fs.SyncDir(l.dir); err != nil {
			return err
		}
		break
	}
	return nil
}

// load reads a synced segment's indexes and the tail of its .log, checking
// them; an error means the segment must be recovered.
func (s *segment) load() error {
	if !s.fs.Exists(s.index.file) || !s.fs.Exists(s.tindex.file) {
		return fmt.Errorf("storage: %s: missing index files", s.log)
	}
	if err := s.index.load(s.fs, s.size); err != nil {
		return err
	}
	if err := s.txn.load(s.fs); err != nil {
		return err
	}
	if err := s.scanTail(); err != nil {
		return err
	}
	if err := s.tindex.load(s.fs, s.next); err != nil {
		return err
	}
	if err := s.scanTail(); err != nil { // with the time index loaded
		return err
	}
	if s.size > 0 {
		h, err := s.readHeader(0)
		if err != nil {
			return err
		}
		s.rollingBase = h.maxTimestamp
	}
	s.bytesSinceIndex = s.size
	if n := len(s.index.entries); n > 0 {
		s.bytesSinceIndex = s.size - s.index.entries[n-1].pos
	}
	return nil
}

// recover scans the whole .log batch by batch, rebuilding the indexes. It
// cuts the .log at the first invalid batch and returns the problem found
// (nil if the segment was valid); the error return is for I/O.
func (s *segment) recover(indexInterval int64, scratch *[]byte) (*CorruptError, error) {
	s.index.entries = s.index.entries[:0]
	s.tindex.entries = s.tindex.entries[:0]
	size := s.size
	s.size, s.next, s.bytesSinceIndex = 0, s.base, 0
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.rollingBase = NoTimestamp, s.base, NoTimestamp
	for _, f := range []string{s.index.file, s.tindex.file} {
		if err := rewriteFile(s.fs, f, nil); err != nil {
			return nil, err
		}
	}
	var cut *CorruptError
	for pos := int64(0); pos < size; {
		s.size = size // readHeader checks against the file's size
		h, err := s.readHeader(pos)
		if err == nil && h.baseOffset < s.next {
			err = &CorruptError{File: s.log, Position: pos, Reason: fmt.Sprintf("batch base offset %d is below the previous batch's next offset %d", h.baseOffset, s.next)}
		}
		if err == nil && h.lastOffset-s.base > maxRelativeOffset {
			err = &CorruptError{File: s.log, Position: pos, Reason: fmt.Sprintf("offset %d is too far from the base offset %d", h.lastOffset, s.base)}
		}
		if err == nil {
			if int64(cap(*scratch)) < h.size {
				*scratch = make([]byte, h.size)
			}
			b := (*scratch)[:h.size]
			if _, err = s.fs.ReadAt(s.log, pos, b); err == nil {
				err = inFile(checkBatch(b, h), s.log, pos)
			}
		}
		if err != nil {
			ce, ok := err.(*CorruptError)
			if !ok {
				return nil, err
			}
			cut = ce
			cut.truncated = size - pos
			s.size = pos
			break
		}
		s.size = pos
		if err := s.appended(h, pos, indexInterval); err != nil {
			return nil, err
		}
		s.size = pos + h.size
		pos += h.size
	}
	if s.size < size {
		if err := s.fs.Truncate(s.log, s.size); err != nil {
			return nil, err
		}
	}
	// The aborted transactions whose markers survived stay; the producer
	// state's replay re-adds the ones a crash lost.
	if err := s.txn.load(s.fs); err != nil {
		return nil, err
	}
	if err := s.txn.truncateTo(s.fs, s.next); err != nil {
		return nil, err
	}
	if err := s.tindex.maybeAppend(s.fs, s.maxTimestamp, s.offsetOfMaxTimestamp, true); err != nil {
		return nil, err
	}
	return cut, nil
}

// loadUnrecovered is the planted bug mutant.RecoverySkipsLastSegment (NOT
// Kafka): the active segment after an unclean shutdown is opened as if it
// had been flushed, without the scan that checks each batch and rebuilds
// the indexes. Its indexes are taken as the disk kept them, checked only
// for their shape (as Kafka's sanityCheck), its end is read from the last
// index entry on as far as whole batch headers go (as
// LogSegment.readNextOffset), and whatever follows — a torn batch — stays
// in the file, where the next append lands after it.
func (s *segment) loadUnrecovered() error {
	if err := s.index.load(s.fs, math.MaxInt64); err != nil || !s.fs.Exists(s.index.file) {
		s.index.entries = s.index.entries[:0]
		if err := s.index.rewrite(s.fs); err != nil {
			return err
		}
	}
	if err := s.tindex.load(s.fs, math.MaxInt64); err != nil || !s.fs.Exists(s.tindex.file) {
		s.tindex.entries = s.tindex.entries[:0]
		if err := s.tindex.rewrite(s.fs); err != nil {
			return err
		}
	}
	if err := s.txn.load(s.fs); err != nil {
		return err
	}
	last := indexEntry{s.base, 0}
	if n := len(s.index.entries); n > 0 {
		last = s.index.entries[n-1]
	}
	s.next = s.base
	s.maxTimestamp, s.offsetOfMaxTimestamp = s.tindex.last().ts, s.tindex.last().offset
	if last.pos > 0 {
		s.next = last.offset + 1
	}
	end := last.pos
	for pos := last.pos; pos < s.size; {
		h, err := s.readHeader(pos)
		if err != nil {
			break // a torn batch: left in place
		}
		if h.maxTimestamp > s.maxTimestamp {
			s.maxTimestamp, s.offsetOfMaxTimestamp = h.maxTimestamp, h.lastOffset
		}
		s.next = h.lastOffset + 1
		pos += h.size
		end = pos
	}
	if s.size > 0 {
		if h, err := s.readHeader(0); err == nil {
			s.rollingBase = h.maxTimestamp
		}
	}
	s.bytesSinceIndex = max(end-last.pos, 0)
	return nil
}
