package coordinator

// This file encodes the consumer group protocol's records in
// __consumer_offsets (KIP-848) as Kafka 4.0's group coordinator writes them
// (group-coordinator/src/main/resources/common/message/ConsumerGroup*.json):
// the key's version is the record type and its fields are not flexible
// (int16-length strings); the value is version 0 and flexible (compact
// strings and arrays, an empty tagged-field section after each struct).
//
//	key v3 ConsumerGroupMetadataKey (group)                -> Epoch
//	key v4 ConsumerGroupPartitionMetadataKey (group)       -> Topics (id, name, partitions)
//	key v5 ConsumerGroupMemberMetadataKey (group, member)  -> instance, rack, client, subscription, rebalance timeout, assignor
//	key v6 ConsumerGroupTargetAssignmentMetadataKey (group)-> AssignmentEpoch
//	key v7 ConsumerGroupTargetAssignmentMemberKey (group, member) -> TopicPartitions
//	key v8 ConsumerGroupCurrentMemberAssignmentKey (group, member) -> epoch, previous epoch, state, assigned, pending revocation
//
// A null value is a tombstone. Simplifications: ConsumerGroupPartitionMetadata
// carries no racks (PartitionMetadata is written empty), the member's
// ClassicMemberMetadata tag (tag 0: a classic member in a consumer group,
// consumergroup_migrate.go) is written as the generated code lays out a
// tagged struct (its flexible fields), not checked against Kafka's bytes.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The consumer group record types: the key versions Kafka gives them.
const (
	cgMetadataKey         int16 = 3
	cgPartitionMetadata   int16 = 4
	cgMemberMetadata      int16 = 5
	cgTargetMetadata      int16 = 6
	cgTargetMember        int16 = 7
	cgCurrentAssignmentKy int16 = 8
)

// ConsumerRecord is a decoded consumer group record. Value nil: a tombstone.
type ConsumerRecord struct {
	Type   int16 // the key version, 3-8
	Group  string
	Member string // types 5, 7 and 8
	// Tombstone reports a null value; the fields below are then zero.
	Tombstone bool

	Epoch           int32                  // 3: group epoch; 6: assignment epoch; 8: member epoch
	PreviousEpoch   int32                  // 8
	State           int8                   // 8: MemberState (0 STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS)
	Topics          []assignor.ServerTopic // 4
	InstanceID      *string                // 5
	RackID          *string                // 5
	ClientID        string                 // 5
	ClientHost      string                 // 5
	Subscribed      []string               // 5
	RebalanceMillis int32                  // 5
	ServerAssignor  *string                // 5
	SubscribedRegex *string                // 5
	Assigned        []idPartitions         // 7: target; 8: assigned
	Pending         []idPartitions         // 8: pending revocation
	// Classic (5): the ClassicMemberMetadata tag of a member that uses
	// the classic protocol, nil for none.
	Classic *ClassicMemberMetadata
	// ClassicGroup (classicGroupType only): a classic GroupMetadata value
	// written among the consumer group's records by a migration; nil for
	// its tombstone.
	ClassicGroup *kmsg.GroupMetadataValue
}

// ClassicMemberMetadata is the tagged field 0 of
// ConsumerGroupMemberMetadataValue: the session timeout and the JoinGroup
// protocols of a classic member inside a consumer group.
type ClassicMemberMetadata struct {
	SessionTimeoutMillis int32
	Protocols            []kmsg.JoinGroupRequestProtocol
}

// idPartitions is Kafka's TopicPartitions struct: a topic id and partitions.
type idPartitions struct {
	ID         assignor.TopicID
	Partitions []int32
}

type wbuf []byte

func (b *wbuf) i8(v int8)   { *b = append(*b, byte(v)) }
func (b *wbuf) i16(v int16) { *b = binary.BigEndian.AppendUint16(*b, uint16(v)) }
func (b *wbuf) i32(v int32) { *b = binary.BigEndian.AppendUint32(*b, uint32(v)) }
func (b *wbuf) uv(v uint64) { *b = binary.AppendUvarint(*b, v) }
func (b *wbuf) str(s string) {
	b.i16(int16(len(s)))
	*b = append(*b, s...)
}
func (b *wbuf) cstr(s string) { b.uv(uint64(len(s)) + 1); *b = append(*b, s...) }
func (b *wbuf) cnstr(s *string) {
	if s == nil {
		b.uv(0)
		return
	}
	b.cstr(*s)
}
func (b *wbuf) alen(n int) { b.uv(uint64(n) + 1) }
func (b *wbuf) tags()      { b.uv(0) }
func (b *wbuf) parts(ps []idPartitions) {
	b.alen(len(ps))
	for _, p := range ps {
		*b = append(*b, p.ID[:]...)
		b.alen(len(p.Partitions))
		for _, n := range p.Partitions {
			b.i32(n)
		}
		b.tags()
	}
}

