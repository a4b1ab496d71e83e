package storage

// This file holds a segment's sparse indexes (OffsetIndex.java,
// TimeIndex.java). The .index file holds 8-byte entries [int32 offset -
// baseOffset][int32 position in .log]; the .timeindex file holds 12-byte
// entries [int64 timestamp][int32 offset - baseOffset]. Both are kept in
// memory, as Kafka keeps them memory-mapped, and written through to the FS.
// Simplifications vs Kafka: the files are not preallocated to
// log.index.size.max.bytes and trimmed on roll; they grow by appends, which
// leaves the same bytes on disk once a segment is inactive. Index files are
// synced with their segment and rebuilt by recovery, as in Kafka.
//
// An append Kafka refuses with an exception (OffsetIndex.append: a full
// index, an offset not larger than the last entry; TimeIndex.maybeAppend: a
// full index, an offset or a timestamp below the last entry; either: an
// offset outside [base, base+Integer.MAX_VALUE], IndexOffsetOverflowException)
// is a broken invariant of the segment that calls it, and panics with
// Kafka's exception named; the simulator turns the panic into a failed run.
// Only what Kafka skips without an exception is skipped: a time index entry
// whose timestamp is not larger than the last one's.

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// IndexEntrySize and TimeIndexEntrySize are the sizes of index entries.
const (
	IndexEntrySize     = 8
	TimeIndexEntrySize = 12
)

type indexEntry struct {
	offset int64 // absolute
	pos    int64
}

type timeEntry struct {
	ts     int64
	offset int64 // absolute
}

// offsetIndex is a segment's .index.
// Invariant: entries are strictly increasing in offset and in pos, and
// equal the file's content.
type offsetIndex struct {
	file       string
	base       int64
	entries    []indexEntry
	maxEntries int
}

func (x *offsetIndex) isFull() bool { return len(x.entries) >= x.maxEntries }

func (x *offsetIndex) lastOffset() int64 {
	if len(x.entries) == 0 {
		return x.base
	}
	return x.entries[len(x.entries)-1].offset
}

// append adds (offset, pos), as OffsetIndex.append. It panics, as Kafka
// throws, on a full index (IllegalArgumentException), an offset not larger
// than the last entry's (InvalidOffsetException) and an offset the entry
// cannot hold relative to base (IndexOffsetOverflowException).
func (x *offsetIndex) append(fs FS, offset, pos int64) error {
	if x.isFull() {
		panic(fmt.Sprintf("storage: %s: attempt to append to a full index (size = %d) (IllegalArgumentException)", x.file, len(x.entries)))
	}
	if n := len(x.entries); n > 0 && offset <= x.entries[n-1].offset {
		panic(fmt.Sprintf("storage: %s: attempt to append an offset %d to position %d no larger than the last offset appended (%d) (InvalidOffsetException)",
			x.file, offset, n, x.entries[n-1].offset))
	}
	rel := relativeOffset(x.file, x.base, offset)
	var b [IndexEntrySize]byte
	binary.BigEndian.PutUint32(b[:], rel)
	binary.BigEndian.PutUint32(b[4:], uint32(pos))
	if err := fs.Append(x.file, b[:]); err != nil {
		return err
	}
	x.entries = append(x.entries, indexEntry{offset, pos})
	return nil
}

// lookup returns the last entry with offset <= target, or (base, 0).
func (x *offsetIndex) lookup(target int64) indexEntry {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].offset > target })
	if i == 0 {
		return indexEntry{x.base, 0}
	}
	return x.entries[i-1]
}

// truncateTo removes the entries with offset >= offset.
func (x *offsetIndex) truncateTo(fs FS, offset int64) error {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].offset >= offset })
	if i == len(x.entries) {
		return nil
	}
	x.entries = x.entries[:i]
	return fs.Truncate(x.file, int64(i)*IndexEntrySize)
}

