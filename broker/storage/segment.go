package storage

// This file is one log segment (LogSegment.java): a .log file of batches
// and its two sparse indexes, named by the segment's 20-digit base offset.
// An offset lookup is a binary search of the .index for the last entry at or
// below the target, then a scan of batch headers in the .log from there.
// The .txnindex (txnindex.go) is created at the segment's first aborted
// transaction, as Kafka's TransactionIndex opens its file lazily.
// Simplifications vs Kafka: the
// segment's creation time, used by log.roll.ms for segments without
// timestamps, is the virtual time at which it was created or loaded (Kafka
// uses the file's mtime after a restart).

import (
	"strconv"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
)

// segment is one log segment.
// Invariant: the .log holds size bytes of valid batches with strictly
// increasing offsets in [base, next); the indexes point inside them.
type segment struct {
	fs   FS
	base int64
	log  string

	index  offsetIndex
	tindex timeIndex
	txn    txnIndex

	size                 int64
	next                 int64 // offset after the last batch; base if empty
	bytesSinceIndex      int64
	maxTimestamp         int64 // largest batch timestamp so far, or NoTimestamp
	offsetOfMaxTimestamp int64
	rollingBase          int64 // the first batch's max timestamp, or NoTimestamp
	created              sim.Time

	hdr [RecordBatchOverhead]byte

	// hintOff and hintPos are a batch boundary: every batch before hintPos
	// holds offsets below hintOff. Appends and sequential reads keep it at
	// the point the next read most likely starts, so a follower or consumer
	// reading in order skips the scan from the sparse index entry. It is a
	// cache only: lookups give the same answer without it.
	hintOff, hintPos int64
	// tailOff and tailPos are another such boundary: the last batch
	// appended. Each follower fetches it in turn after an append, and the
	// first one's read moves the hint past it.
	tailOff, tailPos int64

	// indexOffByOne is the planted bug mutant.IndexOffByOne (NOT Kafka).
	indexOffByOne bool
}

func segmentStruct(fs FS, dir string, base int64, cfg *Config, now sim.Time) *segment {
	return &segment{
		fs: fs, base: base, log: segmentFile(dir, base, LogFileSuffix),
		index:        offsetIndex{file: segmentFile(dir, base, IndexFileSuffix), base: base, maxEntries: int(cfg.SegmentIndexBytes / IndexEntrySize)},
		tindex:       timeIndex{file: segmentFile(dir, base, TimeIndexFileSuffix), base: base, maxEntries: int(cfg.SegmentIndexBytes / TimeIndexEntrySize)},
		txn:          txnIndex{file: segmentFile(dir, base, TxnIndexFileSuffix)},
		next:         base,
		maxTimestamp: NoTimestamp, offsetOfMaxTimestamp: base, rollingBase: NoTimestamp,
		created:       now,
		indexOffByOne: cfg.Mutants.On(mutant.IndexOffByOne),
	}
}

