package storage

// This file applies retention (UnifiedLog.deleteOldSegments): segments older
// than log.retention.ms, the oldest segments while the log is larger than
// log.retention.bytes, and segments wholly below the log start offset are
// deleted, always a whole segment at a time, oldest first, only below the
// high watermark, and never the active segment.
// Simplifications vs Kafka: Kafka may roll and then delete an expired active
// segment; here the active segment always stays. Deleted segments are
// removed at once (Kafka renames them to .deleted and removes them after
// log.segment.delete.delay.ms), without a directory sync, as in Kafka: a
// crash may bring them back, and the next pass deletes them again.

import "github.com/kafkasim/kafkasim/sim"

// DeleteOldSegments applies the retention rules at time now and returns the
// number of segments deleted. Only segments whose offsets all lie below
// highWatermark are eligible (pass the LEO when there is no replication).
func (l *Log) DeleteOldSegments(now sim.Time, highWatermark int64) (int, error) {
	l.tick(now)
	total := 0
	if l.cfg.delete() && l.cfg.RetentionMs >= 0 {
		nowMs, retMs := sim.Duration(now).Milliseconds(), l.cfg.RetentionMs.Milliseconds()
		n, err := l.deletePrefix(highWatermark, func(s *segment) bool {
			ts := s.maxTimestamp
			if ts < 0 {
				ts = sim.Duration(s.created).Milliseconds()
			}
			return nowMs-ts > retMs
		})
		if total += n; err != nil {
			return total, err
		}
	}
	if l.cfg.delete() && l.cfg.RetentionBytes >= 0 {
		diff := l.Size() - l.cfg.RetentionBytes
		n, err := l.deletePrefix(highWatermark, func(s *segment) bool {
			if diff-s.size < 0 {
				return false
			}
			diff -= s.size
			return true
		})
		if total += n; err != nil {
			return total, err
		}
	}
	n, err := l.deletePrefix(highWatermark, func(s *segment) bool {
		return l.nextBase(s) <= l.logStartOffset
	})
	return total + n, err
}

// nextBase returns the base offset of the segment after s (s is not active).
func (l *Log) nextBase(s *segment) int64 {
	i := l.floorSegment(s.base)
	return l.segments[i+1].base
}

// deletePrefix deletes the longest run of oldest non-active segments that
// lie below highWatermark and satisfy pred, and moves the log start offset
// up to the first remaining segment.
func (l *Log) deletePrefix(highWatermark int64, pred func(*segment) bool) (int, error) {
	k := 0
	for k < len(l.segments)-1 && l.segments[k+1].base <= highWatermark && pred(l.segments[k]) {
		k++
	}
	if k == 0 {
		return 0, nil
	}
	for _, s := range l.segments[:k] {
		if err := s.remove(); err != nil {
			return 0, err
		}
	}
	l.segments = append(l.segments[:0], l.segments[k:]...)
	if err := l.deleteSnapshotsBefore(l.segments[0].base); err != nil {
		return k, err
	}
	if b := l.segments[0].base; b > l.logStartOffset {
		l.logStartOffset = b
		if l.epochs != nil {
			if err := l.epochs.TruncateFromStart(b); err != nil {
				return k, err
			}
		}
	}
	l.recoveryPoint = max(l.recoveryPoint, l.segments[0].base)
	return k, nil
}
