package storage

// This file compacts logs whose cleanup.policy includes "compact"
// (LogCleaner.java), as __consumer_offsets needs: in the inactive segments
// below the high watermark, only the latest record of each key is kept, and
// a tombstone (null value) is dropped once it is older than
// log.cleaner.delete.retention.ms. Batches keep their base offset, leader
// epoch and producer fields; a batch left empty is dropped. Each cleaned
// segment is written to "<base>.log.cleaned", synced, renamed to
// "<base>.log.swap", and swapped in; recovery completes an interrupted swap.
// Simplifications vs Kafka: no cleaner-offset-checkpoint (every pass reads
// all inactive segments: the clean part has unique keys already, so the
// result is the same), no min.cleanable.dirty.ratio or compaction lag, no
// grouping of small segments into one, and the tombstone horizon is the
// record's own timestamp rather than the segment's modification time.
// Transactional batches and transaction markers are kept whole and left
// out of the offset map (Kafka drops aborted transactions' records and,
// later, their markers): the producer state replayed after a crash then
// always finds every marker, and the .txnindex stays true.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/sim"
)

// CleanStats describes a compaction pass.
type CleanStats struct {
	SegmentsCleaned int
	RecordsRemoved  int
	BytesBefore     int64
	BytesAfter      int64
}

// Cleaned is a compaction pass of Manager.Tick that removed records.
type Cleaned struct {
	TopicPartition
	CleanStats
}

// TakeCleaned returns the passes that removed records since the last
// call (the broker traces them), and forgets them.
func (m *Manager) TakeCleaned() []Cleaned {
	out := m.cleaned
	m.cleaned = nil
	return out
}

// Compact cleans the inactive segments wholly below highWatermark. It does
// nothing unless the cleanup policy includes compaction.
func (l *Log) Compact(now sim.Time, highWatermark int64) (CleanStats, error) {
	l.tick(now)
	var st CleanStats
	if !l.cfg.compact() {
		return st, nil
	}
	n := 0 // segments to clean
	for n < len(l.segments)-1 && l.segments[n+1].base <= highWatermark {
		n++
	}
	if n == 0 {
		return st, nil
	}
	// The offset map: key -> latest offset, over the segments to clean.
	latest := map[string]int64{}
	var decoded [][]RecordBatch
	for _, s := range l.segments[:n] {
		data, err := l.fs.ReadFile(s.log)
		if err != nil {
			return st, err
		}
		bs, err := DecodeBatches(data[:s.size])
		if err != nil {
			return st, inFile(err, s.log, 0)
		}
		for _, b := range bs {
			if b.Attributes&(TransactionalFlagMask|ControlFlagMask) != 0 {
				continue // kept whole, below
			}
			for _, r := range b.Records {
				if r.Key != nil {
					latest[string(r.Key)] = r.Offset
				}
			}
		}
		decoded = append(decoded, bs)
	}
	horizon := sim.Duration(now).Milliseconds() - l.cfg.DeleteRetentionMs.Milliseconds()
	for i, s := range l.segments[:n] {
		var out []byte
		removed := 0
		for _, b := range decoded[i] {
			if b.Attributes&(TransactionalFlagMask|ControlFlagMask) != 0 {
				out = b.AppendTo(out)
				continue
			}
			kept := b.Records[:0:0]
			for _, r := range b.Records {
				if r.Key != nil && latest[string(r.Key)] == r.Offset && (r.Value != nil || r.Timestamp > horizon) {
					kept = append(kept, r)
				}
			}
			removed += len(b.Records) - len(kept)
			switch {
			case len(kept) == 0:
			case b.Magic < MagicV2:
				out = AppendLegacyTo(out, b.Magic, &kept[0])
			default:
				b.Records = kept
				b.LastOffsetDelta = int32(kept[len(kept)-1].Offset - b.BaseOffset)
				b.FirstTimestamp, b.MaxTimestamp = kept[0].Timestamp, NoTimestamp
				for _, r := range kept {
					b.MaxTimestamp = max(b.MaxTimestamp, r.Timestamp)
				}
				out = b.AppendTo(out)
			}
		}
		st.BytesBefore += s.size
		st.BytesAfter += int64(len(out))
		if removed == 0 {
			continue
		}
		st.RecordsRemoved += removed
		st.SegmentsCleaned++
		ns, err := l.swapIn(s, out)
		if err != nil {
			return st, err
		}
		l.segments[i] = ns
	}
	return st, nil
}

// swapIn replaces segment s by one holding data, crash-safely.
func (l *Log) swapIn(s *segment, data []byte) (*segment, error) {
	cleaned, swap := s.log+CleanedFileSuffix, s.log+SwapFileSuffix
	if err := rewriteFile(l.fs, cleaned, data); err != nil {
		return nil, err
	}
	if err := l.fs.Sync(cleaned); err != nil {
		return nil, err
	}
	if err := l.fs.Rename(cleaned, swap); err != nil {
		return nil, err
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return nil, err
	}
	if err := s.removeData(); err != nil {
		return nil, err
	}
	if err := l.fs.Rename(swap, s.log); err != nil {
		return nil, err
	}
	ns := segmentStruct(l.fs, l.dir, s.base, &l.cfg, s.created)
	ns.size = int64(len(data))
	// NB: the cleaner keeps transactional batches and markers as they are,
	// so the aborted-transaction index carries over unchanged.
	var scratch []byte
	cut, err := ns.recover(l.cfg.IndexIntervalBytes, &scratch)
	if err != nil {
		return nil, err
	}
	if cut != nil {
		panic(fmt.Sprintf("storage: compacted segment does not verify: %v", cut))
	}
	if err := ns.flush(); err != nil {
		return nil, err
	}
	return ns, l.fs.SyncDir(l.dir)
}

// UpdateConfig replaces the log's configuration with c (its topic's),
// as Kafka's UnifiedLog.updateConfig does when a topic's config changes or
// a log loaded with the broker's defaults learns its topic's: the next
// append, roll, retention or cleaner pass follows it. The log directories
// and the record format of the log (its magic) stay as they are.
func (l *Log) UpdateConfig(c Config) error {
	c.LogDirs = l.cfg.LogDirs
	c.MessageFormatVersion = l.cfg.MessageFormatVersion
	if err := c.Validate(); err != nil {
		return fmt.Errorf("storage: %s: %w", l.tp, err)
	}
	l.cfg = c
	return nil
}

// CleanupPolicy returns the log's cleanup.policy.
func (l *Log) CleanupPolicy() string { return l.cfg.CleanupPolicy }
