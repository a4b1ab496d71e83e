package server

// This file serves CreatePartitions (api key 37), v0-v3.
//
// ZooKeeper mode, as KafkaApis.handleCreatePartitionsRequest and
// ZkAdminManager.createPartitions: only the active controller serves it
// (NOT_CONTROLLER elsewhere); a topic named twice is INVALID_REQUEST, an
// unknown one UNKNOWN_TOPIC_OR_PARTITION; a count below the topic's
// partitions, or equal to it, INVALID_PARTITIONS; given assignments must
// name live brokers, be one per new partition and have the topic's
// replication factor without repeating a broker
// (INVALID_REPLICA_ASSIGNMENT); otherwise the new partitions are placed
// as CreateTopics places a topic's (AdminUtils, rack aware). validate_only
// writes nothing. The controller writes the new assignment and brings
// the partitions online (package controller); with timeout_ms > 0 the
// answer waits until the metadata cache has a leader for every new
// partition (DelayedCreatePartitions; REQUEST_TIMED_OUT at the timeout),
// with timeout_ms <= 0 it is REQUEST_TIMED_OUT at once, as Kafka answers.
//
// KRaft mode: forwarded to the active controller
// (broker/kraft/create_partitions.go), whose PartitionRecords create the
// replicas on the brokers.
//
// Simplifications: the placement of the new partitions starts at a random
// broker (Kafka starts at the one that leads partition 0); a partition
// being reassigned does not make the request REASSIGNMENT_IN_PROGRESS; no
// quotas or authorization. NB: an answer whose controller resigns before
// the partitions are written never comes (the client's request times out
// and it retries).

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/kraft"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleCreatePartitions(from sim.NodeID, req *wire.Request, body *kmsg.CreatePartitionsRequest) {
	if b.kraft != nil {
		b.forwardAdmin(from, req, body)
		return
	}
	if b.zk == nil || b.controller == nil || !b.controller.Active() {
		b.respond(from, req, kraft.ErrorResponse(body, kerr.NotController))
		return
	}
	resp := body.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := map[string]int{}
	for _, t := range body.Topics {
		seen[t.Topic]++
	}
	type growth struct {
		idx   int
		topic string
		added [][]int32
		count int32
	}
	var grows []growth
	for i, t := range body.Topics {
		rt := kmsg.CreatePartitionsResponseTopic{Topic: t.Topic}
		var added [][]int32
		var e *kerr.Error
		var msg string
		if seen[t.Topic] > 1 {
			e, msg = kerr.InvalidRequest, "Duplicate topic in request."
		} else {
			added, e, msg = b.newPartitionsZK(t)
		}
		switch {
		case e != nil:
			rt.ErrorCode, rt.ErrorMessage = e.Code, &msg
		case !body.ValidateOnly:
			grows = append(grows, growth{i, t.Topic, added, t.Count})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(grows) == 0 {
		b.respond(from, req, resp)
		return
	}
	pending := len(grows)
	for _, g := range grows {
		b.ctx.Log("create-partitions", sim.S("topic", g.topic), sim.I("count", int64(g.count)))
		b.controller.AddPartitions(b.ctx, g.topic, g.added, func(why string) {
			if why != "" {
				m := why
				resp.Topics[g.idx].ErrorCode, resp.Topics[g.idx].ErrorMessage = kerr.NotController.Code, &m
			}
			if pending--; pending > 0 {
				return
			}
			if body.TimeoutMillis <= 0 {
				for _, g := range grows {
					if resp.Topics[g.idx].ErrorCode == 0 {
						resp.Topics[g.idx].ErrorCode = kerr.RequestTimedOut.Code
					}
				}
				b.respond(from, req, resp)
				return
			}
			ready := func() bool {
				for _, g := range grows {
					if resp.Topics[g.idx].ErrorCode == 0 && !b.metadata.hasLeaders(g.topic, g.count) {
						return false
					}
				}
				return true
			}
			b.waitFor(sim.Ms(int64(body.TimeoutMillis)), ready, func() {
				for _, g := range grows {
					if rt := &resp.Topics[g.idx]; rt.ErrorCode == 0 && !b.metadata.hasLeaders(g.topic, g.count) {
						rt.ErrorCode = kerr.RequestTimedOut.Code
					}
				}
				b.respond(from, req, resp)
			})
		})
	}
}

// newPartitionsZK returns the replicas of a topic's new partitions, or
// the request's error for it.
func (b *Broker) newPartitionsZK(t kmsg.CreatePartitionsRequestTopic) ([][]int32, *kerr.Error, string) {
	existing := b.controller.Assignment(t.Topic)
	have := int32(len(existing))
	switch {
	case have == 0:
		return nil, kerr.UnknownTopicOrPartition, fmt.Sprintf("The topic '%s' does not exist.", t.Topic)
	case t.Count < have:
		return nil, kerr.InvalidPartitions, fmt.Sprintf("Topic currently has %d partitions, which is higher than the requested %d.", have, t.Count)
	case t.Count == have:
		return nil, kerr.InvalidPartitions, fmt.Sprintf("Topic already has %d partitions.", have)
	}
	rf := len(existing[0])
	additional := int(t.Count - have)
	if t.Assignment == nil {
		a, err := b.assignReplicas(additional, rf, true)
		if err != nil {
			if err == kerr.InvalidReplicationFactor {
				return nil, err, fmt.Sprintf("Replication factor: %d larger than available brokers: %d.", rf, len(b.controller.LiveBrokers()))
			}
			return nil, err, "cannot assign replicas: broker.rack must be set on every broker or none"
		}
		out := make([][]int32, additional)
		for p, rs := range a {
			out[p] = rs
		}
		return out, nil, ""
	}
	live := b.controller.LiveBrokers()
	var unknown []int32
	for _, a := range t.Assignment {
		for _, r := range a.Replicas {
			if !slices.Contains(live, r) && !slices.Contains(unknown, r) {
				unknown = append(unknown, r)
			}
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, kerr.InvalidReplicaAssignment, "Unknown broker(s) in replica assignment: " + joinIDs(unknown) + "."
	}
	if len(t.Assignment) != additional {
		return nil, kerr.InvalidReplicaAssignment, fmt.Sprintf("Increasing the number of partitions by %d but %d assignments provided.", additional, len(t.Assignment))
	}
	out := make([][]int32, additional)
	for i, a := range t.Assignment {
		if len(a.Replicas) != rf {
			return nil, kerr.InvalidReplicaAssignment, fmt.Sprintf("Inconsistent replication factor between partitions, partition 0 has %d while partitions [%d] have replication factors [%d], respectively.", rf, int(have)+i, len(a.Replicas))
		}
		for j, r := range a.Replicas {
			if slices.Contains(a.Replicas[:j], r) {
				return nil, kerr.InvalidReplicaAssignment, "Duplicate brokers not allowed in replica assignment: " + joinIDs(a.Replicas) + " for partition id " + fmt.Sprint(int(have)+i) + "."
			}
		}
		out[i] = slices.Clone(a.Replicas)
	}
	return out, nil, ""
}

func joinIDs(ids []int32) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(id)
	}
	return s
}
