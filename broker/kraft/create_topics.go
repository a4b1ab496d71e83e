package kraft

// This file serves CreateTopicsRequest (api key 19) as Kafka 4.0's
// ReplicationControlManager.createTopics / createTopic: names are checked
// (Topic.validate: INVALID_TOPIC_EXCEPTION), duplicates in the request are
// INVALID_REQUEST, existing topics TOPIC_ALREADY_EXISTS; a manual
// assignment needs replication factor and partition count -1
// (INVALID_REQUEST), distinct registered brokers, one size, consecutive
// partitions and an active replica in each (INVALID_REPLICA_ASSIGNMENT);
// otherwise the replication factor (-1: default.replication.factor) and
// partition count (-1: num.partitions) must be positive
// (INVALID_REPLICATION_FACTOR / INVALID_PARTITIONS) and the
// StripedReplicaPlacer places the replicas (INVALID_REPLICATION_FACTOR when
// it cannot: more replicas than registered brokers, or no unfenced one).
// Each partition's ISR is its active replicas, its leader the first of
// them. The topic id comes from the node's random stream. Configs become
// ConfigRecords. All topics' records go in one batch; the reply waits for
// it to commit.
//
// Simplified: configs are not validated; no create-topic policy, quotas or
// authorization; ValidateOnly writes nothing and answers at once.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxTopicNameLength is Topic.MAX_NAME_LENGTH.
const maxTopicNameLength = 249

// ValidTopicName reports whether n is a legal topic name (Topic.validate:
// 1 to 249 characters of [a-zA-Z0-9._-], not "." or "..").
func ValidTopicName(n string) bool { return validTopicName(n) }

