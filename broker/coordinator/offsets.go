package coordinator

// This file serves OffsetCommit (api key 8) and OffsetFetch (9): Kafka's
// GroupCoordinator.handleCommitOffsets / doCommitOffsets and
// handleFetchOffsets (2.x), with the checks in the reference's order
// (§4.7). A commit is answered only once its records are committed in
// __consumer_offsets (acks=all), and only then enters the cache that
// OffsetFetch reads.
//
// Versions: OffsetCommit v1-v8 (v6+ carries the leader epoch, KIP-320;
// the commit timestamp of v1 and the retention time of v2-v4 are ignored:
// offsets never expire here; v7+'s group.instance.id is checked as
// Kafka's validateCurrentMember does: FENCED_INSTANCE_ID for a zombie of
// a static member, KIP-345); OffsetFetch v1-v7 (one group; Topics nil
// asks for every partition; v8's group batch is the host's,
// group_coordinator.go). v0 of both is ZooKeeper's (server/offsets_zk.go).
// OffsetFetch v7's RequireStable (KIP-447) answers UNSTABLE_OFFSET_COMMIT
// for a partition with a pending transactional commit (txn_offsets.go);
// without it the pending commits are invisible.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit handles an OffsetCommit request; reply runs once, now or
// when the offsets are committed.
func (c *Coordinator) OffsetCommit(now sim.Time, req *kmsg.OffsetCommitRequest, reply func(*kmsg.OffsetCommitResponse)) {
	answer := func(err *kerr.Error) *kmsg.OffsetCommitResponse {
		resp := kmsg.NewPtrOffsetCommitResponse()
		for _, t := range req.Topics {
			rt := kmsg.OffsetCommitResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: errCode(err)})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	if err := c.checkGroup(req.Group); err != nil {
		reply(answer(err))
		return
	}
	g := c.groups[req.Group]
	// A consumer group (KIP-848) checks the member epoch
	// (consumergroup_describe.go); its offsets live in a memberless group.
	cg := c.cgroups[req.Group]
	if cg != nil {
		if err := c.consumerOffsetCommitError(cg, req.MemberID, req.Generation, req.Version, false); err != nil {
			reply(answer(err))
			return
		}
		if g == nil {
			g = newGroup(req.Group, cg.partition)
			c.groups[req.Group] = g
		}
	}
	if g == nil {
		if req.Generation >= 0 {
			reply(answer(kerr.IllegalGeneration))
			return
		}
		// A group not managed by Kafka (manual assignment): plain storage.
		g = newGroup(req.Group, c.PartitionFor(req.Group))
		c.groups[req.Group] = g
	}
	// NB: mutant.CommitSkipsGeneration does not fence a stale member: its
	// commit is stored whatever its member id and generation.
	unfenced := c.cfg.Mutants.On(mutant.CommitSkipsGeneration)
	// NB: a consumer group's static member is checked by its member id and
	// epoch alone (ConsumerGroup.validateOffsetCommit ignores the instance
	// id); the memberless classic group that holds its offsets knows no
	// members, so the classic check would answer UNKNOWN_MEMBER_ID.
	if instance := instanceOf(req.InstanceID); cg == nil && req.Version >= 7 && instance != "" && g.state != Dead && !unfenced {
		if err := c.checkMember(g, true, req.MemberID, req.InstanceID, "OffsetCommit"); err != nil {
			reply(answer(err))
			return
		}
	}
	switch m := g.members[req.MemberID]; {
	case cg != nil: // checked above
	case g.state == Dead:
		reply(answer(kerr.CoordinatorNotAvailable))
		return
	case req.Generation < 0 && g.state == Empty:
		// Plain offset storage.
	case m == nil && !unfenced:
		reply(answer(kerr.UnknownMemberID))
		return
	case req.Generation != g.generation && !unfenced:
		reply(answer(kerr.IllegalGeneration))
		return
	case g.state == CompletingRebalance:
		reply(answer(kerr.RebalanceInProgress))
		return
	case m != nil: // Stable or PreparingRebalance
		m.lastHeartbeat = now // a commit counts as a heartbeat
	}
	var recs []storage.Record
	type entry struct {
		tp  TopicPartition
		off Offset
	}
	var entries []entry
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			meta := ""
			if p.Metadata != nil {
				meta = *p.Metadata
			}
			off := Offset{Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: meta, Timestamp: ms(now)}
			if req.Version < 6 {
				off.LeaderEpoch = -1
			}
			recs = append(recs, OffsetRecord(g.id, t.Topic, p.Partition, off))
			entries = append(entries, entry{TopicPartition{t.Topic, p.Partition}, off})
		}
	}
	if len(recs) == 0 {
		reply(answer(nil))
		return
	}
	gen, at := g.generation, c.nextAppend(g.partition)
	committed := func(now sim.Time, err *kerr.Error) {
		err = mapAppendError(err)
		if err == nil && c.groups[g.id] == g {
			for _, e := range entries {
				g.offsets[e.tp], g.offsetAt[e.tp] = e.off, at
			}
			c.env.Log("offsets-committed", sim.S("group", g.id), sim.I("generation", int64(gen)), sim.I("partitions", int64(len(entries))))
		}
		reply(answer(err))
	}
	if !c.cfg.Mutants.On(mutant.OffsetCommitBeforeReplicated) {
		c.env.Append(g.partition, recs, committed)
		return
	}
	// mutant.OffsetCommitBeforeReplicated: the commit is answered (and
	// enters the cache) as soon as the leader's own log has it, as if
	// appended with acks=1; the ISR's replication is not awaited. An
	// append refused at once (Append calls done inside) is answered
	// with its error, as before.
	answered := false
	c.env.Append(g.partition, recs, func(now sim.Time, err *kerr.Error) {
		if !answered {
			answered = true
			committed(now, err)
		}
	})
	if !answered {
		answered = true
		committed(now, nil)
	}
}

