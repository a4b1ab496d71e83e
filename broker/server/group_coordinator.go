package server

// This file hosts the group coordinator (package coordinator) in the
// broker and serves its APIs: FindCoordinator (api key 10), JoinGroup (11),
// Heartbeat (12), LeaveGroup (13), SyncGroup (14), OffsetCommit (8),
// ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69) (KIP-848),
// OffsetFetch (9), DescribeGroups (15), ListGroups (16) and
// TxnOffsetCommit (28, whose transactional append is txn_offset_commit.go's). The coordinator leads the groups of the
// __consumer_offsets partitions this broker leads: makeLeader starts
// loading one (COORDINATOR_LOAD_IN_PROGRESS until the load timer fires and
// the log is read up to its LEO, control batches included, as Kafka 2.x's
// GroupMetadataManager reads it), and losing leadership (makeFollower, StopReplica) resigns it.
// The coordinator's records are appended as leader with acks=all and the
// coordinator is told once the HW passes them (or the append fails, or
// offsets.commit.timeout.ms passes: REQUEST_TIMED_OUT).
//
// Versions: FindCoordinator v0-v3 (one key) and v4+ (a key list), group
// keys and (key_type 1) transactional ids, whose coordinator is the leader
// of their __transaction_state partition (txn_coordinator.go), and (v6,
// key_type 2, KIP-932) share-partitions, whose share coordinator leads
// their __share_group_state partition (share_coordinator.go); the others
// as package coordinator states.
// __consumer_offsets (__transaction_state) is created on the first
// FindCoordinator that finds it missing (auto_create.go; the cluster's
// admin may also create it up front). v0-v5: v4 batches keys (KIP-699).
// Simplifications: loading takes a fixed groupLoadTime instead of time
// proportional to the log; the log is read from memory in one step.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Timer names of the coordinator's host.
const (
	timerGroupTick   = "group-coordinator"
	timerGroupLoad   = "group-load"
	timerGroupAppend = "group-append"
)

// groupLoadTime is how long loading a __consumer_offsets partition takes.
const groupLoadTime = 200 * sim.Millisecond

// groupHost is the broker's state for its coordinator.
type groupHost struct {
	coord   *coordinator.Coordinator
	tick    deadlineTimer
	loads   map[sim.TimerID]groupLoad
	appends []*groupAppend
	// onTxnMarker is told of the transaction markers replicated on the
	// __consumer_offsets partitions led here (write_txn_markers.go);
	// startCoordinator sets it to the coordinator's CompleteTxn.
	onTxnMarker TxnMarkerHook
}

type groupLoad struct {
	partition int32
	epoch     int32
}

// loadDue takes the load whose timer id fired from loads and returns the
// partition of topic it loads, if this broker still leads it in the epoch
// the load started in (a load overtaken by a leader change is dropped).
func (b *Broker) loadDue(loads map[sim.TimerID]groupLoad, id sim.TimerID, topic string) (*Partition, int32, bool) {
	l, ok := loads[id]
	if !ok {
		return nil, 0, false
	}
	delete(loads, id)
	p := b.partitions[storage.TopicPartition{Topic: topic, Partition: l.partition}]
	if p == nil || p.role != Leader || p.leaderEpoch != l.epoch {
		return nil, 0, false
	}
	return p, l.partition, true
}

// groupAppend is a coordinator append waiting for the HW.
type groupAppend struct {
	tp       storage.TopicPartition
	required int64
	done     func(sim.Time, *kerr.Error)
	timer    sim.TimerID
}

func (b *Broker) startCoordinator() {
	b.group.loads = map[sim.TimerID]groupLoad{}
	b.group.coord = coordinator.New(b.cfg.Coordinator, coordinator.Env{
		Append:    b.appendGroupRecords,
		AppendTxn: b.appendGroupTxnRecords,
		Topics:    b.consumerGroupTopics,
		Log:       func(kind string, fields ...sim.Field) { b.ctx.Log(kind, fields...) },
	})
	b.SetTxnMarkerHook(func(partition int32, producerID int64, _ int16, commit bool) {
		b.group.coord.CompleteTxn(b.ctx.Now(), partition, producerID, commit)
	})
}

