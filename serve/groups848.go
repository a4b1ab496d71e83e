package serve

// This file records a served run's consumer groups of the consumer group
// protocol (KIP-848) from the brokers' side, as groups.go does for the
// classic protocol: each ConsumerGroupHeartbeat answer that carries a
// member's assignment is an Assign of each partition it adds and a Revoke
// of each it drops, at the member epoch of the answer; the member is
// declared a consumer of its group with GroupProtocol "consumer". The
// assignment names topics by id: the names come from the Metadata answers
// (v10+) the clients got. What is judged: the group checker's double-owner
// (two members given a partition at one epoch); deliveries are not
// recorded (groups.go says why).

import (
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicID remembers a topic's id from a Metadata answer.
func (hs *historian) topicID(id [16]byte, name string) {
	if id == ([16]byte{}) {
		return
	}
	if hs.topicNames == nil {
		hs.topicNames = map[[16]byte]string{}
	}
	hs.topicNames[id] = name
}

// heartbeat848 records the assignment a ConsumerGroupHeartbeat answer gave.
func (hs *historian) heartbeat848(req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse, now sim.Time) {
	if resp.ErrorCode != 0 || resp.MemberID == nil || resp.Assignment == nil || resp.MemberEpoch <= 0 {
		return
	}
	g, m := req.Group, *resp.MemberID
	if hs.members == nil {
		hs.members = map[groupKey]map[partKey]bool{}
	}
	k := groupKey{g, m}
	if _, ok := hs.members[k]; !ok {
		hs.rec.Consumer(checkers.Consumer{Process: m, Group: g, GroupProtocol: "consumer"})
	}
	now2 := map[partKey]bool{}
	for _, t := range resp.Assignment.Topics {
		name, ok := hs.topicNames[t.TopicID]
		if !ok {
			continue // a topic no client asked Metadata about: not judged
		}
		for _, p := range t.Partitions {
			pk := partKey{name, p}
			if !now2[pk] && !hs.members[k][pk] {
				hs.rec.Assign(now, m, g, m, resp.MemberEpoch, name, p)
			}
			now2[pk] = true
		}
	}
	for _, pk := range sortedParts(hs.members[k]) {
		if !now2[pk] {
			hs.rec.Revoke(now, m, g, m, resp.MemberEpoch, pk.topic, pk.partition, "revoked")
		}
	}
	hs.members[k] = now2
}
