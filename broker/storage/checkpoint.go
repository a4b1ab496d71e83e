package storage

// This file reads and writes Kafka's checkpoint files (CheckpointFile.java,
// OffsetCheckpointFile, LeaderEpochCheckpointFile): line 1 the version, line 2
// the entry count, then one entry per line, fields separated by whitespace.
// A write goes to "<file>.tmp", is synced, renamed over the file, and the
// directory is synced, so a crash leaves the old file or the new one.
// Simplifications vs Kafka: entries of offset checkpoints are written sorted
// by topic and partition (Kafka writes a hash map's order), so that files are
// deterministic.

import (
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// CheckpointVersion is the version of every checkpoint file kafkasim writes.
const CheckpointVersion = 0

// TopicPartition names a partition. Its String form "<topic>-<partition>"
// is the name of the partition's directory.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// ParseTopicPartition parses a partition directory name "<topic>-<partition>".
func ParseTopicPartition(name string) (TopicPartition, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return TopicPartition{}, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 || name[i+1] == '+' {
		return TopicPartition{}, false
	}
	return TopicPartition{Topic: name[:i], Partition: int32(p)}, true
}

func lessTP(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

// PartitionOffset is one entry of an offset checkpoint file.
type PartitionOffset struct {
	TopicPartition
	Offset int64
}

// EpochEntry is one entry of a leader-epoch-checkpoint: the first offset
// written in a leader epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// splitFields splits a line like Java's line.split("\\s+"): runs of
// whitespace separate fields, a leading run gives an empty first field and
// trailing empty fields are dropped.
func splitFields(line string) []string {
	var out []string
	start, inSpace := 0, false
	for i := 0; i < len(line); i++ {
		sp := line[i] == ' ' || line[i] == '\t' || line[i] == '\f' || line[i] == '\v'
		switch {
		case sp && !inSpace:
			out = append(out, line[start:i])
			inSpace = true
		case !sp && inSpace:
			start, inSpace = i, false
		}
	}
	if !inSpace {
		out = append(out, line[start:])
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// parseInt parses like Java's Integer.parseInt / Long.parseLong.
func parseInt(s string, bits int) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, bits)
	return v, err == nil && s != "" && !strings.ContainsAny(s, "_")
}

// parseCheckpoint parses a checkpoint file's content: the version must be
// version, every entry must have nfields fields, and the count must match.
// An empty file, or one with only a version line, holds no entries, as in
// Kafka's CheckpointReadBuffer.
func parseCheckpoint(file string, data []byte, version int, nfields int) ([][]string, error) {
	if len(data) == 0 {
		return nil, nil // no file (readCheckpointFile), or an empty one: no entries
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	bad := func(line int, reason string) error {
		return &CorruptError{File: file, Position: int64(line), Line: true, Reason: reason}
	}
	if len(lines) == 0 {
		return nil, nil
	}
	v, ok := parseInt(lines[0], 32)
	if !ok {
		return nil, bad(1, "malformed line "+strconv.Quote(lines[0])+": want the version")
	}
	if v != int64(version) {
		return nil, bad(1, "unrecognised version "+lines[0]+", expected version "+strconv.Itoa(version))
	}
	if len(lines) == 1 {
		return nil, nil
	}
	n, ok := parseInt(lines[1], 32)
	if !ok || n < 0 {
		return nil, bad(2, "malformed line "+strconv.Quote(lines[1])+": want the entry count")
	}
	entries := make([][]string, 0, min(n, int64(len(lines))))
	for i, line := range lines[2:] {
		f := splitFields(line)
		if len(f) != nfields {
			return nil, bad(i+3, "malformed line "+strconv.Quote(line)+": want "+strconv.Itoa(nfields)+" fields")
		}
		entries = append(entries, f)
	}
	if int64(len(entries)) != n {
		return nil, bad(len(lines), "expected "+strconv.FormatInt(n, 10)+" entries, but found "+strconv.Itoa(len(entries)))
	}
	return entries, nil
}

// ParseOffsetCheckpoint parses an offset checkpoint file
// (replication-offset-checkpoint, recovery-point-offset-checkpoint,
// log-start-offset-checkpoint): entries "topic partition offset". file names
// the file in errors.
func ParseOffsetCheckpoint(file string, data []byte) ([]PartitionOffset, error) {
	entries, err := parseCheckpoint(file, data, CheckpointVersion, 3)
	if err != nil {
		return nil, err
	}
	out := make([]PartitionOffset, 0, len(entries))
	for i, f := range entries {
		p, ok1 := parseInt(f[1], 32)
		o, ok2 := parseInt(f[2], 64)
		if !ok1 || !ok2 || f[0] == "" {
			return nil, &CorruptError{File: file, Position: int64(i + 3), Line: true, Reason: "malformed line " + strconv.Quote(strings.Join(f, " "))}
		}
		out = append(out, PartitionOffset{TopicPartition{f[0], int32(p)}, o})
	}
	return out, nil
}

// ParseEpochCheckpoint parses a leader-epoch-checkpoint: entries "epoch
// startOffset".
func ParseEpochCheckpoint(file string, data []byte) ([]EpochEntry, error) {
	entries, err := parseCheckpoint(file, data, CheckpointVersion, 2)
	if err != nil {
		return nil, err
	}
	out := make([]EpochEntry, 0, len(entries))
	for i, f := range entries {
		e, ok1 := parseInt(f[0], 32)
		o, ok2 := parseInt(f[1], 64)
		if !ok1 || !ok2 {
			return nil, &CorruptError{File: file, Position: int64(i + 3), Line: true, Reason: "malformed line " + strconv.Quote(strings.Join(f, " "))}
		}
		out = append(out, EpochEntry{int32(e), o})
	}
	return out, nil
}

// FormatOffsetCheckpoint renders entries in the checkpoint text format,
// sorted by topic and partition.
func FormatOffsetCheckpoint(entries []PartitionOffset) []byte {
	return appendOffsetCheckpoint(nil, entries)
}

// appendOffsetCheckpoint appends entries in the offset checkpoint format
// to dst: FormatOffsetCheckpoint without its copies when entries are
// sorted already, as the Manager's are.
func appendOffsetCheckpoint(dst []byte, entries []PartitionOffset) []byte {
	sorted := entries
	if !slices.IsSortedFunc(sorted, comparePartitionOffset) {
		sorted = slices.Clone(entries)
		sort.Slice(sorted, func(i, j int) bool { return lessTP(sorted[i].TopicPartition, sorted[j].TopicPartition) })
	}
	dst = append(dst, "0\n"...)
	dst = strconv.AppendInt(dst, int64(len(sorted)), 10)
	dst = append(dst, '\n')
	for _, e := range sorted {
		dst = append(dst, e.Topic...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(e.Partition), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, e.Offset, 10)
		dst = append(dst, '\n')
	}
	return dst
}

func comparePartitionOffset(a, b PartitionOffset) int {
	return CompareTP(a.TopicPartition, b.TopicPartition)
}

// FormatEpochCheckpoint renders entries in the leader-epoch-checkpoint format.
func FormatEpochCheckpoint(entries []EpochEntry) []byte {
	return appendEpochCheckpoint(nil, entries)
}

// appendEpochCheckpoint appends FormatEpochCheckpoint(entries) to dst.
func appendEpochCheckpoint(dst []byte, entries []EpochEntry) []byte {
	dst = append(dst, "0\n"...)
	dst = strconv.AppendInt(dst, int64(len(entries)), 10)
	dst = append(dst, '\n')
	for _, e := range entries {
		dst = strconv.AppendInt(dst, int64(e.Epoch), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, e.StartOffset, 10)
		dst = append(dst, '\n')
	}
	return dst
}

// writeFileAtomic writes data to name through name.tmp: write, sync, rename,
// sync the directory.
func writeFileAtomic(fs FS, name string, data []byte) error {
	return writeFileAtomicVia(fs, name, name+TmpFileSuffix, data)
}

// writeFileAtomicVia is writeFileAtomic with the temporary file's name
// given (tmp is name+TmpFileSuffix).
func writeFileAtomicVia(fs FS, name, tmp string, data []byte) error {
	return writeFileAtomicIn(fs, path.Dir(name), name, tmp, data)
}

// writeFileAtomicIn is writeFileAtomicVia with name's directory given
// (dir is path.Dir(name)), for a writer that keeps the names.
func writeFileAtomicIn(fs FS, dir, name, tmp string, data []byte) error {
	if fs.Exists(tmp) {
		if err := fs.Truncate(tmp, 0); err != nil {
			return err
		}
	} else if err := fs.Create(tmp); err != nil {
		return err
	}
	if err := fs.Append(tmp, data); err != nil {
		return err
	}
	if err := fs.Sync(tmp); err != nil {
		return err
	}
	if err := fs.Rename(tmp, name); err != nil {
		return err
	}
	return fs.SyncDir(dir)
}

// readCheckpointFile returns the file's content, or nil if it does not exist.
func readCheckpointFile(fs FS, name string) ([]byte, error) {
	if !fs.Exists(name) {
		return nil, nil
	}
	return fs.ReadFile(name)
}
