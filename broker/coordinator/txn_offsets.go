package coordinator

// This file serves TxnOffsetCommit (api key 28; KIP-98, KIP-447) and
// completes transactional offset commits: Kafka's
// GroupCoordinator.handleTxnCommitOffsets / doTxnCommitOffsets and
// GroupMetadataManager.storeOffsets with a producer id (3.x). The offsets
// are appended to the group's __consumer_offsets partition in one
// transactional batch of the producer (Env.AppendTxn) and held pending for
// that producer, invisible to OffsetFetch (which answers
// UNSTABLE_OFFSET_COMMIT with RequireStable), until the transaction's
// marker reaches the partition: CompleteTxn then commits them (each only
// if its record is newer than the committed offset's, as
// GroupMetadata.completePendingTxnOffsetCommit) or drops them. After a
// fail-over LoadBatches rebuilds them from the log.
//
// Versions: v0-v3 (v2 adds the leader epoch, KIP-320; v3 the generation,
// member id and group instance id, KIP-447). Errors as Kafka's
// validateOffsetCommit with isTransactional: NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE
// (a Dead group), UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION; append errors
// mapped as OffsetCommit's, the log's refusal of the producer
// (INVALID_PRODUCER_EPOCH, ...) passed through.
// A group instance id held by another member is FENCED_INSTANCE_ID
// (KIP-345, static.go). Simplifications: v4-v5 (KIP-890 part 2's verification by the group
// coordinator) are not served; no offset expiration.

import (
	"cmp"
	"maps"
	"slices"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pendingOffset is a transactional offset commit awaiting its marker.
type pendingOffset struct {
	off Offset
	// appended: its record is in the log (Kafka's appendedBatchOffset
	// set); until then a marker does not commit it.
	appended bool
	at       int64 // the order of its record (Coordinator.appendSeq)
}

// nextAppend returns the order of the next append to partition.
func (c *Coordinator) nextAppend(partition int32) int64 {
	at := c.appendSeq[partition]
	c.appendSeq[partition] = at + 1
	return at
}

// hasPendingTxnOffset reports whether a transaction holds an offset of tp
// pending (GroupMetadata.hasPendingOffsetCommitsForTopicPartition).
func (g *group) hasPendingTxnOffset(tp TopicPartition) bool {
	for _, byTP := range g.txnOffsets { // NB: a yes/no answer; order does not matter
		if _, ok := byTP[tp]; ok {
			return true
		}
	}
	return false
}

// TxnOffsetCommit handles a TxnOffsetCommit request; reply runs once, now
// or when the records are committed in __consumer_offsets.
func (c *Coordinator) TxnOffsetCommit(now sim.Time, req *kmsg.TxnOffsetCommitRequest, reply func(*kmsg.TxnOffsetCommitResponse)) {
	answer := func(err *kerr.Error) *kmsg.TxnOffsetCommitResponse {
		resp := kmsg.NewPtrTxnOffsetCommitResponse()
		for _, t := range req.Topics {
			rt := kmsg.TxnOffsetCommitResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.TxnOffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: errCode(err)})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	if err := c.checkGroup(req.Group); err != nil {
		reply(answer(err))
		return
	}
	if c.env.AppendTxn == nil {
		reply(answer(kerr.CoordinatorNotAvailable))
		return
	}
	g := c.groups[req.Group]
	if g == nil {
		g = newGroup(req.Group, c.PartitionFor(req.Group))
		c.groups[req.Group] = g
	}
	if req.Version < 3 {
		req.Generation, req.MemberID, req.InstanceID = -1, "", nil
	}
	switch {
	case g.state == Dead:
		reply(answer(kerr.CoordinatorNotAvailable))
		return
	case req.Generation >= 0 || req.MemberID != "" || req.InstanceID != nil:
		if req.InstanceID != nil && *req.InstanceID != "" {
			if err := c.checkMember(g, true, req.MemberID, req.InstanceID, "TxnOffsetCommit"); err != nil {
				reply(answer(err))
				return
			}
		}
		if req.MemberID != "" && g.members[req.MemberID] == nil {
			reply(answer(kerr.UnknownMemberID))
			return
		}
		if req.Generation != g.generation {
			reply(answer(kerr.IllegalGeneration))
			return
		}
	}
	pid := req.ProducerID
	var recs []storage.Record
	type entry struct {
		tp TopicPartition
		po *pendingOffset
	}
	var entries []entry
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			meta := ""
			if p.Metadata != nil {
				meta = *p.Metadata
			}
			off := Offset{Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: meta, Timestamp: ms(now)}
			if req.Version < 2 {
				off.LeaderEpoch = -1
			}
			recs = append(recs, OffsetRecord(g.id, t.Topic, p.Partition, off))
			entries = append(entries, entry{TopicPartition{t.Topic, p.Partition}, &pendingOffset{off: off}})
		}
	}
	if len(recs) == 0 {
		reply(answer(nil))
		return
	}
	// Pending from now (prepareTxnOffsetCommit): RequireStable sees it.
	if g.txnOffsets[pid] == nil {
		g.txnOffsets[pid] = map[TopicPartition]*pendingOffset{}
	}
	for _, e := range entries {
		g.txnOffsets[pid][e.tp] = e.po
	}
	at := c.nextAppend(g.partition)
	c.env.AppendTxn(g.partition, pid, req.ProducerEpoch, recs, func(now sim.Time, err *kerr.Error) {
		err = mapTxnAppendError(err)
		if c.groups[g.id] == g {
			byTP := g.txnOffsets[pid]
			for _, e := range entries {
				if byTP[e.tp] != e.po {
					continue // replaced by a later commit, or completed
				}
				switch {
				case err == nil && c.cfg.Mutants.On(mutant.TxnOffsetsOutside):
					// NOT Kafka: stored as a plain OffsetCommit, visible
					// now and whatever the transaction's marker says.
					if prev, ok := g.offsetAt[e.tp]; !ok || prev <= at {
						g.offsets[e.tp], g.offsetAt[e.tp] = e.po.off, at
					}
					delete(byTP, e.tp)
				case err == nil:
					e.po.appended, e.po.at = true, at
				default:
					delete(byTP, e.tp)
				}
			}
			if byTP != nil && len(byTP) == 0 {
				delete(g.txnOffsets, pid)
			}
			if err == nil {
				c.env.Log("txn-offsets-pending", sim.S("group", g.id), sim.I("producer", pid),
					sim.I("producer-epoch", int64(req.ProducerEpoch)), sim.I("partitions", int64(len(entries))))
			}
		}
		reply(answer(err))
	})
}

