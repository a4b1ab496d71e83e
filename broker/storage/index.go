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

// append adds (offset, pos) if offset is past the last entry.
func (x *offsetIndex) append(fs FS, offset, pos int64) error {
	if n := len(x.entries); (n > 0 && offset <= x.entries[n-1].offset) || x.isFull() {
		return nil
	}
	var b [IndexEntrySize]byte
	binary.BigEndian.PutUint32(b[:], uint32(offset-x.base))
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

// maybeAppend adds (ts, offset) if ts is past the last entry's timestamp.
// The last slot is kept for the entry written when the segment rolls
// (skipFullCheck), as in Kafka.
func (x *timeIndex) maybeAppend(fs FS, ts, offset int64, skipFullCheck bool) error {
	if (!skipFullCheck && x.isFull()) || len(x.entries) >= x.maxEntries || ts <= x.last().ts || offset < x.last().offset {
		return nil
	}
	var b [TimeIndexEntrySize]byte
	binary.BigEndian.PutUint64(b[:], uint64(ts))
	binary.BigEndian.PutUint32(b[8:], uint32(offset-x.base))
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
