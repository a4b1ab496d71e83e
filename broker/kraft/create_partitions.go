package kraft

// This file serves CreatePartitionsRequest (api key 37), v0-v3, as Kafka
// 4.0's ControllerApis.createPartitions and
// ReplicationControlManager.createPartitionsForTopic: a topic named twice
// is INVALID_REQUEST, an unknown one UNKNOWN_TOPIC_OR_PARTITION; a count
// equal to or below the topic's partitions is INVALID_PARTITIONS; given
// assignments must be one per new partition, of the topic's replication
// factor (partition 0's), of distinct registered brokers with one active
// (INVALID_REPLICA_ASSIGNMENT); otherwise the StripedReplicaPlacer places
// the new partitions (INVALID_REPLICATION_FACTOR when it cannot). Each new
// partition's ISR is its active replicas, its leader the first of them.
// The records of all topics go in one batch; the reply waits for it to
// commit. validate_only writes nothing.
//
// Simplified: no quotas or authorization; the answers come in request
// order.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (c *Controller) createPartitions(ctx *sim.Context, req *kmsg.CreatePartitionsRequest, reply func(kmsg.Response)) {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := map[string]int{}
	for _, t := range req.Topics {
		seen[t.Topic]++
	}
	var recs []metadata.Record
	for _, t := range req.Topics {
		rt := kmsg.CreatePartitionsResponseTopic{Topic: t.Topic}
		var trecs []metadata.Record
		var e *kerr.Error
		var msg string
		if seen[t.Topic] > 1 {
			e, msg = kerr.InvalidRequest, "Duplicate topic name."
		} else {
			trecs, e, msg = c.createPartitionsForTopic(ctx, t)
		}
		if e != nil {
			rt.ErrorCode, rt.ErrorMessage = e.Code, &msg
		} else if !req.ValidateOnly {
			recs = append(recs, trecs...)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	c.write(ctx, recs, func() {
		for _, t := range resp.Topics {
			if t.ErrorCode == 0 && !req.ValidateOnly {
				ctx.Log("partitions-created", sim.S("topic", t.Topic), sim.I("partitions", int64(c.working.img.NumPartitions(t.Topic))))
			}
		}
		reply(resp)
	}, func(e *kerr.Error) { reply(ErrorResponse(req, e)) })
}

// createPartitionsForTopic returns the PartitionRecords of one topic's new
// partitions, or its error.
func (c *Controller) createPartitionsForTopic(ctx *sim.Context, t kmsg.CreatePartitionsRequestTopic) ([]metadata.Record, *kerr.Error, string) {
	id, ok := c.working.img.TopicID(t.Topic)
	if !ok {
		return nil, kerr.UnknownTopicOrPartition, "This server does not host this topic-partition."
	}
	have := int32(c.working.img.NumPartitions(t.Topic))
	switch {
	case t.Count == have:
		return nil, kerr.InvalidPartitions, fmt.Sprintf("Topic already has %d partition(s).", have)
	case t.Count < have:
		return nil, kerr.InvalidPartitions, fmt.Sprintf("The topic %s currently has %d partition(s); %d would not be an increase.", t.Topic, have, t.Count)
	}
	additional := int(t.Count - have)
	if t.Assignment != nil && len(t.Assignment) != additional {
		return nil, kerr.InvalidReplicaAssignment, fmt.Sprintf("Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", additional, len(t.Assignment))
	}
	p0, ok := c.working.img.Partition(t.Topic, 0)
	if !ok {
		return nil, kerr.UnknownServerError, "Invalid state: topic " + t.Topic + " appears to have no partitions."
	}
	rf := len(p0.Replicas)
	var assignments [][]int32
	if t.Assignment == nil {
		var err error
		if assignments, err = placeReplicas(ctx.Rand(), c.usableBrokers(), additional, rf); err != nil {
			return nil, kerr.InvalidReplicationFactor, fmt.Sprintf("unable to replicate the partition %d time(s): %v", rf, err)
		}
	} else {
		for i, a := range t.Assignment {
			if err := c.validateAssignment(a.Replicas, true, rf); err != "" {
				return nil, kerr.InvalidReplicaAssignment, err
			}
			if !slices.ContainsFunc(a.Replicas, c.isActive) {
				return nil, kerr.InvalidReplicaAssignment, fmt.Sprintf("All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", int(have)+i)
			}
			assignments = append(assignments, slices.Clone(a.Replicas))
		}
	}
	var recs []metadata.Record
	for i, rs := range assignments {
		var isr []int32
		for _, r := range rs {
			if c.isActive(r) {
				isr = append(isr, r)
			}
		}
		if len(isr) == 0 {
			return nil, kerr.InvalidReplicationFactor, fmt.Sprintf("Unable to replicate the partition %d time(s): All brokers are currently fenced or in controlled shutdown.", rf)
		}
		recs = append(recs, &metadata.PartitionRecord{
			PartitionID: have + int32(i), TopicID: id, Replicas: rs, ISR: isr,
			RemovingReplicas: []int32{}, AddingReplicas: []int32{},
			Leader: isr[0], Directories: make([][16]byte, len(rs)),
		})
	}
	return recs, nil, ""
}
