package storage

// This file defines the file system the storage is written against and the
// errors it reports. Simplifications vs Kafka: there are no file handles,
// memory maps or directories as objects; every operation names its file by a
// slash-separated path, which is all Kafka's log layer needs.

import (
	"errors"
	"fmt"
	"path"
	"strconv"

	"github.com/kafkasim/kafkasim/internal/cleanpath"
)

// FS is the disk the storage writes to: exactly the operations it uses.
// *sim.Disk satisfies it. Content is durable only after Sync, and namespace
// changes (Create, Rename, Remove) only after SyncDir of their directory.
type FS interface {
	Create(name string) error
	Exists(name string) bool
	IsDir(dir string) bool
	Append(name string, p []byte) error
	ReadAt(name string, off int64, p []byte) (int, error)
	ReadFile(name string) ([]byte, error)
	Size(name string) (int64, error)
	Truncate(name string, size int64) error
	Rename(oldname, newname string) error
	Remove(name string) error
	List(dir string) ([]string, error)
	Sync(name string) error
	SyncDir(dir string) error
	Export(realDir string, durable bool) error
}

// CorruptError reports bad bytes found in a file (or in a buffer, when File
// is empty): a torn or corrupt batch, a malformed checkpoint, an index entry
// pointing past the log. Position is the byte offset in the file, or the
// 1-based line number for checkpoint files (Line set).
type CorruptError struct {
	File     string
	Position int64
	Line     bool
	Reason   string

	truncated int64 // bytes recovery cut here
}

func (e *CorruptError) Error() string {
	where := "position " + strconv.FormatInt(e.Position, 10)
	if e.Line {
		where = "line " + strconv.FormatInt(e.Position, 10)
	}
	if e.File == "" {
		return fmt.Sprintf("storage: corrupt data at %s: %s", where, e.Reason)
	}
	return fmt.Sprintf("storage: corrupt %s at %s: %s", e.File, where, e.Reason)
}

// inFile returns a copy of err with the file name and position base set, if
// err is a *CorruptError; other errors pass unchanged.
func inFile(err error, file string, base int64) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		c := *ce
		c.File = file
		c.Position += base
		return &c
	}
	return err
}

// ErrOffsetOutOfRange is wrapped by the error of a read or lookup at an offset
// outside [log start offset, log end offset] (Kafka's OFFSET_OUT_OF_RANGE).
var ErrOffsetOutOfRange = errors.New("offset out of range")

// ErrRecordTooLarge is wrapped when a batch exceeds log.segment.bytes
// (Kafka's RECORD_BATCH_TOO_LARGE).
var ErrRecordTooLarge = errors.New("record batch too large")

// ErrInvalidRecord is wrapped when an append is refused: offsets going
// backwards, a record without key on a compacted topic, headers on a
// pre-0.11 format (Kafka's INVALID_RECORD / UnexpectedAppendOffsetException).
var ErrInvalidRecord = errors.New("invalid record")

// ErrNoKey is wrapped with ErrInvalidRecord when a compacted topic is
// given a record without key (LogValidator's validateKey).
var ErrNoKey = errors.New("a compacted topic cannot accept a record without key")

// Names of Kafka's files, from LogFileUtils, LogManager and ReplicaManager.
const (
	LogFileSuffix        = ".log"
	IndexFileSuffix      = ".index"
	TimeIndexFileSuffix  = ".timeindex"
	CleanedFileSuffix    = ".cleaned"
	SwapFileSuffix       = ".swap"
	DeletedFileSuffix    = ".deleted"
	TmpFileSuffix        = ".tmp"
	LeaderEpochFile      = "leader-epoch-checkpoint"
	RecoveryPointFile    = "recovery-point-offset-checkpoint"
	LogStartOffsetFile   = "log-start-offset-checkpoint"
	HighWatermarkFile    = "replication-offset-checkpoint"
	CleanShutdownFile    = ".kafka_cleanshutdown"
	segmentNameDigits    = 20
	maxRelativeOffset    = 1<<31 - 1
	defaultReadChunkSize = 64 << 10
)

// FilenamePrefixFromOffset returns offset as 20 zero-padded decimal digits,
// as Kafka's LogFileUtils.filenamePrefixFromOffset.
func FilenamePrefixFromOffset(offset int64) string {
	s := strconv.FormatInt(offset, 10)
	for len(s) < segmentNameDigits {
		s = "0000000000000000000000"[:segmentNameDigits-len(s)] + s
	}
	return s
}

// offsetFromFilename parses a segment file name "<20 digits><suffix>".
func offsetFromFilename(name, suffix string) (int64, bool) {
	if len(name) != segmentNameDigits+len(suffix) || name[segmentNameDigits:] != suffix {
		return 0, false
	}
	for i := 0; i < segmentNameDigits; i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false
		}
	}
	o, err := strconv.ParseInt(name[:segmentNameDigits], 10, 64)
	return o, err == nil
}

func segmentFile(dir string, base int64, suffix string) string {
	if dir == "" || dir == "." || dir == "/" || !cleanpath.IsClean(dir) {
		return path.Join(dir, FilenamePrefixFromOffset(base)+suffix)
	}
	// NB: for a clean directory path.Join is dir + "/" + name: one
	// allocation instead of three (a log opens four files per segment).
	var buf [128]byte
	b := append(buf[:0], dir...)
	b = append(b, '/')
	var digits [24]byte
	d := strconv.AppendInt(digits[:0], base, 10)
	for i := len(d); i < segmentNameDigits; i++ {
		b = append(b, '0')
	}
	b = append(b, d...)
	b = append(b, suffix...)
	return string(b)
}
