package main

// export_decode_test.go reads what run -export writes with a decoder of its
// own: franz-go's kmsg for the record batches (not broker/storage, which
// wrote them) and Kafka's published layouts for the index, time index and
// checkpoint files, as kafka-dump-log and a restarting broker read them.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// exportedBatch is one record batch of an exported segment.
type exportedBatch struct {
	pos         int // byte position in the segment
	first, last int64
	epoch       int32
	maxTS       int64
	control     bool
	legacy      bool // a v0 or v1 message: no leader epoch
}

var segmentName = regexp.MustCompile(`^(\d{20})\.log$`)

// decodeSegment decodes every batch of a .log file, checking each as
// Kafka's DefaultRecordBatch.ensureValid and its record iterator do.
func decodeSegment(path string, base int64) ([]exportedBatch, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	var out []exportedBatch
	for pos := 0; pos < len(b); {
		if len(b)-pos < 17 {
			return nil, fmt.Errorf("%s@%d: %d bytes left, less than an offset, a length, a CRC or epoch and a magic byte", path, pos, len(b)-pos)
		}
		size := 12 + int(int32(binary.BigEndian.Uint32(b[pos+8:])))
		if size < 17 || pos+size > len(b) {
			return nil, fmt.Errorf("%s@%d: batch of %d bytes runs past the file (%d bytes)", path, pos, size, len(b))
		}
		raw := b[pos : pos+size]
		if magic := raw[16]; magic < 2 {
			// A message set of format v0 or v1 (0.10 and before, or
			// log.message.format.version below 0.11): one message an offset.
			var m kmsg.MessageV1
			if err := m.ReadFrom(raw); err != nil {
				return nil, fmt.Errorf("%s@%d: kmsg cannot read the v%d message: %v", path, pos, magic, err)
			}
			if got := int32(crc32.ChecksumIEEE(raw[16:])); got != m.CRC {
				return nil, fmt.Errorf("%s@%d: CRC %08x, the bytes from magic on give %08x", path, pos, uint32(m.CRC), uint32(got))
			}
			if n := len(out); m.Offset < base || n > 0 && m.Offset <= out[n-1].last {
				return nil, fmt.Errorf("%s@%d: offset %d out of order (base %d)", path, pos, m.Offset, base)
			}
			ts := int64(-1)
			if magic == 1 {
				ts = m.Timestamp
			}
			out = append(out, exportedBatch{pos: pos, first: m.Offset, last: m.Offset, epoch: -1, maxTS: ts, legacy: true})
			pos += size
			continue
		}
		if size < 61 {
			return nil, fmt.Errorf("%s@%d: a v2 batch of %d bytes, less than its header (61)", path, pos, size)
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(raw); err != nil {
			return nil, fmt.Errorf("%s@%d: kmsg cannot read the batch: %v", path, pos, err)
		}
		if rb.Magic != 2 {
			return nil, fmt.Errorf("%s@%d: magic %d, want 2", path, pos, rb.Magic)
		}
		if got := int32(crc32.Checksum(raw[21:], castagnoli)); got != rb.CRC {
			return nil, fmt.Errorf("%s@%d: CRC %08x, the bytes from attributes on give %08x", path, pos, uint32(rb.CRC), uint32(got))
		}
		if rb.FirstOffset < base {
			return nil, fmt.Errorf("%s@%d: first offset %d below the segment's base %d", path, pos, rb.FirstOffset, base)
		}
		if n := len(out); n > 0 && rb.FirstOffset <= out[n-1].last {
			return nil, fmt.Errorf("%s@%d: first offset %d not after the previous batch's last %d", path, pos, rb.FirstOffset, out[n-1].last)
		}
		if rb.Attributes&0x07 != 0 {
			return nil, fmt.Errorf("%s@%d: compressed (attributes %#x); the simulated producer does not compress", path, pos, rb.Attributes)
		}
		recs := rb.Records
		maxTS := rb.FirstTimestamp
		for i := int32(0); i < rb.NumRecords; i++ {
			length, n := binary.Varint(recs)
			if n <= 0 || int(length) < 0 || n+int(length) > len(recs) {
				return nil, fmt.Errorf("%s@%d: record %d: bad length", path, pos, i)
			}
			var r kmsg.Record
			if err := r.ReadFrom(recs[:n+int(length)]); err != nil {
				return nil, fmt.Errorf("%s@%d: record %d: %v", path, pos, i, err)
			}
			if r.OffsetDelta != i {
				return nil, fmt.Errorf("%s@%d: record %d has offset delta %d", path, pos, i, r.OffsetDelta)
			}
			maxTS = max(maxTS, rb.FirstTimestamp+r.TimestampDelta64)
			recs = recs[n+int(length):]
		}
		if len(recs) != 0 {
			return nil, fmt.Errorf("%s@%d: %d bytes after the batch's %d records", path, pos, len(recs), rb.NumRecords)
		}
		if rb.LastOffsetDelta != rb.NumRecords-1 {
			return nil, fmt.Errorf("%s@%d: last offset delta %d with %d records", path, pos, rb.LastOffsetDelta, rb.NumRecords)
		}
		if rb.MaxTimestamp != maxTS {
			return nil, fmt.Errorf("%s@%d: max timestamp %d, the records' largest is %d", path, pos, rb.MaxTimestamp, maxTS)
		}
		out = append(out, exportedBatch{pos: pos, first: rb.FirstOffset, last: rb.FirstOffset + int64(rb.LastOffsetDelta),
			epoch: rb.PartitionLeaderEpoch, maxTS: rb.MaxTimestamp, control: rb.Attributes&0x20 != 0})
		pos += size
	}
	return out, nil
}

// checkOffsetIndex checks a .index against its segment's batches: 8-byte
// entries (offset relative to base, position), both strictly increasing,
// each position the start of a batch whose first offset is at most the
// entry's, as OffsetIndex.sanityCheck and a lookup need.
func checkOffsetIndex(path string, base int64, batches []exportedBatch) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(b)%8 != 0 {
		return fmt.Errorf("%s: %d bytes, not a whole number of 8-byte entries", path, len(b))
	}
	at := map[int]exportedBatch{}
	for _, bt := range batches {
		at[bt.pos] = bt
	}
	prevOff, prevPos := int64(-1), -1
	for i := 0; i < len(b); i += 8 {
		off := base + int64(int32(binary.BigEndian.Uint32(b[i:])))
		pos := int(int32(binary.BigEndian.Uint32(b[i+4:])))
		bt, ok := at[pos]
		switch {
		case off <= prevOff || pos <= prevPos:
			return fmt.Errorf("%s entry %d: (%d, %d) not after (%d, %d)", path, i/8, off, pos, prevOff, prevPos)
		case !ok:
			return fmt.Errorf("%s entry %d: position %d is not the start of a batch", path, i/8, pos)
		case off < bt.first:
			return fmt.Errorf("%s entry %d: offset %d before the batch at %d (%d..%d)", path, i/8, off, pos, bt.first, bt.last)
		}
		// Kafka indexes an append's largest offset at the append's first
		// batch, so the offset may lie in a later batch of that append; a
		// lookup scanning from the position still finds it.
		prevOff, prevPos = off, pos
	}
	return nil
}

