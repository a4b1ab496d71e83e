package client

// This file is the share consumer's fetching and acknowledging (Kafka
// 4.2's ShareConsumeRequestManager and ShareSessionHandler): one share
// session per partition leader, a ShareFetch (API 78, v1) in flight to
// each leader that leads an assigned partition, carrying the
// acknowledgements queued for its partitions (piggybacked), and, at
// Close, a ShareAcknowledge (API 79, v1) with ShareSessionEpoch -1 that
// carries the last acknowledgements and closes the session, releasing
// what the member still holds.
//
// Share session epochs: 0 opens a session (it may carry no
// acknowledgements, so they wait for the next request), then 1, 2, ...
// after each answered request; SHARE_SESSION_NOT_FOUND,
// INVALID_SHARE_SESSION_EPOCH, a lost answer or a lost connection start
// over at 0. Acknowledgements sent in a request without an answer have an
// unknown outcome; Kafka's client does not resend them (their records'
// locks expire and the broker delivers them again).
//
// Simplified vs Kafka: every request lists all the leader's assigned
// partitions (Kafka sends the session's changes only); no
// commitSync/commitAsync (acknowledgements go out with the next fetch);
// gaps in acquired ranges (compacted or control offsets) are not
// acknowledged as GAP; no fetch while records wait in the buffer except to
// carry acknowledgements; no ShareAcquireMode or RENEW (ShareFetch v2,
// KIP-1222).

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The acknowledge types (Kafka's AcknowledgeType).
const (
	AckGap     int8 = 0
	AckAccept  int8 = 1
	AckRelease int8 = 2
	AckReject  int8 = 3
)

// pendingAck is one record's acknowledgement not yet sent.
type pendingAck struct {
	tp     TopicPartition
	offset int64
	typ    int8
}

// shareSession is the member's share session with one leader.
type shareSession struct {
	broker   int32
	epoch    int32 // the ShareSessionEpoch of the next request: 0 opens one
	inflight bool
	parts    []TopicPartition // in the session, sorted
}

// queueAck queues r's acknowledgement for the next request to its leader.
func (s *ShareConsumer) queueAck(r ShareRecord, t int8) {
	s.acks = append(s.acks, pendingAck{tp: r.TopicPartition(), offset: r.Offset, typ: t})
}

// session returns the session with broker b, creating it.
func (s *ShareConsumer) session(b int32) *shareSession {
	i, ok := slices.BinarySearchFunc(s.sessions, b, func(x *shareSession, b int32) int { return int(x.broker - b) })
	if !ok {
		s.sessions = slices.Insert(s.sessions, i, &shareSession{broker: b})
	}
	return s.sessions[i]
}

// sendFetches sends a ShareFetch to each leader of an assigned partition
// (or of a partition with acknowledgements waiting) with none in flight.
func (s *ShareConsumer) sendFetches(ctx *sim.Context) {
	var brokers []int32
	fetch := map[int32][]TopicPartition{}
	for _, tp := range s.assigned {
		l := s.net.meta.leader(tp.Topic, tp.Partition)
		if l < 0 {
			s.net.meta.needUpdate = true
			continue
		}
		if !slices.Contains(brokers, l) {
			brokers = append(brokers, l)
		}
		fetch[l] = append(fetch[l], tp)
	}
	for _, a := range s.acks {
		if l := s.net.meta.leader(a.tp.Topic, a.tp.Partition); l >= 0 && !slices.Contains(brokers, l) {
			brokers = append(brokers, l)
		}
	}
	slices.Sort(brokers)
	for _, b := range brokers {
		sess := s.session(b)
		if sess.inflight {
			continue
		}
		acks := s.takeAcks(b, sess.epoch > 0)
		if len(acks) == 0 && (len(s.buffered) > 0 || len(fetch[b]) == 0) {
			continue
		}
		s.shareFetch(ctx, sess, fetch[b], acks)
	}
}

// takeAcks removes and returns the acknowledgements for partitions led by
// b (none when the session is not open: a request at epoch 0 may not carry
// them).
func (s *ShareConsumer) takeAcks(b int32, open bool) []pendingAck {
	if !open {
		return nil
	}
	var out []pendingAck
	s.acks = slices.DeleteFunc(s.acks, func(a pendingAck) bool {
		if s.net.meta.leader(a.tp.Topic, a.tp.Partition) == b {
			out = append(out, a)
			return true
		}
		return false
	})
	return out
}

// ackBatch is one acknowledgement batch: a range of offsets of one type.
type ackBatch struct {
	first, last int64
	typ         int8
}

// ackGroup is the acknowledgements of one partition, as batches and as
// offsets by type (what the hook reports).
type ackGroup struct {
	tp      TopicPartition
	batches []ackBatch
	byType  [4][]int64
	tokens  [4]any // OnAckSent's, by type
}

// groupAcks groups acks by partition (sorted) into batches of consecutive
// offsets of one type.
func groupAcks(acks []pendingAck) []ackGroup {
	acks = slices.Clone(acks)
	slices.SortStableFunc(acks, func(a, b pendingAck) int {
		if c := compareTP(a.tp, b.tp); c != 0 {
			return c
		}
		return int(a.offset - b.offset)
	})
	var out []ackGroup
	for _, a := range acks {
		if n := len(out); n == 0 || out[n-1].tp != a.tp {
			out = append(out, ackGroup{tp: a.tp})
		}
		g := &out[len(out)-1]
		g.byType[a.typ] = append(g.byType[a.typ], a.offset)
		if n := len(g.batches); n > 0 && g.batches[n-1].typ == a.typ && g.batches[n-1].last+1 == a.offset {
			g.batches[n-1].last = a.offset
			continue
		}
		g.batches = append(g.batches, ackBatch{first: a.offset, last: a.offset, typ: a.typ})
	}
	return out
}

// ackSent tells the hook the acknowledgements of groups go out now.
func (s *ShareConsumer) ackSent(ctx *sim.Context, groups []ackGroup) {
	if s.Hooks.OnAckSent == nil {
		return
	}
	for i := range groups {
		for t, offs := range groups[i].byType {
			if len(offs) > 0 {
				groups[i].tokens[t] = s.Hooks.OnAckSent(ctx, groups[i].tp, int8(t), offs)
			}
		}
	}
}

// reportAcks tells the hook the outcome of a partition's acknowledgements.
func (s *ShareConsumer) reportAcks(ctx *sim.Context, sent sim.Time, g ackGroup, code int16, err error) {
	if code != 0 || err != nil {
		why := errString(err)
		if err == nil {
			why = kerr.ErrorForCode(code).Error()
		}
		ctx.Log("share-consumer-ack-failed", sim.S("client-id", s.cfg.Consumer.ClientID), sim.S("partition", g.tp.String()), sim.S("error", why))
	}
	if s.Hooks.OnAcknowledged == nil {
		return
	}
	for t, offs := range g.byType {
		if len(offs) > 0 {
			s.Hooks.OnAcknowledged(ctx, g.tokens[t], sent, g.tp, int8(t), offs, code, err)
		}
	}
}

// shareFetch sends one ShareFetch to sess's leader.
func (s *ShareConsumer) shareFetch(ctx *sim.Context, sess *shareSession, parts []TopicPartition, acks []pendingAck) {
	req := kmsg.NewPtrShareFetchRequest()
	group, member := s.cfg.Consumer.GroupID, s.memberID
	req.Version, req.GroupID, req.MemberID, req.ShareSessionEpoch = 1, &group, &member, sess.epoch
	req.MaxWaitMillis = int32(s.cfg.Consumer.FetchMaxWait / sim.Millisecond)
	req.MinBytes, req.MaxRecords, req.BatchSize = 1, int32(s.cfg.Consumer.MaxPollRecords), int32(s.cfg.Consumer.MaxPollRecords)
	groups := groupAcks(acks)
	s.ackSent(ctx, groups)
	add := func(tp TopicPartition) *kmsg.ShareFetchRequestTopicPartition {
		id := s.net.meta.topic(tp.Topic).id
		i := slices.IndexFunc(req.Topics, func(t kmsg.ShareFetchRequestTopic) bool { return t.TopicID == id })
		if i < 0 {
			req.Topics = append(req.Topics, kmsg.ShareFetchRequestTopic{TopicID: id})
			i = len(req.Topics) - 1
		}
		t := &req.Topics[i]
		for j := range t.Partitions {
			if t.Partitions[j].Partition == tp.Partition {
				return &t.Partitions[j]
			}
		}
		t.Partitions = append(t.Partitions, kmsg.ShareFetchRequestTopicPartition{Partition: tp.Partition, PartitionMaxBytes: int32(s.cfg.Consumer.MaxPartitionFetchBytes)})
		return &t.Partitions[len(t.Partitions)-1]
	}
	fetching := len(s.buffered) == 0
	if fetching {
		for _, tp := range parts {
			add(tp)
		}
	}
	for _, g := range groups {
		p := add(g.tp)
		for _, b := range g.batches {
			p.AcknowledgementBatches = append(p.AcknowledgementBatches, kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch{
				FirstOffset: b.first, LastOffset: b.last, AcknowledgeTypes: []int8{b.typ}})
		}
	}
	if sess.epoch > 0 && fetching {
		for _, tp := range sess.parts {
			if !slices.Contains(parts, tp) {
				id := s.net.meta.topic(tp.Topic).id
				req.ForgottenTopicsData = append(req.ForgottenTopicsData, kmsg.ShareFetchRequestForgottenTopicsData{TopicID: id, Partitions: []int32{tp.Partition}})
			}
		}
	}
	if fetching {
		sess.parts = slices.Clone(parts)
	}
	sess.inflight = true
	sent := ctx.Now()
	epoch := sess.epoch
	s.net.call(ctx, sess.broker, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
		sess.inflight = false
		r, _ := resp.(*kmsg.ShareFetchResponse)
		if err != nil || r == nil {
			sess.epoch = 0
			s.net.meta.needUpdate = true
			for _, g := range groups {
				s.reportAcks(ctx, sent, g, 0, errOr(err))
			}
			return
		}
		s.fetched(ctx, sess, epoch, sent, r, groups)
	})
}

