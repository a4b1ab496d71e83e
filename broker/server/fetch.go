package server

// This file serves Fetch (api key 1) on the leader, for followers
// (ReplicaID >= 0, read up to the LEO) and consumers (ReplicaID -1, read up
// to the HW), on a follower for consumers that fetch from it (KIP-392),
// and holds fetches that found too little data in the delayed fetch
// purgatory until fetch.min.bytes arrive or fetch.max.wait.ms passes.
//
// Versions: v4 to v12 answered the same way; CurrentLeaderEpoch (v9+) is
// checked when KIP-320 fencing is on, on the leader and on a follower
// serving a consumer. A follower's fetch offset is its LEO: the leader
// records it, may expand the ISR and advance the HW. As in Kafka after
// KAFKA-7104, the HW in an immediate answer is the one read before this
// fetch moved it, so the follower learns of a new HW one round later.
// A follower's Fetch v12+ with LastFetchedEpoch is first checked against
// the leader's epoch cache and may be answered DivergingEpoch
// (checkDivergence, 2.7+).
//
// KIP-392 (fetch from follower, 2.4+): with replica.selector.class =
// RackAwareReplicaSelector, the leader answers a consumer's Fetch v11+ that
// names a rack with PreferredReadReplica and no records when an in-sync
// replica in that rack other than the leader has the fetch offset (the
// leader itself when it is in the rack; else the highest LEO, then the
// most recently caught up, then the highest broker id, as
// ReplicaView.comparator). A follower answers such a consumer's fetch from
// its own log up to its own HW: an offset between its HW and its LEO gets
// no records, one past its LEO or below its log start gets
// OFFSET_OUT_OF_RANGE (the consumer then goes back to the leader).
//
// KIP-98 (0.11+): a consumer's Fetch v4+ with isolation_level 1
// (read_committed) reads only below the LSO and gets the aborted
// transactions that overlap what it read (from the .txnindex files), so
// it can drop their records; LastStableOffset is the LSO for either
// isolation level; read_uncommitted reads to the HW as before.
//
// Simplifications: no fetch sessions are created (handleFetch); a delayed fetch completes on bytes or time only, not on a
// HW change alone (0.11 to 2.x behaviour). Kafka lets a follower serve any
// consumer Fetch v11+; here only one that carries a rack (client.rack), so
// that a rack-less consumer with stale metadata still gets
// NOT_LEADER_OR_FOLLOWER and refreshes, and default runs read from leaders
// only. Replicas outside the ISR are never preferred (the KAFKA-14372 fix;
// 2.4 to 3.4 only required the replica to hold the offset). The selector
// reads the racks of live brokers from the metadata cache.

