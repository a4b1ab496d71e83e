package kraft

// This file serves ElectLeadersRequest (api key 43), v0-v2, as Kafka 4.0's
// ReplicationControlManager.electLeaders / electLeader: for each partition
// named (every partition when the list is null, leaving out those that
// need no election), an unknown topic or partition is
// UNKNOWN_TOPIC_OR_PARTITION; a preferred election (type 0; v0 has no
// type) of a partition led by its first replica, or an unclean election
// (type 1) of a partition with a leader, is ELECTION_NOT_NEEDED; a
// preferred election moves the leadership to the first replica when it is
// in the ISR and active (else PREFERRED_LEADER_NOT_AVAILABLE); an unclean
// election elects from the ISR first, then any active replica (its ISR
// becomes just it, LeaderRecoveryState RECOVERING, as change.go's
// builder does), else ELIGIBLE_LEADERS_NOT_AVAILABLE. One batch of
// PartitionChangeRecords; the reply waits for it to commit.
//
// Simplified: no authorization; an unknown election type is
// INVALID_REQUEST for the whole request.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Election types of ElectLeadersRequest v1+ (ElectionType).
const (
	ElectionPreferred int8 = 0
	ElectionUnclean   int8 = 1
)

func (c *Controller) electLeaders(ctx *sim.Context, req *kmsg.ElectLeadersRequest, reply func(kmsg.Response)) {
	typ := ElectionPreferred
	if req.Version >= 1 {
		typ = req.ElectionType
	}
	if typ != ElectionPreferred && typ != ElectionUnclean {
		reply(ErrorResponse(req, kerr.InvalidRequest))
		return
	}
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	var recs []metadata.Record
	elect := func(topic string, partition int32) kmsg.ElectLeadersResponseTopicPartition {
		e, msg, rec := c.electLeader(ctx, topic, partition, typ)
		pr := kmsg.ElectLeadersResponseTopicPartition{Partition: partition}
		if e != nil {
			pr.ErrorCode = e.Code
			if msg == "" {
				msg = e.Message
			}
			pr.ErrorMessage = &msg
		}
		if rec != nil {
			recs = append(recs, rec)
		}
		return pr
	}
	if req.Topics == nil {
		for _, t := range c.working.img.TopicNames() {
			rt := kmsg.ElectLeadersResponseTopic{Topic: t}
			for p := range int32(c.working.img.NumPartitions(t)) {
				if pr := elect(t, p); pr.ErrorCode != kerr.ElectionNotNeeded.Code {
					rt.Partitions = append(rt.Partitions, pr)
				}
			}
			if len(rt.Partitions) > 0 {
				resp.Topics = append(resp.Topics, rt)
			}
		}
	} else {
		for _, t := range req.Topics {
			rt := kmsg.ElectLeadersResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, elect(t.Topic, p))
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
	c.write(ctx, recs, func() { reply(resp) }, func(e *kerr.Error) { reply(ErrorResponse(req, e)) })
}

// electLeader returns one partition's error, or its change record.
func (c *Controller) electLeader(ctx *sim.Context, topic string, partition int32, typ int8) (*kerr.Error, string, *metadata.PartitionChangeRecord) {
	if _, ok := c.working.img.TopicID(topic); !ok {
		return kerr.UnknownTopicOrPartition, "No such topic as " + topic, nil
	}
	p, ok := c.working.img.Partition(topic, partition)
	if !ok {
		return kerr.UnknownTopicOrPartition, fmt.Sprintf("No such partition as %s-%d", topic, partition), nil
	}
	hasPreferred := len(p.Replicas) > 0 && p.Leader == p.Replicas[0]
	if typ == ElectionPreferred && hasPreferred || typ == ElectionUnclean && p.Leader != metadata.NoLeader {
		return kerr.ElectionNotNeeded, "", nil
	}
	ch := c.newChange(p, nil)
	if typ == ElectionPreferred {
		pref := p.Replicas[0]
		if !slices.Contains(p.ISR, pref) || !c.isActive(pref) {
			return kerr.PreferredLeaderNotAvailable, "", nil
		}
		rec := metadata.NewPartitionChangeRecord(p.TopicID, p.Partition)
		rec.Leader = pref
		logChange(ctx, p, rec, "elect-preferred", false)
		return nil, "", rec
	}
	ch.unclean = true
	rec := ch.build()
	if rec == nil || rec.Leader == metadata.NoLeaderChange || rec.Leader == metadata.NoLeader {
		return kerr.EligibleLeadersNotAvailable, "", nil
	}
	logChange(ctx, p, rec, "elect-unclean", ch.uncleanElected)
	return nil, "", rec
}
