package server

// This file is a KRaft broker's metadata listener (Kafka's
// BrokerMetadataListener and BrokerMetadataPublisher, KIP-500/KIP-631): it
// replays every committed metadata record into a metadata image and, after
// each batch, publishes what changed: the metadata cache that answers
// clients' Metadata requests, and the partitions this broker replicates —
// becoming leader or follower when a partition's leader epoch grows (what
// LeaderAndIsr does in ZooKeeper mode; ReplicaManager.applyDelta), taking a
// new ISR and partition epoch when only the ISR changed.
//
// At start the broker first catches up: records up to the HW it first
// learns are replayed into the image and published at once, as Kafka's
// initial catch-up publishes one image.
//
// A RemoveTopicRecord (DeleteTopics) drops the topic from the cache and
// stops and deletes this broker's replicas of it; a topic's ConfigRecords
// (CreateTopics, AlterConfigs) take effect on its replicas at once
// (topicConfigChanged).
//
// Simplifications: after that the publisher runs after every committed
// batch (Kafka batches deltas); a partition this broker no longer replicates is left in
// place (reassignment is not modelled); the Metadata response's controller
// id is the lowest unfenced broker (Kafka picks a random live broker, as
// clients forward admin requests through it, KIP-590).

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type brokerMetadata struct {
	b      *Broker
	img    *metadata.Image
	offset int64 // the offset of the last record applied; -1 before any

	// caughtUp is set once the image has reached the quorum's HW as this
	// process first learned it: until then the records are replayed into
	// the image but not published (Kafka's initial catch-up), so a
	// restarted broker never acts on a stale intermediate state (leading
	// a partition in an epoch its log is already past).
	caughtUp       bool
	pending        []storage.TopicPartition
	pendingBrokers bool
	// pendingRemoved are the topics RemoveTopicRecords deleted, and
	// pendingConfigs the topics whose ConfigRecords changed, not yet
	// published.
	pendingRemoved, pendingConfigs []string
}

func newBrokerMetadata(b *Broker) *brokerMetadata {
	img := metadata.NewImage()
	img.SetMutants(b.cfg.Mutants)
	return &brokerMetadata{b: b, img: img, offset: -1}
}

// Image returns the broker's committed metadata image (nil in ZooKeeper
// mode or without the broker role).
func (b *Broker) Image() *metadata.Image {
	if b.kraft == nil || b.kraft.meta == nil {
		return nil
	}
	return b.kraft.meta.img
}

func (m *brokerMetadata) HandleCommit(ctx *sim.Context, batch raft.Batch) {
	m.b.ctx = ctx
	var touched []storage.TopicPartition
	brokers := false
	for _, raw := range batch.Records {
		r, err := metadata.Decode(raw)
		if err != nil {
			panic(fmt.Sprintf("broker %d: metadata record at %d: %v", m.b.cfg.BrokerID, batch.BaseOffset, err))
		}
		switch x := r.(type) {
		case *metadata.RemoveTopicRecord:
			if name, ok := m.img.TopicName(x.TopicID); ok {
				m.pendingRemoved = append(m.pendingRemoved, name)
			}
		case *metadata.ConfigRecord:
			if x.ResourceType == metadata.ResourceTopic && !slices.Contains(m.pendingConfigs, x.ResourceName) {
				m.pendingConfigs = append(m.pendingConfigs, x.ResourceName)
			}
		}
		if err := m.img.Replay(r); err != nil {
			panic(fmt.Sprintf("broker %d: replaying metadata at %d: %v", m.b.cfg.BrokerID, batch.BaseOffset, err))
		}
		if t, p, ok := metadata.PartitionOf(r, m.img); ok {
			tp := storage.TopicPartition{Topic: t, Partition: p}
			if !slices.Contains(touched, tp) {
				touched = append(touched, tp)
			}
		} else {
			brokers = true // broker registrations, fencing, configs, topics
		}
	}
	m.offset = batch.LastOffset()
	for _, tp := range touched {
		if !slices.Contains(m.pending, tp) {
			m.pending = append(m.pending, tp)
		}
	}
	m.pendingBrokers = m.pendingBrokers || brokers
	if !m.caughtUp && m.offset+1 < m.b.kraft.raft.HighWatermark() {
		return
	}
	m.caughtUp = true
	pending, pb := m.pending, m.pendingBrokers
	removed, configs := m.pendingRemoved, m.pendingConfigs
	m.pending, m.pendingBrokers, m.pendingRemoved, m.pendingConfigs = nil, false, nil, nil
	m.removeTopics(removed)
	m.publish(pending, pb)
	for _, t := range configs {
		m.b.topicConfigChanged(t)
	}
}

// removeTopics drops the deleted topics' partitions from the metadata
// cache and stops and deletes this broker's replicas of them, as
// ReplicaManager.applyDelta does for deleted topics. A topic created again
// under the same name later in the batch comes back in publish.
func (m *brokerMetadata) removeTopics(topics []string) {
	if len(topics) == 0 {
		return
	}
	b := m.b
	for _, tp := range slices.Clone(b.metadata.sorted) {
		if slices.Contains(topics, tp.Topic) {
			b.metadata.remove(tp)
		}
	}
	for _, tp := range b.logs.Partitions() {
		if slices.Contains(topics, tp.Topic) {
			b.stopReplica(tp, true)
		}
	}
}

