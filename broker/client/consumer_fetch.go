package client

// This file is the consumer's data path and offsets (Kafka's Fetcher,
// OffsetFetcher and ConsumerCoordinator commit logic): positions from the
// group's committed offsets (OffsetFetch v5; v7 with require_stable for
// isolation.level=read_committed, KIP-447, retrying a partition answered
// UNSTABLE_OFFSET_COMMIT after retry.backoff.ms) or auto.offset.reset
// (ListOffsets v4: earliest = -2, latest = -1, i.e. the HW), Fetch v11 to
// each leader (fetch.min.bytes, fetch.max.wait.ms, fetch.max.bytes,
// max.partition.fetch.bytes; one fetch in flight per broker, and a
// partition is fetched again only once Poll has drained what it got), and
// OffsetCommit v7 for commitSync / commitAsync / auto-commit (v0 for both
// with offsets.storage=zookeeper: consumer_zkoffsets.go).
//
// Fetch from follower (KIP-392): every Fetch carries client.rack. When the
// leader answers a partition with a PreferredReadReplica, the partition is
// fetched from that broker until metadata.max.age.ms passes, the replica
// answers with any error (OFFSET_OUT_OF_RANGE included: the position is
// not reset, the leader is asked again) or does not answer, or the leader
// changes — as Kafka's SubscriptionState.preferredReadReplica with its
// expiry and FetchUtils.requestMetadataUpdate, which clears it.
//
// A partition whose fetch fails with a partition error (NOT_LEADER,
// FENCED_LEADER_EPOCH, ...) asks for metadata and is not fetched again for
// retry.backoff.ms (simplified: Kafka re-fetches at the next poll, paced
// only by its metadata refresh).
//
// A synchronous commit retries retriable errors (COORDINATOR_NOT_AVAILABLE,
// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, timeouts) until twice
// request.timeout.ms has passed; an asynchronous one reports them. A commit
// answered ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or REBALANCE_IN_PROGRESS
// fails with ErrCommitFailed and the member rejoins.

