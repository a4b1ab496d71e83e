package assignor

// This file encodes the consumer's embedded protocol (Kafka's
// ConsumerProtocol): the subscription a member sends in JoinGroup (topics,
// and from version 1 its owned partitions) and the assignment the leader
// sends for it in SyncGroup.

import (
	"encoding/binary"
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ProtocolType is the JoinGroup protocol type of consumers.
const ProtocolType = "consumer"

// EncodeSubscription encodes a member's subscription (version 1, with its
// owned partitions).
func EncodeSubscription(topics []string, owned []TopicPartition) []byte {
	md := kmsg.NewConsumerMemberMetadata()
	md.Version = 1
	md.Topics = slices.Clone(topics)
	slices.Sort(md.Topics)
	for _, g := range group(owned) {
		md.OwnedPartitions = append(md.OwnedPartitions, kmsg.ConsumerMemberMetadataOwnedPartition{Topic: g.Topic, Partitions: g.Partitions})
	}
	return md.AppendTo(nil)
}

// EncodeMember encodes m's subscription as version 2: topics, user data,
// owned partitions and generation (-1 if unknown).
func EncodeMember(m Member) []byte {
	md := kmsg.NewConsumerMemberMetadata()
	md.Version = 2
	md.Topics = slices.Clone(m.Topics)
	slices.Sort(md.Topics)
	md.UserData = m.UserData
	md.Generation = m.generation()
	for _, g := range group(m.Owned) {
		md.OwnedPartitions = append(md.OwnedPartitions, kmsg.ConsumerMemberMetadataOwnedPartition{Topic: g.Topic, Partitions: g.Partitions})
	}
	return md.AppendTo(nil)
}

// DecodeSubscription decodes a subscription into a Member with id.
func DecodeSubscription(id string, b []byte) (Member, error) {
	md := kmsg.NewConsumerMemberMetadata()
	if err := md.ReadFrom(b); err != nil {
		return Member{}, err
	}
	m := Member{ID: id, Topics: md.Topics, UserData: md.UserData}
	if md.Version >= 2 {
		m.Generation = md.Generation
	}
	for _, o := range md.OwnedPartitions {
		for _, p := range o.Partitions {
			m.Owned = append(m.Owned, TopicPartition{o.Topic, p})
		}
	}
	return m, nil
}

// EncodeAssignment encodes one member's assignment (version 0).
func EncodeAssignment(tps []TopicPartition) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	for _, g := range group(tps) {
		a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: g.Topic, Partitions: g.Partitions})
	}
	return a.AppendTo(nil)
}

// DecodeAssignment decodes an assignment; an empty one (a member the
// leader left out) decodes to no partitions.
func DecodeAssignment(b []byte) ([]TopicPartition, error) {
	if len(b) == 0 {
		return nil, nil
	}
	a := kmsg.NewConsumerMemberAssignment()
	if err := a.ReadFrom(b); err != nil {
		return nil, err
	}
	var out []TopicPartition
	for _, t := range a.Topics {
		for _, p := range t.Partitions {
			out = append(out, TopicPartition{t.Topic, p})
		}
	}
	slices.SortFunc(out, Compare)
	return out, nil
}

type topicGroup struct {
	Topic      string
	Partitions []int32
}

func group(tps []TopicPartition) []topicGroup {
	s := slices.Clone(tps)
	slices.SortFunc(s, Compare)
	var out []topicGroup
	for _, tp := range s {
		if len(out) == 0 || out[len(out)-1].Topic != tp.Topic {
			out = append(out, topicGroup{Topic: tp.Topic})
		}
		out[len(out)-1].Partitions = append(out[len(out)-1].Partitions, tp.Partition)
	}
	return out
}

// EncodeStickyUserData encodes StickyAssignor's subscription user data,
// StickyAssignorUserData v1 (KIP-341): the member's current assignment as
// [topic string, partitions [int32]] (topics sorted), then the generation
// (int32). Big-endian, int32 array lengths, int16 string lengths. NB:
// Kafka writes the topics in HashMap order; the decoded content is the
// same.
func EncodeStickyUserData(tps []TopicPartition, generation int32) []byte {
	gs := group(tps)
	b := binary.BigEndian.AppendUint32(nil, uint32(len(gs)))
	for _, g := range gs {
		b = binary.BigEndian.AppendUint16(b, uint16(len(g.Topic)))
		b = append(b, g.Topic...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(g.Partitions)))
		for _, p := range g.Partitions {
			b = binary.BigEndian.AppendUint32(b, uint32(p))
		}
	}
	return binary.BigEndian.AppendUint32(b, uint32(generation))
}

var errShortUserData = errors.New("sticky user data: truncated")

// DecodeStickyUserData decodes StickyAssignorUserData: as v1, or, when
// the generation is missing, as v0 with generation DefaultGeneration
// (Kafka's StickyAssignor tries v1, then v0). Trailing bytes are ignored,
// as Kafka's Schema.read does.
func DecodeStickyUserData(b []byte) ([]TopicPartition, int32, error) {
	r := b
	u32 := func() (uint32, bool) {
		if len(r) < 4 {
			return 0, false
		}
		v := binary.BigEndian.Uint32(r)
		r = r[4:]
		return v, true
	}
	n, ok := u32()
	if !ok || int32(n) < 0 {
		return nil, DefaultGeneration, errShortUserData
	}
	var out []TopicPartition
	for i := uint32(0); i < n; i++ {
		if len(r) < 2 {
			return nil, DefaultGeneration, errShortUserData
		}
		l := int(int16(binary.BigEndian.Uint16(r)))
		r = r[2:]
		if l < 0 || len(r) < l {
			return nil, DefaultGeneration, errShortUserData
		}
		topic := string(r[:l])
		r = r[l:]
		np, ok := u32()
		if !ok || int32(np) < 0 {
			return nil, DefaultGeneration, errShortUserData
		}
		for j := uint32(0); j < np; j++ {
			p, ok := u32()
			if !ok {
				return nil, DefaultGeneration, errShortUserData
			}
			out = append(out, TopicPartition{topic, int32(p)})
		}
	}
	gen, ok := u32()
	if !ok {
		return out, DefaultGeneration, nil // v0
	}
	return out, int32(gen), nil
}
