package raft

// This file is the metadata log (Kafka's KafkaMetadataLog over a
// UnifiedLog): __cluster_metadata-0 in Kafka's on-disk layout, written with
// package storage (v2 record batches, .index/.timeindex,
// leader-epoch-checkpoint), and the control records KRaft writes into it
// (ControlRecordType LEADER_CHANGE = 2, as LeaderChangeMessage v0).
//
// Simplifications vs Kafka, and why:
//   - Every append is flushed at once (Kafka flushes the raft log before the
//     leader counts its own end offset and before a follower fetches
//     further, so the effect is the same: a crash loses nothing that was
//     acknowledged). The log is opened with recovery point 0: a restart
//     scans the whole (small) log instead of reading a checkpoint.
//   - The log start offset is always a segment base offset: the prefix
//     below a snapshot is deleted a whole segment at a time, so a restart
//     recovers it from the first segment's name (Kafka keeps it in
//     log-start-offset-checkpoint).

import (
	"fmt"
	"math"
	"path"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Control record types (ControlRecordType.java).
const (
	controlLeaderChange   int16 = 2
	controlSnapshotHeader int16 = 3
	controlSnapshotFooter int16 = 4
)

// Entry is one batch of the local metadata log, for tests and checkers:
// its offsets, the epoch it was written in, its CRC32C (the same bytes, so
// the same value, on every replica) and whether it is a control batch.
type Entry struct {
	BaseOffset, LastOffset int64
	Epoch                  int32
	CRC                    uint32
	Control                bool
}

// metaLog is the metadata log of one process life.
type metaLog struct {
	disk *sim.Disk
	dir  string
	log  *storage.Log
}

func storageConfig(cfg Config) storage.Config {
	sc := storage.DefaultConfig()
	sc.Mutants = cfg.Mutants // the storage's planted bugs (fsync-lies) reach the metadata log too
	sc.LogDirs = []string{cfg.Dir}
	if cfg.SegmentBytes > 0 {
		sc.SegmentBytes = cfg.SegmentBytes
	}
	sc.RetentionMs, sc.RetentionBytes = -1, -1
	sc.FlushIntervalMessages = math.MaxInt64
	return sc
}

func openMetaLog(ctx *sim.Context, cfg Config) (*metaLog, error) {
	dir := path.Join(cfg.Dir, MetadataTopic+"-0")
	l, err := storage.OpenLog(ctx.Disk(), dir, storage.TopicPartition{Topic: MetadataTopic, Partition: 0}, storageConfig(cfg), 0, 0, ctx.Now())
	if err != nil {
		return nil, err
	}
	return &metaLog{disk: ctx.Disk(), dir: dir, log: l}, nil
}

func (m *metaLog) endOffset() int64   { return m.log.LogEndOffset() }
func (m *metaLog) startOffset() int64 { return m.log.LogStartOffset() }

// lastEpoch returns the epoch of the last batch in the log, or -1 when the
// log holds none (the caller falls back to the snapshot's epoch).
func (m *metaLog) lastEpoch() int32 { return m.log.EpochCache().LatestEpoch() }

// endOffsetForEpoch is KIP-595's epoch lookup (the leader's answer to a
// follower's LastFetchedEpoch).
func (m *metaLog) endOffsetForEpoch(epoch int32) (int32, int64) {
	return m.log.EndOffsetForEpoch(epoch)
}

// epochAt returns the epoch of the batch holding offset, or -1.
func (m *metaLog) epochAt(offset int64) int32 { return m.log.EpochCache().EpochForOffset(offset) }

func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("raft: metadata log: %v", err))
	}
}

// appendLeader appends records as one batch in epoch and flushes it.
func (m *metaLog) appendLeader(now sim.Time, epoch int32, control bool, records []storage.Record) storage.AppendInfo {
	b := storage.NewBatch(0, records)
	if control {
		b.Attributes |= storage.ControlFlagMask
	}
	info, err := m.log.AppendBatchAsLeader(&b, epoch, now)
	must(err)
	must(m.log.Flush())
	return info
}

// appendFollower appends fetched batches as they are and flushes them.
func (m *metaLog) appendFollower(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if _, err := m.log.AppendAsFollower(data); err != nil {
		return err
	}
	return m.log.Flush()
}

func (m *metaLog) truncateTo(offset int64) { must(m.log.TruncateTo(offset)) }

func (m *metaLog) truncateFullyAndStartAt(offset int64) { must(m.log.TruncateFullyAndStartAt(offset)) }

// read returns whole batches from offset on, below maxOffset.
func (m *metaLog) read(offset int64, maxBytes int, maxOffset int64) []byte {
	data, err := m.log.Read(offset, maxBytes, maxOffset)
	must(err)
	return data
}

// batches decodes the batches from offset on, below maxOffset.
func (m *metaLog) batches(offset, maxOffset int64) []storage.RecordBatch {
	var out []storage.RecordBatch
	for offset < maxOffset {
		data := m.read(offset, 1<<20, maxOffset)
		if len(data) == 0 {
			break
		}
		bs, err := storage.DecodeBatches(data)
		must(err)
		if len(bs) == 0 {
			break
		}
		out = append(out, bs...)
		offset = bs[len(bs)-1].NextOffset()
	}
	return out
}

// deletePrefixBelow deletes the whole segments below offset (a snapshot's
// end offset), moving the log start offset to a segment base.
func (m *metaLog) deletePrefixBelow(now sim.Time, offset int64) {
	base := int64(-1)
	for _, s := range m.log.Segments() {
		if s.BaseOffset <= offset {
			base = s.BaseOffset
		}
	}
	if base <= m.startOffset() {
		return
	}
	must(m.log.MaybeIncrementLogStartOffset(base))
	_, err := m.log.DeleteOldSegments(now, offset)
	must(err)
}

// entries lists every batch of the log.
func (m *metaLog) entries() []Entry {
	var out []Entry
	for _, b := range m.batches(m.startOffset(), m.endOffset()) {
		out = append(out, Entry{BaseOffset: b.BaseOffset, LastOffset: b.LastOffset(), Epoch: b.PartitionLeaderEpoch,
			CRC: b.CRC, Control: b.Attributes&storage.ControlFlagMask != 0})
	}
	return out
}

// controlKey is a control record's key (ControlRecordKey v0).
func controlKey(typ int16) []byte {
	k := kmsg.ControlRecordKey{Version: 0, Type: kmsg.ControlRecordKeyType(typ)}
	return k.AppendTo(nil)
}

// leaderChangeRecord is the LEADER_CHANGE control record a new leader
// writes at the start of its epoch (LeaderChangeMessage v0: the leader,
// the voters and the voters that granted the vote).
func leaderChangeRecord(nowMs int64, leader int32, voters, granting []int32) storage.Record {
	msg := kmsg.LeaderChangeMessage{Version: 0, LeaderID: leader}
	for _, v := range voters {
		msg.Voters = append(msg.Voters, kmsg.LeaderChangeMessageVoter{VoterID: v})
	}
	for _, v := range granting {
		msg.GrantingVoters = append(msg.GrantingVoters, kmsg.LeaderChangeMessageVoter{VoterID: v})
	}
	return storage.Record{Timestamp: nowMs, Key: controlKey(controlLeaderChange), Value: msg.AppendTo(nil)}
}
