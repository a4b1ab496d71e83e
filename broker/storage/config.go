package storage

// This file holds the storage configuration: the broker's log.* properties
// and their topic-level overrides, converted once to virtual time.
// Simplifications vs Kafka: log.roll.jitter.ms, log.preallocate,
// log.segment.delete.delay.ms (segments are deleted at once, not renamed to
// .deleted first), log.cleaner.min.cleanable.ratio and the cleaner's buffer
// sizes are not modelled; log.flush.scheduler.interval.ms is the caller's
// Tick period. log.message.format.version still matters here, as it did
// before Kafka 3.0 deprecated it, because the testbed compares v1 logs (no
// leader epoch, KIP-101 falls back to HW truncation) with v2 logs.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
)

// Never is a Duration that never elapses: Kafka's Long.MaxValue default of
// log.flush.interval.ms and log.flush.scheduler.interval.ms.
const Never = sim.Duration(math.MaxInt64)

// Cleanup policies (cleanup.policy / log.cleanup.policy).
const (
	CleanupDelete        = "delete"
	CleanupCompact       = "compact"
	CleanupCompactDelete = "compact,delete"
)

// Config is the storage configuration. Each field names its Kafka property,
// unit, default and limits; DefaultConfig returns Kafka's defaults.
type Config struct {
	// Mutants are the planted bugs switched on (package mutant; none is Kafka).
	Mutants mutant.Set
	// LogDirs is log.dirs: the directories (paths on the FS) that hold the
	// partitions. Default ["/tmp/kafka-logs"] (Kafka's log.dir). At least one,
	// no duplicates, none nested in another.
	LogDirs []string
	// SegmentBytes is log.segment.bytes: a segment rolls before it would pass
	// this size. Default 1073741824 (1 GiB); at least 14 (LegacyRecord
	// RECORD_OVERHEAD_V0).
	SegmentBytes int64
	// SegmentMs is log.roll.ms (or log.roll.hours): a non-empty segment rolls
	// once its first batch is this old. Default 168h; at least 1ms.
	SegmentMs sim.Duration
	// SegmentIndexBytes is log.index.size.max.bytes: a segment rolls when its
	// offset or time index would pass this size. Default 10485760; at least 8.
	SegmentIndexBytes int64
	// IndexIntervalBytes is log.index.interval.bytes: bytes of log between
	// offset index entries. Default 4096; at least 0.
	IndexIntervalBytes int64
	// RetentionMs is log.retention.ms (or .minutes, .hours): a segment whose
	// largest timestamp is older is deleted. Default 168h; negative means
	// unlimited (Kafka's -1).
	RetentionMs sim.Duration
	// RetentionBytes is log.retention.bytes: the oldest segments are deleted
	// while the partition is larger. Default -1 (unlimited); -1 or >= 0.
	RetentionBytes int64
	// RetentionCheckInterval is log.retention.check.interval.ms: how often
	// Manager.Tick applies retention. Default 300000ms; at least 1ms.
	RetentionCheckInterval sim.Duration
	// FlushIntervalMessages is log.flush.interval.messages: the log syncs
	// after this many appended messages. Default math.MaxInt64 (never:
	// Kafka relies on replication); at least 1.
	FlushIntervalMessages int64
	// FlushIntervalMs is log.flush.interval.ms: Manager.Tick syncs a log not
	// synced for this long. Default Never; at least 0.
	FlushIntervalMs sim.Duration
	// FlushOffsetCheckpointInterval is log.flush.offset.checkpoint.interval.ms:
	// how often Manager.Tick writes recovery-point-offset-checkpoint.
	// Default 60000ms; at least 1ms.
	FlushOffsetCheckpointInterval sim.Duration
	// FlushStartOffsetCheckpointInterval is
	// log.flush.start.offset.checkpoint.interval.ms: how often Manager.Tick
	// writes log-start-offset-checkpoint. Default 60000ms; at least 1ms.
	FlushStartOffsetCheckpointInterval sim.Duration
	// MessageFormatVersion is log.message.format.version: below 0.10.0 the
	// log holds v0 messages, below 0.11.0 v1 messages, from 0.11.0 on v2
	// record batches. Default "3.0-IV1" (v2). Allowed: "0.8.0" .. "3.x",
	// optionally with an "-IVn" suffix.
	MessageFormatVersion string
	// CleanupPolicy is log.cleanup.policy: "delete" (retention), "compact"
	// (keep the latest record per key) or "compact,delete". Default "delete".
	CleanupPolicy string
	// DeleteRetentionMs is log.cleaner.delete.retention.ms: how long a
	// tombstone survives compaction. Default 86400000ms; at least 0.
	DeleteRetentionMs sim.Duration
	// CleanerBackoff is log.cleaner.backoff.ms: how often Manager.Tick
	// compacts compacted logs. Default 15000ms; at least 1ms.
	CleanerBackoff sim.Duration
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		LogDirs:                            []string{"/tmp/kafka-logs"},
		SegmentBytes:                       1073741824,
		SegmentMs:                          168 * sim.Hour,
		SegmentIndexBytes:                  10485760,
		IndexIntervalBytes:                 4096,
		RetentionMs:                        168 * sim.Hour,
		RetentionBytes:                     -1,
		RetentionCheckInterval:             sim.Ms(300000),
		FlushIntervalMessages:              math.MaxInt64,
		FlushIntervalMs:                    Never,
		FlushOffsetCheckpointInterval:      sim.Ms(60000),
		FlushStartOffsetCheckpointInterval: sim.Ms(60000),
		MessageFormatVersion:               "3.0-IV1",
		CleanupPolicy:                      CleanupDelete,
		DeleteRetentionMs:                  sim.Ms(86400000),
		CleanerBackoff:                     sim.Ms(15000),
	}
}

