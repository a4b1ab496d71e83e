package server

// This file serves ShareFetch (api key 78, v1-v2) and ShareAcknowledge
// (79, v1-v2) of share groups (KIP-932; v2 is Kafka 4.2's KIP-1206
// ShareAcquireMode and KIP-1222 renew acknowledgements) on the partition
// leaders.
//
// A ShareFetch first moves the member's share session (share/session.go:
// epoch 0 opens one, and may carry no acknowledgements, INVALID_REQUEST;
// -1 closes it after its acknowledgements, releasing what the member
// still holds on the session's partitions; other epochs must be the
// session's), then applies its piggybacked acknowledgements (their
// outcome in AcknowledgeErrorCode), then, unless IsRenewAck, acquires
// records on every partition of the session: available records first,
// then new ones, read from the log below the high watermark (the LSO
// under the group's share.isolation.level=read_committed), at most
// MaxRecords in all (a batch may pass it unless ShareAcquireMode is 1,
// record-limit) and MaxBytes; under read_committed the batches of aborted
// transactions are archived, not acquired. A fetch that acquired nothing
// waits up to MaxWaitMillis for records to become available (a produce
// committed, a release, an expired lock).
//
// ShareAcknowledge applies acknowledgements at the session's epoch (0 is
// INVALID_SHARE_SESSION_EPOCH, as Kafka answers it) and -1 closes the
// session. An acknowledgement of a record the member does not hold
// (never acquired, lock expired, another member's) is
// INVALID_RECORD_STATE for its partition, and none of that partition's
// acknowledgements apply (SharePartition rolls the batch back).
//
// Simplifications: the response carries the whole batches read (the
// client keeps the acquired offsets only), with no NodeEndpoints: a
// NOT_LEADER_OR_FOLLOWER partition names the leader in CurrentLeader
// only.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// defaultShareMaxRecords is the records a ShareFetch with MaxRecords 0
// acquires (Kafka's ShareFetch default, KIP-1206).
const defaultShareMaxRecords = 500

// shareWait is a ShareFetch that acquired nothing and waits.
type shareWait struct {
	from  sim.NodeID
	req   *wire.Request
	body  *kmsg.ShareFetchRequest
	resp  *kmsg.ShareFetchResponse
	key   share.SessionKey
	timer sim.TimerID
}

// topicName returns the name of topic id in the metadata image.
func (b *Broker) topicName(id [16]byte) (string, bool) {
	if b.kraft == nil || b.kraft.meta == nil || b.kraft.meta.img == nil {
		return "", false
	}
	return b.kraft.meta.img.TopicName(id)
}

// shareLeader returns tp's partition if this broker leads it, else the
// error and the leader (id, epoch) its metadata knows.
func (b *Broker) shareLeader(id [16]byte, partition int32) (*Partition, *kerr.Error, int32, int32) {
	name, ok := b.topicName(id)
	if !ok {
		return nil, kerr.UnknownTopicID, -1, -1
	}
	tp := storage.TopicPartition{Topic: name, Partition: partition}
	p := b.partition(tp)
	if p != nil && p.role == Leader {
		return p, nil, -1, -1
	}
	ps, ok := b.metadata.partitions[tp]
	if !ok {
		return nil, kerr.UnknownTopicOrPartition, -1, -1
	}
	return nil, kerr.NotLeaderForPartition, ps.Leader, ps.LeaderEpoch
}

// shareAck applies one partition's acknowledgements for member and, when
// they applied, returns the share-partition whose state must be written
// before they are answered.
func (b *Broker) shareAck(group, member string, id [16]byte, partition int32, batches []share.AckBatch, renewOK bool) (*kerr.Error, int32, int32, *shareAckWrite) {
	p, err, leader, epoch := b.shareLeader(id, partition)
	if err != nil {
		return err, leader, epoch, nil
	}
	if !renewOK {
		for _, bt := range batches {
			for _, t := range bt.Types {
				if t == int8(share.Renew) {
					return kerr.InvalidRequest, -1, -1, nil
				}
			}
		}
	}
	sp := b.sharePartition(group, p, false)
	key := sharePartKey{group: group, tp: p.tp}
	if sp == nil || !b.share.meta[key].loaded {
		return kerr.InvalidRecordState, -1, -1, nil
	}
	undo, err := sp.AcknowledgeUndo(b.ctx.Now(), member, batches)
	b.logp("share-acknowledged", p, sim.S("group", group), sim.S("member", member), sim.S("acks", fmtAcks(batches)),
		sim.S("error", errText(err)), sim.I("spso", sp.StartOffset()))
	if err != nil {
		return err, -1, -1, nil
	}
	return nil, -1, -1, &shareAckWrite{key: key, sp: sp, undo: undo}
}

