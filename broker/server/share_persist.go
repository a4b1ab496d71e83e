package server

// This file is the partition leader's side of __share_group_state (Kafka
// 4.2's Persister, DefaultStatePersister): a share-partition reads its
// state from its share coordinator (ReadShareGroupState, fencing older
// leaders with its leader epoch) before it acquires anything, and writes
// it (WriteShareGroupState) after every change of its records' states:
// acknowledgements, releases, expired locks, a moved SPSO. An
// acknowledgement is answered once the write that holds it is committed
// (a failed write answers it with the write's error and takes it back:
// the records are ACQUIRED by the member again, as Kafka's SharePartition
// rolls back), so an accepted record acknowledged OK is in
// __share_group_state.
//
// A share-partition never persisted is initialized at the group's
// share.auto.offset.reset and written at once. One write per
// share-partition is in flight at a time: changes made meanwhile go in
// the next, which carries the whole state then (writes are snapshots:
// share/state.go).
//
// Simplifications: the coordinator is found from the broker's metadata
// cache (the leader of the key's __share_group_state partition), as
// FindCoordinator key type 2 would name it; acquisitions are not
// persisted (as in Kafka: a delivery count may be lower after a fail-over
// than before, never higher); the group coordinator does not send
// InitializeShareGroupState for new assignments, the leader initializes
// lazily.

import (
	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareStateTimeout is share.coordinator.write.timeout.ms (5000), the
// leader's wait for a share coordinator's answer.
const shareStateTimeout = 5 * sim.Second

// shareLoadRetry is how soon a failed read or write is tried again.
const shareLoadRetry = 200 * sim.Millisecond

const timerShareRetry = "share-state-retry"

// shareWriteAttempts is how many times a write (or an admin call) that
// met a transient coordinator error (COORDINATOR_NOT_AVAILABLE,
// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, a timeout) is tried
// before the acknowledgements waiting for it fail, as Kafka's
// PersisterStateManager retries them.
const shareWriteAttempts = 5

// transientState reports whether a share coordinator error is worth a
// retry.
func transientState(err *kerr.Error) bool {
	return err == kerr.CoordinatorNotAvailable || err == kerr.NotCoordinator || err == kerr.CoordinatorLoadInProgress ||
		err == kerr.RequestTimedOut
}

// sharePersist is a share-partition's persistence state on its leader.
type sharePersist struct {
	loaded, loading bool
	writing, dirty  bool
	attempts        int                 // failed tries of the current write (shareWriteAttempts)
	inflight, next  []func(*kerr.Error) // waiting for the write in flight, for the next
}

// stateKey returns the persisted state's key of k (false: unknown topic).
func (b *Broker) stateKey(k sharePartKey) (share.StateKey, bool) {
	if b.kraft == nil || b.kraft.meta == nil || b.kraft.meta.img == nil {
		return share.StateKey{}, false
	}
	id, ok := b.kraft.meta.img.TopicID(k.tp.Topic)
	return share.StateKey{Group: k.group, TopicID: id, Partition: k.tp.Partition}, ok
}

// shareCoordinatorOf returns the broker leading sk's __share_group_state
// partition, creating the topic when it is missing.
func (b *Broker) shareCoordinatorOf(sk share.StateKey) (int32, bool) {
	tp := storage.TopicPartition{Topic: share.StateTopic, Partition: share.StatePartition(sk, b.cfg.Share.StatePartitions)}
	ps, ok := b.metadata.partitions[tp]
	if !ok && b.metadata.topicPartitions(share.StateTopic) == 0 {
		b.autoCreateTopic(share.StateTopic)
		return -1, false
	}
	if !ok || ps.Leader < 0 {
		return -1, false
	}
	return ps.Leader, true
}

// loadShareState starts reading k's state unless loaded or loading.
func (b *Broker) loadShareState(k sharePartKey) {
	m, sp := b.share.meta[k], b.share.parts[k]
	if m == nil || m.loaded || m.loading {
		return
	}
	sk, ok := b.stateKey(k)
	coord, ok2 := b.shareCoordinatorOf(sk)
	if !ok || !ok2 {
		b.retryShareState()
		return
	}
	m.loading = true
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = k.group
	req.Topics = []kmsg.ReadShareGroupStateRequestTopic{{TopicID: sk.TopicID,
		Partitions: []kmsg.ReadShareGroupStateRequestTopicPartition{{Partition: sk.Partition, LeaderEpoch: sp.LeaderEpoch}}}}
	b.send(coord, req, shareStateTimeout, func(r kmsg.Response, err error) {
		if b.share.meta[k] != m {
			return // dropped meanwhile
		}
		m.loading = false
		resp, _ := r.(*kmsg.ReadShareGroupStateResponse)
		if err != nil || resp == nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			b.retryShareState()
			return
		}
		rp := resp.Topics[0].Partitions[0]
		p := b.partition(k.tp)
		switch {
		case rp.ErrorCode == kerr.FencedLeaderEpoch.Code || p == nil || p.role != Leader:
			b.dropSharePartition(k, "fenced")
			return
		case rp.ErrorCode != 0:
			b.retryShareState()
			return
		}
		if rp.StartOffset >= 0 {
			load := share.StateLoad{Time: b.ctx.Now(), Group: k.group, Topic: k.tp.Topic, Partition: k.tp.Partition,
				StateEpoch: rp.StateEpoch, StartOffset: rp.StartOffset}
			var bs []share.Batch
			for _, s := range rp.StateBatches {
				bs = append(bs, share.Batch{FirstOffset: s.FirstOffset, LastOffset: s.LastOffset, DeliveryCount: s.DeliveryCount,
					State: share.RecordState(s.DeliveryState)})
				load.Batches = append(load.Batches, share.StateBatch{FirstOffset: s.FirstOffset, LastOffset: s.LastOffset,
					DeliveryState: s.DeliveryState, DeliveryCount: s.DeliveryCount})
			}
			sp.Restore(rp.StartOffset, rp.StateEpoch, bs)
			m.loaded = true
			b.share.loads = append(b.share.loads, load)
			b.logp("share-partition-loaded", p, sim.S("group", k.group), sim.I("spso", rp.StartOffset),
				sim.I("state-epoch", int64(rp.StateEpoch)), sim.S("batches", fmtStateBatches(load.Batches)))
		} else {
			start := p.hw
			if b.groupConfig(k.group, share.GroupAutoOffsetReset) == "earliest" {
				start = p.log.LogStartOffset()
			}
			sp.Restore(start, 0, nil)
			m.loaded = true
			b.logp("share-partition-initialized", p, sim.S("group", k.group), sim.I("spso", start), sim.I("leader-epoch", int64(p.leaderEpoch)))
			b.persistShare(k, nil)
		}
		b.completeShareFetches()
	})
}

