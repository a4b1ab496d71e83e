package coordinator

// This file encodes the records of __consumer_offsets as Kafka's
// GroupMetadataManager writes them (kmsg's OffsetCommitKey/Value and
// GroupMetadataKey/Value): an offset commit is key v1 (group, topic,
// partition) with value v3 (offset, leader epoch, metadata, commit
// timestamp); group metadata is key v2 (group) with value v3 (protocol
// type, generation, protocol, leader, state timestamp, members with their
// subscriptions and assignments). A null value is a tombstone. Keys make
// the topic compactable: the latest record of each key is the state.

import (
	"encoding/binary"
	"fmt"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Offset is one committed offset.
type Offset struct {
	Offset      int64
	LeaderEpoch int32
	Metadata    string
	Timestamp   int64 // commit time, ms
}

// OffsetRecord encodes a commit of off for group's topic-partition.
func OffsetRecord(group, topic string, partition int32, off Offset) storage.Record {
	k := kmsg.NewOffsetCommitKey()
	k.Version, k.Group, k.Topic, k.Partition = 1, group, topic, partition
	v := kmsg.NewOffsetCommitValue()
	v.Version, v.Offset, v.LeaderEpoch, v.Metadata, v.CommitTimestamp = 3, off.Offset, off.LeaderEpoch, off.Metadata, off.Timestamp
	return storage.Record{Timestamp: off.Timestamp, Key: k.AppendTo(nil), Value: v.AppendTo(nil)}
}

// GroupRecord encodes a group's metadata (value nil: a tombstone).
func GroupRecord(group string, v *kmsg.GroupMetadataValue, ts int64) storage.Record {
	k := kmsg.NewGroupMetadataKey()
	k.Version, k.Group = 2, group
	r := storage.Record{Timestamp: ts, Key: k.AppendTo(nil)}
	if v != nil {
		v.Version = 3
		r.Value = v.AppendTo(nil)
	}
	return r
}

// Decoded is one record of __consumer_offsets, decoded. Exactly one of
// OffsetKey and GroupKey is set; the matching value is nil for a tombstone.
type Decoded struct {
	OffsetKey   *kmsg.OffsetCommitKey
	OffsetValue *kmsg.OffsetCommitValue
	GroupKey    *kmsg.GroupMetadataKey
	GroupValue  *kmsg.GroupMetadataValue
}

// Group returns the group the record belongs to.
func (d Decoded) Group() string {
	if d.OffsetKey != nil {
		return d.OffsetKey.Group
	}
	return d.GroupKey.Group
}

// Decode decodes a record of __consumer_offsets.
func Decode(r storage.Record) (Decoded, error) {
	if len(r.Key) < 2 {
		return Decoded{}, fmt.Errorf("coordinator: record key of %d bytes: too short for a version", len(r.Key))
	}
	switch ver := int16(binary.BigEndian.Uint16(r.Key)); ver {
	case 0, 1:
		k := kmsg.NewOffsetCommitKey()
		if err := k.ReadFrom(r.Key); err != nil {
			return Decoded{}, fmt.Errorf("coordinator: offset commit key: %w", err)
		}
		d := Decoded{OffsetKey: &k}
		if r.Value != nil {
			v := kmsg.NewOffsetCommitValue()
			if err := v.ReadFrom(r.Value); err != nil {
				return Decoded{}, fmt.Errorf("coordinator: offset commit value: %w", err)
			}
			d.OffsetValue = &v
		}
		return d, nil
	case 2:
		k := kmsg.NewGroupMetadataKey()
		if err := k.ReadFrom(r.Key); err != nil {
			return Decoded{}, fmt.Errorf("coordinator: group metadata key: %w", err)
		}
		d := Decoded{GroupKey: &k}
		if r.Value != nil {
			v := kmsg.NewGroupMetadataValue()
			if err := v.ReadFrom(r.Value); err != nil {
				return Decoded{}, fmt.Errorf("coordinator: group metadata value: %w", err)
			}
			d.GroupValue = &v
		}
		return d, nil
	default:
		return Decoded{}, fmt.Errorf("coordinator: record key version %d: want 0 or 1 (offset commit) or 2 (group metadata)", ver)
	}
}