import (
	"cmp"
	"errors"
	"slices"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitCall is one commit, sent or waiting for the coordinator.
type commitCall struct {
	offsets    []TopicPartitionOffset
	sync       bool
	generation int32
	member     string
	deadline   sim.Time
	retryAt    sim.Time
	inflight   bool
	cb         CommitCallback
}

// CommitSync commits offsets (the current positions when nil) and retries
// retriable errors; cb (may be nil) runs once with the outcome. The
// application waits for cb before going on, as commitSync blocks in Kafka.
func (c *Consumer) CommitSync(ctx *sim.Context, offsets []TopicPartitionOffset, cb CommitCallback) error {
	return c.commitAPI(ctx, offsets, true, cb)
}

// CommitAsync commits offsets (the current positions when nil), once; cb
// (may be nil) runs with the outcome.
func (c *Consumer) CommitAsync(ctx *sim.Context, offsets []TopicPartitionOffset, cb CommitCallback) error {
	return c.commitAPI(ctx, offsets, false, cb)
}

func (c *Consumer) commitAPI(ctx *sim.Context, offsets []TopicPartitionOffset, sync bool, cb CommitCallback) error {
	switch {
	case c.closed:
		return ErrConsumerClosed
	case c.cfg.GroupID == "":
		return errors.New("client: commit needs a group.id to commit to")
	}
	for _, o := range offsets {
		if o.Offset < 0 {
			return errors.New("client: commit of " + o.TopicPartition.String() + ": the offset must be >= 0")
		}
	}
	if offsets == nil {
		offsets = c.positions()
	}
	c.commit(ctx, offsets, sync, cb)
	c.run(ctx)
	return nil
}

// commit queues a commit with the current membership.
func (c *Consumer) commit(ctx *sim.Context, offsets []TopicPartitionOffset, sync bool, cb CommitCallback) {
	gen, member := c.group.generation, c.group.memberID
	if c.manual {
		gen, member = -1, ""
	}
	c.commits = append(c.commits, &commitCall{offsets: offsets, sync: sync, generation: gen, member: member,
		deadline: ctx.Now().Add(2 * c.cfg.RequestTimeout), cb: cb})
}

// sendCommits sends the queued commits once the coordinator is known.
func (c *Consumer) sendCommits(ctx *sim.Context) {
	now := ctx.Now()
	for _, cc := range append([]*commitCall(nil), c.commits...) {
		switch {
		case cc.inflight:
		case now >= cc.deadline:
			c.commitDone(ctx, cc, ErrRequestTimeout)
		case now < cc.retryAt:
		case c.ensureCoordinator(ctx):
			c.sendCommit(ctx, cc)
		}
	}
}

func (c *Consumer) commitDone(ctx *sim.Context, cc *commitCall, err error) {
	for i, x := range c.commits {
		if x == cc {
			c.commits = append(c.commits[:i], c.commits[i+1:]...)
			break
		}
	}
	if cc.cb != nil {
		cc.cb(ctx, cc.offsets, err)
	}
}

func (c *Consumer) sendCommit(ctx *sim.Context, cc *commitCall) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation, req.MemberID = c.offsetCommitVersion(), c.cfg.GroupID, cc.generation, cc.member
	if req.Version >= 7 && !c.manual {
		req.InstanceID = c.instanceID()
	}
	for _, o := range cc.offsets {
		if len(req.Topics) == 0 || req.Topics[len(req.Topics)-1].Topic != o.Topic {
			req.Topics = append(req.Topics, kmsg.OffsetCommitRequestTopic{Topic: o.Topic})
		}
		t := &req.Topics[len(req.Topics)-1]
		t.Partitions = append(t.Partitions, kmsg.OffsetCommitRequestTopicPartition{Partition: o.Partition, Offset: o.Offset, LeaderEpoch: -1})
	}
	cc.inflight = true
	c.call(ctx, c.group.coordinator, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
		cc.inflight = false
		r, _ := resp.(*kmsg.OffsetCommitResponse)
		var kerrs *kerr.Error
		if err == nil && r != nil {
			for _, t := range r.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode != 0 && kerrs == nil {
						kerrs = kerr.TypedErrorForCode(p.ErrorCode)
					}
				}
			}
		} else {
			c.coordinatorLost(ctx, "OffsetCommit: no answer")
		}
		switch {
		case err == nil && kerrs == nil:
			c.commitDone(ctx, cc, nil)
		case kerrs == kerr.IllegalGeneration || kerrs == kerr.UnknownMemberID:
			if cc.generation == c.group.generation && cc.generation >= 0 {
				c.fenced(ctx, "OffsetCommit: "+kerrs.Error())
			}
			c.commitDone(ctx, cc, errors.Join(ErrCommitFailed, kerrs))
		case kerrs == kerr.FencedInstanceID:
			c.fencedInstance(ctx, "OffsetCommit")
			c.fatal = kerrs
			c.commitDone(ctx, cc, errors.Join(ErrCommitFailed, kerrs))
		case kerrs == kerr.RebalanceInProgress:
			c.group.needRejoin = true
			c.commitDone(ctx, cc, errors.Join(ErrCommitFailed, kerrs))
		case kerrs == kerr.NotCoordinator || kerrs == kerr.CoordinatorNotAvailable || kerrs == kerr.CoordinatorLoadInProgress || err != nil:
			if kerrs == kerr.NotCoordinator || kerrs == kerr.CoordinatorNotAvailable {
				c.coordinatorLost(ctx, "OffsetCommit: "+kerrs.Error())
			}
			if !cc.sync {
				if err == nil {
					err = kerrs
				}
				c.commitDone(ctx, cc, err)
				return
			}
			cc.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
		default:
			c.commitDone(ctx, cc, kerrs)
		}
	})
}