// createSegment makes a new empty segment's files (emptying leftovers).
func createSegment(fs FS, dir string, base int64, cfg *Config, now sim.Time) (*segment, error) {
	s := segmentStruct(fs, dir, base, cfg, now)
	for _, f := range []string{s.log, s.index.file, s.tindex.file} {
		if err := rewriteFile(fs, f, nil); err != nil {
			return nil, err
		}
	}
	if fs.Exists(s.txn.file) { // a leftover: the index is created lazily
		if err := fs.Remove(s.txn.file); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// readHeader reads the header of the batch at pos and checks that the whole
// batch lies inside the segment.
func (s *segment) readHeader(pos int64) (batchHeader, error) {
	n, err := s.fs.ReadAt(s.log, pos, s.hdr[:])
	if err != nil {
		return batchHeader{}, err
	}
	h, err := parseHeader(s.hdr[:n])
	if err != nil {
		return h, inFile(err, s.log, pos)
	}
	if h.size > s.size-pos {
		return h, &CorruptError{File: s.log, Position: pos, Reason: "batch of " + itoa(h.size) + " bytes runs past the end of the file (" + itoa(s.size) + " bytes)"}
	}
	return h, nil
}

// find returns the position and header of the first batch at or after
// position from whose last offset is >= offset (Kafka's
// FileRecords.searchForOffsetWithSize).
func (s *segment) find(offset, from int64) (int64, batchHeader, bool, error) {
	if offset >= s.next {
		return 0, batchHeader{}, false, nil // no batch holds it
	}
	if s.hintPos > from && offset >= s.hintOff {
		from = s.hintPos
	}
	if s.tailPos > from && offset >= s.tailOff {
		from = s.tailPos
	}
	for pos := from; pos < s.size; {
		h, err := s.readHeader(pos)
		if err != nil {
			return 0, h, false, err
		}
		if h.lastOffset >= offset {
			return pos, h, true, nil
		}
		pos += h.size
	}
	return 0, batchHeader{}, false, nil
}

// translate finds the batch holding offset (or the first one after it):
// the sparse index gives where to start scanning.
func (s *segment) translate(offset int64) (int64, batchHeader, bool, error) {
	if offset >= s.next {
		return 0, batchHeader{}, false, nil // as find, without the index search
	}
	return s.find(offset, s.index.lookup(offset).pos)
}

// append writes one batch (whose header is h) at the end of the segment.
func (s *segment) append(h batchHeader, data []byte, indexInterval int64) error {
	pos := s.size
	if err := s.fs.Append(s.log, data); err != nil {
		return err
	}
	s.size += int64(len(data))
	s.hintOff, s.hintPos = h.baseOffset, pos
	s.tailOff, s.tailPos = h.baseOffset, pos
	return s.appended(h, pos, indexInterval)
}

// appended updates the indexes and counters for the batch h written at pos.
func (s *segment) appended(h batchHeader, pos, indexInterval int64) error {
	if pos == 0 {
		s.rollingBase = h.maxTimestamp
	}
	if h.maxTimestamp > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = h.maxTimestamp, h.lastOffset
	}
	if s.bytesSinceIndex > indexInterval {
		entryPos := pos
		if s.indexOffByOne {
			// The planted bug: the entry takes the position after the
			// batch it names (the segment's size once the batch is
			// written), so a lookup of that offset starts one batch late.
			entryPos = pos + h.size
		}
		if err := s.index.append(s.fs, h.lastOffset, entryPos); err != nil {
			return err
		}
		if err := s.tindex.maybeAppend(s.fs, s.maxTimestamp, s.offsetOfMaxTimestamp, false); err != nil {
			return err
		}
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += h.size
	s.next = h.lastOffset + 1
	return nil
}

// read returns the whole batches from the one holding offset on, at most
// maxBytes of them but always the first one in full (KIP-74), and only
// batches wholly below maxOffset. found is false if no batch of the segment
// holds offset or a later one.
func (s *segment) read(offset int64, maxBytes int, maxOffset int64, arena *readArena) (data []byte, found bool, err error) {
	pos, h, ok, err := s.translate(offset)
	if err != nil || !ok || h.lastOffset >= maxOffset {
		return nil, ok, err
	}
	limit := min(max(int64(maxBytes), h.size), s.size-pos)
	buf := arena.take(int(limit))
	n, err := s.fs.ReadAt(s.log, pos, buf)
	if err != nil {
		arena.trim(buf, 0)
		return nil, true, err
	}
	buf = buf[:n]
	end := int(h.size)
	for end < len(buf) {
		hh, err := parseHeader(buf[end:])
		if err != nil || int64(end)+hh.size > int64(len(buf)) || hh.lastOffset >= maxOffset {
			break
		}
		end += int(hh.size)
		h = hh
	}
	s.hintOff, s.hintPos = h.lastOffset+1, pos+int64(end)
	return arena.trim(buf, end), true, nil
}

// truncateTo removes the batches holding offsets >= offset (a batch holding
// offset itself is removed whole) and returns the bytes removed.
func (s *segment) truncateTo(offset int64) (int64, error) {
	pos, _, ok, err := s.translate(offset)
	if err != nil || !ok {
		return 0, err
	}
	if err := s.index.truncateTo(s.fs, offset); err != nil {
		return 0, err
	}
	if err := s.tindex.truncateTo(s.fs, offset); err != nil {
		return 0, err
	}
	if err := s.txn.truncateTo(s.fs, offset); err != nil {
		return 0, err
	}
	if err := s.fs.Truncate(s.log, pos); err != nil {
		return 0, err
	}
	removed := s.size - pos
	s.size = pos
	s.bytesSinceIndex = 0
	s.hintOff, s.hintPos = 0, 0
	s.tailOff, s.tailPos = 0, 0
	if pos == 0 {
		s.rollingBase = NoTimestamp
	}
	return removed, s.scanTail()
}

// scanTail recomputes next and the largest timestamp from the last index
// entry to the end of the .log (headers only).
func (s *segment) scanTail() error {
	last := indexEntry{s.base, 0}
	if n := len(s.index.entries); n > 0 {
		last = s.index.entries[n-1]
	}
	s.next = s.base
	s.maxTimestamp, s.offsetOfMaxTimestamp = s.tindex.last().ts, s.tindex.last().offset
	if last.pos > 0 {
		s.next = last.offset + 1
	}
	for pos := last.pos; pos < s.size; {
		h, err := s.readHeader(pos)
		if err != nil {
			return err
		}
		if h.maxTimestamp > s.maxTimestamp {
			s.maxTimestamp, s.offsetOfMaxTimestamp = h.maxTimestamp, h.lastOffset
		}
		s.next = h.lastOffset + 1
		pos += h.size
	}
	return nil
}

// onBecomeInactive writes the time index entry Kafka writes at a roll.
func (s *segment) onBecomeInactive() error {
	return s.tindex.maybeAppend(s.fs, s.maxTimestamp, s.offsetOfMaxTimestamp, true)
}

// flush syncs the segment's files.
func (s *segment) flush() error {
	for _, f := range []string{s.log, s.index.file, s.tindex.file} {
		if err := s.fs.Sync(f); err != nil {
			return err
		}
	}
	return s.txn.flush(s.fs)
}

// remove deletes the segment's files.
func (s *segment) remove() error {
	if err := s.removeData(); err != nil {
		return err
	}
	if s.fs.Exists(s.txn.file) {
		return s.fs.Remove(s.txn.file)
	}
	return nil
}

// removeData deletes the segment's .log and offset and time indexes,
// keeping its .txnindex (a compaction swap keeps the aborted transactions).
func (s *segment) removeData() error {
	for _, f := range []string{s.log, s.index.file, s.tindex.file} {
		if s.fs.Exists(f) {
			if err := s.fs.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// findByTimestamp returns the first record at or after startingOffset with
// a timestamp >= ts (Kafka's LogSegment.findOffsetByTimestamp).
func (s *segment) findByTimestamp(ts, startingOffset int64) (Record, bool, error) {
	if s.maxTimestamp < ts {
		return Record{}, false, nil
	}
	pos := s.index.lookup(max(s.tindex.lookup(ts), startingOffset)).pos
	for pos < s.size {
		h, err := s.readHeader(pos)
		if err != nil {
			return Record{}, false, err
		}
		if h.maxTimestamp >= ts && h.lastOffset >= startingOffset {
			buf := make([]byte, h.size)
			if _, err := s.fs.ReadAt(s.log, pos, buf); err != nil {
				return Record{}, false, err
			}
			rb, _, err := DecodeBatch(buf)
			if err != nil {
				return Record{}, false, inFile(err, s.log, pos)
			}
			for _, r := range rb.Records {
				if r.Timestamp >= ts && r.Offset >= startingOffset {
					return r, true, nil
				}
			}
		}
		pos += h.size
	}
	return Record{}, false, nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