func errCode(err *kerr.Error) int16 {
	if err == nil {
		return 0
	}
	return err.Code
}

// OffsetFetch handles an OffsetFetch request: the committed offset of each
// partition asked for (-1 when none), or of every partition the group has
// committed when Topics is nil.
func (c *Coordinator) OffsetFetch(now sim.Time, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := kmsg.NewPtrOffsetFetchResponse()
	if err := c.checkGroup(req.Group); err != nil {
		resp.ErrorCode = err.Code
		for _, t := range req.Topics {
			rt := kmsg.OffsetFetchResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.OffsetFetchResponseTopicPartition{Partition: p, Offset: -1, LeaderEpoch: -1, ErrorCode: err.Code})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	g := c.groups[req.Group]
	lookup := func(tp TopicPartition) kmsg.OffsetFetchResponseTopicPartition {
		rp := kmsg.OffsetFetchResponseTopicPartition{Partition: tp.Partition, Offset: -1, LeaderEpoch: -1}
		if g != nil && req.RequireStable && g.hasPendingTxnOffset(tp) {
			rp.ErrorCode = kerr.UnstableOffsetCommit.Code
			return rp
		}
		if g != nil {
			if o, ok := g.offsets[tp]; ok {
				md := o.Metadata
				rp.Offset, rp.LeaderEpoch, rp.Metadata = o.Offset, o.LeaderEpoch, &md
			}
		}
		return rp
	}
	if req.Topics == nil {
		if g == nil {
			return resp
		}
		var tps []TopicPartition
		for tp := range g.offsets {
			tps = append(tps, tp)
		}
		slices.SortFunc(tps, func(a, b TopicPartition) int {
			if a.Topic != b.Topic {
				if a.Topic < b.Topic {
					return -1
				}
				return 1
			}
			return int(a.Partition - b.Partition)
		})
		for _, tp := range tps {
			if len(resp.Topics) == 0 || resp.Topics[len(resp.Topics)-1].Topic != tp.Topic {
				resp.Topics = append(resp.Topics, kmsg.OffsetFetchResponseTopic{Topic: tp.Topic})
			}
			rt := &resp.Topics[len(resp.Topics)-1]
			rt.Partitions = append(rt.Partitions, lookup(tp))
		}
		return resp
	}
	for _, t := range req.Topics {
		rt := kmsg.OffsetFetchResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, lookup(TopicPartition{t.Topic, p}))
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