// lookupOffsets finds positions: committed offsets from the coordinator,
// else auto.offset.reset.
func (c *Consumer) lookupOffsets(ctx *sim.Context) {
	now := ctx.Now()
	var committed []*partState
	for _, p := range c.parts {
		switch {
		case p.lookup || now < p.retryAt:
		case p.needCommitted:
			committed = append(committed, p)
		case p.needReset:
			c.reset(ctx, p)
		}
	}
	if len(committed) == 0 || !c.ensureCoordinator(ctx) {
		return
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = c.offsetFetchVersion(), c.cfg.GroupID
	if req.Version >= 5 && c.isolationLevel() == 1 {
		// KIP-447: a read_committed consumer does not start from an offset
		// a transaction still holds (ConsumerCoordinator's requireStable).
		req.Version, req.RequireStable = 7, true
	}
	for _, p := range committed {
		p.lookup = true
		if len(req.Topics) == 0 || req.Topics[len(req.Topics)-1].Topic != p.tp.Topic {
			req.Topics = append(req.Topics, kmsg.OffsetFetchRequestTopic{Topic: p.tp.Topic})
		}
		t := &req.Topics[len(req.Topics)-1]
		t.Partitions = append(t.Partitions, p.tp.Partition)
	}
	epochs := make([]int, len(committed))
	for i, p := range committed {
		epochs[i] = p.epoch
	}
	c.call(ctx, c.group.coordinator, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
		r, _ := resp.(*kmsg.OffsetFetchResponse)
		for i, p := range committed {
			if p.epoch == epochs[i] {
				p.lookup = false
			}
		}
		if err != nil || r == nil {
			c.coordinatorLost(ctx, "OffsetFetch: no answer")
			return
		}
		if r.ErrorCode != 0 {
			switch e := kerr.ErrorForCode(r.ErrorCode); e {
			case kerr.NotCoordinator, kerr.CoordinatorNotAvailable:
				c.coordinatorLost(ctx, "OffsetFetch: "+e.Error())
			default:
				for _, p := range committed {
					p.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
				}
			}
			return
		}
		for _, t := range r.Topics {
			for _, rp := range t.Partitions {
				p := c.part(TopicPartition{Topic: t.Topic, Partition: rp.Partition})
				if p != nil && p.needCommitted && rp.ErrorCode == kerr.UnstableOffsetCommit.Code {
					// A transaction holds an offset of p: ask again after
					// retry.backoff.ms, until its marker arrives.
					p.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
					ctx.Log("consumer-offset-unstable", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()))
					continue
				}
				if p == nil || !p.needCommitted || rp.ErrorCode != 0 && !c.noCommittedOffset(rp.ErrorCode, rp.Offset) {
					continue
				}
				p.needCommitted = false
				if c.fetched != nil {
					off := rp.Offset
					if rp.ErrorCode != 0 || off < 0 {
						off = -1
					}
					c.fetched(ctx, now, p.tp, off)
				}
				if rp.Offset >= 0 {
					p.position, p.fetchPos = rp.Offset, rp.Offset
					ctx.Log("consumer-position", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()), sim.I("offset", rp.Offset), sim.S("from", "committed"))
				} else {
					p.needReset = true
				}
			}
		}
	})
}