// Coordinator returns the broker's group coordinator.
func (b *Broker) Coordinator() *coordinator.Coordinator { return b.group.coord }

// serveGroup serves the coordinator's APIs and reports whether req was one.
func (b *Broker) serveGroup(from sim.NodeID, req *wire.Request) bool {
	c, now := b.group.coord, b.ctx.Now()
	switch body := req.Body.(type) {
	case *kmsg.FindCoordinatorRequest:
		b.respond(from, req, b.findCoordinator(body))
	case *kmsg.JoinGroupRequest:
		if body.InstanceID != nil && b.cfg.release() < config.V2_3 {
			// NB: a static member (KIP-345) needs JoinGroup v5, which a
			// broker before 2.3 does not have; the simulated clients skip
			// ApiVersions, so the broker answers what the Java client
			// concludes from it (UnsupportedVersionException).
			r := kmsg.NewPtrJoinGroupResponse()
			r.ErrorCode, r.Generation, r.MemberID = kerr.UnsupportedVersion.Code, -1, body.MemberID
			b.respond(from, req, r)
			return true
		}
		c.JoinGroup(now, body, func(r *kmsg.JoinGroupResponse) { b.respond(from, req, r) })
	case *kmsg.SyncGroupRequest:
		c.SyncGroup(now, body, func(r *kmsg.SyncGroupResponse) { b.respond(from, req, r) })
	case *kmsg.HeartbeatRequest:
		b.respond(from, req, c.Heartbeat(now, body))
	case *kmsg.LeaveGroupRequest:
		b.respond(from, req, c.LeaveGroup(now, body))
	case *kmsg.OffsetCommitRequest:
		c.OffsetCommit(now, body, func(r *kmsg.OffsetCommitResponse) { b.respond(from, req, r) })
	case *kmsg.OffsetFetchRequest:
		if body.Version >= 8 {
			b.respond(from, req, offsetFetchGroups(c, now, body))
			break
		}
		b.respond(from, req, c.OffsetFetch(now, body))
	case *kmsg.ConsumerGroupHeartbeatRequest:
		c.ConsumerGroupHeartbeat(now, body, func(r *kmsg.ConsumerGroupHeartbeatResponse) { b.respond(from, req, r) })
	case *kmsg.ConsumerGroupDescribeRequest:
		b.respond(from, req, c.ConsumerGroupDescribe(now, body))
	case *kmsg.TxnOffsetCommitRequest:
		c.TxnOffsetCommit(now, body, func(r *kmsg.TxnOffsetCommitResponse) { b.respond(from, req, r) })
	case *kmsg.DescribeGroupsRequest:
		resp := body.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, id := range body.Groups {
			resp.Groups = append(resp.Groups, c.DescribeGroup(id, body.Version >= 3 && body.IncludeAuthorizedOperations))
		}
		b.respond(from, req, resp)
	case *kmsg.ListGroupsRequest:
		resp := body.ResponseKind().(*kmsg.ListGroupsResponse)
		var states []string
		if body.Version >= 4 {
			states = body.StatesFilter
		}
		groups, err := c.ListGroups(states)
		resp.Groups, resp.ErrorCode = b.withShareGroups(groups, states, body), errCode(err)
		b.respond(from, req, resp)
	default:
		return false
	}
	b.armGroupTick()
	return true
}