// shareAckWrite is an applied acknowledgement waiting for its write: a
// failed write takes it back (share.Partition.Rollback).
type shareAckWrite struct {
	key  sharePartKey
	sp   *share.Partition
	undo share.Undo
}

// awaitShareWrites writes the state of each of keys and calls set with
// each failed write's error (after taking its acknowledgements back),
// then done once all are decided.
func (b *Broker) awaitShareWrites(keys []*shareAckWrite, set func(i int, err *kerr.Error), done func()) {
	pending := 0
	for _, k := range keys {
		if k != nil {
			pending++
		}
	}
	if pending == 0 {
		done()
		return
	}
	for i, k := range keys {
		if k == nil {
			continue
		}
		b.persistShare(k.key, func(err *kerr.Error) {
			if err != nil {
				if b.share.parts[k.key] == k.sp {
					n := k.sp.Rollback(k.undo)
					b.ctx.Log("share-ack-rolled-back", sim.S("group", k.key.group), sim.S("partition", k.key.tp.String()),
						sim.I("records", int64(n)), sim.S("error", errText(err)), sim.I("spso", k.sp.StartOffset()))
					b.armShareLocks()
				}
				set(i, err)
			}
			if pending--; pending == 0 {
				done()
			}
		})
	}
}

func errText(err *kerr.Error) string {
	if err == nil {
		return "NONE"
	}
	return err.Message
}

func fmtAcks(batches []share.AckBatch) string {
	s := ""
	for _, bt := range batches {
		if s != "" {
			s += ","
		}
		s += itoa(bt.First) + "-" + itoa(bt.Last) + ":"
		for i, t := range bt.Types {
			if i > 0 {
				s += "/"
			}
			s += itoa(int64(t))
		}
	}
	return s
}

func fetchAcks(bs []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) []share.AckBatch {
	out := make([]share.AckBatch, len(bs))
	for i, bt := range bs {
		out[i] = share.AckBatch{First: bt.FirstOffset, Last: bt.LastOffset, Types: bt.AcknowledgeTypes}
	}
	return out
}

// releaseSession releases what member holds on the partitions of ss.
func (b *Broker) releaseSession(ss *share.Session) {
	for _, sp := range ss.Partitions {
		p, err, _, _ := b.shareLeader(sp.TopicID, sp.Partition)
		if err != nil {
			continue
		}
		if part := b.sharePartition(ss.Key.Group, p, false); part != nil {
			if n := part.ReleaseMember(ss.Key.Member); n > 0 {
				b.logp("share-released", p, sim.S("group", ss.Key.Group), sim.S("member", ss.Key.Member), sim.I("records", int64(n)),
					sim.I("spso", part.StartOffset()))
				b.persistShare(sharePartKey{group: ss.Key.Group, tp: p.tp}, nil)
			}
		}
	}
}

// fetchPart returns resp's entry for (id, partition), adding it.
func fetchPart(resp *kmsg.ShareFetchResponse, id [16]byte, partition int32) *kmsg.ShareFetchResponseTopicPartition {
	ti := -1
	for i := range resp.Topics {
		if resp.Topics[i].TopicID == id {
			ti = i
			break
		}
	}
	if ti < 0 {
		resp.Topics = append(resp.Topics, kmsg.ShareFetchResponseTopic{TopicID: id})
		ti = len(resp.Topics) - 1
	}
	t := &resp.Topics[ti]
	for i := range t.Partitions {
		if t.Partitions[i].Partition == partition {
			return &t.Partitions[i]
		}
	}
	rp := kmsg.NewShareFetchResponseTopicPartition()
	rp.Partition = partition
	rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
	t.Partitions = append(t.Partitions, rp)
	return &t.Partitions[len(t.Partitions)-1]
}