// encodeConsumerRecord returns the record's key and value (nil value for a
// tombstone).
func encodeConsumerRecord(r ConsumerRecord, ts int64) storage.Record {
	var k wbuf
	k.i16(r.Type)
	k.str(r.Group)
	if r.Type == cgMemberMetadata || r.Type == cgTargetMember || r.Type == cgCurrentAssignmentKy {
		k.str(r.Member)
	}
	if r.Type == classicGroupType {
		return GroupRecord(r.Group, r.ClassicGroup, ts)
	}
	out := storage.Record{Timestamp: ts, Key: k}
	if r.Tombstone {
		return out
	}
	var v wbuf
	v.i16(0)
	switch r.Type {
	case cgMetadataKey, cgTargetMetadata:
		v.i32(r.Epoch)
	case cgPartitionMetadata:
		v.alen(len(r.Topics))
		for _, t := range r.Topics {
			v = append(v, t.ID[:]...)
			v.cstr(t.Name)
			v.i32(t.Partitions)
			v.alen(0) // PartitionMetadata: no racks
			v.tags()
		}
	case cgMemberMetadata:
		v.cnstr(r.InstanceID)
		v.cnstr(r.RackID)
		v.cstr(r.ClientID)
		v.cstr(r.ClientHost)
		v.alen(len(r.Subscribed))
		for _, s := range r.Subscribed {
			v.cstr(s)
		}
		v.cnstr(r.SubscribedRegex)
		v.i32(r.RebalanceMillis)
		v.cnstr(r.ServerAssignor)
	case cgTargetMember:
		v.parts(r.Assigned)
	case cgCurrentAssignmentKy:
		v.i32(r.Epoch)
		v.i32(r.PreviousEpoch)
		v.i8(r.State)
		v.parts(r.Assigned)
		v.parts(r.Pending)
	}
	if r.Type == cgMemberMetadata && r.Classic != nil {
		var f wbuf
		f.i32(r.Classic.SessionTimeoutMillis)
		f.alen(len(r.Classic.Protocols))
		for _, p := range r.Classic.Protocols {
			f.cstr(p.Name)
			f.uv(uint64(len(p.Metadata)) + 1)
			f = append(f, p.Metadata...)
			f.tags()
		}
		f.tags()
		v.uv(1) // one tagged field: tag 0, ClassicMemberMetadata
		v.uv(0)
		v.uv(uint64(len(f)))
		v = append(v, f...)
	} else {
		v.tags()
	}
	out.Value = v
	return out
}

type rbuf struct {
	b   []byte
	err error
}

var errShort = errors.New("record ends early")

func (r *rbuf) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errShort
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
func (r *rbuf) i8() int8 {
	if b := r.take(1); b != nil {
		return int8(b[0])
	}
	return 0
}
func (r *rbuf) i16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}
func (r *rbuf) i32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}
func (r *rbuf) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}
func (r *rbuf) str() string  { return string(r.take(int(r.i16()))) }
func (r *rbuf) cstr() string { return string(r.take(int(r.uv()) - 1)) }
func (r *rbuf) cnstr() *string {
	n := r.uv()
	if n == 0 {
		return nil
	}
	s := string(r.take(int(n) - 1))
	return &s
}
func (r *rbuf) alen() int { return int(r.uv()) - 1 }

// tags skips a tagged-field section.
func (r *rbuf) tags() {
	for n := r.uv(); n > 0 && r.err == nil; n-- {
		r.uv()
		r.take(int(r.uv()))
	}
}
func (r *rbuf) id() (id assignor.TopicID) { copy(id[:], r.take(16)); return id }
func (r *rbuf) parts() []idPartitions {
	n := r.alen()
	var out []idPartitions
	for i := 0; i < n && r.err == nil; i++ {
		p := idPartitions{ID: r.id()}
		m := r.alen()
		for j := 0; j < m && r.err == nil; j++ {
			p.Partitions = append(p.Partitions, r.i32())
		}
		r.tags()
		out = append(out, p)
	}
	return out
}