// reset sets p's position by auto.offset.reset (or a SeekToBeginning/End).
func (c *Consumer) reset(ctx *sim.Context, p *partState) {
	to := p.resetTo
	if to == "" {
		to = c.cfg.AutoOffsetReset
	}
	if to == config.ResetNone {
		p.needReset = false
		c.fatal = ErrNoOffset
		return
	}
	leader := c.meta.leader(p.tp.Topic, p.tp.Partition)
	if leader < 0 {
		c.meta.want(p.tp.Topic)
		c.meta.needUpdate = true
		return
	}
	ts := storage.LatestTimestamp
	if to == config.ResetEarliest {
		ts = storage.EarliestTimestamp
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID, req.IsolationLevel = 4, -1, c.isolationLevel()
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p.tp.Partition, ts, -1
	req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: p.tp.Topic, Partitions: []kmsg.ListOffsetsRequestTopicPartition{rp}}}
	p.lookup = true
	epoch := p.epoch
	c.call(ctx, leader, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
		if p.epoch != epoch || c.part(p.tp) != p {
			return
		}
		p.lookup = false
		r, _ := resp.(*kmsg.ListOffsetsResponse)
		if err != nil || r == nil || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
			p.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
			c.meta.needUpdate = true
			return
		}
		off := r.Topics[0].Partitions[0].Offset
		p.needReset, p.resetTo = false, ""
		p.position, p.fetchPos = off, off
		ctx.Log("consumer-position", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()), sim.I("offset", off), sim.S("from", string(to)))
	})
}

// sendFetches sends one Fetch per broker (the leader, or the preferred read
// replica) for the partitions with a position, nothing buffered and
// nothing in flight.
func (c *Consumer) sendFetches(ctx *sim.Context) {
	// NB: slices, not maps: a consumer fetches from a few brokers, and
	// this runs on every step of the consumer (a map costs an allocation
	// and a random seed to make).
	var busy []int32
	for _, p := range c.parts {
		if p.fetching && !slices.Contains(busy, p.fetchingFrom) {
			busy = append(busy, p.fetchingFrom)
		}
	}
	type fetchTo struct {
		node  int32
		req   *kmsg.FetchRequest
		parts []*partState
	}
	var reqs []fetchTo // in the order their first partition was met
	for _, p := range c.parts {
		if p.fetchPos < 0 || p.fetching || len(p.buffer) > 0 || p.lookup || p.validate || ctx.Now() < p.fetchRetryAt {
			continue
		}
		leader := c.meta.leader(p.tp.Topic, p.tp.Partition)
		if leader < 0 {
			c.meta.want(p.tp.Topic)
			c.meta.needUpdate = true
			continue
		}
		node := leader
		if p.readReplica >= 0 {
			if ctx.Now() < p.readReplicaExpiry {
				node = p.readReplica
			} else {
				c.clearReadReplica(ctx, p, "expired")
			}
		}
		if slices.Contains(busy, node) {
			continue
		}
		if p.leaderSeen.leader < 0 {
			// KIP-320: the position is checked against this leader from now on.
			p.leaderSeen = c.meta.topic(p.tp.Topic).partitions[p.tp.Partition]
		}
		i := slices.IndexFunc(reqs, func(f fetchTo) bool { return f.node == node })
		if i < 0 {
			req := kmsg.NewPtrFetchRequest()
			req.Version, req.ReplicaID = 11, -1
			req.MaxWaitMillis = int32(c.cfg.FetchMaxWait.Milliseconds())
			req.MinBytes, req.MaxBytes = int32(c.cfg.FetchMinBytes), int32(c.cfg.FetchMaxBytes)
			req.SessionEpoch = -1
			req.Rack = c.cfg.ClientRack
			req.IsolationLevel = c.isolationLevel()
			i = len(reqs)
			reqs = append(reqs, fetchTo{node: node, req: req})
		}
		req := reqs[i].req
		if len(req.Topics) == 0 || req.Topics[len(req.Topics)-1].Topic != p.tp.Topic {
			req.Topics = append(req.Topics, kmsg.FetchRequestTopic{Topic: p.tp.Topic})
		}
		t := &req.Topics[len(req.Topics)-1]
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.LogStartOffset = p.tp.Partition, p.fetchPos, int32(c.cfg.MaxPartitionFetchBytes), -1
		fp.CurrentLeaderEpoch = -1 // a pre-2.1 client (Fetch v8 and older) does not send it
		if c.cfg.TruncationDetection {
			fp.CurrentLeaderEpoch = c.meta.topic(p.tp.Topic).partitions[p.tp.Partition].epoch
		}
		t.Partitions = append(t.Partitions, fp)
		reqs[i].parts = append(reqs[i].parts, p)
	}
	for _, f := range reqs {
		node, parts := f.node, f.parts
		epochs := make([]int, len(parts))
		current := make([]int32, len(parts)) // the CurrentLeaderEpoch each partition's fetch carried
		for i, p := range parts {
			p.fetching, p.fetchingFrom, epochs[i] = true, node, p.epoch
			current[i] = -1
			if c.cfg.TruncationDetection {
				current[i] = c.meta.topic(p.tp.Topic).partitions[p.tp.Partition].epoch // as fp.CurrentLeaderEpoch above
			}
			p.fetchFromReplica = node != c.meta.leader(p.tp.Topic, p.tp.Partition)
		}
		r := c.call(ctx, node, f.req, func(ctx *sim.Context, resp kmsg.Response, err error) {
			for _, p := range parts {
				p.fetching = false
			}
			fr, _ := resp.(*kmsg.FetchResponse)
			if err != nil || fr == nil {
				c.meta.needUpdate = true
				for _, p := range parts {
					if p.readReplica == node {
						c.clearReadReplica(ctx, p, "no-answer")
					}
				}
				return
			}
			for i, p := range parts {
				if c.part(p.tp) == p && p.epoch == epochs[i] {
					c.handleFetched(ctx, p, node, fr, current[i])
				}
			}
		})
		r.waitUntil(r.deadline.Add(c.cfg.FetchMaxWait))
	}
}

