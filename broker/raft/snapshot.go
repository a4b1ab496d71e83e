package raft

// This file is KIP-630's snapshots: files
// `<20-digit end offset>-<10-digit epoch>.checkpoint` in the metadata
// partition directory, holding record batches that begin with a control
// batch of one SnapshotHeaderRecord (type 3) and end with one of a
// SnapshotFooterRecord (type 4); the listener's records lie between them,
// in data batches. A member writes one after SnapshotBytes committed bytes
// (metadata.log.max.record.bytes.between.snapshots), deletes older
// snapshots and the log's whole segments below it; at every start the
// latest snapshot is loaded (HandleLoadSnapshot) before the log replays.
// Snapshot files are written to `.checkpoint.part`, synced, renamed,
// and the directory synced (Kafka's FileRawSnapshotWriter freeze).
// Simplifications: a member deletes its log prefix as soon as its snapshot
// is durable (Kafka waits for metadata.log.retention.*), so that a lagging
// follower soon needs FetchSnapshot; snapshots are uncompressed.

import (
	"encoding/binary"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

const (
	snapshotSuffix  = ".checkpoint"
	partSuffix      = ".part"
	snapshotBatchOf = 1000 // records per data batch in a snapshot
)

// snapshotID is Kafka's OffsetAndEpoch of a snapshot.
type snapshotID struct {
	end   int64
	epoch int32
	ok    bool
}

func snapshotName(id snapshotID) string {
	return fmt.Sprintf("%020d-%010d%s", id.end, id.epoch, snapshotSuffix)
}

func parseSnapshotName(n string) (snapshotID, bool) {
	if !strings.HasSuffix(n, snapshotSuffix) {
		return snapshotID{}, false
	}
	parts := strings.Split(strings.TrimSuffix(n, snapshotSuffix), "-")
	if len(parts) != 2 || len(parts[0]) != 20 || len(parts[1]) != 10 {
		return snapshotID{}, false
	}
	end, err1 := strconv.ParseInt(parts[0], 10, 64)
	epoch, err2 := strconv.ParseInt(parts[1], 10, 32)
	if err1 != nil || err2 != nil {
		return snapshotID{}, false
	}
	return snapshotID{end: end, epoch: int32(epoch), ok: true}, true
}

func controlValue(fields []byte) []byte {
	v := binary.BigEndian.AppendUint16(nil, 0) // serialization version 0
	v = binary.BigEndian.AppendUint16(v, 0)    // the record's Version field
	v = append(v, fields...)
	return append(v, 0) // no tagged fields
}

// encodeSnapshot lays out a snapshot's batches; a voter set (KIP-853,
// kraft.version 1) follows the header in a control batch of its own, as
// Kafka's RecordsSnapshotWriter writes KRaftVersionRecord and VotersRecord.
func encodeSnapshot(id snapshotID, nowMs int64, records [][]byte, voters voterSet) []byte {
	var out []byte
	off := int64(0)
	add := func(control bool, rs []storage.Record) {
		b := storage.NewBatch(off, rs)
		b.PartitionLeaderEpoch = id.epoch
		if control {
			b.Attributes |= storage.ControlFlagMask
		}
		out = b.AppendTo(out)
		off = b.NextOffset()
	}
	header := controlValue(binary.BigEndian.AppendUint64(nil, uint64(nowMs))) // LastContainedLogTimestamp
	add(true, []storage.Record{{Timestamp: nowMs, Key: controlKey(controlSnapshotHeader), Value: header}})
	if voters != nil {
		add(true, votersRecords(nowMs, voters))
	}
	for i := 0; i < len(records); i += snapshotBatchOf {
		var rs []storage.Record
		for _, v := range records[i:min(i+snapshotBatchOf, len(records))] {
			rs = append(rs, storage.Record{Timestamp: nowMs, Value: append([]byte(nil), v...)})
		}
		add(false, rs)
	}
	add(true, []storage.Record{{Timestamp: nowMs, Key: controlKey(controlSnapshotFooter), Value: controlValue(nil)}})
	return out
}

func controlType(r storage.Record) int16 {
	if len(r.Key) < 4 {
		return -1
	}
	return int16(binary.BigEndian.Uint16(r.Key[2:]))
}

// decodeSnapshot checks the header and footer and returns the records.
func decodeSnapshot(data []byte) ([][]byte, error) {
	records, _, err := decodeSnapshotVoters(data)
	return records, err
}

// decodeSnapshotVoters is decodeSnapshot, and the voter set the snapshot
// holds (nil: none).
func decodeSnapshotVoters(data []byte) ([][]byte, voterSet, error) {
	bs, err := storage.DecodeBatches(data)
	if err != nil {
		return nil, nil, err
	}
	isControl := func(b storage.RecordBatch, typ int16) bool {
		return b.Attributes&storage.ControlFlagMask != 0 && len(b.Records) == 1 && controlType(b.Records[0]) == typ
	}
	if len(bs) < 2 || !isControl(bs[0], controlSnapshotHeader) || !isControl(bs[len(bs)-1], controlSnapshotFooter) {
		return nil, nil, fmt.Errorf("raft: snapshot without SnapshotHeaderRecord and SnapshotFooterRecord")
	}
	var out [][]byte
	var voters voterSet
	for _, b := range bs[1 : len(bs)-1] {
		for _, r := range b.Records {
			if b.Attributes&storage.ControlFlagMask != 0 {
				if controlType(r) == controlKRaftVoters {
					if voters, err = decodeVotersRecord(r.Value); err != nil {
						return nil, nil, err
					}
				}
				continue
			}
			out = append(out, r.Value)
		}
	}
	return out, voters, nil
}

// listSnapshots returns the complete snapshots on disk, oldest first, and
// removes partial ones.
func (c *Client) listSnapshots() []snapshotID {
	names, err := c.ctx.Disk().List(c.log.dir)
	must(err)
	var ids []snapshotID
	for _, n := range names {
		if strings.HasSuffix(n, snapshotSuffix+partSuffix) {
			must(c.ctx.Disk().Remove(path.Join(c.log.dir, n)))
			continue
		}
		if id, ok := parseSnapshotName(n); ok && n != bootstrapCheckpoint {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].end < ids[j].end })
	return ids
}