func (b *Broker) handleShareFetch(from sim.NodeID, req *wire.Request, body *kmsg.ShareFetchRequest) {
	resp := body.ResponseKind().(*kmsg.ShareFetchResponse)
	fail := func(err *kerr.Error) {
		resp.ErrorCode = err.Code
		b.respond(from, req, resp)
	}
	switch {
	case b.share.coord == nil:
		fail(kerr.UnsupportedVersion)
		return
	case body.GroupID == nil || *body.GroupID == "" || body.MemberID == nil || *body.MemberID == "":
		fail(kerr.InvalidRequest)
		return
	}
	key := share.SessionKey{Group: *body.GroupID, Member: *body.MemberID}
	resp.AcquisitionLockTimeoutMillis = int32(b.sharePartitionConfig(key.Group).LockDuration.Milliseconds())
	var added, forgotten []share.SessionPartition
	hasAcks := false
	for _, t := range body.Topics {
		for _, p := range t.Partitions {
			added = append(added, share.SessionPartition{TopicID: t.TopicID, Partition: p.Partition})
			hasAcks = hasAcks || len(p.AcknowledgementBatches) > 0
		}
	}
	for _, t := range body.ForgottenTopicsData {
		for _, p := range t.Partitions {
			forgotten = append(forgotten, share.SessionPartition{TopicID: t.TopicID, Partition: p})
		}
	}
	var ss *share.Session
	var err *kerr.Error
	switch {
	case body.ShareSessionEpoch == 0 && hasAcks:
		fail(kerr.InvalidRequest)
		return
	case body.ShareSessionEpoch == 0:
		ss, err = b.share.sessions.Open(key, added)
	case body.ShareSessionEpoch == -1:
		ss, err = b.share.sessions.Check(key, b.sessionEpoch(key))
	default:
		ss, err = b.share.sessions.Update(key, body.ShareSessionEpoch, added, forgotten)
	}
	if err != nil {
		fail(err)
		return
	}
	released := false
	var writes []*shareAckWrite
	var acked []share.SessionPartition
	for _, t := range body.Topics {
		for _, p := range t.Partitions {
			if len(p.AcknowledgementBatches) == 0 {
				continue
			}
			aerr, leader, epoch, w := b.shareAck(key.Group, key.Member, t.TopicID, p.Partition, fetchAcks(p.AcknowledgementBatches), body.Version >= 2 && body.IsRenewAck)
			rp := fetchPart(resp, t.TopicID, p.Partition)
			rp.AcknowledgeErrorCode = errCode(aerr)
			if aerr != nil && leader >= 0 {
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = leader, epoch
			}
			writes, acked = append(writes, w), append(acked, share.SessionPartition{TopicID: t.TopicID, Partition: p.Partition})
			released = true
		}
	}
	b.awaitShareWrites(writes, func(i int, err *kerr.Error) {
		fetchPart(resp, acked[i].TopicID, acked[i].Partition).AcknowledgeErrorCode = err.Code
	}, func() { b.finishShareFetch(from, req, body, resp, ss, key, added, released) })
}

// finishShareFetch goes on with a ShareFetch once its acknowledgements
// are persisted: it closes the session, or acquires records (or waits).
func (b *Broker) finishShareFetch(from sim.NodeID, req *wire.Request, body *kmsg.ShareFetchRequest, resp *kmsg.ShareFetchResponse,
	ss *share.Session, key share.SessionKey, added []share.SessionPartition, released bool) {
	if body.ShareSessionEpoch == -1 {
		if b.share.sessions.Get(key) == ss { // not replaced while the acknowledgements were written
			b.releaseSession(ss)
			b.share.sessions.Close(key)
			b.ctx.Log("share-session-closed", sim.S("group", key.Group), sim.S("member", key.Member))
		}
		b.respond(from, req, resp)
		b.afterShareRelease()
		return
	}
	if body.ShareSessionEpoch == 0 {
		b.ctx.Log("share-session-opened", sim.S("group", key.Group), sim.S("member", key.Member), sim.I("partitions", int64(len(ss.Partitions))))
		for _, sp := range added {
			fetchPart(resp, sp.TopicID, sp.Partition)
		}
	}
	if released {
		b.afterShareRelease()
	}
	if body.Version >= 2 && body.IsRenewAck {
		b.respond(from, req, resp)
		return
	}
	if b.share.sessions.Get(key) != ss {
		b.respond(from, req, resp) // the session was replaced while the acknowledgements were written
		return
	}
	if b.acquireShare(ss, body, resp) || body.MaxWaitMillis <= 0 {
		b.respond(from, req, resp)
		b.armShareLocks()
		return
	}
	w := &shareWait{from: from, req: req, body: body, resp: resp, key: key}
	w.timer = b.ctx.SetTimer(sim.Ms(int64(body.MaxWaitMillis)), timerShareWait)
	b.share.waits = append(b.share.waits, w)
}

// sessionEpoch returns the epoch key's session expects (0: none), so that
// a close (-1) is checked for existence only.
func (b *Broker) sessionEpoch(key share.SessionKey) int32 {
	if ss := b.share.sessions.Get(key); ss != nil {
		return ss.Epoch
	}
	return 0
}