// mapTxnAppendError maps an append error as mapAppendError does, except
// the log's refusals of the producer, which the producer must see.
func mapTxnAppendError(err *kerr.Error) *kerr.Error {
	switch err {
	case kerr.InvalidProducerEpoch, kerr.ProducerFenced, kerr.InvalidTxnState, kerr.TransactionCoordinatorFenced:
		return err
	}
	return mapAppendError(err)
}

// CompleteTxn applies a transaction marker of producerID replicated on
// partition (GroupMetadataManager.handleTxnCompletion): with commit, each
// pending offset of the producer in the partition's groups becomes the
// committed one unless the committed offset's record is newer; without,
// they are dropped.
func (c *Coordinator) CompleteTxn(now sim.Time, partition int32, producerID int64, commit bool) {
	if loaded := c.owned[partition]; !loaded {
		return
	}
	for _, id := range c.groupIDs() {
		g := c.groups[id]
		byTP := g.txnOffsets[producerID]
		if g.partition != partition || byTP == nil {
			continue
		}
		delete(g.txnOffsets, producerID)
		applied := 0
		if commit {
			for _, tp := range sortedTPs(byTP) {
				po := byTP[tp]
				if !po.appended {
					continue
				}
				if at, ok := g.offsetAt[tp]; ok && at > po.at {
					continue // a newer commit's record
				}
				g.offsets[tp], g.offsetAt[tp] = po.off, po.at
				applied++
			}
		}
		c.env.Log("txn-offsets-completed", sim.S("group", id), sim.I("producer", producerID), sim.S("marker", markerName(commit)),
			sim.I("pending", int64(len(byTP))), sim.I("committed", int64(applied)))
	}
}

// PendingTxnOffset returns a group's pending transactional offset of a
// partition for producerID, for observers.
func (c *Coordinator) PendingTxnOffset(group string, producerID int64, topic string, partition int32) (Offset, bool) {
	g := c.groups[group]
	if g == nil {
		return Offset{}, false
	}
	po, ok := g.txnOffsets[producerID][TopicPartition{topic, partition}]
	if !ok {
		return Offset{}, false
	}
	return po.off, true
}

// sortedTPs returns m's partitions by topic, then partition.
func sortedTPs[V any](m map[TopicPartition]V) []TopicPartition {
	return slices.SortedFunc(maps.Keys(m), func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// sortedKeys returns m's keys in order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K { return slices.Sorted(maps.Keys(m)) }

func markerName(commit bool) string {
	if commit {
		return "COMMIT"
	}
	return "ABORT"
}

// offsetOf returns the offset an offset commit value holds.
func offsetOf(v *kmsg.OffsetCommitValue) Offset {
	return Offset{Offset: v.Offset, LeaderEpoch: v.LeaderEpoch, Metadata: v.Metadata, Timestamp: v.CommitTimestamp}
}