// checkTimeIndex checks a .timeindex: 12-byte entries (timestamp,
// offset relative to base), timestamps strictly and offsets weakly
// increasing, each offset in the segment and each timestamp the largest
// of the batches up to it, as TimeIndex.sanityCheck and lookups need.
func checkTimeIndex(path string, base int64, batches []exportedBatch) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(b)%12 != 0 {
		return fmt.Errorf("%s: %d bytes, not a whole number of 12-byte entries", path, len(b))
	}
	prevTS, prevOff := int64(-1), int64(-1)
	for i := 0; i < len(b); i += 12 {
		ts := int64(binary.BigEndian.Uint64(b[i:]))
		off := base + int64(int32(binary.BigEndian.Uint32(b[i+8:])))
		if ts <= prevTS || off < prevOff {
			return fmt.Errorf("%s entry %d: (%d, %d) not after (%d, %d)", path, i/12, ts, off, prevTS, prevOff)
		}
		var maxUpTo int64 = -1
		found := false
		for _, bt := range batches {
			if bt.first <= off {
				maxUpTo = max(maxUpTo, bt.maxTS)
			}
			found = found || (bt.first <= off && off <= bt.last)
		}
		if !found {
			return fmt.Errorf("%s entry %d: offset %d is in no batch of the segment", path, i/12, off)
		}
		if ts > maxUpTo {
			return fmt.Errorf("%s entry %d: timestamp %d, but the batches up to offset %d reach only %d", path, i/12, ts, off, maxUpTo)
		}
		prevTS, prevOff = ts, off
	}
	return nil
}