// decodeConsumerRecord decodes a record whose key version is 3-8.
func decodeConsumerRecord(rec storage.Record) (ConsumerRecord, error) {
	k := &rbuf{b: rec.Key}
	out := ConsumerRecord{Type: k.i16(), Group: k.str()}
	if out.Type == cgMemberMetadata || out.Type == cgTargetMember || out.Type == cgCurrentAssignmentKy {
		out.Member = k.str()
	}
	if k.err != nil {
		return out, fmt.Errorf("coordinator: consumer group record key v%d: %w", out.Type, k.err)
	}
	if rec.Value == nil {
		out.Tombstone = true
		return out, nil
	}
	v := &rbuf{b: rec.Value}
	if ver := v.i16(); ver != 0 && v.err == nil {
		return out, fmt.Errorf("coordinator: consumer group record type %d: value version %d (want 0)", out.Type, ver)
	}
	switch out.Type {
	case cgMetadataKey, cgTargetMetadata:
		out.Epoch = v.i32()
	case cgPartitionMetadata:
		n := v.alen()
		for i := 0; i < n && v.err == nil; i++ {
			t := assignor.ServerTopic{ID: v.id(), Name: v.cstr(), Partitions: v.i32()}
			m := v.alen()
			for j := 0; j < m && v.err == nil; j++ {
				v.i32()
				racks := v.alen()
				for range max(racks, 0) {
					v.cstr()
				}
				v.tags()
			}
			v.tags()
			out.Topics = append(out.Topics, t)
		}
	case cgMemberMetadata:
		out.InstanceID, out.RackID = v.cnstr(), v.cnstr()
		out.ClientID, out.ClientHost = v.cstr(), v.cstr()
		n := v.alen()
		for i := 0; i < n && v.err == nil; i++ {
			out.Subscribed = append(out.Subscribed, v.cstr())
		}
		out.SubscribedRegex = v.cnstr()
		out.RebalanceMillis = v.i32()
		out.ServerAssignor = v.cnstr()
		for n := v.uv(); n > 0 && v.err == nil; n-- {
			tag, size := v.uv(), v.uv()
			body := v.take(int(size))
			if tag != 0 || v.err != nil {
				continue
			}
			f := &rbuf{b: body}
			cm := &ClassicMemberMetadata{SessionTimeoutMillis: f.i32()}
			for i, np := 0, f.alen(); i < np && f.err == nil; i++ {
				p := kmsg.JoinGroupRequestProtocol{Name: f.cstr()}
				p.Metadata = slices.Clone(f.take(int(f.uv()) - 1))
				f.tags()
				cm.Protocols = append(cm.Protocols, p)
			}
			if f.err != nil {
				v.err = fmt.Errorf("ClassicMemberMetadata: %w", f.err)
			}
			out.Classic = cm
		}
		if v.err != nil {
			return out, fmt.Errorf("coordinator: consumer group record type %d of group %q: %w", out.Type, out.Group, v.err)
		}
		return out, nil
	case cgTargetMember:
		out.Assigned = v.parts()
	case cgCurrentAssignmentKy:
		out.Epoch, out.PreviousEpoch, out.State = v.i32(), v.i32(), v.i8()
		out.Assigned, out.Pending = v.parts(), v.parts()
	}
	v.tags()
	if v.err != nil {
		return out, fmt.Errorf("coordinator: consumer group record type %d of group %q: %w", out.Type, out.Group, v.err)
	}
	return out, nil
}

// toIDPartitions groups partitions by topic id, topics in name order.
func toIDPartitions(tps []TopicPartition, ids map[string]assignor.TopicID) []idPartitions {
	var out []idPartitions
	sorted := slices.Clone(tps)
	sortTPs(sorted)
	for i, tp := range sorted {
		if i == 0 || sorted[i-1].Topic != tp.Topic {
			out = append(out, idPartitions{ID: ids[tp.Topic]})
		}
		out[len(out)-1].Partitions = append(out[len(out)-1].Partitions, tp.Partition)
	}
	return out
}

// fromIDPartitions resolves topic ids to names; partitions of an unknown
// id are dropped (the topic was deleted).
func fromIDPartitions(ps []idPartitions, names map[assignor.TopicID]string) []TopicPartition {
	var out []TopicPartition
	for _, p := range ps {
		name, ok := names[p.ID]
		if !ok {
			continue
		}
		for _, n := range p.Partitions {
			out = append(out, TopicPartition{name, n})
		}
	}
	sortTPs(out)
	return out
}

func sortTPs(tps []TopicPartition) {
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
}