// loadLatestSnapshot hands the latest snapshot to the listener at start.
func (c *Client) loadLatestSnapshot() {
	c.nextDeliver = c.log.startOffset()
	ids := c.listSnapshots()
	for i := len(ids) - 1; i >= 0; i-- {
		data, err := c.ctx.Disk().ReadFile(path.Join(c.log.dir, snapshotName(ids[i])))
		must(err)
		records, voters, err := decodeSnapshotVoters(data)
		if err != nil {
			c.ctx.Log("raft-snapshot-corrupt", sim.S("file", snapshotName(ids[i])), sim.S("error", err.Error()))
			continue
		}
		c.installSnapshot(ids[i], records, voters, "load")
		return
	}
}

// installSnapshot makes id the listener's state and the log's floor.
func (c *Client) installSnapshot(id snapshotID, records [][]byte, voters voterSet, kind string) {
	if c.log.endOffset() < id.end || c.log.startOffset() > id.end || kind == "fetch" {
		c.log.truncateFullyAndStartAt(id.end)
	}
	if c.dynamic() && voters != nil {
		// The snapshot's set replaces the older ones; the log above it
		// (a load at start) is scanned after.
		c.vhist = c.vhist[:0]
		c.pushVoters(id.end-1, voters)
	}
	c.snap = id
	c.nextDeliver = id.end
	c.bytesSinceSnap = 0
	c.ctx.Log("raft-snapshot", sim.I("end-offset", id.end), sim.I("epoch", int64(id.epoch)), sim.S("kind", "load"))
	c.l.HandleLoadSnapshot(c.ctx, Snapshot{EndOffset: id.end, Epoch: id.epoch, Records: records})
}

// writeSnapshotFile writes a complete snapshot durably.
func (c *Client) writeSnapshotFile(id snapshotID, data []byte) {
	d := c.ctx.Disk()
	final := path.Join(c.log.dir, snapshotName(id))
	part := final + partSuffix
	if d.Exists(part) {
		must(d.Remove(part))
	}
	must(d.Create(part))
	must(d.Append(part, data))
	must(d.Sync(part))
	must(d.Rename(part, final))
	must(d.SyncDir(c.log.dir))
}

// maybeSnapshot writes a snapshot once SnapshotBytes were committed.
func (c *Client) maybeSnapshot() {
	if c.cfg.SnapshotBytes == 0 || c.bytesSinceSnap < c.cfg.SnapshotBytes {
		return
	}
	end := c.nextDeliver
	if c.snap.ok && end <= c.snap.end || end <= c.log.startOffset() {
		return
	}
	id := snapshotID{end: end, epoch: max(c.log.epochAt(end-1), 0), ok: true}
	nowMs := sim.Duration(c.ctx.Now()).Milliseconds()
	var voters voterSet
	if c.dynamic() {
		voters = c.votersAt(end - 1)
	}
	c.writeSnapshotFile(id, encodeSnapshot(id, nowMs, c.l.Snapshot(), voters))
	c.ctx.Log("raft-snapshot", sim.I("end-offset", id.end), sim.I("epoch", int64(id.epoch)), sim.S("kind", "write"))
	c.snap = id
	c.bytesSinceSnap = 0
	c.cleanBelowSnapshot()
}

// cleanBelowSnapshot deletes older snapshots and the log's prefix.
func (c *Client) cleanBelowSnapshot() {
	for _, old := range c.listSnapshots() {
		if old.end < c.snap.end {
			must(c.ctx.Disk().Remove(path.Join(c.log.dir, snapshotName(old))))
		}
	}
	// Keep the log's prefix a member may still serve: a follower whose
	// fetch offset falls below it will fetch the snapshot instead.
	c.log.deletePrefixBelow(c.ctx.Now(), min(c.snap.end, max(c.hw, 0)))
}
