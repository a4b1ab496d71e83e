package server

// This file serves CreateTopics (api key 19), v0-v7.
//
// ZooKeeper mode, as Kafka 2.x-3.x's KafkaApis.handleCreateTopicsRequest
// and ZkAdminManager.createTopics: only the active controller serves it
// (NOT_CONTROLLER elsewhere: the client sends it to the controller the
// Metadata response names). Names repeated in the request are
// INVALID_REQUEST; then, per topic: an invalid name INVALID_TOPIC_EXCEPTION,
// a topic in the metadata cache (or being created here) TOPIC_ALREADY_EXISTS,
// num_partitions or replication_factor with an explicit assignment
// INVALID_REQUEST, -1 from 2.4 (KIP-464) num.partitions /
// default.replication.factor at any request version (only the Java
// client refuses to send it below v4); num_partitions <= 0 INVALID_PARTITIONS,
// replication_factor <= 0 or above the live brokers
// INVALID_REPLICATION_FACTOR; an explicit assignment whose partitions are
// not 0..n-1, whose replica lists are empty, differ in size or repeat a
// broker INVALID_REPLICA_ASSIGNMENT; an unknown config name INVALID_CONFIG,
// a null config value INVALID_REQUEST. The assignment is AdminUtils' with
// RackAwareMode.Enforced (auto_create.go). validate_only (v1+) writes
// nothing. Otherwise /brokers/topics/<t> is written and, when timeout_ms >
// 0, the answer waits until the metadata cache has a leader for every
// partition (DelayedCreatePartitions) or the timeout passes
// (REQUEST_TIMED_OUT for the topics still waiting). v5+ answers carry the
// partition count, replication factor and configs (as DescribeConfigs
// shows them).
//
// KRaft mode: the request is forwarded to the active controller (Kafka's
// ForwardingManager, KIP-590), whose answer (broker/kraft/create_topics.go)
// is relayed; a local active controller answers it at once (kraft.go).
//
// Simplifications: configs are checked for known names and values of
// their type (ConfigDef's parse) only; a topic config of the release that
// kafkasim does not model (package config/catalog) is accepted when its
// value passes Kafka's validator, and changes nothing. In ZooKeeper mode
// a topic's configs are written to /config/topics/<t> before its
// assignment (AdminZkClient.createTopicWithAssignment; a topic created
// without configs gets no node, where Kafka writes an empty one) and every
// broker takes them at once, as AlterConfigs does (alter_configs.go; the
// config-change watch is not modelled); in KRaft mode the controller keeps
// them as ConfigRecords. The brokers and the controller act on the modelled
// ones (min.insync.replicas, unclean.leader.election.enable,
// max.message.bytes, compression.type, cleanup.policy: topic_config.go). A failed
// forward (no controller known, or no answer within
// controller.socket.timeout.ms) is NOT_CONTROLLER, which clients retry,
// where Kafka's forwarding retries by itself. No create-topic policy,
// quotas (throttle 0) or ACLs. Topic ids (v7) are zero in ZooKeeper mode,
// as for a cluster below IBP 2.8.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/kraft"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const timerCreateTopics = "create-topics"

// pendingCreate is a CreateTopics request waiting for its topics.
type pendingCreate struct {
	from    sim.NodeID
	req     *wire.Request
	resp    *kmsg.CreateTopicsResponse
	writes  int            // ZooKeeper writes outstanding
	waiting map[int]int32  // response topic index -> partitions awaited
	timeout sim.Duration   // timeout_ms
	timer   sim.TimerID    // set once the writes are done
	order   []int          // the keys of waiting, in order
	names   map[int]string // response topic index -> name
}

func setTopicError(rt *kmsg.CreateTopicsResponseTopic, err *kerr.Error, msg string) {
	rt.ErrorCode = err.Code
	if msg != "" {
		m := msg
		rt.ErrorMessage = &m
	}
}

// precheckCreateTopic returns the error of a topic that no mode may
// create, or nil.
func precheckCreateTopic(t *kmsg.CreateTopicsRequestTopic, dup bool, release config.Version) (*kerr.Error, string) {
	switch {
	case dup:
		return kerr.InvalidRequest, "topic " + t.Topic + " is named more than once in the request"
	case !kraft.ValidTopicName(t.Topic):
		return kerr.InvalidTopicException, "topic name " + fmt.Sprintf("%q", t.Topic) + " is illegal: 1 to 249 characters of [a-zA-Z0-9._-], not '.' or '..'"
	case len(t.ReplicaAssignment) > 0 && (t.NumPartitions != -1 || t.ReplicationFactor != -1):
		return kerr.InvalidRequest, "both numPartitions or replicationFactor and replicasAssignments were set; both cannot be used at the same time"
	}
	for _, c := range t.Configs {
		if err, msg := checkTopicConfig(c.Name, c.Value, release); err != nil {
			return err, msg // alter_configs.go
		}
	}
	return nil, ""
}