// Validate reports the first property outside its allowed values.
func (c Config) Validate() error {
	bad := func(prop string, v any, allowed string) error {
		return fmt.Errorf("storage config: %s = %v: must be %s", prop, v, allowed)
	}
	if len(c.LogDirs) == 0 {
		return bad("log.dirs", c.LogDirs, "at least one directory")
	}
	for i, d := range c.LogDirs {
		if d == "" || d == "." || d == "/" {
			return bad("log.dirs", c.LogDirs, "non-empty directory paths other than \".\" and \"/\"")
		}
		for j, e := range c.LogDirs {
			if i != j && (cleanDir(d) == cleanDir(e) || strings.HasPrefix(cleanDir(d)+"/", cleanDir(e)+"/")) {
				return bad("log.dirs", c.LogDirs, "distinct directories, none inside another")
			}
		}
	}
	switch {
	case c.SegmentBytes < 14 || c.SegmentBytes > math.MaxInt32:
		return bad("log.segment.bytes", c.SegmentBytes, "in [14, 2147483647]")
	case c.SegmentMs < sim.Millisecond:
		return bad("log.roll.ms", c.SegmentMs.Milliseconds(), ">= 1")
	case c.SegmentIndexBytes < 8 || c.SegmentIndexBytes > math.MaxInt32:
		return bad("log.index.size.max.bytes", c.SegmentIndexBytes, "in [8, 2147483647]")
	case c.IndexIntervalBytes < 0 || c.IndexIntervalBytes > math.MaxInt32:
		return bad("log.index.interval.bytes", c.IndexIntervalBytes, "in [0, 2147483647]")
	case c.RetentionBytes < -1:
		return bad("log.retention.bytes", c.RetentionBytes, "-1 (unlimited) or >= 0")
	case c.RetentionCheckInterval < sim.Millisecond:
		return bad("log.retention.check.interval.ms", c.RetentionCheckInterval.Milliseconds(), ">= 1")
	case c.FlushIntervalMessages < 1:
		return bad("log.flush.interval.messages", c.FlushIntervalMessages, ">= 1")
	case c.FlushIntervalMs < 0:
		return bad("log.flush.interval.ms", c.FlushIntervalMs.Milliseconds(), ">= 0")
	case c.FlushOffsetCheckpointInterval < sim.Millisecond:
		return bad("log.flush.offset.checkpoint.interval.ms", c.FlushOffsetCheckpointInterval.Milliseconds(), ">= 1")
	case c.FlushStartOffsetCheckpointInterval < sim.Millisecond:
		return bad("log.flush.start.offset.checkpoint.interval.ms", c.FlushStartOffsetCheckpointInterval.Milliseconds(), ">= 1")
	case c.DeleteRetentionMs < 0:
		return bad("log.cleaner.delete.retention.ms", c.DeleteRetentionMs.Milliseconds(), ">= 0")
	case c.CleanerBackoff < sim.Millisecond:
		return bad("log.cleaner.backoff.ms", c.CleanerBackoff.Milliseconds(), ">= 1")
	}
	switch c.CleanupPolicy {
	case CleanupDelete, CleanupCompact, CleanupCompactDelete, "delete,compact":
	default:
		return bad("log.cleanup.policy", strconv.Quote(c.CleanupPolicy), `"delete", "compact" or "compact,delete"`)
	}
	if _, err := MagicForFormatVersion(c.MessageFormatVersion); err != nil {
		return err
	}
	return nil
}

func cleanDir(d string) string { return strings.TrimSuffix(d, "/") }

// compact reports whether the policy includes compaction.
func (c Config) compact() bool { return strings.Contains(c.CleanupPolicy, CleanupCompact) }

// delete reports whether the policy includes time and size retention.
func (c Config) delete() bool { return strings.Contains(c.CleanupPolicy, CleanupDelete) }

// MagicForFormatVersion returns the record format (magic) that a
// log.message.format.version value selects: 0 before 0.10.0, 1 before 0.11.0,
// 2 from 0.11.0 on.
func MagicForFormatVersion(v string) (int8, error) {
	// NB: the error is built only when returned (Validate calls this for
	// every log opened).
	bad := func() error {
		return fmt.Errorf("storage config: log.message.format.version = %q: must be a Kafka version from 0.8.0 on, like \"0.10.2\", \"0.11.0\", \"2.8\" or \"3.0-IV1\"", v)
	}
	s := v
	if i := strings.Index(s, "-IV"); i >= 0 {
		if _, err := strconv.Atoi(s[i+3:]); err != nil {
			return 0, bad()
		}
		s = s[:i]
	}
	// Two or three dot-separated numbers (cut in place: no slice of parts).
	if dots := strings.Count(s, "."); dots < 1 || dots > 2 {
		return 0, bad()
	}
	var n [3]int
	for i, rest, more := 0, s, true; more; i++ {
		var p string
		p, rest, more = strings.Cut(rest, ".")
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 || p == "" || p[0] == '+' {
			return 0, bad()
		}
		n[i] = x
	}
	switch {
	case n[0] == 0 && n[1] >= 8 && n[1] <= 9:
		return MagicV0, nil
	case n[0] == 0 && n[1] == 10:
		return MagicV1, nil
	case n[0] == 0 && n[1] >= 11, n[0] >= 1 && n[0] <= 3:
		return MagicV2, nil
	}
	return 0, bad()
}