func fmtStateBatches(bs []share.StateBatch) string {
	s := ""
	for _, x := range bs {
		if s != "" {
			s += ","
		}
		s += itoa(x.FirstOffset) + "-" + itoa(x.LastOffset) + ":" + itoa(int64(x.DeliveryState)) + "@" + itoa(int64(x.DeliveryCount))
	}
	return s
}

// persistShare writes k's state (now, or after the write in flight) and
// calls done (if not nil) once a write holding the current state is
// decided.
func (b *Broker) persistShare(k sharePartKey, done func(*kerr.Error)) {
	m := b.share.meta[k]
	if m == nil {
		if done != nil {
			done(kerr.InvalidRecordState)
		}
		return
	}
	if done != nil {
		m.next = append(m.next, done)
	}
	m.dirty = true
	if !m.writing {
		b.writeShareState(k, m)
	}
}

// writeShareState sends k's current state to its share coordinator.
func (b *Broker) writeShareState(k sharePartKey, m *sharePersist) {
	sp := b.share.parts[k]
	sk, ok := b.stateKey(k)
	coord, ok2 := b.shareCoordinatorOf(sk)
	if !ok || !ok2 || !m.loaded {
		if m.attempts++; m.attempts >= shareWriteAttempts {
			fail := m.next
			m.next, m.attempts = nil, 0
			for _, f := range fail {
				f(kerr.CoordinatorNotAvailable)
			}
		}
		m.dirty = true
		b.retryShareState()
		return
	}
	m.writing, m.dirty, m.inflight, m.next = true, false, m.next, nil
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.GroupID = k.group
	wp := kmsg.WriteShareGroupStateRequestTopicPartition{Partition: sk.Partition, StateEpoch: sp.StateEpoch, LeaderEpoch: sp.LeaderEpoch,
		StartOffset: sp.StartOffset(), DeliveryCompleteCount: -1}
	for _, bt := range sp.Batches() {
		wp.StateBatches = append(wp.StateBatches, kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch{
			FirstOffset: bt.FirstOffset, LastOffset: bt.LastOffset, DeliveryState: int8(bt.State), DeliveryCount: bt.DeliveryCount})
	}
	req.Topics = []kmsg.WriteShareGroupStateRequestTopic{{TopicID: sk.TopicID, Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{wp}}}
	spso := sp.StartOffset()
	b.send(coord, req, shareStateTimeout, func(r kmsg.Response, err error) {
		werr := kerr.CoordinatorNotAvailable
		if resp, ok := r.(*kmsg.WriteShareGroupStateResponse); err == nil && ok && len(resp.Topics) == 1 && len(resp.Topics[0].Partitions) == 1 {
			code := resp.Topics[0].Partitions[0].ErrorCode
			werr, _ = kerr.ErrorForCode(code).(*kerr.Error)
		}
		b.ctx.Log("share-state-written", sim.S("group", k.group), sim.S("partition", k.tp.String()), sim.I("spso", spso),
			sim.S("error", errText(werr)))
		m.writing = false
		if transientState(werr) && b.share.meta[k] == m {
			if m.attempts++; m.attempts < shareWriteAttempts {
				// Tried again with the state then (the waiting
				// acknowledgements with it).
				m.next, m.inflight, m.dirty = append(m.inflight, m.next...), nil, true
				b.retryShareState()
				return
			}
		}
		m.attempts = 0
		waiting := m.inflight
		m.inflight = nil
		for _, f := range waiting {
			f(werr)
		}
		if b.share.meta[k] != m {
			return
		}
		if werr == kerr.FencedLeaderEpoch || werr == kerr.FencedStateEpoch {
			b.dropSharePartition(k, "fenced")
			return
		}
		if m.dirty {
			if werr != nil {
				b.retryShareState()
				return
			}
			b.writeShareState(k, m)
		}
	})
}

// retryShareState arms the retry timer.
func (b *Broker) retryShareState() {
	b.share.retryT.arm(b.ctx, b.ctx.Now().Add(shareLoadRetry), true, timerShareRetry)
}

// shareStateRetry retries the reads and writes that failed.
func (b *Broker) shareStateRetry() {
	for _, k := range b.share.keys {
		m := b.share.meta[k]
		switch {
		case !m.loaded && !m.loading:
			b.loadShareState(k)
		case m.loaded && m.dirty && !m.writing:
			b.writeShareState(k, m)
		}
	}
}