import (
	"errors"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch sessions (KIP-227, v7+): the broker never creates one, as
// Kafka's FetchManager does when its session cache is full (or
// max.incremental.fetch.session.cache.slots is 0). So, by
// FetchManager.newContext: a full request (session_epoch 0, INITIAL, or
// -1, FINAL; any session it names is closed, and none exists) is answered
// in full with session id 0, and the client stays on full requests; an
// incremental one (epoch > 0, or below -1) names a session that does not
// exist: FETCH_SESSION_ID_NOT_FOUND, no partitions, at once. (Kafka's
// INVALID_FETCH_SESSION_EPOCH needs an existing session, so it never
// arises here.) Forgotten topics of a full request are ignored, as in
// Kafka.
func isFullFetch(body *kmsg.FetchRequest) bool {
	return body.Version < 7 || body.SessionEpoch == 0 || body.SessionEpoch == -1
}

func (b *Broker) handleFetch(from sim.NodeID, req *wire.Request, body *kmsg.FetchRequest) {
	if !isFullFetch(body) {
		resp := kmsg.NewPtrFetchResponse()
		resp.ErrorCode, resp.SessionID = kerr.FetchSessionIDNotFound.Code, 0
		b.respond(from, req, resp)
		return
	}
	follower := body.ReplicaID >= 0
	a := b.fetchAnswers.New()
	bytes, now := b.readForFetch(a, body, follower, true)
	if body.MaxWaitMillis <= 0 || bytes >= int(body.MinBytes) || now || len(body.Topics) == 0 {
		b.respondFetch(from, req, a)
		return
	}
	b.delayFetch(from, req, body, a, sim.Ms(int64(body.MaxWaitMillis)))
}

// fetchAnswer is a Fetch response and its wire envelope in one block of
// the broker's slab, with room for two topics and two partitions inline
// (more partitions take an array carved from another slab). Until it is sent it
// is the node's own: a delayed fetch reads into it again when it
// completes. Once sent it is immutable, as every message.
type fetchAnswer struct {
	msg    wire.Response
	body   kmsg.FetchResponse
	topics [2]kmsg.FetchResponseTopic // a topic and __consumer_offsets
	parts  [2]kmsg.FetchResponseTopicPartition
	// more holds the partitions of a fetch of more than two, carved from
	// the broker's fetchParts; a delayed fetch reads into it again.
	more []kmsg.FetchResponseTopicPartition
}

// respondFetch sends a.
func (b *Broker) respondFetch(to sim.NodeID, req *wire.Request, a *fetchAnswer) {
	a.body.SetVersion(req.Body.GetVersion())
	b.ctx.Send(to, b.enc.ReplyIn(&a.msg, req, &a.body))
}

// readForFetch reads every partition of a fetch into a (what it held
// before is overwritten). On first arrival (update=true) a follower's
// fetch offsets are recorded. It returns the bytes read, and whether the
// answer must go now: an error, or a preferred read replica.
func (b *Broker) readForFetch(a *fetchAnswer, body *kmsg.FetchRequest, follower, update bool) (int, bool) {
	n := 0
	for _, t := range body.Topics {
		n += len(t.Partitions)
	}
	flat := a.parts[:0]
	if n > len(a.parts) {
		if cap(a.more) < n {
			a.more = b.fetchParts.Slice(n)
		}
		flat = a.more[:0]
	}
	a.body = kmsg.NewFetchResponse()
	resp := &a.body
	resp.Topics = a.topics[:0]
	if len(body.Topics) > len(a.topics) {
		resp.Topics = make([]kmsg.FetchResponseTopic, 0, len(body.Topics))
	}
	total := 0
	anyErr := false
	for _, t := range body.Topics {
		start := len(flat)
		for i := range t.Partitions {
			fp := &t.Partitions[i]
			flat = append(flat, kmsg.FetchResponseTopicPartition{})
			rp := &flat[len(flat)-1] // filled in place
			rp.Default()
			rp.Partition = fp.Partition
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			tp := storage.TopicPartition{Topic: t.Topic, Partition: fp.Partition}
			if err := b.readPartition(tp, body, fp, follower, update, rp); err != nil {
				rp.ErrorCode = err.Code
				anyErr = true
			}
			if rp.PreferredReadReplica >= 0 || rp.DivergingEpoch.EndOffset >= 0 {
				anyErr = true // Kafka answers at once with a preferred replica or a diverging epoch
			}
			if rp.RecordBatches == nil {
				rp.RecordBatches = noRecords
			}
			total += len(rp.RecordBatches)
		}
		resp.Topics = append(resp.Topics, kmsg.FetchResponseTopic{Topic: t.Topic, Partitions: flat[start:len(flat):len(flat)]})
	}
	return total, anyErr
}

// checkLeader returns the error for a request to p that this broker cannot
// serve as leader, with KIP-320 epoch fencing when on.
func (b *Broker) checkLeader(p *Partition, currentEpoch int32) *kerr.Error {
	return b.checkReplica(p, currentEpoch, false)
}

// checkReplica is checkLeader, letting a follower serve when followerOK
// (a KIP-392 consumer fetch); the follower fences on its own leader epoch.
func (b *Broker) checkReplica(p *Partition, currentEpoch int32, followerOK bool) *kerr.Error {
	if p == nil {
		return kerr.UnknownTopicOrPartition
	}
	if p.role != Leader && !(followerOK && p.role == Follower) {
		return kerr.NotLeaderForPartition
	}
	if b.cfg.KIP320 && currentEpoch >= 0 {
		switch {
		case currentEpoch < p.leaderEpoch:
			return kerr.FencedLeaderEpoch
		case currentEpoch > p.leaderEpoch:
			return kerr.UnknownLeaderEpoch
		}
	}
	return nil
}

func (b *Broker) readPartition(tp storage.TopicPartition, body *kmsg.FetchRequest, fp *kmsg.FetchRequestTopicPartition, follower, update bool, rp *kmsg.FetchResponseTopicPartition) *kerr.Error {
	p := b.partition(tp)
	current := int32(-1)
	if body.Version >= 9 {
		current = fp.CurrentLeaderEpoch
	}
	if err := b.checkReplica(p, current, followerRead(body)); err != nil {
		return err
	}
	if p.role == Follower {
		return b.readAsFollower(p, body, fp, rp)
	}
	if !follower && body.Version >= 11 {
		if id := b.preferredReadReplica(p, body.Rack, fp.FetchOffset); id >= 0 {
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = p.hw, p.LastStableOffset(), p.log.LogStartOffset()
			rp.PreferredReadReplica = id
			b.logp("preferred-read-replica", p, sim.I("replica", int64(id)), sim.S("rack", body.Rack), sim.I("offset", fp.FetchOffset))
			return nil
		}
	}
	var r *remoteReplica
	if follower {
		if r = p.remote(body.ReplicaID); r == nil {
			return kerr.NotLeaderForPartition // not an assigned replica
		}
	}
	hwBefore := p.hw
	lso := p.lsoAt(hwBefore)
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = hwBefore, lso, p.log.LogStartOffset()
	leo := p.LogEndOffset()
	if follower && body.Version >= 12 && fp.LastFetchedEpoch >= 0 {
		if diverged, err := b.checkDivergence(p, fp, rp); err != nil || diverged {
			return err
		}
	}
	if fp.FetchOffset < p.log.LogStartOffset() || fp.FetchOffset > leo {
		return kerr.OffsetOutOfRange
	}
	maxOffset := hwBefore
	committed := readCommitted(body)
	switch {
	case follower:
		maxOffset = leo
	case committed:
		maxOffset = lso
	case b.cfg.Mutants.On(mutant.FetchBeyondHW):
		maxOffset = leo // NOT Kafka (mutant fetch-beyond-hw): uncommitted reads
	}
	data, err := p.log.Read(fp.FetchOffset, int(fp.PartitionMaxBytes), maxOffset)
	if err != nil {
		if errors.Is(err, storage.ErrOffsetOutOfRange) {
			return kerr.OffsetOutOfRange
		}
		panic(err)
	}
	rp.RecordBatches = data
	if committed {
		rp.AbortedTransactions = abortedTxns(p, fp.FetchOffset, data)
	}
	if follower && update {
		p.updateFollowerFetchState(r, fp.FetchOffset, b.ctx.Now())
		r.logStart = fp.LogStartOffset
		if len(b.waits) > 0 {
			b.completeAdminWaits()
		}
		b.maybeExpandISR(p, r)
		if p.maybeIncrementHW() {
			b.hwIncremented(p)
		}
	}
	return nil
}

// checkDivergence is Partition.readRecords's check of a follower's Fetch
// v12+ (KIP-595 for replication, KAFKA-10554): the end offset of the
// follower's LastFetchedEpoch in the leader's epoch cache. An unknown epoch
// or a fetch offset below the log start is OFFSET_OUT_OF_RANGE; an end
// below the fetch offset, or a largest epoch <= LastFetchedEpoch smaller
// than it, answers DivergingEpoch with no records, and the follower's
// fetch state is not updated (ReplicaManager.updateFollowerFetchState skips
// a diverging read).
func (b *Broker) checkDivergence(p *Partition, fp *kmsg.FetchRequestTopicPartition, rp *kmsg.FetchResponseTopicPartition) (bool, *kerr.Error) {
	epoch, end := b.endOffsetForEpoch(p, fp.LastFetchedEpoch)
	if epoch < 0 || end < 0 || fp.FetchOffset < p.log.LogStartOffset() {
		return false, kerr.OffsetOutOfRange
	}
	if end >= fp.FetchOffset && epoch >= fp.LastFetchedEpoch {
		return false, nil
	}
	rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = epoch, end
	b.logp("diverging-epoch-answer", p, sim.I("last-fetched-epoch", int64(fp.LastFetchedEpoch)), sim.I("fetch-offset", fp.FetchOffset),
		sim.I("epoch", int64(epoch)), sim.I("end-offset", end))
	return true, nil
}

// followerRead reports whether a fetch may be served by a follower: a
// consumer's Fetch v11+ that names its rack (KIP-392; see the file comment
// for why the rack is required here).
func followerRead(body *kmsg.FetchRequest) bool {
	return body.ReplicaID < 0 && body.Version >= 11 && body.Rack != ""
}

// readAsFollower serves a consumer from a follower replica, up to the
// follower's own HW (Partition.readRecords with fetchOnlyFromLeader=false).
func (b *Broker) readAsFollower(p *Partition, body *kmsg.FetchRequest, fp *kmsg.FetchRequestTopicPartition, rp *kmsg.FetchResponseTopicPartition) *kerr.Error {
	lso := p.LastStableOffset()
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = p.hw, lso, p.log.LogStartOffset()
	if fp.FetchOffset < p.log.LogStartOffset() || fp.FetchOffset > p.LogEndOffset() {
		return kerr.OffsetOutOfRange
	}
	maxOffset := p.hw
	if readCommitted(body) {
		maxOffset = lso
	}
	data, err := p.log.Read(fp.FetchOffset, int(fp.PartitionMaxBytes), maxOffset)
	if err != nil {
		if errors.Is(err, storage.ErrOffsetOutOfRange) {
			return kerr.OffsetOutOfRange
		}
		panic(err)
	}
	rp.RecordBatches = data
	if readCommitted(body) {
		rp.AbortedTransactions = abortedTxns(p, fp.FetchOffset, data)
	}
	return nil
}

// readCommitted reports whether a fetch is a consumer's read_committed one
// (isolation_level 1, Fetch v4+).
func readCommitted(body *kmsg.FetchRequest) bool {
	return body.ReplicaID < 0 && body.Version >= 4 && body.IsolationLevel == 1
}

// abortedTxns returns the aborted transactions overlapping the batches
// data read from fetchOffset on (nil when nothing was read), in the order
// of their markers.
func abortedTxns(p *Partition, fetchOffset int64, data []byte) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	if len(data) == 0 {
		return nil
	}
	upper := fetchOffset
	for rest := data; len(rest) > 0; {
		h, err := storage.ParseBatchInfo(rest)
		if err != nil {
			panic(err) // the log returned it
		}
		upper = h.LastOffset + 1
		rest = rest[h.Size:]
	}
	out := []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
	for _, a := range p.log.CollectAbortedTxns(fetchOffset, upper) {
		t := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		t.ProducerID, t.FirstOffset = a.ProducerID, a.FirstOffset
		out = append(out, t)
	}
	return out
}