// acquireShare acquires records for the session's member on each of its
// partitions into resp and reports whether it acquired any (or answered
// an error).
func (b *Broker) acquireShare(ss *share.Session, body *kmsg.ShareFetchRequest, resp *kmsg.ShareFetchResponse) bool {
	maxRecords := int(body.MaxRecords)
	if maxRecords <= 0 {
		maxRecords = defaultShareMaxRecords
	}
	maxBytes := int(body.MaxBytes)
	if maxBytes <= 0 {
		maxBytes = 1 << 31
	}
	exact := body.Version >= 2 && body.ShareAcquireMode == 1
	readCommitted := b.groupConfig(ss.Key.Group, share.GroupIsolationLevel) == "read_committed"
	partMax := map[share.SessionPartition]int32{}
	for _, t := range body.Topics {
		for _, p := range t.Partitions {
			partMax[share.SessionPartition{TopicID: t.TopicID, Partition: p.Partition}] = p.PartitionMaxBytes
		}
	}
	got := false
	for _, s := range ss.Partitions {
		p, err, leader, epoch := b.shareLeader(s.TopicID, s.Partition)
		if err != nil {
			rp := fetchPart(resp, s.TopicID, s.Partition)
			rp.ErrorCode = err.Code
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = leader, epoch
			got = true
			continue
		}
		if maxRecords <= 0 || maxBytes <= 0 {
			continue
		}
		sp := b.sharePartition(ss.Key.Group, p, true)
		pk := sharePartKey{group: ss.Key.Group, tp: p.tp}
		if m := b.share.meta[pk]; m == nil || !m.loaded {
			continue // reading its state (share_persist.go)
		}
		sp.SetConfig(b.sharePartitionConfig(ss.Key.Group))
		if ls := p.log.LogStartOffset(); sp.StartOffset() < ls {
			b.logp("share-partition-reset", p, sim.S("group", ss.Key.Group), sim.I("from", sp.StartOffset()), sim.I("to", ls), sim.S("why", "log-start"))
			sp.MoveStart(ls)
			b.persistShare(pk, nil)
		}
		maxOffset := p.hw
		if readCommitted {
			maxOffset = p.lsoAt(p.hw)
		}
		from := sp.FirstAvailable()
		if from >= maxOffset {
			continue
		}
		limit := maxBytes
		if m := int(partMax[s]); m > 0 && m < limit {
			limit = m
		}
		data, rerr := p.log.Read(from, limit, maxOffset)
		if rerr != nil || len(data) == 0 {
			continue
		}
		var aborted []storage.AbortedTxn
		if readCommitted {
			aborted = p.log.CollectAbortedTxns(from, maxOffset)
		}
		spans := shareSpans(data, from, aborted)
		acq := sp.Acquire(b.ctx.Now(), ss.Key.Member, spans, maxRecords, exact)
		if len(acq) == 0 {
			continue
		}
		rp := fetchPart(resp, s.TopicID, s.Partition)
		rp.Records = trimBatches(data, acq[len(acq)-1].LastOffset)
		n := 0
		desc := ""
		for _, a := range acq {
			rp.AcquiredRecords = append(rp.AcquiredRecords, kmsg.ShareFetchResponseTopicPartitionAcquiredRecord{
				FirstOffset: a.FirstOffset, LastOffset: a.LastOffset, DeliveryCount: a.DeliveryCount})
			n += int(a.LastOffset - a.FirstOffset + 1)
			if desc != "" {
				desc += ","
			}
			desc += itoa(a.FirstOffset) + "-" + itoa(a.LastOffset) + "@" + itoa(int64(a.DeliveryCount))
		}
		maxRecords -= n
		maxBytes -= len(rp.Records)
		got = true
		b.logp("share-acquired", p, sim.S("group", ss.Key.Group), sim.S("member", ss.Key.Member), sim.S("records", desc),
			sim.I("spso", sp.StartOffset()), sim.I("speo", sp.EndOffset()))
	}
	return got
}

// trimBatches returns the leading batches of data up to the one holding
// last.
func trimBatches(data []byte, last int64) []byte {
	n := 0
	for n < len(data) {
		info, err := storage.ParseBatchInfo(data[n:])
		if err != nil || info.Size <= 0 {
			return data
		}
		n += int(info.Size)
		if info.LastOffset >= last {
			break
		}
	}
	return data[:n]
}

// afterShareRelease answers waiting fetches that may now acquire, and
// re-arms the lock timer.
func (b *Broker) afterShareRelease() {
	b.armShareLocks()
	b.completeShareFetches()
}

