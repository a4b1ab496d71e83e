package server

// This file hosts the share coordinator (KIP-932, share/state.go) in the
// broker and serves its inter-broker APIs: InitializeShareGroupState
// (api key 83, v0), ReadShareGroupState (84, v0), WriteShareGroupState
// (85, v0-v1), DeleteShareGroupState (86, v0) and
// ReadShareGroupStateSummary (87, v0-v1). The coordinator of a
// share-partition is the leader of its __share_group_state partition
// (share.StatePartition); a broker becoming leader of one loads its log
// (share.StateStore.Load), and losing it resigns it. Changes are appended
// as leader with acks=all and answered once the HW passes them (the group
// coordinator's appendCoordinatorRecords), then applied.
//
// Simplifications: a partition loads at once when its leadership arrives
// (no COORDINATOR_LOAD_IN_PROGRESS window); the topic's
// min.insync.replicas is the broker's (Kafka creates __share_group_state
// with share.coordinator.state.topic.min.isr, 2); v1's
// DeliveryCompleteCount (KIP-1226) is answered -1 (unknown).

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// stateItem is one share-partition of a share coordinator request: the
// record to append (nil: none) and its outcome.
type stateItem struct {
	key share.StateKey
	rec *share.Record
	err *kerr.Error
}

// shareStateLeader loads a __share_group_state partition this broker now
// leads.
func (b *Broker) shareStateLeader(p *Partition) {
	if p.tp.Topic != share.StateTopic || b.share.state == nil {
		return
	}
	batches, err := readBatches(p.log)
	var recs []share.Record
	for _, bt := range batches {
		if bt.ProducerID != storage.NoProducerID && bt.Attributes&storage.ControlFlagMask != 0 {
			continue
		}
		for _, r := range bt.Records {
			recs = append(recs, share.Record{Key: r.Key, Value: r.Value})
		}
	}
	if err == nil {
		err = b.share.state.Load(p.tp.Partition, recs)
	}
	if err != nil {
		panic("broker " + itoa(int64(b.cfg.BrokerID)) + ": loading " + p.tp.String() + ": " + err.Error())
	}
	b.logp("share-coordinator-loaded", p, sim.I("records", int64(len(recs))))
}

// shareStateLost resigns a __share_group_state partition.
func (b *Broker) shareStateLost(tp storage.TopicPartition) {
	if b.share.state != nil {
		b.share.state.Resign(tp.Partition)
	}
}

// commitStateItems appends the items' records, per __share_group_state
// partition, applies them once committed, and calls done when every
// append is decided.
func (b *Broker) commitStateItems(items []*stateItem, done func()) {
	byPart := map[int32][]*stateItem{}
	var parts []int32
	for _, it := range items {
		if it.err != nil || it.rec == nil {
			continue
		}
		p := b.share.state.PartitionOf(it.key)
		if _, ok := byPart[p]; !ok {
			parts = append(parts, p)
		}
		byPart[p] = append(byPart[p], it)
	}
	slices.Sort(parts)
	pending := len(parts)
	if pending == 0 {
		done()
		return
	}
	for _, part := range parts {
		its := byPart[part]
		recs := make([]storage.Record, len(its))
		for i, it := range its {
			recs[i] = storage.Record{Key: it.rec.Key, Value: it.rec.Value}
		}
		tp := storage.TopicPartition{Topic: share.StateTopic, Partition: part}
		b.appendCoordinatorRecords(tp, recs, func(_ sim.Time, err *kerr.Error) {
			for _, it := range its {
				switch {
				case err == nil || err == kerr.NotEnoughReplicasAfterAppend:
					if aerr := b.share.state.Apply(*it.rec); aerr != nil {
						panic("share coordinator: applying its own record: " + aerr.Error())
					}
					if err != nil {
						it.err = kerr.CoordinatorNotAvailable
					}
				case err == kerr.NotLeaderForPartition:
					it.err = kerr.NotCoordinator
				default:
					it.err = kerr.CoordinatorNotAvailable
				}
			}
			if pending--; pending == 0 {
				done()
			}
		})
	}
}