func (m *brokerMetadata) HandleLoadSnapshot(ctx *sim.Context, s raft.Snapshot) {
	m.b.ctx = ctx
	m.img = metadata.NewImage()
	m.img.SetMutants(m.b.cfg.Mutants)
	for _, raw := range s.Records {
		r, err := metadata.Decode(raw)
		if err != nil {
			panic(fmt.Sprintf("broker %d: snapshot record: %v", m.b.cfg.BrokerID, err))
		}
		if err := m.img.Replay(r); err != nil {
			panic(fmt.Sprintf("broker %d: replaying the snapshot: %v", m.b.cfg.BrokerID, err))
		}
	}
	m.offset = s.EndOffset - 1
	var gone []string // topics the snapshot no longer has
	for _, tp := range m.b.metadata.sorted {
		if _, ok := m.img.TopicID(tp.Topic); !ok && !slices.Contains(gone, tp.Topic) {
			gone = append(gone, tp.Topic)
		}
	}
	m.removeTopics(gone)
	var all []storage.TopicPartition
	for _, ps := range m.img.Partitions() {
		all = append(all, storage.TopicPartition{Topic: ps.Topic, Partition: ps.Partition})
	}
	m.publish(all, true)
}

func (m *brokerMetadata) HandleLeaderChange(*sim.Context, raft.LeaderAndEpoch) {}

func (m *brokerMetadata) Snapshot() [][]byte {
	var out [][]byte
	for _, r := range m.img.Records() {
		out = append(out, metadata.Encode(r))
	}
	return out
}

// publish applies the changed partitions and refreshes the metadata cache.
func (m *brokerMetadata) publish(touched []storage.TopicPartition, brokers bool) {
	b := m.b
	c := &b.metadata
	if brokers || c.partitions == nil {
		c.brokers = c.brokers[:0]
		c.controller = -1
		for _, bs := range m.img.Brokers() {
			if bs.Fenced {
				continue
			}
			var rack *string
			if bs.Rack != "" {
				r := bs.Rack
				rack = &r
			}
			c.brokers = append(c.brokers, brokerInfo{id: bs.ID, rack: rack})
			if c.controller < 0 {
				c.controller = bs.ID
			}
		}
	}
	if c.partitions == nil {
		c.partitions = map[storage.TopicPartition]kmsg.UpdateMetadataRequestTopicPartition{}
	}
	slices.SortFunc(touched, func(x, y storage.TopicPartition) int {
		switch {
		case lessTP(x, y):
			return -1
		case lessTP(y, x):
			return 1
		}
		return 0
	})
	for _, tp := range touched {
		ps, ok := m.img.Partition(tp.Topic, tp.Partition)
		if !ok {
			continue
		}
		if _, seen := c.partitions[tp]; !seen {
			c.sorted, c.unsorted = append(c.sorted, tp), true
		}
		var offline []int32
		for _, r := range ps.Replicas {
			if bs, ok := m.img.Broker(r); !ok || bs.Fenced {
				offline = append(offline, r)
			}
		}
		c.partitions[tp] = kmsg.UpdateMetadataRequestTopicPartition{Topic: tp.Topic, Partition: tp.Partition,
			Leader: ps.Leader, LeaderEpoch: ps.LeaderEpoch, ISR: slices.Clone(ps.ISR), ZKVersion: ps.PartitionEpoch,
			Replicas: slices.Clone(ps.Replicas), OfflineReplicas: offline}
		if slices.Contains(ps.Replicas, b.cfg.BrokerID) {
			m.applyPartition(tp, ps)
		}
	}
}

// applyPartition makes this broker's replica of tp follow the image.
func (m *brokerMetadata) applyPartition(tp storage.TopicPartition, ps metadata.PartitionState) {
	b := m.b
	st := partitionState{leader: ps.Leader, leaderEpoch: ps.LeaderEpoch, isr: slices.Clone(ps.ISR),
		replicas: slices.Clone(ps.Replicas), zkVersion: ps.PartitionEpoch}
	p, ok := b.partitions[tp]
	if !ok || p.role == Offline || ps.LeaderEpoch > p.leaderEpoch {
		b.applyPartitionState(tp, st)
		return
	}
	if ps.LeaderEpoch < p.leaderEpoch || ps.PartitionEpoch <= p.zkVersion {
		return // older than what the replica has (an AlterPartition answer got here first)
	}
	// The same leader epoch, a new partition epoch: an ISR change.
	if p.role != Leader {
		p.isr, p.zkVersion = st.isr, ps.PartitionEpoch
		return
	}
	// Partition.makeLeader commits the image's ISR, ending any pending change.
	p.isrUpdateInFlight, p.pendingISR = false, nil
	b.isrUpdated(p, st.isr, ps.PartitionEpoch)
}
