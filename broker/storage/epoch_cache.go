package storage

// This file is Kafka's LeaderEpochFileCache (storage/.../epoch/
// LeaderEpochFileCache.java): for each leader epoch, the first offset written
// in it, kept strictly increasing in both columns and checkpointed to the
// partition's leader-epoch-checkpoint on every change. KIP-101 answers
// OffsetsForLeaderEpoch from it; KIP-279 walks it back.
// Simplifications vs Kafka: none in the rules; every change is written
// synchronously (tmp file, sync, rename), as Kafka 2.x did.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/internal/cleanpath"
)

// UndefinedEpoch and UndefinedEpochOffset are Kafka's UNDEFINED_EPOCH and
// UNDEFINED_EPOCH_OFFSET.
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// LeaderEpochFileCache maps leader epochs to their start offsets.
// Invariant: entries are strictly increasing in Epoch and in StartOffset.
type LeaderEpochFileCache struct {
	fs      FS     // nil: in memory only
	file    string // the leader-epoch-checkpoint path
	entries []EpochEntry
	// tmp and dir are file's temporary file and directory, and buf the
	// rendered checkpoint (the disk copies what it is given), kept for
	// flush.
	tmp, dir string
	buf      []byte
}

// NewLeaderEpochFileCache returns a cache backed by file on fs, loaded from
// it if it exists. A nil fs gives an in-memory cache (for tests and models).
func NewLeaderEpochFileCache(fs FS, file string) (*LeaderEpochFileCache, error) {
	c := &LeaderEpochFileCache{fs: fs, file: file, tmp: file + TmpFileSuffix, dir: cleanpath.Dir(file)}
	if fs == nil {
		return c, nil
	}
	data, err := readCheckpointFile(fs, file)
	if err != nil {
		return nil, err
	}
	entries, err := ParseEpochCheckpoint(file, data)
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		if e.Epoch < 0 || e.StartOffset < 0 || (i > 0 && (e.Epoch <= entries[i-1].Epoch || e.StartOffset <= entries[i-1].StartOffset)) {
			return nil, &CorruptError{File: file, Position: int64(i + 3), Line: true,
				Reason: fmt.Sprintf("entry %d %d: epochs and start offsets must be >= 0 and strictly increasing", e.Epoch, e.StartOffset)}
		}
	}
	c.entries = entries
	return c, nil
}

// Entries returns a copy of the entries, oldest first.
func (c *LeaderEpochFileCache) Entries() []EpochEntry { return append([]EpochEntry(nil), c.entries...) }

// LatestEpoch returns the latest epoch, or UndefinedEpoch if the cache is empty.
func (c *LeaderEpochFileCache) LatestEpoch() int32 {
	if len(c.entries) == 0 {
		return UndefinedEpoch
	}
	return c.entries[len(c.entries)-1].Epoch
}

// EarliestEntry returns the first entry, if any.
func (c *LeaderEpochFileCache) EarliestEntry() (EpochEntry, bool) {
	if len(c.entries) == 0 {
		return EpochEntry{}, false
	}
	return c.entries[0], true
}

func (c *LeaderEpochFileCache) flush() error {
	if c.fs == nil {
		return nil
	}
	c.buf = appendEpochCheckpoint(c.buf[:0], c.entries)
	return writeFileAtomicIn(c.fs, c.dir, c.file, c.tmp, c.buf)
}

// Assign records that epoch starts at startOffset. It is a no-op when epoch
// is the latest epoch and startOffset is not below its start. Otherwise every
// entry with an epoch >= epoch or a start offset >= startOffset is removed
// first, so the cache stays monotonic. Negative arguments are API misuse.
func (c *LeaderEpochFileCache) Assign(epoch int32, startOffset int64) error {
	if epoch < 0 || startOffset < 0 {
		return fmt.Errorf("leader epoch cache: invalid entry epoch %d start offset %d: both must be >= 0", epoch, startOffset)
	}
	if n := len(c.entries); n > 0 {
		if last := c.entries[n-1]; last.Epoch == epoch && startOffset >= last.StartOffset {
			return nil
		}
	}
	for n := len(c.entries); n > 0; n-- {
		if e := c.entries[n-1]; e.Epoch < epoch && e.StartOffset < startOffset {
			break
		}
		c.entries = c.entries[:n-1]
	}
	c.entries = append(c.entries, EpochEntry{epoch, startOffset})
	return c.flush()
}

// EndOffsetFor returns the epoch and end offset KIP-101's
// OffsetsForLeaderEpoch answers for requested, given the log end offset:
//   - requested is UndefinedEpoch: (-1, -1);
//   - requested is the latest epoch: (requested, logEndOffset);
//   - no epoch is larger than requested (also: empty cache): (-1, -1);
//   - requested is below the first epoch: (requested, first start offset);
//   - otherwise: the largest epoch <= requested and the start offset of the
//     first larger epoch.
func (c *LeaderEpochFileCache) EndOffsetFor(requested int32, logEndOffset int64) (int32, int64) {
	if requested == UndefinedEpoch {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if len(c.entries) > 0 && c.LatestEpoch() == requested {
		return requested, logEndOffset
	}
	higher := -1 // first entry with Epoch > requested
	for i, e := range c.entries {
		if e.Epoch > requested {
			higher = i
			break
		}
	}
	switch higher {
	case -1:
		return UndefinedEpoch, UndefinedEpochOffset
	case 0:
		return requested, c.entries[0].StartOffset
	default:
		return c.entries[higher-1].Epoch, c.entries[higher].StartOffset
	}
}

// EpochForOffset returns the epoch of the entry covering offset, or
// UndefinedEpoch if offset is below the first entry.
func (c *LeaderEpochFileCache) EpochForOffset(offset int64) int32 {
	epoch := UndefinedEpoch
	for _, e := range c.entries {
		if e.StartOffset > offset {
			break
		}
		epoch = e.Epoch
	}
	return epoch
}

// TruncateFromEnd removes the entries whose start offset is >= endOffset
// (after a log truncation to endOffset). A negative endOffset is a no-op.
func (c *LeaderEpochFileCache) TruncateFromEnd(endOffset int64) error {
	n := len(c.entries)
	if endOffset < 0 || n == 0 || c.entries[n-1].StartOffset < endOffset {
		return nil
	}
	for n > 0 && c.entries[n-1].StartOffset >= endOffset {
		n--
	}
	c.entries = c.entries[:n]
	return c.flush()
}

// TruncateFromStart removes the entries wholly below startOffset (after the
// log start offset moved to startOffset) and moves the start of the entry
// covering startOffset to it.
func (c *LeaderEpochFileCache) TruncateFromStart(startOffset int64) error {
	k := 0 // entries with StartOffset <= startOffset
	for k < len(c.entries) && c.entries[k].StartOffset <= startOffset {
		k++
	}
	if k == 0 {
		return nil
	}
	covering := EpochEntry{c.entries[k-1].Epoch, startOffset}
	c.entries = append([]EpochEntry{covering}, c.entries[k:]...)
	return c.flush()
}

// Clear removes every entry (after the log was truncated fully).
func (c *LeaderEpochFileCache) Clear() error {
	c.entries = nil
	return c.flush()
}