func errMsg(err *kerr.Error) *string {
	if err == nil {
		return nil
	}
	m := err.Message
	return &m
}

// serveShareState serves the share coordinator's APIs and reports
// whether req was one.
func (b *Broker) serveShareState(from sim.NodeID, req *wire.Request) bool {
	st := b.share.state
	switch body := req.Body.(type) {
	case *kmsg.InitializeShareGroupStateRequest:
		var items []*stateItem
		for _, t := range body.Topics {
			for _, p := range t.Partitions {
				it := &stateItem{key: share.StateKey{Group: body.GroupID, TopicID: t.TopicID, Partition: p.Partition}}
				if st == nil {
					it.err = kerr.UnsupportedVersion
				} else if rec, err := st.Initialize(it.key, p.StateEpoch, p.StartOffset); err != nil {
					it.err = err
				} else {
					it.rec = &rec
				}
				items = append(items, it)
			}
		}
		b.commitStateItems(items, func() {
			resp := body.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
			for _, it := range items {
				rt := stateTopic(&resp.Topics, it.key.TopicID, func(id [16]byte) kmsg.InitializeShareGroupStateResponseTopic {
					return kmsg.InitializeShareGroupStateResponseTopic{TopicID: id}
				}, func(t *kmsg.InitializeShareGroupStateResponseTopic) [16]byte { return t.TopicID })
				rt.Partitions = append(rt.Partitions, kmsg.InitializeShareGroupStateResponseTopicPartition{Partition: it.key.Partition,
					ErrorCode: errCode(it.err), ErrorMessage: errMsg(it.err)})
			}
			b.respond(from, req, resp)
		})
	case *kmsg.ReadShareGroupStateRequest:
		// A found state is answered once the read's ShareUpdate record
		// commits (share.StateStore.Read): after every earlier write.
		var items []*stateItem
		found := map[*stateItem]bool{}
		for _, t := range body.Topics {
			for _, p := range t.Partitions {
				it := &stateItem{key: share.StateKey{Group: body.GroupID, TopicID: t.TopicID, Partition: p.Partition}}
				if st == nil {
					it.err = kerr.UnsupportedVersion
				} else if rec, ok, err := st.Read(it.key, p.LeaderEpoch); err != nil {
					it.err = err
				} else if ok {
					it.rec, found[it] = &rec, true
				}
				items = append(items, it)
			}
		}
		b.commitStateItems(items, func() {
			resp := body.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
			for _, it := range items {
				rt := stateTopic(&resp.Topics, it.key.TopicID, func(id [16]byte) kmsg.ReadShareGroupStateResponseTopic {
					return kmsg.ReadShareGroupStateResponseTopic{TopicID: id}
				}, func(t *kmsg.ReadShareGroupStateResponseTopic) [16]byte { return t.TopicID })
				rp := kmsg.ReadShareGroupStateResponseTopicPartition{Partition: it.key.Partition, StartOffset: -1,
					ErrorCode: errCode(it.err), ErrorMessage: errMsg(it.err)}
				if it.err == nil && found[it] {
					v, _ := st.Peek(it.key)
					rp.StateEpoch, rp.StartOffset = v.StateEpoch, v.StartOffset
					for _, sb := range v.Batches {
						rp.StateBatches = append(rp.StateBatches, kmsg.ReadShareGroupStateResponseTopicPartitionStateBatch{
							FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset, DeliveryState: sb.DeliveryState, DeliveryCount: sb.DeliveryCount})
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			b.respond(from, req, resp)
		})
	case *kmsg.WriteShareGroupStateRequest:
		var items []*stateItem
		for _, t := range body.Topics {
			for _, p := range t.Partitions {
				it := &stateItem{key: share.StateKey{Group: body.GroupID, TopicID: t.TopicID, Partition: p.Partition}}
				v := share.StateValue{StateEpoch: p.StateEpoch, LeaderEpoch: p.LeaderEpoch, StartOffset: p.StartOffset}
				for _, s := range p.StateBatches {
					v.Batches = append(v.Batches, share.StateBatch{FirstOffset: s.FirstOffset, LastOffset: s.LastOffset,
						DeliveryState: s.DeliveryState, DeliveryCount: s.DeliveryCount})
				}
				if st == nil {
					it.err = kerr.UnsupportedVersion
				} else if rec, err := st.Write(it.key, v); err != nil {
					it.err = err
				} else {
					it.rec = &rec
				}
				items = append(items, it)
			}
		}
		b.commitStateItems(items, func() {
			resp := body.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
			for _, it := range items {
				rt := stateTopic(&resp.Topics, it.key.TopicID, func(id [16]byte) kmsg.WriteShareGroupStateResponseTopic {
					return kmsg.WriteShareGroupStateResponseTopic{TopicID: id}
				}, func(t *kmsg.WriteShareGroupStateResponseTopic) [16]byte { return t.TopicID })
				rt.Partitions = append(rt.Partitions, kmsg.WriteShareGroupStateResponseTopicPartition{Partition: it.key.Partition,
					ErrorCode: errCode(it.err), ErrorMessage: errMsg(it.err)})
			}
			b.respond(from, req, resp)
		})
	case *kmsg.DeleteShareGroupStateRequest:
		var items []*stateItem
		for _, t := range body.Topics {
			for _, p := range t.Partitions {
				it := &stateItem{key: share.StateKey{Group: body.GroupID, TopicID: t.TopicID, Partition: p.Partition}}
				if st == nil {
					it.err = kerr.UnsupportedVersion
				} else if rec, err := st.Delete(it.key); err != nil {
					it.err = err
				} else {
					it.rec = &rec
				}
				items = append(items, it)
			}
		}
		b.commitStateItems(items, func() {
			resp := body.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
			for _, it := range items {
				rt := stateTopic(&resp.Topics, it.key.TopicID, func(id [16]byte) kmsg.DeleteShareGroupStateResponseTopic {
					return kmsg.DeleteShareGroupStateResponseTopic{TopicID: id}
				}, func(t *kmsg.DeleteShareGroupStateResponseTopic) [16]byte { return t.TopicID })
				rt.Partitions = append(rt.Partitions, kmsg.DeleteShareGroupStateResponseTopicPartition{Partition: it.key.Partition,
					ErrorCode: errCode(it.err), ErrorMessage: errMsg(it.err)})
			}
			b.respond(from, req, resp)
		})
	case *kmsg.ReadShareGroupStateSummaryRequest:
		resp := body.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
		for _, t := range body.Topics {
			rt := kmsg.ReadShareGroupStateSummaryResponseTopic{TopicID: t.TopicID}
			for _, p := range t.Partitions {
				rp := kmsg.ReadShareGroupStateSummaryResponseTopicPartition{Partition: p.Partition, StartOffset: -1, DeliveryCompleteCount: -1}
				var v share.StateValue
				var err *kerr.Error
				if st == nil {
					err = kerr.UnsupportedVersion
				} else {
					v, _, err = st.Summary(share.StateKey{Group: body.GroupID, TopicID: t.TopicID, Partition: p.Partition})
				}
				rp.ErrorCode, rp.ErrorMessage = errCode(err), errMsg(err)
				if err == nil {
					rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = v.StateEpoch, v.LeaderEpoch, v.StartOffset
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		b.respond(from, req, resp)
	default:
		return false
	}
	return true
}

// stateTopic returns the entry of topic id in *topics, adding it.
func stateTopic[T any](topics *[]T, id [16]byte, mk func([16]byte) T, idOf func(*T) [16]byte) *T {
	for i := range *topics {
		if idOf(&(*topics)[i]) == id {
			return &(*topics)[i]
		}
	}
	*topics = append(*topics, mk(id))
	return &(*topics)[len(*topics)-1]
}
