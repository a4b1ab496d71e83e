package server

// This file creates topics on a broker's own initiative, as Kafka's
// AutoTopicCreationManager (2.8+) and, before it, KafkaApis.createTopic do:
// a Metadata request for an unknown topic that allows auto-creation
// (auto.create.topics.enable, and allow_auto_topic_creation from v4) and
// the first FindCoordinator of a group or transactional id before
// __consumer_offsets or __transaction_state exists.
//
// ZooKeeper mode: the broker writes /brokers/topics/<t> with a replica
// assignment (AdminZkClient.createTopic) and the controller's topic watch
// makes the partitions. The assignment is AdminUtils'
// (controller.AssignReplicas) over the live brokers of the metadata cache,
// its start index and replica shift drawn from the node's random stream,
// rack-aware when every live broker has a rack (RackAwareMode.Safe).
// KRaft mode: a CreateTopics request goes to the active controller, as the
// broker's controller channel sends it.
//
// Meanwhile the requester is answered LEADER_NOT_AVAILABLE (Metadata) or
// COORDINATOR_NOT_AVAILABLE (FindCoordinator), and asks again. A topic
// needs as many live brokers as its replication factor
// (default.replication.factor, offsets.topic.replication.factor or
// transaction.state.log.replication.factor; hasEnoughLiveBrokers): short
// of them nothing is created and the answer is INVALID_REPLICATION_FACTOR
// (COORDINATOR_NOT_AVAILABLE for an internal topic's FindCoordinator), so
// the internal topics wait until enough brokers are up (0.11+, KIP-115);
// before 0.11 their replication factor was capped at the live brokers.
//
// Simplifications: a topic under creation is not asked for again until the
// ZooKeeper write or the controller's answer comes back (Kafka 2.8+ keeps
// the same inflight set); topic configs of internal topics are the ones
// the storage gives their names (compaction, offsetsLogConfig).

