package storage

// This file serves reads: by offset (Fetch) and by timestamp (ListOffsets).
// A read by offset is a binary search over segment base offsets, then over
// the segment's sparse offset index, then a scan of batch headers in the
// .log, and returns raw batch bytes. As in Kafka, a read serves one segment
// only and returns whole batches; the first batch is returned whole even if
// larger than maxBytes (KIP-74).

import (
	"fmt"
	"sort"
)

// Special timestamps of ListOffsets.
const (
	LatestTimestamp   int64 = -1
	EarliestTimestamp int64 = -2
)

// Read returns the raw bytes of the whole batches from the one holding
// offset on: at most maxBytes (but always the first batch), only batches
// wholly below maxOffset (pass the high watermark for consumers, the LEO
// for followers). A read at the LEO returns nothing; one outside [log start
// offset, LEO] fails with ErrOffsetOutOfRange.
func (l *Log) Read(offset int64, maxBytes int, maxOffset int64) ([]byte, error) {
	leo := l.LogEndOffset()
	if offset < l.logStartOffset || offset > leo {
		return nil, fmt.Errorf("storage: read %s at offset %d: %w: the log holds [%d, %d]", l.tp, offset, ErrOffsetOutOfRange, l.logStartOffset, leo)
	}
	if offset == leo {
		return nil, nil // a caught-up fetch: nothing to read, no segment to ask
	}
	for _, s := range l.segments[l.floorSegment(offset):] {
		// A segment with no batch at or past offset (offset falls in a gap
		// left by compaction) passes the read to the next one.
		data, found, err := s.read(offset, maxBytes, maxOffset, &l.reads)
		if err != nil || found {
			return data, err
		}
	}
	return nil, nil
}

// floorSegment returns the index of the last segment with base <= offset,
// or 0.
func (l *Log) floorSegment(offset int64) int {
	i := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].base > offset })
	return max(i-1, 0)
}

// OffsetForTimestamp answers ListOffsets: the first record with a timestamp
// >= ts, at or after the log start offset. ts may be LatestTimestamp (the
// LEO) or EarliestTimestamp (the log start offset), for which the returned
// timestamp is NoTimestamp. ok is false when no record is that recent.
func (l *Log) OffsetForTimestamp(ts int64) (offset, timestamp int64, ok bool, err error) {
	switch ts {
	case LatestTimestamp:
		return l.LogEndOffset(), NoTimestamp, true, nil
	case EarliestTimestamp:
		return l.logStartOffset, NoTimestamp, true, nil
	}
	if ts < 0 {
		return 0, 0, false, fmt.Errorf("storage: timestamp %d: must be >= 0, LatestTimestamp (-1) or EarliestTimestamp (-2)", ts)
	}
	for _, s := range l.segments {
		if s.maxTimestamp < ts || s.next <= l.logStartOffset {
			continue
		}
		r, found, err := s.findByTimestamp(ts, l.logStartOffset)
		if err != nil || found {
			return r.Offset, r.Timestamp, found, err
		}
	}
	return 0, 0, false, nil
}
