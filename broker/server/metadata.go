package server

// This file keeps the broker's metadata cache, filled by UpdateMetadata
// (api key 6) from the controller, and serves Metadata (api key 3) to
// clients from it, as Kafka's MetadataCache does. Clients find leaders
// here; a cache that lags the controller sends them to the old leader,
// which answers NOT_LEADER_OR_FOLLOWER.
//
// Versions: the controller sends UpdateMetadata v4 (flat partition list
// with offline replicas); Metadata is answered at the client's version, v7+
// carrying leader epochs (KIP-320).

import (
	"cmp"
	"github.com/kafkasim/kafkasim/broker/share"
	"slices"
	"sort"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type brokerInfo struct {
	id   int32
	rack *string
}

type metadataCache struct {
	controller int32
	brokers    []brokerInfo // sorted by id
	partitions map[storage.TopicPartition]kmsg.UpdateMetadataRequestTopicPartition
	// sorted lists partitions' keys in order, for Metadata answers; it is
	// sorted again only after new partitions arrive.
	sorted   []storage.TopicPartition
	unsorted bool
}

func (b *Broker) handleUpdateMetadata(from sim.NodeID, req *wire.Request, body *kmsg.UpdateMetadataRequest) {
	resp := kmsg.NewPtrUpdateMetadataResponse()
	// Mutant stale-controller-epoch: no controller-epoch check.
	if body.ControllerEpoch < b.controllerEpoch && !b.cfg.Mutants.On(mutant.StaleControllerEpoch) {
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
		b.respond(from, req, resp)
		return
	}
	b.controllerEpoch = body.ControllerEpoch
	m := &b.metadata
	m.controller = body.ControllerID
	m.brokers = slices.Grow(m.brokers[:0], len(body.LiveBrokers))
	for _, lb := range body.LiveBrokers {
		m.brokers = append(m.brokers, brokerInfo{id: lb.ID, rack: lb.Rack})
	}
	// NB: slices.SortFunc orders as sort.Slice did (the ids are distinct),
	// without its allocations.
	slices.SortFunc(m.brokers, func(a, c brokerInfo) int { return cmp.Compare(a.id, c.id) })
	if m.partitions == nil {
		m.partitions = map[storage.TopicPartition]kmsg.UpdateMetadataRequestTopicPartition{}
	}
	for _, ps := range body.PartitionStates {
		tp := storage.TopicPartition{Topic: ps.Topic, Partition: ps.Partition}
		if ps.Leader == leaderDuringDelete {
			m.remove(tp) // the topic is being deleted (MetadataCache.updateMetadata)
			continue
		}
		if _, ok := m.partitions[tp]; !ok {
			m.sorted, m.unsorted = append(m.sorted, tp), true
		}
		m.partitions[tp] = ps
	}
	b.respond(from, req, resp)
	b.completeCreates()
	b.completeAdminWaits()
}

// leaderDuringDelete is LeaderAndIsr.LeaderDuringDelete: the leader an
// UpdateMetadata names for a partition of a topic being deleted.
const leaderDuringDelete = -2

// sortedPartitions returns the cache's partitions in order.
func (m *metadataCache) sortedPartitions() []storage.TopicPartition {
	if m.unsorted {
		sort.Slice(m.sorted, func(i, j int) bool { return lessTP(m.sorted[i], m.sorted[j]) })
		m.unsorted = false
	}
	return slices.Clone(m.sorted)
}

// remove drops tp from the cache.
func (m *metadataCache) remove(tp storage.TopicPartition) {
	if _, ok := m.partitions[tp]; !ok {
		return
	}
	delete(m.partitions, tp)
	m.sorted = slices.DeleteFunc(m.sorted, func(x storage.TopicPartition) bool { return x == tp })
}

// Authorized operations without an authorizer: every operation Kafka
// supports on the resource (AclEntry.supportedOperations), as a bit field
// of AclOperation codes.
const (
	topicAuthorizedOps   = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11 // READ..DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS
	clusterAuthorizedOps = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12       // CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, *_CONFIGS, IDEMPOTENT_WRITE
)

// handleMetadata serves Metadata (api key 3), v0-v13: v0 lists every
// topic for an empty topic list (null from v1); allow_auto_topic_creation
// (v4+, always true below) with auto.create.topics.enable creates an
// unknown topic (auto_create.go), answered LEADER_NOT_AVAILABLE meanwhile;
// v8+ authorized operations are -2147483648 unless asked for (then all
// operations: no authorizer); v10+ topic ids (zero in ZooKeeper mode, as
// below IBP 2.8); v12 topics named by id (UNKNOWN_TOPIC_ID when unknown).
func (b *Broker) handleMetadata(from sim.NodeID, req *wire.Request, body *kmsg.MetadataRequest) {
	resp := kmsg.NewPtrMetadataResponse()
	v := body.Version
	m := &b.metadata
	resp.ControllerID = m.controller
	for _, bi := range m.brokers {
		resp.Brokers = append(resp.Brokers, kmsg.MetadataResponseBroker{NodeID: bi.id, Host: NodeName(bi.id), Port: 9092, Rack: bi.rack})
	}
	if v >= 8 && v <= 10 && body.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = clusterAuthorizedOps
	}
	if m.unsorted {
		sort.Slice(m.sorted, func(i, j int) bool { return lessTP(m.sorted[i], m.sorted[j]) })
		m.unsorted = false
	}
	img := b.Image()
	topicID := func(name string) (id [16]byte) {
		if img != nil {
			id, _ = img.TopicID(name)
		}
		return id
	}
	var byID []kmsg.MetadataResponseTopic // topics asked for by an id this broker does not know
	var names []string                    // the topics asked for by name (or known id), in order
	for _, t := range body.Topics {
		switch {
		case t.Topic != nil:
			names = append(names, *t.Topic)
		case t.TopicID != [16]byte{}:
			if img != nil {
				if name, ok := img.TopicName(t.TopicID); ok {
					names = append(names, name)
					continue
				}
			}
			rt := kmsg.NewMetadataResponseTopic()
			rt.ErrorCode, rt.TopicID = kerr.UnknownTopicID.Code, t.TopicID
			byID = append(byID, rt)
		}
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	all := body.Topics == nil || (v == 0 && len(body.Topics) == 0)
	autoCreate := b.cfg.AutoCreateTopics && (v < 4 || body.AllowAutoTopicCreation) && !all
	found := map[string]bool{}
	for _, tp := range m.sorted {
		if !all && !want[tp.Topic] {
			continue
		}
		found[tp.Topic] = true
		if n := len(resp.Topics); n == 0 || *resp.Topics[n-1].Topic != tp.Topic {
			name := tp.Topic
			rt := kmsg.NewMetadataResponseTopic()
			rt.Topic, rt.IsInternal, rt.TopicID = &name, tp.Topic == "__consumer_offsets" || tp.Topic == txn.StateTopic || tp.Topic == share.StateTopic, topicID(name)
			if v >= 8 && body.IncludeTopicAuthorizedOperations {
				rt.AuthorizedOperations = topicAuthorizedOps
			}
			resp.Topics = append(resp.Topics, rt)
		}
		ps := m.partitions[tp]
		rp := kmsg.MetadataResponseTopicPartition{Partition: tp.Partition, Leader: ps.Leader, LeaderEpoch: ps.LeaderEpoch, Replicas: ps.Replicas, ISR: ps.ISR, OfflineReplicas: ps.OfflineReplicas}
		if ps.Leader < 0 {
			rp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, rp)
	}
	for _, name := range names {
		if found[name] {
			continue
		}
		found[name] = true
		code := kerr.UnknownTopicOrPartition
		if autoCreate {
			code = b.autoCreateTopic(name)
			if code == kerr.CoordinatorNotAvailable {
				// An internal topic short of live brokers (KafkaApis
				// getTopicMetadata).
				code = kerr.InvalidReplicationFactor
			}
		}
		n := name
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic, rt.ErrorCode, rt.IsInternal = &n, code.Code, name == "__consumer_offsets" || name == txn.StateTopic || name == share.StateTopic
		resp.Topics = append(resp.Topics, rt)
	}
	resp.Topics = append(resp.Topics, byID...)
	b.respond(from, req, resp)
}

// handleListOffsets serves ListOffsets (api key 2): the earliest offset, the
// latest (the HW for clients, the LEO for a replica asking with its id), or
// the first offset at a timestamp. v4+ fences on CurrentLeaderEpoch; v2+
// with isolation_level 1 (read_committed) answers the LSO for the latest.
// v0 answers the one offset in old_style_offsets (Kafka's
// legacyFetchOffsetsForTimestamp also lists older segment base offsets,
// up to max_num_offsets: simplified to the first, the one clients use).
func (b *Broker) handleListOffsets(from sim.NodeID, req *wire.Request, body *kmsg.ListOffsetsRequest) {
	resp := kmsg.NewPtrListOffsetsResponse()
	for _, t := range body.Topics {
		rt := kmsg.ListOffsetsResponseTopic{Topic: t.Topic}
		for _, rq := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.Offset, rp.Timestamp, rp.LeaderEpoch = rq.Partition, -1, -1, -1
			p := b.partitions[storage.TopicPartition{Topic: t.Topic, Partition: rq.Partition}]
			current := int32(-1)
			if body.Version >= 4 {
				current = rq.CurrentLeaderEpoch
			}
			if err := b.checkLeader(p, current); err != nil {
				rp.ErrorCode = err.Code
			} else {
				switch {
				case rq.Timestamp == storage.LatestTimestamp && body.ReplicaID < 0 && body.Version >= 2 && body.IsolationLevel == 1:
					rp.Offset = p.LastStableOffset() // read_committed (KIP-98)
				case rq.Timestamp == storage.LatestTimestamp && body.ReplicaID < 0:
					rp.Offset = p.hw
				default:
					off, ts, ok, err := p.log.OffsetForTimestamp(rq.Timestamp)
					switch {
					case err != nil:
						rp.ErrorCode = kerr.InvalidRequest.Code
					case ok:
						rp.Offset, rp.Timestamp = off, ts
					}
				}
				rp.LeaderEpoch = p.leaderEpoch
				if body.Version == 0 && rp.ErrorCode == 0 && rp.Offset >= 0 && rq.MaxNumOffsets > 0 {
					rp.OldStyleOffsets = []int64{rp.Offset}
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	b.respond(from, req, resp)
}

// handleStopReplica serves StopReplica (api key 5): stop fetching and
// leading the partitions, and delete their logs when asked (topic deletion,
// reassignment away).
func (b *Broker) handleStopReplica(from sim.NodeID, req *wire.Request, body *kmsg.StopReplicaRequest) {
	resp := kmsg.NewPtrStopReplicaResponse()
	if body.ControllerEpoch < b.controllerEpoch {
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
		b.respond(from, req, resp)
		return
	}
	b.controllerEpoch = body.ControllerEpoch
	for _, t := range body.Topics {
		parts := t.Partitions
		if body.Version == 0 {
			parts = []int32{t.Partition}
		}
		for _, pid := range parts {
			tp := storage.TopicPartition{Topic: t.Topic, Partition: pid}
			b.stopReplica(tp, body.DeletePartitions)
			resp.Partitions = append(resp.Partitions, kmsg.StopReplicaResponsePartition{Topic: t.Topic, Partition: pid})
		}
	}
	b.respond(from, req, resp)
}

// stopReplica stops this broker's replica of tp (ReplicaManager.stopReplicas):
// no more fetching, delayed produces failed, the replica offline; with
// del its log is deleted too, even one loaded at start that no
// LeaderAndIsr has activated.
func (b *Broker) stopReplica(tp storage.TopicPartition, del bool) {
	b.removeFromFetcher(tp)
	if p, ok := b.partitions[tp]; ok {
		p.role = Offline
		b.failDelayedProduce(tp, kerr.NotLeaderForPartition)
		b.logp("stop-replica", p, sim.S("delete", boolStr(del)))
		if del {
			b.setPartition(tp, nil)
		}
	}
	if !del {
		return
	}
	delete(b.hwOnDisk, tp)
	if _, ok := b.logs.Log(tp); ok {
		if err := b.logs.DeleteLog(tp); err != nil {
			panic(err)
		}
	}
}

func boolStr(v bool) string {
	if v {
		return "true"
	}
	return "false"
}