import (
	"fmt"
	"sort"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/controller"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/kraft"
	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// autoCreateTopic starts creating topic (unless that is under way) and
// returns the error its requester gets meanwhile.
func (b *Broker) autoCreateTopic(topic string) *kerr.Error {
	partitions, rf := b.cfg.NumPartitions, b.cfg.DefaultReplicationFactor
	internal := false
	switch topic {
	case coordinator.OffsetsTopic:
		partitions, rf, internal = b.cfg.Coordinator.NumPartitions, b.cfg.OffsetsTopicReplicationFactor, true
	case txn.StateTopic:
		partitions, rf, internal = b.cfg.Txn.NumPartitions, b.cfg.TxnStateReplicationFactor, true
	case share.StateTopic:
		partitions, rf, internal = b.cfg.Share.StatePartitions, b.cfg.Share.StateReplicationFactor, true
	}
	switch {
	case b.cfg.NoAutoCreate && internal:
		return kerr.CoordinatorNotAvailable
	case b.cfg.NoAutoCreate:
		return kerr.UnknownTopicOrPartition
	case !kraft.ValidTopicName(topic):
		return kerr.InvalidTopicException
	}
	alive := len(b.metadata.brokers)
	switch {
	case internal && b.cfg.release() < config.V0_11_0:
		rf = max(1, min(rf, alive))
	case alive < rf:
		// AutoTopicCreationManager.hasEnoughLiveBrokers (KafkaApis before 2.8).
		b.ctx.Log("auto-create-deferred", sim.S("topic", topic), sim.I("alive-brokers", int64(alive)), sim.I("replication-factor", int64(rf)))
		if internal {
			return kerr.CoordinatorNotAvailable
		}
		return kerr.InvalidReplicationFactor
	}
	if b.autoCreating[topic] {
		return kerr.LeaderNotAvailable
	}
	switch {
	case b.kraft != nil:
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = 7
		req.TimeoutMillis = int32(b.cfg.ControllerTimeout.Milliseconds())
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = topic, int32(partitions), int16(rf)
		req.Topics = append(req.Topics, t)
		b.setAutoCreating(topic)
		b.ctx.Log("auto-create-topic", sim.S("topic", topic), sim.I("partitions", int64(partitions)), sim.I("replication-factor", int64(rf)))
		b.forwardToController(req, func(r kmsg.Response, err error) {
			delete(b.autoCreating, topic)
			result := "forward-failed"
			if err == nil {
				result = "ok"
				if ts := r.(*kmsg.CreateTopicsResponse).Topics; len(ts) == 1 && ts[0].ErrorCode != 0 {
					result = kerr.ErrorForCode(ts[0].ErrorCode).Error()
				}
			}
			b.ctx.Log("auto-create-topic-done", sim.S("topic", topic), sim.S("result", result))
		})
		return kerr.LeaderNotAvailable
	case b.zk == nil:
		return kerr.UnknownTopicOrPartition // a hand-driven broker has nowhere to create it
	}
	assignment, err := b.assignReplicas(partitions, rf, false)
	if err != nil {
		return err
	}
	b.setAutoCreating(topic)
	b.ctx.Log("auto-create-topic", sim.S("topic", topic), sim.I("partitions", int64(partitions)), sim.I("replication-factor", int64(rf)))
	b.writeTopicZK(topic, assignment, func(code zk.Code) {
		delete(b.autoCreating, topic)
		b.ctx.Log("auto-create-topic-done", sim.S("topic", topic), sim.S("result", code.String()))
	})
	return kerr.LeaderNotAvailable
}

func (b *Broker) setAutoCreating(topic string) {
	if b.autoCreating == nil {
		b.autoCreating = map[string]bool{}
	}
	b.autoCreating[topic] = true
}

// liveBrokers returns the live brokers of the metadata cache, by id, with
// their racks; enforceRacks keeps the racks even when only some brokers
// have one (RackAwareMode.Enforced: the assignment then fails), otherwise
// a partial rack set is ignored (RackAwareMode.Safe).
func (b *Broker) liveBrokers(enforceRacks bool) []controller.Broker {
	var out []controller.Broker
	racks := 0
	for _, bi := range b.metadata.brokers {
		cb := controller.Broker{ID: bi.id}
		if bi.rack != nil && *bi.rack != "" {
			cb.Rack = *bi.rack
			racks++
		}
		out = append(out, cb)
	}
	if !enforceRacks && racks != len(out) {
		for i := range out {
			out[i].Rack = ""
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// assignReplicas is AdminUtils.assignReplicasToBrokers over the live
// brokers with a random start index and replica shift (drawn from the
// node's stream): INVALID_PARTITIONS or INVALID_REPLICATION_FACTOR when
// it cannot assign, UNKNOWN_SERVER_ERROR when only some brokers have a
// rack and enforceRacks is set.
func (b *Broker) assignReplicas(partitions, rf int, enforceRacks bool) (zk.ReplicaAssignment, *kerr.Error) {
	brokers := b.liveBrokers(enforceRacks)
	switch {
	case partitions <= 0:
		return nil, kerr.InvalidPartitions
	case rf <= 0 || rf > len(brokers):
		return nil, kerr.InvalidReplicationFactor
	}
	r := b.ctx.Rand()
	start, shift := r.IntN(len(brokers)), r.IntN(len(brokers))
	a, err := controller.AssignReplicas(brokers, partitions, rf, start, shift)
	if err != nil {
		// Racks on some brokers only: AdminOperationException, which is
		// no ApiException (UNKNOWN_SERVER_ERROR).
		return nil, kerr.UnknownServerError
	}
	out := zk.ReplicaAssignment{}
	for p, rs := range a {
		out[int32(p)] = rs
	}
	return out, nil
}

// writeTopicZK creates /brokers/topics/<topic> with the assignment
// (AdminZkClient.createTopicWithAssignment) and calls done with
// ZooKeeper's answer (NodeExists: another broker created it first).
func (b *Broker) writeTopicZK(topic string, a zk.ReplicaAssignment, done func(zk.Code)) {
	b.zk.CreateRecursive(b.ctx, zk.TopicPath(topic), zk.Encode(zk.NewTopicAssignment(a)), func(ctx *sim.Context, r *zk.Response) {
		b.ctx = ctx
		done(r.Code)
	})
}

// forwardToController sends req to the active KRaft controller (Kafka's
// ForwardingManager and controller channel) and calls cb with its answer,
// or with an error when no controller is known or the request fails.
func (b *Broker) forwardToController(req kmsg.Request, cb func(kmsg.Response, error)) {
	to := int32(-1)
	if b.kraft != nil {
		to = b.kraft.raft.Leader().Leader
	}
	if to < 0 {
		cb(nil, fmt.Errorf("no active controller known"))
		return
	}
	if st := b.kraft; to == b.cfg.BrokerID && st.controller != nil {
		if st.controller.Handle(b.ctx, b.cfg.BrokerID, req, func(r kmsg.Response) { cb(r, nil) }) {
			return
		}
	}
	b.send(to, req, b.cfg.ControllerTimeout, cb)
}
