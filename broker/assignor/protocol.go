package assignor

// This file encodes the consumer's embedded protocol (Kafka's
// ConsumerProtocol): the subscription a member sends in JoinGroup (topics,
// and from version 1 its owned partitions) and the assignment the leader
// sends for it in SyncGroup.

import (
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

// DecodeSubscription decodes a subscription into a Member with id.
func DecodeSubscription(id string, b []byte) (Member, error) {
	md := kmsg.NewConsumerMemberMetadata()
	if err := md.ReadFrom(b); err != nil {
		return Member{}, err
	}
	m := Member{ID: id, Topics: md.Topics}
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