// load reads and checks the file: whole entries, offsets and positions
// strictly increasing, positions inside a log of logSize bytes.
func (x *offsetIndex) load(fs FS, logSize int64) error {
	data, err := fs.ReadFile(x.file)
	if err != nil {
		return err
	}
	if len(data)%IndexEntrySize != 0 {
		return &CorruptError{File: x.file, Position: int64(len(data) - len(data)%IndexEntrySize), Reason: fmt.Sprintf("size %d is not a multiple of %d", len(data), IndexEntrySize)}
	}
	x.entries = x.entries[:0]
	for p := 0; p < len(data); p += IndexEntrySize {
		e := indexEntry{x.base + int64(int32(binary.BigEndian.Uint32(data[p:]))), int64(int32(binary.BigEndian.Uint32(data[p+4:])))}
		var reason string
		switch {
		case e.offset < x.base:
			reason = fmt.Sprintf("offset %d below the base offset %d", e.offset, x.base)
		case e.pos < 0 || e.pos >= logSize:
			reason = fmt.Sprintf("position %d points past the log (%d bytes)", e.pos, logSize)
		case len(x.entries) > 0 && (e.offset <= x.lastOffset() || e.pos <= x.entries[len(x.entries)-1].pos):
			reason = fmt.Sprintf("entry (%d, %d) does not follow (%d, %d)", e.offset, e.pos, x.lastOffset(), x.entries[len(x.entries)-1].pos)
		}
		if reason != "" {
			x.entries = x.entries[:0]
			return &CorruptError{File: x.file, Position: int64(p), Reason: reason}
		}
		x.entries = append(x.entries, e)
	}
	return nil
}

// rewrite replaces the file's content with the entries.
func (x *offsetIndex) rewrite(fs FS) error {
	b := make([]byte, 0, len(x.entries)*IndexEntrySize)
	for _, e := range x.entries {
		b = binary.BigEndian.AppendUint32(b, uint32(e.offset-x.base))
		b = binary.BigEndian.AppendUint32(b, uint32(e.pos))
	}
	return rewriteFile(fs, x.file, b)
}

// timeIndex is a segment's .timeindex.
// Invariant: entries are strictly increasing in ts and non-decreasing in
// offset, and equal the file's content.
type timeIndex struct {
	file       string
	base       int64
	entries    []timeEntry
	maxEntries int
}

// isFull reports whether only the slot kept for the roll is left.
func (x *timeIndex) isFull() bool { return len(x.entries) >= x.maxEntries-1 }

func (x *timeIndex) last() timeEntry {
	if len(x.entries) == 0 {
		return timeEntry{NoTimestamp, x.base}
	}
	return x.entries[len(x.entries)-1]
}

// maybeAppend adds (ts, offset) if ts is past the last entry's timestamp,
// as TimeIndex.maybeAppend: an equal timestamp is skipped (a segment closed
// or rolled writes its last entry again). The last slot is kept for the
// entry written when the segment rolls (skipFullCheck), as in Kafka. It
// panics, as Kafka throws, on a full index (IllegalArgumentException; with
// skipFullCheck, no slot at all: BufferOverflowException), an offset below
// the last entry's (InvalidOffsetException), a timestamp below it
// (IllegalStateException) and an offset outside the entry's range
// (IndexOffsetOverflowException).
func (x *timeIndex) maybeAppend(fs FS, ts, offset int64, skipFullCheck bool) error {
	if !skipFullCheck && x.isFull() {
		panic(fmt.Sprintf("storage: %s: attempt to append to a full time index (size = %d) (IllegalArgumentException)", x.file, len(x.entries)))
	}
	n, last := len(x.entries), x.last()
	if n > 0 && offset < last.offset {
		panic(fmt.Sprintf("storage: %s: attempt to append an offset (%d) to slot %d no larger than the last offset appended (%d) (InvalidOffsetException)",
			x.file, offset, n, last.offset))
	}
	if n > 0 && ts < last.ts {
		panic(fmt.Sprintf("storage: %s: attempt to append a timestamp (%d) to slot %d no larger than the last timestamp appended (%d) (IllegalStateException)",
			x.file, ts, n, last.ts))
	}
	if ts <= last.ts {
		return nil
	}
	if n >= x.maxEntries {
		panic(fmt.Sprintf("storage: %s: no slot left for (%d, %d) in a time index of %d entries (BufferOverflowException)", x.file, ts, offset, x.maxEntries))
	}
	rel := relativeOffset(x.file, x.base, offset)
	var b [TimeIndexEntrySize]byte
	binary.BigEndian.PutUint64(b[:], uint64(ts))
	binary.BigEndian.PutUint32(b[8:], rel)
	if err := fs.Append(x.file, b[:]); err != nil {
		return err
	}
	x.entries = append(x.entries, timeEntry{ts, offset})
	return nil
}