// findCoordinator answers with the leader of the group's __consumer_offsets
// partition as this broker's metadata cache knows it.
func (b *Broker) findCoordinator(body *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := kmsg.NewPtrFindCoordinatorResponse()
	lookup := func(key string) (int32, *kerr.Error) {
		var tp storage.TopicPartition
		switch body.CoordinatorType {
		case 0:
			if key == "" {
				return -1, kerr.InvalidGroupID
			}
			tp = storage.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: b.group.coord.PartitionFor(key)}
		case 1: // a transactional id (txn_coordinator.go)
			if key == "" {
				return -1, kerr.InvalidRequest
			}
			tp = storage.TopicPartition{Topic: txn.StateTopic, Partition: b.txn.coord.PartitionFor(key)}
		case 2: // a share-partition "group:topicId:partition" (KIP-932, v6)
			if !b.cfg.sharesEnabled() || body.Version < 6 || !validShareKey(key) {
				return -1, kerr.InvalidRequest
			}
			tp = storage.TopicPartition{Topic: share.StateTopic, Partition: int32(coordinator.CoordinatorPartition(key, b.cfg.Share.StatePartitions))}
		default:
			return -1, kerr.InvalidRequest
		}
		ps, ok := b.metadata.partitions[tp]
		if !ok && b.metadata.topicPartitions(tp.Topic) == 0 {
			// The first FindCoordinator creates the topic (KafkaApis,
			// AutoTopicCreationManager), whatever auto.create.topics.enable.
			b.autoCreateTopic(tp.Topic)
			return -1, kerr.CoordinatorNotAvailable
		}
		if !ok || ps.Leader < 0 {
			return -1, kerr.CoordinatorNotAvailable
		}
		return ps.Leader, nil
	}
	if body.Version >= 4 {
		for _, key := range body.CoordinatorKeys {
			id, err := lookup(key)
			c := kmsg.FindCoordinatorResponseCoordinator{Key: key, NodeID: id, Host: NodeName(id), Port: 9092, ErrorCode: errCode(err)}
			if err != nil {
				// Node.noNode(), as Kafka answers with an error.
				msg := err.Message
				c.Host, c.Port, c.ErrorMessage = "", -1, &msg
			}
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp
	}
	id, err := lookup(body.CoordinatorKey)
	resp.ErrorCode, resp.NodeID, resp.Port = errCode(err), id, 9092
	if err == nil {
		resp.Host = NodeName(id)
	}
	return resp
}