// completeShareFetches answers the waiting share fetches that now acquire
// records (called when records commit or become available again).
func (b *Broker) completeShareFetches() {
	if len(b.share.waits) == 0 {
		return
	}
	kept := b.share.waits[:0]
	var done []*shareWait
	for _, w := range b.share.waits {
		ss := b.share.sessions.Get(w.key)
		if ss == nil || b.acquireShare(ss, w.body, w.resp) {
			done = append(done, w)
		} else {
			kept = append(kept, w)
		}
	}
	clear(b.share.waits[len(kept):])
	b.share.waits = kept
	for _, w := range done {
		b.ctx.CancelTimer(w.timer)
		b.respond(w.from, w.req, w.resp)
	}
	if len(done) > 0 {
		b.armShareLocks()
	}
}

// expireShareWait answers the waiting fetch whose timer fired.
func (b *Broker) expireShareWait(id sim.TimerID) {
	for i, w := range b.share.waits {
		if w.timer == id {
			b.share.waits = append(b.share.waits[:i], b.share.waits[i+1:]...)
			if ss := b.share.sessions.Get(w.key); ss != nil {
				b.acquireShare(ss, w.body, w.resp)
				b.armShareLocks()
			}
			b.respond(w.from, w.req, w.resp)
			return
		}
	}
}

func (b *Broker) handleShareAcknowledge(from sim.NodeID, req *wire.Request, body *kmsg.ShareAcknowledgeRequest) {
	resp := body.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	fail := func(err *kerr.Error) {
		resp.ErrorCode = err.Code
		b.respond(from, req, resp)
	}
	switch {
	case b.share.coord == nil:
		fail(kerr.UnsupportedVersion)
		return
	case body.GroupID == nil || *body.GroupID == "" || body.MemberID == nil || *body.MemberID == "":
		fail(kerr.InvalidRequest)
		return
	case body.ShareSessionEpoch == 0:
		fail(kerr.InvalidShareSessionEpoch)
		return
	}
	key := share.SessionKey{Group: *body.GroupID, Member: *body.MemberID}
	epoch := body.ShareSessionEpoch
	if epoch == -1 {
		epoch = b.sessionEpoch(key)
	}
	ss, err := b.share.sessions.Check(key, epoch)
	if err != nil {
		fail(err)
		return
	}
	var writes []*shareAckWrite
	var at [][2]int
	for ti, t := range body.Topics {
		rt := kmsg.ShareAcknowledgeResponseTopic{TopicID: t.TopicID}
		for pi, p := range t.Partitions {
			bs := make([]share.AckBatch, len(p.AcknowledgementBatches))
			for i, bt := range p.AcknowledgementBatches {
				bs[i] = share.AckBatch{First: bt.FirstOffset, Last: bt.LastOffset, Types: bt.AcknowledgeTypes}
			}
			aerr, leader, lepoch, w := b.shareAck(key.Group, key.Member, t.TopicID, p.Partition, bs, body.Version >= 2 && body.IsRenewAck)
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errCode(aerr)
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = leader, lepoch
			rt.Partitions = append(rt.Partitions, rp)
			writes, at = append(writes, w), append(at, [2]int{ti, pi})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if body.ShareSessionEpoch == -1 {
		b.releaseSession(ss)
		b.share.sessions.Close(key)
		b.ctx.Log("share-session-closed", sim.S("group", key.Group), sim.S("member", key.Member))
	} else {
		ss.Bump()
	}
	b.afterShareRelease()
	b.awaitShareWrites(writes, func(i int, err *kerr.Error) {
		resp.Topics[at[i][0]].Partitions[at[i][1]].ErrorCode = err.Code
	}, func() { b.respond(from, req, resp) })
}

// shareSpans returns the offset ranges of the batches in data from from
// on, leaving out the batches of aborted transactions (read_committed:
// they fall between spans and are archived, as Kafka's SharePartition
// archives aborted records).
func shareSpans(data []byte, from int64, aborted []storage.AbortedTxn) []share.Span {
	var spans []share.Span
	for rest := data; len(rest) > 0; {
		info, err := storage.ParseBatchInfo(rest)
		if err != nil || info.Size <= 0 || int(info.Size) > len(rest) {
			break
		}
		rest = rest[info.Size:]
		if info.IsTransactional() && !info.IsControl() && slices.ContainsFunc(aborted, func(a storage.AbortedTxn) bool {
			return a.ProducerID == info.ProducerID && a.FirstOffset <= info.BaseOffset && info.LastOffset < a.LastOffset
		}) {
			continue
		}
		spans = append(spans, share.Span{First: max(info.BaseOffset, from), Last: info.LastOffset})
	}
	return spans
}