func errOr(err error) error {
	if err == nil {
		return ErrRequestTimeout
	}
	return err
}

// nextEpoch is Kafka's ShareRequestMetadata.nextEpoch.
func nextEpoch(e int32) int32 {
	if e < 0 || e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// fetched applies a ShareFetch answer.
func (s *ShareConsumer) fetched(ctx *sim.Context, sess *shareSession, epoch int32, sent sim.Time, r *kmsg.ShareFetchResponse, groups []ackGroup) {
	if r.ErrorCode != 0 {
		ctx.Log("share-consumer-fetch-error", sim.S("client-id", s.cfg.Consumer.ClientID), sim.I("broker", int64(sess.broker)),
			sim.S("error", kerr.ErrorForCode(r.ErrorCode).Error()), sim.I("epoch", int64(epoch)))
		sess.epoch = 0
		for _, g := range groups {
			s.reportAcks(ctx, sent, g, r.ErrorCode, nil)
		}
		return
	}
	sess.epoch = nextEpoch(epoch)
	reported := make([]bool, len(groups))
	for _, t := range r.Topics {
		name, ok := s.net.topicName(t.TopicID)
		if !ok {
			continue
		}
		for _, p := range t.Partitions {
			tp := TopicPartition{Topic: name, Partition: p.Partition}
			if i := slices.IndexFunc(groups, func(g ackGroup) bool { return g.tp == tp }); i >= 0 && !reported[i] {
				reported[i] = true
				s.reportAcks(ctx, sent, groups[i], p.AcknowledgeErrorCode, nil)
			}
			if p.ErrorCode != 0 {
				s.net.meta.needUpdate = true
				continue
			}
			if !slices.Contains(s.answered, tp) && len(p.AcquiredRecords) == 0 && s.Hooks.OnAcquired != nil {
				// NB: the first answer, empty: the share-partition exists
				// from then on (share.auto.offset.reset=latest starts it at
				// the end of the log), and the history shows when.
				s.Hooks.OnAcquired(ctx, sent, sess.broker, tp, nil)
			}
			if !slices.Contains(s.answered, tp) {
				s.answered = append(s.answered, tp)
			}
			s.acquired(ctx, sent, sess.broker, tp, p)
		}
	}
	for i, g := range groups {
		if !reported[i] {
			s.reportAcks(ctx, sent, g, 0, ErrRequestTimeout) // not answered for: unknown
		}
	}
}

// acquired buffers the records a partition's answer acquired.
func (s *ShareConsumer) acquired(ctx *sim.Context, sent sim.Time, broker int32, tp TopicPartition, p kmsg.ShareFetchResponseTopicPartition) {
	if len(p.AcquiredRecords) == 0 {
		return
	}
	batches, err := storage.DecodeBatches(p.Records)
	if err != nil {
		ctx.Log("share-consumer-corrupt", sim.S("client-id", s.cfg.Consumer.ClientID), sim.S("partition", tp.String()), sim.S("error", err.Error()))
		return
	}
	var recs []ShareRecord
	for _, b := range batches {
		if b.Attributes&storage.ControlFlagMask != 0 {
			continue
		}
		for _, rec := range b.Records {
			for _, a := range p.AcquiredRecords {
				if rec.Offset >= a.FirstOffset && rec.Offset <= a.LastOffset {
					recs = append(recs, ShareRecord{Topic: tp.Topic, Partition: tp.Partition, Offset: rec.Offset,
						Key: rec.Key, Value: rec.Value, DeliveryCount: a.DeliveryCount})
					break
				}
			}
		}
	}
	if len(recs) == 0 {
		return
	}
	ctx.Log("share-consumer-acquired", sim.S("client-id", s.cfg.Consumer.ClientID), sim.S("partition", tp.String()),
		sim.I("first", recs[0].Offset), sim.I("records", int64(len(recs))))
	s.buffered = append(s.buffered, recs...)
	if s.Hooks.OnAcquired != nil {
		s.Hooks.OnAcquired(ctx, sent, broker, tp, recs)
	}
}

// closeSessions sends, to every leader with an open session, a
// ShareAcknowledge at epoch -1 with the acknowledgements for its
// partitions: it closes the session and releases what is still held.
func (s *ShareConsumer) closeSessions(ctx *sim.Context) {
	for _, sess := range s.sessions {
		if sess.epoch == 0 {
			continue
		}
		groups := groupAcks(s.takeAcks(sess.broker, true))
		s.ackSent(ctx, groups)
		req := kmsg.NewPtrShareAcknowledgeRequest()
		group, member := s.cfg.Consumer.GroupID, s.memberID
		req.Version, req.GroupID, req.MemberID, req.ShareSessionEpoch = 1, &group, &member, -1
		for _, g := range groups {
			id := s.net.meta.topic(g.tp.Topic).id
			i := slices.IndexFunc(req.Topics, func(t kmsg.ShareAcknowledgeRequestTopic) bool { return t.TopicID == id })
			if i < 0 {
				req.Topics = append(req.Topics, kmsg.ShareAcknowledgeRequestTopic{TopicID: id})
				i = len(req.Topics) - 1
			}
			p := kmsg.ShareAcknowledgeRequestTopicPartition{Partition: g.tp.Partition}
			for _, b := range g.batches {
				p.AcknowledgementBatches = append(p.AcknowledgementBatches, kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{
					FirstOffset: b.first, LastOffset: b.last, AcknowledgeTypes: []int8{b.typ}})
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		}
		sent := ctx.Now()
		s.net.call(ctx, sess.broker, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
			r, _ := resp.(*kmsg.ShareAcknowledgeResponse)
			for _, g := range groups {
				code, gerr := int16(0), errOr(err)
				if r != nil {
					gerr, code = ErrRequestTimeout, r.ErrorCode
					for _, t := range r.Topics {
						for _, p := range t.Partitions {
							if name, ok := s.net.topicName(t.TopicID); ok && name == g.tp.Topic && p.Partition == g.tp.Partition {
								gerr = nil
								if code == 0 {
									code = p.ErrorCode
								}
							}
						}
					}
					if r.ErrorCode != 0 {
						gerr = nil
					}
				}
				s.reportAcks(ctx, sent, g, code, gerr)
			}
		})
		sess.epoch = 0
	}
}