func validTopicName(n string) bool {
	if n == "" || n == "." || n == ".." || len(n) > maxTopicNameLength {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func createTopicsError(req *kmsg.CreateTopicsRequest, e *kerr.Error) *kmsg.CreateTopicsResponse {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, e.Code
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (c *Controller) createTopics(ctx *sim.Context, req *kmsg.CreateTopicsRequest, reply func(kmsg.Response)) {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := map[string]int{}
	for _, t := range req.Topics {
		seen[t.Topic]++
	}
	var recs []metadata.Record
	created := map[string]bool{}
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		var e *kerr.Error
		var msg string
		var topicRecs []metadata.Record
		switch _, exists := c.working.img.TopicID(t.Topic); {
		case seen[t.Topic] > 1:
			e, msg = kerr.InvalidRequest, "duplicate topic name"
		case !validTopicName(t.Topic):
			e, msg = kerr.InvalidTopicException, "invalid topic name"
		case exists || created[t.Topic]:
			e, msg = kerr.TopicAlreadyExists, fmt.Sprintf("topic '%s' already exists", t.Topic)
		default:
			topicRecs, rt.TopicID, e, msg = c.createTopic(ctx, t)
		}
		if e != nil {
			rt.ErrorCode = e.Code
			rt.ErrorMessage = &msg
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		rt.NumPartitions = 0
		for _, r := range topicRecs {
			if p, ok := r.(*metadata.PartitionRecord); ok {
				rt.NumPartitions++
				rt.ReplicationFactor = int16(len(p.Replicas))
			}
		}
		resp.Topics = append(resp.Topics, rt)
		if !req.ValidateOnly {
			recs = append(recs, topicRecs...)
			created[t.Topic] = true
		}
	}
	c.write(ctx, recs, func() {
		for _, r := range recs {
			if t, ok := r.(*metadata.TopicRecord); ok {
				ctx.Log("topic-created", sim.S("topic", t.Name))
			}
		}
		reply(resp)
	}, func(e *kerr.Error) { reply(createTopicsError(req, e)) })
}

// createTopic returns one valid topic's records.
func (c *Controller) createTopic(ctx *sim.Context, t kmsg.CreateTopicsRequestTopic) ([]metadata.Record, [16]byte, *kerr.Error, string) {
	var assignments [][]int32
	if len(t.ReplicaAssignment) > 0 {
		if t.ReplicationFactor != -1 || t.NumPartitions != -1 {
			return nil, [16]byte{}, kerr.InvalidRequest, "a manual partition assignment was specified, but replication factor or numPartitions was not set to -1"
		}
		byPart := map[int32][]int32{}
		for _, a := range t.ReplicaAssignment {
			if _, dup := byPart[a.Partition]; dup {
				return nil, [16]byte{}, kerr.InvalidReplicaAssignment, fmt.Sprintf("found multiple manual partition assignments for partition %d", a.Partition)
			}
			if err := c.validateAssignment(a.Replicas, len(byPart) > 0, len(t.ReplicaAssignment[0].Replicas)); err != "" {
				return nil, [16]byte{}, kerr.InvalidReplicaAssignment, err
			}
			byPart[a.Partition] = a.Replicas
		}
		for p := range len(byPart) {
			rs, ok := byPart[int32(p)]
			if !ok {
				return nil, [16]byte{}, kerr.InvalidReplicaAssignment, "partitions should be a consecutive 0-based integer sequence"
			}
			assignments = append(assignments, slices.Clone(rs))
		}
	} else {
		rf, np := int(t.ReplicationFactor), int(t.NumPartitions)
		switch {
		case rf < -1 || rf == 0:
			return nil, [16]byte{}, kerr.InvalidReplicationFactor, "replication factor must be larger than 0, or -1 to use the default value"
		case np < -1 || np == 0:
			return nil, [16]byte{}, kerr.InvalidPartitions, "number of partitions was set to an invalid non-positive value"
		}
		if rf == -1 {
			rf = c.cfg.DefaultReplicationFactor
		}
		if np == -1 {
			np = c.cfg.NumPartitions
		}
		var err error
		if assignments, err = placeReplicas(ctx.Rand(), c.usableBrokers(), np, rf); err != nil {
			return nil, [16]byte{}, kerr.InvalidReplicationFactor, fmt.Sprintf("unable to replicate the partition %d time(s): %v", rf, err)
		}
	}
	id := c.newTopicID(ctx)
	recs := []metadata.Record{&metadata.TopicRecord{Name: t.Topic, TopicID: id}}
	for p, rs := range assignments {
		var isr []int32
		for _, r := range rs {
			if c.isActive(r) {
				isr = append(isr, r)
			}
		}
		if len(isr) == 0 {
			if len(t.ReplicaAssignment) > 0 {
				return nil, [16]byte{}, kerr.InvalidReplicaAssignment, fmt.Sprintf("all brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown", p)
			}
			return nil, [16]byte{}, kerr.InvalidReplicationFactor, "all brokers are currently fenced or in controlled shutdown"
		}
		recs = append(recs, &metadata.PartitionRecord{
			PartitionID: int32(p), TopicID: id, Replicas: rs, ISR: isr,
			RemovingReplicas: []int32{}, AddingReplicas: []int32{},
			Leader: isr[0], LeaderEpoch: 0, PartitionEpoch: 0,
			Directories: make([][16]byte, len(rs)), // DirectoryId.UNASSIGNED
		})
	}
	for _, cfg := range t.Configs {
		if cfg.Value != nil {
			v := *cfg.Value
			recs = append(recs, &metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: t.Topic, Name: cfg.Name, Value: &v})
		}
	}
	return recs, id, nil, ""
}

// validateAssignment checks one manual partition assignment
// (validateManualPartitionAssignment); it returns a message, or "".
func (c *Controller) validateAssignment(rs []int32, checkSize bool, size int) string {
	if len(rs) == 0 {
		return "the manual partition assignment includes an empty replica list"
	}
	for i, r := range rs {
		if contains(rs[:i], r) {
			return fmt.Sprintf("the manual partition assignment includes the broker %d more than once", r)
		}
		if _, ok := c.working.img.Broker(r); !ok {
			return fmt.Sprintf("the manual partition assignment includes broker %d, but no such broker is registered", r)
		}
	}
	if checkSize && len(rs) != size {
		return fmt.Sprintf("the manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s)", len(rs), size)
	}
	return ""
}

// newTopicID draws a topic id that is not zero and not taken (Uuid.randomUuid).
func (c *Controller) newTopicID(ctx *sim.Context) [16]byte {
	for {
		var id [16]byte
		for i := range id {
			id[i] = byte(ctx.Rand().Uint32())
		}
		if _, taken := c.working.img.TopicName(id); id != ([16]byte{}) && !taken {
			return id
		}
	}
}
