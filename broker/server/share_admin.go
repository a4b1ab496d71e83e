package server

// This file serves the share group admin APIs on the group coordinator
// (KIP-932): DescribeShareGroupOffsets (api key 90, v0-v1),
// AlterShareGroupOffsets (91, v0) and DeleteShareGroupOffsets (92, v0).
// As Kafka's GroupCoordinatorService, the coordinator asks the share
// coordinators of the group's share-partitions
// (ReadShareGroupStateSummary, then InitializeShareGroupState at the next
// state epoch for an alter; DeleteShareGroupState for a delete). Altering
// or deleting needs an empty group (NON_EMPTY_GROUP); altering a group
// that does not exist creates it, empty.
//
// Simplifications: a describe without topics lists the share-partitions
// the group was ever assigned or altered here (Kafka keeps them in
// ShareGroupStatePartitionMetadata records; here in memory, lost at a
// coordinator fail-over); v1's Lag is -1 (unknown). A partition leader's
// cached share-partition learns of an alter only when its next write is
// fenced (FENCED_STATE_EPOCH: it drops it and reads the state again).

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// stateCall is one share-partition of an admin fan-out and its outcome.
type stateCall struct {
	key        share.StateKey
	topic      string
	err        *kerr.Error
	stateEpoch int32
	leader     int32 // leader epoch from a summary
	start      int64
}

// fanOutState sends build(keys) to the share coordinator of each group of
// calls and hands each answer to take, then calls done.
func (b *Broker) fanOutState(group string, calls []*stateCall, build func(group string, cs []*stateCall) kmsg.Request,
	take func(r kmsg.Response, cs []*stateCall), done func()) {
	b.fanOutStateTry(group, calls, build, take, done, 1)
}

// fanOutStateTry is fanOutState's attempt number attempt: the calls that
// meet a transient coordinator error are tried again after
// shareLoadRetry, up to shareWriteAttempts times (Kafka's persister
// retries them so).
func (b *Broker) fanOutStateTry(group string, calls []*stateCall, build func(group string, cs []*stateCall) kmsg.Request,
	take func(r kmsg.Response, cs []*stateCall), done func(), attempt int) {
	finish := func() {
		var again []*stateCall
		for _, c := range calls {
			if transientState(c.err) {
				again = append(again, c)
			}
		}
		if len(again) == 0 || attempt >= shareWriteAttempts {
			done()
			return
		}
		for _, c := range again {
			c.err = nil
		}
		b.shareLater(shareLoadRetry, func() { b.fanOutStateTry(group, again, build, take, done, attempt+1) })
	}
	byCoord := map[int32][]*stateCall{}
	var coords []int32
	for _, c := range calls {
		if c.err != nil {
			continue
		}
		id, ok := b.shareCoordinatorOf(c.key)
		if !ok {
			c.err = kerr.CoordinatorNotAvailable
			continue
		}
		if _, seen := byCoord[id]; !seen {
			coords = append(coords, id)
		}
		byCoord[id] = append(byCoord[id], c)
	}
	slices.Sort(coords)
	pending := len(coords)
	if pending == 0 {
		finish()
		return
	}
	for _, id := range coords {
		cs := byCoord[id]
		b.send(id, build(group, cs), shareStateTimeout, func(r kmsg.Response, err error) {
			if err != nil {
				for _, c := range cs {
					c.err = kerr.CoordinatorNotAvailable
				}
			} else {
				take(r, cs)
			}
			if pending--; pending == 0 {
				finish()
			}
		})
	}
}

// summaries reads the state summaries of calls.
func (b *Broker) summaries(group string, calls []*stateCall, done func()) {
	b.fanOutState(group, calls, func(group string, cs []*stateCall) kmsg.Request {
		req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
		req.GroupID = group
		for _, c := range cs {
			t := stateTopic(&req.Topics, c.key.TopicID, func(id [16]byte) kmsg.ReadShareGroupStateSummaryRequestTopic {
				return kmsg.ReadShareGroupStateSummaryRequestTopic{TopicID: id}
			}, func(t *kmsg.ReadShareGroupStateSummaryRequestTopic) [16]byte { return t.TopicID })
			t.Partitions = append(t.Partitions, kmsg.ReadShareGroupStateSummaryRequestTopicPartition{Partition: c.key.Partition, LeaderEpoch: -1})
		}
		return req
	}, func(r kmsg.Response, cs []*stateCall) {
		resp := r.(*kmsg.ReadShareGroupStateSummaryResponse)
		for _, c := range cs {
			c.err = kerr.UnknownServerError
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					if t.TopicID == c.key.TopicID && p.Partition == c.key.Partition {
						c.err, _ = kerr.ErrorForCode(p.ErrorCode).(*kerr.Error)
						c.stateEpoch, c.leader, c.start = p.StateEpoch, p.LeaderEpoch, p.StartOffset
					}
				}
			}
		}
	}, done)
}