// preferredReadReplica is RackAwareReplicaSelector on the leader: the
// replica a consumer in rack should read p from at fetchOffset, or -1 for
// the leader itself (no selector, no rack, the leader in that rack, or no
// in-sync live replica there that has the offset).
func (b *Broker) preferredReadReplica(p *Partition, rack string, fetchOffset int64) int32 {
	if !b.cfg.RackAwareReplicaSelector || rack == "" || b.cfg.Rack == rack {
		return -1
	}
	now := b.ctx.Now()
	best := (*remoteReplica)(nil)
	for _, r := range p.remotes { // sorted by id: ties go to the highest id
		if !p.inISR(r.id) || r.leo < 0 || r.leo < fetchOffset || b.liveRack(r.id) != rack {
			continue
		}
		if best == nil || r.leo > best.leo ||
			(r.leo == best.leo && now.Sub(r.lastCaughtUp) <= now.Sub(best.lastCaughtUp)) {
			best = r
		}
	}
	if best == nil {
		return -1
	}
	return best.id
}

// liveRack returns the rack of a live broker in the metadata cache, "" if
// it has none or is not live.
func (b *Broker) liveRack(id int32) string {
	for _, bi := range b.metadata.brokers {
		if bi.id == id && bi.rack != nil {
			return *bi.rack
		}
	}
	return ""
}

// noRecords is a partition's records when there are none: Kafka writes
// MemoryRecords.EMPTY, a zero length, never a null one (librdkafka rejects
// a MessageSetSize of -1). Zero-length, so sharing it is safe.
var noRecords = []byte{}