// offsetFetchGroups serves OffsetFetch v8+, a batch of groups (KIP-709):
// each group is answered as a v7 request for it alone would be, a group's
// error in the group's error code.
func offsetFetchGroups(c *coordinator.Coordinator, now sim.Time, body *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := kmsg.NewPtrOffsetFetchResponse()
	for _, g := range body.Groups {
		sub := kmsg.NewPtrOffsetFetchRequest()
		sub.Version, sub.Group, sub.RequireStable = 7, g.Group, body.RequireStable
		if g.Topics != nil {
			sub.Topics = []kmsg.OffsetFetchRequestTopic{}
			for _, t := range g.Topics {
				sub.Topics = append(sub.Topics, kmsg.OffsetFetchRequestTopic{Topic: t.Topic, Partitions: t.Partitions})
			}
		}
		r := c.OffsetFetch(now, sub)
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group, rg.ErrorCode = g.Group, r.ErrorCode
		if r.ErrorCode == 0 {
			for _, t := range r.Topics {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rt.Partitions = append(rt.Partitions, kmsg.OffsetFetchResponseGroupTopicPartition{Partition: p.Partition, Offset: p.Offset,
						LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata, ErrorCode: p.ErrorCode})
				}
				rg.Topics = append(rg.Topics, rt)
			}
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// offsetsLeader starts loading an offsets partition this broker now leads.
func (b *Broker) offsetsLeader(p *Partition) {
	b.txnLogLeader(p)
	b.shareStateLeader(p)
	if p.tp.Topic != coordinator.OffsetsTopic {
		return
	}
	b.group.coord.BecomeLeader(b.ctx.Now(), p.tp.Partition)
	b.shareOffsetsChanged(p.tp.Partition)
	id := b.ctx.SetTimer(groupLoadTime, timerGroupLoad)
	b.group.loads[id] = groupLoad{partition: p.tp.Partition, epoch: p.leaderEpoch}
}

// offsetsLost resigns an offsets partition this broker no longer leads and
// fails the coordinator's appends to it.
func (b *Broker) offsetsLost(tp storage.TopicPartition, err *kerr.Error) {
	if (tp.Topic != coordinator.OffsetsTopic && tp.Topic != txn.StateTopic && tp.Topic != share.StateTopic) || b.group.coord == nil {
		return
	}
	kept := b.group.appends[:0]
	var failed []*groupAppend
	for _, a := range b.group.appends {
		if a.tp == tp {
			failed = append(failed, a)
		} else {
			kept = append(kept, a)
		}
	}
	clearTail(b.group.appends, len(kept))
	b.group.appends = kept
	for _, a := range failed {
		b.ctx.CancelTimer(a.timer)
		a.done(b.ctx.Now(), err)
	}
	if tp.Topic == txn.StateTopic {
		b.txnLogLost(tp)
		return
	}
	if tp.Topic == share.StateTopic {
		b.shareStateLost(tp)
		return
	}
	b.group.coord.Resign(b.ctx.Now(), tp.Partition)
	b.shareOffsetsChanged(tp.Partition)
}

// appendGroupRecords appends the coordinator's records as leader, acks=all.
func (b *Broker) appendGroupRecords(partition int32, recs []storage.Record, done func(sim.Time, *kerr.Error)) {
	b.appendCoordinatorRecords(storage.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: partition}, recs, done)
}

// appendCoordinatorRecords appends a coordinator's records (the group's
// or the transaction coordinator's) to tp as leader with acks=all and
// calls done once the HW passes them (awaitGroupAppend).
func (b *Broker) appendCoordinatorRecords(tp storage.TopicPartition, recs []storage.Record, done func(sim.Time, *kerr.Error)) {
	batch := storage.NewBatch(0, recs)
	_, last, err := b.appendToLeader(tp, -1, batch.AppendTo(nil))
	if err != nil {
		done(b.ctx.Now(), err)
		return
	}
	b.awaitGroupAppend(tp, last, done)
}

// awaitGroupAppend calls done once the HW passes last (or the append
// fails or times out).
func (b *Broker) awaitGroupAppend(tp storage.TopicPartition, last int64, done func(sim.Time, *kerr.Error)) {
	a := &groupAppend{tp: tp, required: last + 1, done: done, timer: b.ctx.SetTimer(b.cfg.OffsetsCommitTimeout, timerGroupAppend)}
	b.group.appends = append(b.group.appends, a)
	b.completeGroupAppends()
}

// completeGroupAppends tells the coordinator of the appends the HW passed.
func (b *Broker) completeGroupAppends() {
	if len(b.group.appends) == 0 {
		return
	}
	kept := b.group.appends[:0]
	var done []*groupAppend
	for _, a := range b.group.appends {
		if p := b.partitions[a.tp]; p != nil && p.role == Leader && p.hw >= a.required {
			done = append(done, a)
		} else {
			kept = append(kept, a)
		}
	}
	clearTail(b.group.appends, len(kept))
	b.group.appends = kept
	for _, a := range done {
		b.ctx.CancelTimer(a.timer)
		var err *kerr.Error
		if p := b.partitions[a.tp]; len(p.isr) < p.minISR {
			err = kerr.NotEnoughReplicasAfterAppend
		}
		a.done(b.ctx.Now(), err)
	}
	b.armGroupTick()
}

// handleGroupTimer handles the coordinator's timers.
func (b *Broker) handleGroupTimer(id sim.TimerID, name string) bool {
	switch name {
	case timerGroupTick:
		if b.group.tick.fired(id) {
			b.group.coord.Tick(b.ctx.Now())
		}
	case timerGroupLoad:
		p, partition, ok := b.loadDue(b.group.loads, id, coordinator.OffsetsTopic)
		if !ok {
			return true
		}
		batches, err := readBatches(p.log)
		if err == nil {
			err = b.group.coord.LoadBatches(b.ctx.Now(), partition, batches)
		}
		if err != nil {
			panic(fmt.Sprintf("broker %d: loading %s-%d: %v", b.cfg.BrokerID, coordinator.OffsetsTopic, partition, err))
		}
	case timerGroupAppend:
		for i, a := range b.group.appends {
			if a.timer == id {
				b.group.appends = append(b.group.appends[:i], b.group.appends[i+1:]...)
				a.done(b.ctx.Now(), kerr.RequestTimedOut)
				break
			}
		}
	default:
		return false
	}
	b.armGroupTick()
	return true
}

// armGroupTick sets the coordinator's timer for its next deadline.
func (b *Broker) armGroupTick() {
	at, ok := b.group.coord.NextDeadline()
	b.group.tick.arm(b.ctx, at, ok, timerGroupTick)
}

// deadlineTimer is a coordinator's one timer for its next deadline.
type deadlineTimer struct {
	id sim.TimerID // 0: not set
	at sim.Time
}

// arm sets the timer for at (when ok: there is a deadline), not before
// now, unless it is already set as early; a later one is cancelled.
func (t *deadlineTimer) arm(ctx *sim.Context, at sim.Time, ok bool, name string) {
	if !ok {
		return
	}
	now := ctx.Now()
	at = max(at, now)
	if t.id != 0 {
		if t.at <= at {
			return
		}
		ctx.CancelTimer(t.id)
	}
	t.id, t.at = ctx.SetTimer(at.Sub(now), name), at
}

// fired reports whether id is this timer's, which is then no longer set.
func (t *deadlineTimer) fired(id sim.TimerID) bool {
	if id != t.id {
		return false
	}
	t.id = 0
	return true
}

// readAll returns every record of l from its start to its LEO.
func readAll(l *storage.Log) ([]storage.Record, error) {
	batches, err := readBatches(l)
	var out []storage.Record
	for _, bt := range batches {
		out = append(out, bt.Records...)
	}
	return out, err
}

// readBatches returns every batch of l from its start to its LEO, control
// batches included, without the records below the log start offset.
func readBatches(l *storage.Log) ([]storage.RecordBatch, error) {
	var out []storage.RecordBatch
	off, leo := l.LogStartOffset(), l.LogEndOffset()
	for off < leo {
		data, err := l.Read(off, 1<<20, leo)
		if err != nil {
			if errors.Is(err, storage.ErrOffsetOutOfRange) {
				break
			}
			return nil, err
		}
		if len(data) == 0 {
			break
		}
		batches, err := storage.DecodeBatches(data)
		if err != nil {
			return nil, err
		}
		for _, bt := range batches {
			if bt.NextOffset() <= off {
				continue
			}
			bt.Records = slices.DeleteFunc(bt.Records, func(r storage.Record) bool { return r.Offset < off })
			out = append(out, bt)
			off = bt.NextOffset()
		}
	}
	return out, nil
}

// offsetsLogConfig returns the log configuration of a new
// __consumer_offsets or __transaction_state replica (cleanup.policy=compact,
// as Kafka creates the topics), nil for other topics.
func offsetsLogConfig(tp storage.TopicPartition, cfg storage.Config) *storage.Config {
	if tp.Topic != coordinator.OffsetsTopic && tp.Topic != txn.StateTopic && tp.Topic != share.StateTopic {
		return nil
	}
	cfg.CleanupPolicy = storage.CleanupCompact
	return &cfg
}

// consumerGroupTopics lists the topics of the broker's KRaft metadata image
// for the consumer group protocol's assignors (none in ZooKeeper mode: the
// protocol needs Kafka 4.0, which is KRaft only).
func (b *Broker) consumerGroupTopics() []assignor.ServerTopic {
	if b.kraft == nil {
		return nil
	}
	img := b.kraft.meta.img
	var out []assignor.ServerTopic
	for _, name := range img.TopicNames() {
		id, _ := img.TopicID(name)
		out = append(out, assignor.ServerTopic{Name: name, ID: id, Partitions: int32(img.NumPartitions(name))})
	}
	return out
}