func (b *Broker) handleCreateTopics(from sim.NodeID, req *wire.Request, body *kmsg.CreateTopicsRequest) {
	resp := body.ResponseKind().(*kmsg.CreateTopicsResponse)
	count := map[string]int{}
	for _, t := range body.Topics {
		count[t.Topic]++
	}
	ok := make([]bool, len(body.Topics))
	for i := range body.Topics {
		t := &body.Topics[i]
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		if err, msg := precheckCreateTopic(t, count[t.Topic] > 1, b.cfg.release()); err != nil {
			setTopicError(&rt, err, msg)
		} else {
			ok[i] = true
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if b.kraft != nil {
		b.forwardCreateTopics(from, req, body, resp, ok)
		return
	}
	if b.zk == nil || b.controller == nil || !b.controller.Active() {
		for i := range resp.Topics {
			if ok[i] {
				setTopicError(&resp.Topics[i], kerr.NotController, "this is not the correct controller for this cluster")
			}
		}
		b.respond(from, req, resp)
		return
	}
	pc := &pendingCreate{from: from, req: req, resp: resp, waiting: map[int]int32{}, names: map[int]string{},
		timeout: sim.Ms(int64(body.TimeoutMillis))}
	pc.writes = 1 // held while the topics are read
	for i := range body.Topics {
		if !ok[i] {
			continue
		}
		t, rt := &body.Topics[i], &resp.Topics[i]
		a, err, msg := b.zkTopicAssignment(t)
		if err != nil {
			setTopicError(rt, err, msg)
			continue
		}
		rt.NumPartitions, rt.ReplicationFactor = int32(len(a)), int16(len(a[0]))
		if body.Version >= 5 {
			rt.Configs = b.createdTopicConfigs(t.Topic)
			ownConfigs(rt, t)
		}
		if body.ValidateOnly {
			continue
		}
		b.setAutoCreating(t.Topic) // NB: a second create meanwhile is TOPIC_ALREADY_EXISTS
		pc.writes++
		idx, name := i, t.Topic
		b.ctx.Log("create-topic", sim.S("topic", name), sim.I("partitions", int64(len(a))), sim.I("replication-factor", int64(len(a[0]))))
		configs := requestConfigs(t)
		if len(configs) > 0 {
			// AdminZkClient.createTopicWithAssignment: the topic's configs
			// first, then its assignment.
			b.writeTopicConfigZK(name, configs, func(code zk.Code) {
				var err error
				if code == zk.Ok {
					err = b.topicConfigsChanged(name, configs)
				}
				if code != zk.Ok || err != nil {
					delete(b.autoCreating, name)
					if err != nil {
						setTopicError(&pc.resp.Topics[idx], kerr.InvalidConfig, err.Error())
					} else {
						setTopicError(&pc.resp.Topics[idx], kerr.UnknownServerError, "writing the topic's configs to ZooKeeper: "+code.String())
					}
					b.createWriteDone(pc)
					return
				}
				b.createTopicZK(pc, idx, name, a)
			})
			continue
		}
		b.createTopicZK(pc, idx, name, a)
	}
	b.createWriteDone(pc)
}

// requestConfigs are the configs a CreateTopics request gives a topic
// (precheckCreateTopic refused a null value), nil for none.
func requestConfigs(t *kmsg.CreateTopicsRequestTopic) map[string]string {
	var out map[string]string
	for _, c := range t.Configs {
		if c.Value == nil {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[c.Name] = *c.Value
	}
	return out
}

// ownConfigs marks the configs the request gives the topic as its own
// (TOPIC_CONFIG) in a v5+ answer's list.
func ownConfigs(rt *kmsg.CreateTopicsResponseTopic, t *kmsg.CreateTopicsRequestTopic) {
	for _, c := range t.Configs {
		for k := range rt.Configs {
			if rt.Configs[k].Name == c.Name && c.Value != nil {
				v := *c.Value
				rt.Configs[k].Value, rt.Configs[k].Source = &v, int8(kmsg.ConfigSourceDynamicTopicConfig)
			}
		}
	}
}

// writeTopicConfigZK writes a new topic's own configs to
// /config/topics/<t>, as AdminZkClient does before its assignment (a
// leftover node of an earlier topic of that name is overwritten).
func (b *Broker) writeTopicConfigZK(topic string, configs map[string]string, done func(zk.Code)) {
	path, data := zk.TopicConfigPath(topic), zk.Encode(zk.EntityConfig{Version: 1, Config: configs})
	b.zk.CreateRecursive(b.ctx, path, data, func(ctx *sim.Context, r *zk.Response) {
		b.ctx = ctx
		if r.Code != zk.NodeExists {
			done(r.Code)
			return
		}
		b.zk.SetData(b.ctx, path, data, zk.AnyVersion, func(ctx *sim.Context, r *zk.Response) {
			b.ctx = ctx
			done(r.Code)
		})
	})
}

// createTopicZK writes a topic's assignment to /brokers/topics/<t>, the
// last write of its creation.
func (b *Broker) createTopicZK(pc *pendingCreate, idx int, name string, a zk.ReplicaAssignment) {
	b.writeTopicZK(name, a, func(code zk.Code) {
		delete(b.autoCreating, name)
		rt := &pc.resp.Topics[idx]
		switch code {
		case zk.Ok:
			pc.waiting[idx], pc.names[idx] = rt.NumPartitions, name
			pc.order = append(pc.order, idx)
		case zk.NodeExists:
			setTopicError(rt, kerr.TopicAlreadyExists, fmt.Sprintf("topic '%s' already exists", name))
		default:
			setTopicError(rt, kerr.UnknownServerError, "writing the topic to ZooKeeper: "+code.String())
		}
		b.createWriteDone(pc)
	})
}

// zkTopicAssignment resolves a topic's replica assignment, or its error.
func (b *Broker) zkTopicAssignment(t *kmsg.CreateTopicsRequestTopic) (zk.ReplicaAssignment, *kerr.Error, string) {
	if b.metadata.topicPartitions(t.Topic) > 0 || b.autoCreating[t.Topic] {
		return nil, kerr.TopicAlreadyExists, fmt.Sprintf("topic '%s' already exists", t.Topic)
	}
	if len(t.ReplicaAssignment) == 0 {
		np, rf := int(t.NumPartitions), int(t.ReplicationFactor)
		if b.cfg.release() >= config.V2_4 { // KIP-464
			if np == -1 {
				np = b.cfg.NumPartitions
			}
			if rf == -1 {
				rf = b.cfg.DefaultReplicationFactor
			}
		}
		live := len(b.metadata.brokers)
		switch {
		case np <= 0:
			return nil, kerr.InvalidPartitions, "number of partitions must be larger than 0"
		case rf <= 0:
			return nil, kerr.InvalidReplicationFactor, "replication factor must be larger than 0"
		case rf > live:
			return nil, kerr.InvalidReplicationFactor, fmt.Sprintf("replication factor: %d larger than available brokers: %d", rf, live)
		}
		a, err := b.assignReplicas(np, rf, true)
		if err != nil {
			return nil, err, "cannot assign replicas: broker.rack must be set on every broker or none"
		}
		return a, nil, ""
	}
	a := zk.ReplicaAssignment{}
	size := len(t.ReplicaAssignment[0].Replicas)
	for _, ra := range t.ReplicaAssignment {
		switch _, dup := a[ra.Partition]; {
		case dup:
			return nil, kerr.InvalidReplicaAssignment, fmt.Sprintf("partition %d is assigned more than once", ra.Partition)
		case len(ra.Replicas) == 0:
			return nil, kerr.InvalidReplicaAssignment, fmt.Sprintf("partition %d has an empty replica list", ra.Partition)
		case len(ra.Replicas) != size:
			return nil, kerr.InvalidReplicaAssignment, "all partitions should have the same number of replicas"
		}
		for i, r := range ra.Replicas {
			if slices.Contains(ra.Replicas[:i], r) {
				return nil, kerr.InvalidReplicaAssignment, fmt.Sprintf("duplicate replica assignment for partition %d: %v", ra.Partition, ra.Replicas)
			}
		}
		a[ra.Partition] = slices.Clone(ra.Replicas)
	}
	for p := range int32(len(a)) {
		if _, ok := a[p]; !ok {
			return nil, kerr.InvalidReplicaAssignment, "partitions should be a consecutive 0-based integer sequence"
		}
	}
	return a, nil, ""
}

// createWriteDone counts one ZooKeeper answer (or the end of reading the
// request) and, after the last, answers or waits for the leaders.
func (b *Broker) createWriteDone(pc *pendingCreate) {
	pc.writes--
	if pc.writes > 0 {
		return
	}
	if len(pc.waiting) == 0 || pc.timeout <= 0 {
		b.respond(pc.from, pc.req, pc.resp)
		return
	}
	pc.timer = b.ctx.SetTimer(pc.timeout, timerCreateTopics)
	b.creates = append(b.creates, pc)
	b.completeCreates()
}

// completeCreates answers the CreateTopics requests whose topics all
// have leaders in the metadata cache; it runs after every metadata update.
func (b *Broker) completeCreates() {
	if len(b.creates) == 0 {
		return
	}
	kept := b.creates[:0]
	var done []*pendingCreate
	for _, pc := range b.creates {
		for _, idx := range slices.Clone(pc.order) {
			if b.metadata.hasLeaders(pc.names[idx], pc.waiting[idx]) {
				delete(pc.waiting, idx)
				pc.order = slices.DeleteFunc(pc.order, func(i int) bool { return i == idx })
			}
		}
		if len(pc.waiting) == 0 {
			done = append(done, pc)
		} else {
			kept = append(kept, pc)
		}
	}
	clearTail(b.creates, len(kept))
	b.creates = kept
	for _, pc := range done {
		b.ctx.CancelTimer(pc.timer)
		b.respond(pc.from, pc.req, pc.resp)
	}
}

// handleCreateTopicsTimer expires a CreateTopics request: the topics still
// without leaders get REQUEST_TIMED_OUT.
func (b *Broker) handleCreateTopicsTimer(id sim.TimerID, name string) bool {
	if name != timerCreateTopics {
		return false
	}
	for i, pc := range b.creates {
		if pc.timer != id {
			continue
		}
		b.creates = slices.Delete(b.creates, i, i+1)
		for _, idx := range pc.order {
			setTopicError(&pc.resp.Topics[idx], kerr.RequestTimedOut, "the topic was created but its partitions have no leaders yet")
		}
		b.respond(pc.from, pc.req, pc.resp)
		break
	}
	return true
}

// forwardCreateTopics sends the topics that passed the checks to the
// active controller and relays its answers.
func (b *Broker) forwardCreateTopics(from sim.NodeID, req *wire.Request, body *kmsg.CreateTopicsRequest, resp *kmsg.CreateTopicsResponse, ok []bool) {
	fwd := kmsg.NewPtrCreateTopicsRequest()
	fwd.Version, fwd.TimeoutMillis, fwd.ValidateOnly = body.Version, body.TimeoutMillis, body.ValidateOnly
	var idx []int
	for i, t := range body.Topics {
		if ok[i] {
			fwd.Topics = append(fwd.Topics, t)
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		b.respond(from, req, resp)
		return
	}
	b.forwardToController(fwd, func(r kmsg.Response, err error) {
		var got []kmsg.CreateTopicsResponseTopic
		if err == nil {
			got = r.(*kmsg.CreateTopicsResponse).Topics
		}
		for n, i := range idx {
			if n < len(got) && got[n].Topic == resp.Topics[i].Topic {
				resp.Topics[i] = got[n]
				if rt := &resp.Topics[i]; body.Version >= 5 && rt.ErrorCode == 0 && len(rt.Configs) == 0 {
					// The controller names no configs: the broker's, with
					// the request's as the topic's own (TOPIC_CONFIG).
					rt.Configs = b.createdTopicConfigs(rt.Topic)
					ownConfigs(rt, &body.Topics[i])
				}
				continue
			}
			setTopicError(&resp.Topics[i], kerr.NotController, "no active controller answered the forwarded request")
		}
		b.respond(from, req, resp)
	})
}

// topicPartitions returns the number of partitions of topic in the cache.
func (m *metadataCache) topicPartitions(topic string) int {
	n := 0
	for tp := range m.partitions { // NB: a count; order does not matter
		if tp.Topic == topic {
			n++
		}
	}
	return n
}

// hasLeaders reports whether partitions 0..n-1 of topic have leaders.
func (m *metadataCache) hasLeaders(topic string, n int32) bool {
	for p := range n {
		ps, ok := m.partitions[storage.TopicPartition{Topic: topic, Partition: p}]
		if !ok || ps.Leader < 0 {
			return false
		}
	}
	return true
}