// clearReadReplica sends p's fetches back to the leader.
func (c *Consumer) clearReadReplica(ctx *sim.Context, p *partState, why string) {
	ctx.Log("consumer-read-replica-cleared", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()),
		sim.I("replica", int64(p.readReplica)), sim.S("reason", why))
	p.readReplica, p.readReplicaExpiry = -1, 0
}

// handleFetched buffers what a fetch from broker node answered for p; the
// fetch carried CurrentLeaderEpoch current (-1: none).
func (c *Consumer) handleFetched(ctx *sim.Context, p *partState, node int32, fr *kmsg.FetchResponse, current int32) {
	for _, t := range fr.Topics {
		if t.Topic != p.tp.Topic {
			continue
		}
		for _, rp := range t.Partitions {
			if rp.Partition != p.tp.Partition {
				continue
			}
			e := kerr.ErrorForCode(rp.ErrorCode)
			if e != nil && p.fetchFromReplica {
				// Any error from the read replica: back to the leader,
				// which decides (an offset out of range on a lagging
				// follower may be in range on the leader).
				if p.readReplica == node {
					c.clearReadReplica(ctx, p, e.Error())
				}
				if e == kerr.OffsetOutOfRange {
					return
				}
			}
			switch e {
			case nil:
			case kerr.OffsetOutOfRange:
				ctx.Log("consumer-offset-out-of-range", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()), sim.I("offset", p.fetchPos))
				p.position, p.fetchPos, p.needReset = -1, -1, true
				return
			default:
				ctx.Log("consumer-fetch-error", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()), sim.I("broker", int64(node)), sim.S("error", e.Error()))
				c.meta.needUpdate = true
				p.fetchRetryAt = ctx.Now().Add(c.cfg.RetryBackoff)
				return
			}
			p.hw = rp.HighWatermark
			if rp.PreferredReadReplica >= 0 && rp.PreferredReadReplica != node {
				p.readReplica, p.readReplicaExpiry = rp.PreferredReadReplica, ctx.Now().Add(c.MetadataMaxAge)
				ctx.Log("consumer-read-replica", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()),
					sim.I("replica", int64(rp.PreferredReadReplica)), sim.I("leader", int64(node)))
				return // Kafka's leader sends no records with a preferred replica
			}
			batches, err := storage.DecodeBatches(rp.RecordBatches)
			if err != nil {
				return // a partial batch at the end is normal; corrupt data is refetched
			}
			c.buffer(ctx, p, batches, rp.AbortedTransactions, rp.LastStableOffset, current)
		}
	}
}