// readCheckpoint reads Kafka's checkpoint layout: a version line (0), a
// count line, then that many entries of fields fields each.
func readCheckpoint(path string, fields int) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("%s: want a version line 0 and a count line, got %q", path, lines)
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, fmt.Errorf("%s: count line %q, with %d entries after it", path, lines[1], len(lines)-2)
	}
	var out [][]string
	for i, l := range lines[2:] {
		fs := strings.Split(l, " ")
		if len(fs) != fields {
			return nil, fmt.Errorf("%s line %d: %q, want %d space-separated fields", path, i+3, l, fields)
		}
		out = append(out, fs)
	}
	return out, nil
}

// checkExportedPartition decodes one partition directory: its segments in
// order, contiguous batches, indexes, and the leader-epoch checkpoint that
// must give each batch's epoch (LeaderEpochFileCache).
func checkExportedPartition(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	for _, e := range entries {
		if m := segmentName.FindStringSubmatch(e.Name()); m != nil {
			base, _ := strconv.ParseInt(m[1], 10, 64)
			bases = append(bases, base)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	var all []exportedBatch
	for i, base := range bases {
		name := filepath.Join(dir, fmt.Sprintf("%020d", base))
		batches, err := decodeSegment(name+".log", base)
		if err != nil {
			t.Fatal(err)
		}
		if i+1 < len(bases) && len(batches) > 0 && batches[len(batches)-1].last >= bases[i+1] {
			t.Fatalf("%s.log: last offset %d reaches the next segment's base %d", name, batches[len(batches)-1].last, bases[i+1])
		}
		for _, idx := range []struct {
			ext   string
			check func(string, int64, []exportedBatch) error
		}{{".index", checkOffsetIndex}, {".timeindex", checkTimeIndex}} {
			if _, err := os.Stat(name + idx.ext); err != nil {
				t.Fatalf("segment %s.log has no %s: %v", name, idx.ext, err)
			}
			if err := idx.check(name+idx.ext, base, batches); err != nil {
				t.Fatal(err)
			}
		}
		all = append(all, batches...)
	}
	if !slices.ContainsFunc(all, func(bt exportedBatch) bool { return !bt.legacy }) {
		return // no v2 batch: no leader epoch to check
	}
	cp := filepath.Join(dir, "leader-epoch-checkpoint")
	rows, err := readCheckpoint(cp, 2)
	if err != nil {
		t.Fatal(err)
	}
	var epochs, starts []int64
	for _, r := range rows {
		e, err1 := strconv.ParseInt(r[0], 10, 32)
		s, err2 := strconv.ParseInt(r[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: entry %q is not epoch and offset", cp, r)
		}
		if n := len(epochs); n > 0 && (e <= epochs[n-1] || s < starts[n-1]) {
			t.Fatalf("%s: entry %d %d does not follow %d %d", cp, e, s, epochs[n-1], starts[n-1])
		}
		epochs, starts = append(epochs, e), append(starts, s)
	}
	for _, bt := range all {
		if bt.legacy {
			continue
		}
		i := sort.Search(len(starts), func(i int) bool { return starts[i] > bt.first }) - 1
		if i < 0 || epochs[i] != int64(bt.epoch) {
			t.Fatalf("%s: the batch at offset %d has leader epoch %d; the checkpoint %v/%v gives another", dir, bt.first, bt.epoch, epochs, starts)
		}
	}
}

// TestExportDecodesAsKafka runs scenarios with -export and reads every
// exported broker disk back as described above: a crash and a
// truncation (kip101-hw-lag), segment rolls and index entries (swarm with
// small segments), and transactions with their control batches.
func TestExportDecodesAsKafka(t *testing.T) {
	for _, args := range [][]string{
		{"-scenario", "kip101-hw-lag"},
		{"-scenario", "swarm", "-variant", "kip279-safe", "-set", "log.segment.bytes=4096", "-set", "log.index.interval.bytes=512"},
		{"-scenario", "txn-exactly-once", "-variant", "tv2"},
	} {
		dir := t.TempDir()
		runCmd(append(append([]string{"run"}, args...), "-export", dir)...)
		partitions := 0
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && regexp.MustCompile(`^.+-\d+$`).MatchString(d.Name()) {
				checkExportedPartition(t, path)
				partitions++
				return filepath.SkipDir
			}
			if !d.IsDir() && d.Name() == "replication-offset-checkpoint" {
				if _, err := readCheckpoint(path, 3); err != nil {
					t.Fatal(err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if partitions == 0 {
			t.Fatalf("%v: no partition directory exported", args)
		}
	}
}