// shareAdminCheck returns the group-level error of an admin request for
// group; mustBeEmpty: members are NON_EMPTY_GROUP.
func (b *Broker) shareAdminCheck(group string, mustBeEmpty bool) *kerr.Error {
	switch {
	case b.share.coord == nil:
		return kerr.UnsupportedVersion
	case group == "":
		return kerr.InvalidGroupID
	}
	if err := b.shareGroupCheck(group); err != nil {
		return err
	}
	if b.otherGroupType(group) {
		return kerr.GroupIDNotFound
	}
	if mustBeEmpty && b.share.coord.Members(group) > 0 {
		return kerr.NonEmptyGroup
	}
	return nil
}

func (b *Broker) serveShareAdmin(from sim.NodeID, req *wire.Request) bool {
	switch body := req.Body.(type) {
	case *kmsg.DescribeShareGroupOffsetsRequest:
		b.describeShareGroupOffsets(from, req, body)
	case *kmsg.AlterShareGroupOffsetsRequest:
		b.alterShareGroupOffsets(from, req, body)
	case *kmsg.DeleteShareGroupOffsetsRequest:
		b.deleteShareGroupOffsets(from, req, body)
	default:
		return false
	}
	return true
}

func (b *Broker) describeShareGroupOffsets(from sim.NodeID, req *wire.Request, body *kmsg.DescribeShareGroupOffsetsRequest) {
	resp := body.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	resp.Groups = make([]kmsg.DescribeShareGroupOffsetsResponseGroup, len(body.Groups))
	pending := len(body.Groups) + 1
	finish := func() {
		if pending--; pending == 0 {
			b.respond(from, req, resp)
		}
	}
	for gi, g := range body.Groups {
		rg := &resp.Groups[gi]
		rg.GroupID = g.GroupID
		if err := b.shareAdminCheck(g.GroupID, false); err != nil {
			rg.ErrorCode, rg.ErrorMessage = err.Code, errMsg(err)
			finish()
			continue
		}
		var calls []*stateCall
		if g.Topics == nil {
			for _, tp := range b.share.coord.Initialized(g.GroupID) {
				calls = append(calls, &stateCall{key: share.StateKey{Group: g.GroupID, TopicID: tp.ID, Partition: tp.Partition}, topic: tp.Topic})
			}
		} else {
			for _, t := range g.Topics {
				id, ok := b.stateKey(sharePartKey{group: g.GroupID, tp: tpOf(t.Topic, 0)})
				for _, p := range t.Partitions {
					c := &stateCall{key: share.StateKey{Group: g.GroupID, TopicID: id.TopicID, Partition: p}, topic: t.Topic}
					if !ok {
						c.err = kerr.UnknownTopicOrPartition
					}
					calls = append(calls, c)
				}
			}
		}
		b.summaries(g.GroupID, calls, func() {
			for _, c := range calls {
				rt := stateTopic(&rg.Topics, c.key.TopicID, func(id [16]byte) kmsg.DescribeShareGroupOffsetsResponseGroupTopic {
					return kmsg.DescribeShareGroupOffsetsResponseGroupTopic{Topic: c.topic, TopicID: id}
				}, func(t *kmsg.DescribeShareGroupOffsetsResponseGroupTopic) [16]byte { return t.TopicID })
				rp := kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition{Partition: c.key.Partition, StartOffset: -1, LeaderEpoch: -1, Lag: -1,
					ErrorCode: errCode(c.err), ErrorMessage: errMsg(c.err)}
				if c.err == nil {
					rp.StartOffset, rp.LeaderEpoch = c.start, c.leader
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			finish()
		})
	}
	finish()
}

func (b *Broker) alterShareGroupOffsets(from sim.NodeID, req *wire.Request, body *kmsg.AlterShareGroupOffsetsRequest) {
	resp := body.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	if err := b.shareAdminCheck(body.GroupID, true); err != nil {
		resp.ErrorCode, resp.ErrorMessage = err.Code, errMsg(err)
		b.respond(from, req, resp)
		return
	}
	b.share.coord.Ensure(body.GroupID)
	var calls []*stateCall
	starts := map[*stateCall]int64{}
	for _, t := range body.Topics {
		id, ok := b.stateKey(sharePartKey{group: body.GroupID, tp: tpOf(t.Topic, 0)})
		for _, p := range t.Partitions {
			c := &stateCall{key: share.StateKey{Group: body.GroupID, TopicID: id.TopicID, Partition: p.Partition}, topic: t.Topic}
			switch {
			case !ok || b.metadata.topicPartitions(t.Topic) <= int(p.Partition) || p.Partition < 0:
				c.err = kerr.UnknownTopicOrPartition
			case p.StartOffset < 0:
				c.err = kerr.InvalidRequest
			}
			starts[c] = p.StartOffset
			calls = append(calls, c)
		}
	}
	b.summaries(body.GroupID, calls, func() {
		for _, c := range calls {
			if c.err == nil && c.start < 0 {
				c.stateEpoch = -1 // never initialized: the first state epoch is 0
			}
		}
		b.fanOutState(body.GroupID, calls, func(group string, cs []*stateCall) kmsg.Request {
			r := kmsg.NewPtrInitializeShareGroupStateRequest()
			r.GroupID = group
			for _, c := range cs {
				t := stateTopic(&r.Topics, c.key.TopicID, func(id [16]byte) kmsg.InitializeShareGroupStateRequestTopic {
					return kmsg.InitializeShareGroupStateRequestTopic{TopicID: id}
				}, func(t *kmsg.InitializeShareGroupStateRequestTopic) [16]byte { return t.TopicID })
				t.Partitions = append(t.Partitions, kmsg.InitializeShareGroupStateRequestTopicPartition{Partition: c.key.Partition,
					StateEpoch: c.stateEpoch + 1, StartOffset: starts[c]})
			}
			return r
		}, func(r kmsg.Response, cs []*stateCall) {
			ir := r.(*kmsg.InitializeShareGroupStateResponse)
			for _, c := range cs {
				for _, t := range ir.Topics {
					for _, p := range t.Partitions {
						if t.TopicID == c.key.TopicID && p.Partition == c.key.Partition {
							c.err, _ = kerr.ErrorForCode(p.ErrorCode).(*kerr.Error)
						}
					}
				}
			}
		}, func() {
			var done []share.TopicPartition
			for _, c := range calls {
				rt := stateTopic(&resp.Topics, c.key.TopicID, func(id [16]byte) kmsg.AlterShareGroupOffsetsResponseTopic {
					return kmsg.AlterShareGroupOffsetsResponseTopic{Topic: c.topic, TopicID: id}
				}, func(t *kmsg.AlterShareGroupOffsetsResponseTopic) [16]byte { return t.TopicID })
				rt.Partitions = append(rt.Partitions, kmsg.AlterShareGroupOffsetsResponseTopicPartition{Partition: c.key.Partition,
					ErrorCode: errCode(c.err), ErrorMessage: errMsg(c.err)})
				if c.err == nil {
					done = append(done, share.TopicPartition{Topic: c.topic, ID: c.key.TopicID, Partition: c.key.Partition})
				}
			}
			b.share.coord.MarkInitialized(body.GroupID, done)
			b.ctx.Log("share-group-offsets-altered", sim.S("group", body.GroupID), sim.I("partitions", int64(len(done))))
			b.respond(from, req, resp)
		})
	})
}

func (b *Broker) deleteShareGroupOffsets(from sim.NodeID, req *wire.Request, body *kmsg.DeleteShareGroupOffsetsRequest) {
	resp := body.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	if err := b.shareAdminCheck(body.GroupID, true); err != nil {
		resp.ErrorCode, resp.ErrorMessage = err.Code, errMsg(err)
		b.respond(from, req, resp)
		return
	}
	var calls []*stateCall
	topicErr := map[string]*kerr.Error{}
	ids := map[string][16]byte{}
	for _, t := range body.Topics {
		sk, ok := b.stateKey(sharePartKey{group: body.GroupID, tp: tpOf(t.Topic, 0)})
		n := b.metadata.topicPartitions(t.Topic)
		if !ok || n == 0 {
			topicErr[t.Topic] = kerr.UnknownTopicOrPartition
			continue
		}
		ids[t.Topic] = sk.TopicID
		for p := range int32(n) {
			calls = append(calls, &stateCall{key: share.StateKey{Group: body.GroupID, TopicID: sk.TopicID, Partition: p}, topic: t.Topic})
		}
	}
	b.fanOutState(body.GroupID, calls, func(group string, cs []*stateCall) kmsg.Request {
		r := kmsg.NewPtrDeleteShareGroupStateRequest()
		r.GroupID = group
		for _, c := range cs {
			t := stateTopic(&r.Topics, c.key.TopicID, func(id [16]byte) kmsg.DeleteShareGroupStateRequestTopic {
				return kmsg.DeleteShareGroupStateRequestTopic{TopicID: id}
			}, func(t *kmsg.DeleteShareGroupStateRequestTopic) [16]byte { return t.TopicID })
			t.Partitions = append(t.Partitions, kmsg.DeleteShareGroupStateRequestTopicPartition{Partition: c.key.Partition})
		}
		return r
	}, func(r kmsg.Response, cs []*stateCall) {
		dr := r.(*kmsg.DeleteShareGroupStateResponse)
		for _, c := range cs {
			for _, t := range dr.Topics {
				for _, p := range t.Partitions {
					if t.TopicID == c.key.TopicID && p.Partition == c.key.Partition {
						c.err, _ = kerr.ErrorForCode(p.ErrorCode).(*kerr.Error)
					}
				}
			}
		}
	}, func() {
		for _, c := range calls {
			if c.err != nil && topicErr[c.topic] == nil {
				topicErr[c.topic] = c.err
			}
		}
		for _, t := range body.Topics {
			err := topicErr[t.Topic]
			resp.Topics = append(resp.Topics, kmsg.DeleteShareGroupOffsetsResponseTopic{Topic: t.Topic, TopicID: ids[t.Topic],
				ErrorCode: errCode(err), ErrorMessage: errMsg(err)})
			if err == nil {
				b.share.coord.ForgetInitialized(body.GroupID, ids[t.Topic])
			}
		}
		b.respond(from, req, resp)
	})
}

func tpOf(topic string, p int32) storage.TopicPartition {
	return storage.TopicPartition{Topic: topic, Partition: p}
}