// isolationLevel is isolation.level as Fetch and ListOffsets carry it.
func (c *Consumer) isolationLevel() int8 {
	if c.cfg.IsolationLevel == config.ReadCommitted {
		return 1
	}
	return 0
}

// buffer adds the records of fetched batches to p's buffer from its fetch
// position on. Control batches are never returned; with read_committed
// the batches of aborted transactions are dropped, as Kafka's
// CompletedFetch does: an aborted transaction (from the response's
// AbortedTransactions) applies to its producer's batches from its first
// offset on, until that producer's ABORT marker. The position moves past
// what was dropped (at once when nothing is returned, else once Poll has
// handed out the records before it). Each record carries the response's
// HW (p.hw, set by the caller) and LSO, and the fetch's CurrentLeaderEpoch.
func (c *Consumer) buffer(ctx *sim.Context, p *partState, batches []storage.RecordBatch, aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction, lso int64, current int32) {
	committed := c.cfg.IsolationLevel == config.ReadCommitted
	pending := slices.Clone(aborted)
	slices.SortStableFunc(pending, func(a, b kmsg.FetchResponseTopicPartitionAbortedTransaction) int {
		return cmp.Compare(a.FirstOffset, b.FirstOffset)
	})
	abortedPIDs := map[int64]bool{}
	skipped := false
	p.skipTo = -1
	// NB: room for every record up front (an upper bound), not the
	// doublings of append from an empty buffer.
	n := 0
	for _, b := range batches {
		n += len(b.Records)
	}
	p.buffer = slices.Grow(p.buffer, n)
	for _, b := range batches {
		next := b.NextOffset()
		if next <= p.fetchPos {
			continue
		}
		control := b.Attributes&storage.ControlFlagMask != 0
		if committed && b.ProducerID >= 0 {
			for len(pending) > 0 && pending[0].FirstOffset <= b.LastOffset() {
				abortedPIDs[pending[0].ProducerID] = true
				pending = pending[1:]
			}
			switch {
			case control && isAbortMarker(&b):
				delete(abortedPIDs, b.ProducerID)
			case b.Attributes&storage.TransactionalFlagMask != 0 && abortedPIDs[b.ProducerID]:
				ctx.Log("consumer-aborted-skipped", sim.S("client-id", c.cfg.ClientID), sim.S("partition", p.tp.String()),
					sim.I("producer", b.ProducerID), sim.I("first", b.BaseOffset), sim.I("last", b.LastOffset()))
				p.fetchPos, skipped = next, true
				continue
			}
		}
		if control {
			p.fetchPos, skipped = next, true
			continue
		}
		for _, r := range b.Records {
			if r.Offset < p.fetchPos {
				continue
			}
			p.buffer = append(p.buffer, ConsumerRecord{Topic: p.tp.Topic, Partition: p.tp.Partition, Offset: r.Offset,
				Timestamp: r.Timestamp, LeaderEpoch: b.PartitionLeaderEpoch, Key: r.Key, Value: r.Value, HighWatermark: p.hw, LastStableOffset: lso, CurrentLeaderEpoch: current})
		}
		p.fetchPos = max(p.fetchPos, next)
	}
	switch {
	case !skipped:
	case len(p.buffer) == 0:
		p.position = max(p.position, p.fetchPos)
	default:
		p.skipTo = p.fetchPos
	}
}

// isAbortMarker reports whether control batch b holds an ABORT marker.
func isAbortMarker(b *storage.RecordBatch) bool {
	if len(b.Records) == 0 {
		return false
	}
	m, err := storage.ParseEndTxnMarker(b.Records[0].Key, b.Records[0].Value)
	return err == nil && !m.Commit()
}