// lookup returns the offset of the last entry with timestamp <= ts, or base:
// every message with a timestamp > the entry's comes after that offset.
func (x *timeIndex) lookup(ts int64) int64 {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].ts > ts })
	if i == 0 {
		return x.base
	}
	return x.entries[i-1].offset
}

// truncateTo removes the entries with offset >= offset.
func (x *timeIndex) truncateTo(fs FS, offset int64) error {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].offset >= offset })
	if i == len(x.entries) {
		return nil
	}
	x.entries = x.entries[:i]
	return fs.Truncate(x.file, int64(i)*TimeIndexEntrySize)
}

// load reads and checks the file; next is the segment's next offset.
func (x *timeIndex) load(fs FS, next int64) error {
	data, err := fs.ReadFile(x.file)
	if err != nil {
		return err
	}
	if len(data)%TimeIndexEntrySize != 0 {
		return &CorruptError{File: x.file, Position: int64(len(data) - len(data)%TimeIndexEntrySize), Reason: fmt.Sprintf("size %d is not a multiple of %d", len(data), TimeIndexEntrySize)}
	}
	x.entries = x.entries[:0]
	for p := 0; p < len(data); p += TimeIndexEntrySize {
		e := timeEntry{int64(binary.BigEndian.Uint64(data[p:])), x.base + int64(int32(binary.BigEndian.Uint32(data[p+8:])))}
		if e.offset < x.base || e.offset >= max(next, x.base+1) || e.ts <= x.last().ts || e.offset < x.last().offset {
			x.entries = x.entries[:0]
			return &CorruptError{File: x.file, Position: int64(p), Reason: fmt.Sprintf("entry (%d, %d) is out of order or outside the segment [%d, %d)", e.ts, e.offset, x.base, next)}
		}
		x.entries = append(x.entries, e)
	}
	return nil
}

func (x *timeIndex) rewrite(fs FS) error {
	b := make([]byte, 0, len(x.entries)*TimeIndexEntrySize)
	for _, e := range x.entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.ts))
		b = binary.BigEndian.AppendUint32(b, uint32(e.offset-x.base))
	}
	return rewriteFile(fs, x.file, b)
}

// relativeOffset is AbstractIndex.relativeOffset: offset - base as an
// index entry holds it, panicking (IndexOffsetOverflowException) when it
// is negative or past Integer.MAX_VALUE.
func relativeOffset(file string, base, offset int64) uint32 {
	rel := offset - base
	if rel < 0 || rel > maxRelativeOffset {
		panic(fmt.Sprintf("storage: %s: integer overflow for offset: %d (IndexOffsetOverflowException): it is not in [%d, %d]",
			file, offset, base, base+maxRelativeOffset))
	}
	return uint32(rel)
}

// rewriteFile replaces name's content with b, creating it if needed.
func rewriteFile(fs FS, name string, b []byte) error {
	if fs.Exists(name) {
		if err := fs.Truncate(name, 0); err != nil {
			return err
		}
	} else if err := fs.Create(name); err != nil {
		return err
	}
	if len(b) == 0 {
		return nil
	}
	return fs.Append(name, b)
}
