package server

// This file is the follower side of replication: one fetcher per leader
// broker (Kafka's ReplicaFetcherThread), which first truncates each new
// partition the way the protocol version says and then fetches in a loop.
//
//   - hw (before 0.11): truncate to the local HW when becoming follower,
//     then fetch from the LEO. A fetch answered OFFSET_OUT_OF_RANGE because
//     the leader's log is shorter truncates to the leader's LEO when unclean
//     election is allowed, and otherwise halts the broker, as 0.10 did.
//   - kip101 (0.11 to 1.x): ask the leader, with OffsetsForLeaderEpoch v0,
//     for the end offset of the follower's latest epoch; truncate to it if
//     it is below the LEO; with no epoch information, fall back to the HW.
//   - kip279 (2.0 and later): OffsetsForLeaderEpoch v1+ answers (epoch,
//     end offset); when the follower lacks that epoch it truncates to the end
//     of its largest smaller epoch and asks again (AbstractFetcherThread.
//     getOffsetTruncationState).
//   - kip279 with truncation inside Fetch (2.7 and later, KAFKA-10554):
//     no OffsetsForLeaderEpoch before fetching. A follower with an epoch
//     cache starts fetching at its LEO at once; its Fetch v12 carries
//     LastFetchedEpoch, the epoch of its last record, and when the leader
//     answers DivergingEpoch (epoch, end offset) the follower truncates as
//     for an OffsetsForLeaderEpoch answer (the same KIP-279 walk-back:
//     to min(end offset, its own end offset for that epoch), or to the end
//     of its largest smaller epoch when it lacks that one) and fetches again
//     (AbstractFetcherThread.truncateOnFetchResponse). A follower without
//     epochs still truncates to its HW first, as Kafka's Truncating state
//     for a log without a latest epoch (partitionFetchState).
//
// Simplifications: one request in flight per fetcher (as Kafka's thread);
// no fetch sessions (every fetch is a full fetch, session epoch -1); errors
// back off for replica.fetch.backoff.ms on the whole fetcher. With
// truncation inside Fetch, LastFetchedEpoch is read from the epoch cache at
// each send (Kafka carries it in the fetch state, taken from the last
// appended batch or the cache after truncation: the same value), and
// Fetch stays at v12 (v13's topic ids are not modelled).

import (
	"fmt"
	"sort"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type fetchStatus uint8

const (
	truncating fetchStatus = iota // needs OffsetsForLeaderEpoch first
	fetching
	resetting // waits for the leader's LEO after OFFSET_OUT_OF_RANGE
)

// fetchPartition is one partition a fetcher serves.
type fetchPartition struct {
	tp     storage.TopicPartition
	status fetchStatus
	offset int64 // next offset to fetch (the LEO once truncated)
	epoch  int32 // the leader epoch the follower is in (KIP-320 CurrentLeaderEpoch)
}

// fetcher fetches every partition this broker follows from one leader.
type fetcher struct {
	leader   int32
	parts    []*fetchPartition // sorted by partition
	inflight bool
	gen      int // bumped when the partition set changes: older answers are ignored
	backoff  sim.TimerID
}

// reset abandons the request in flight: the partition set changed, as when
// Kafka rebuilds a fetcher's session. Its answer, if any, is ignored.
func (f *fetcher) reset() {
	f.gen++
	f.inflight = false
}

func (f *fetcher) find(tp storage.TopicPartition) (int, *fetchPartition) {
	for i, fp := range f.parts {
		if fp.tp == tp {
			return i, fp
		}
	}
	return -1, nil
}

// startTruncation hands p to the fetcher of its leader, first truncating as
// the protocol version says.
func (b *Broker) startTruncation(p *Partition) {
	fp := &fetchPartition{tp: p.tp, epoch: p.leaderEpoch, status: truncating}
	if b.cfg.Mutants.On(mutant.FollowerSkipsTruncation) {
		// NOT Kafka (mutant follower-skips-truncation): the follower keeps
		// its log and fetches from its LEO, and (2.7+) its Fetch names no
		// LastFetchedEpoch (sendFetch), so the leader never answers
		// DivergingEpoch either.
		fp.status, fp.offset = fetching, p.LogEndOffset()
	} else if b.truncationInFetch() && b.latestEpoch(p) >= 0 {
		// 2.7+: fetch at once from the LEO; the leader's DivergingEpoch
		// says whether to truncate (AbstractFetcherThread.partitionFetchState).
		fp.status, fp.offset = fetching, p.LogEndOffset()
	} else if b.cfg.Truncation == TruncateHW || b.latestEpoch(p) < 0 {
		// Pre-0.11, or a follower with no epoch information (an empty or
		// old-format log): truncate to the HW (0.11's partitionsWithoutEpochs).
		rule := "hw"
		if b.cfg.Truncation != TruncateHW {
			rule = "hw-no-epochs"
		}
		b.truncate(p, p.hw, rule)
		fp.status, fp.offset = fetching, p.LogEndOffset()
	}
	f := b.fetchers[p.leader]
	if f == nil {
		f = &fetcher{leader: p.leader}
		b.fetchers[p.leader] = f
	}
	f.parts = append(f.parts, fp)
	sort.Slice(f.parts, func(i, j int) bool { return lessTP(f.parts[i].tp, f.parts[j].tp) })
	f.reset()
	b.kickFetcher(f)
}

// truncationInFetch reports whether followers truncate on the leader's
// DivergingEpoch (2.7+) rather than with OffsetsForLeaderEpoch first.
func (b *Broker) truncationInFetch() bool {
	return b.cfg.TruncationInFetch && b.cfg.Truncation == TruncateKIP279
}

func (b *Broker) latestEpoch(p *Partition) int32 {
	c := p.log.EpochCache()
	if c == nil {
		return -1
	}
	return c.LatestEpoch()
}

// truncate cuts p's log to offset (if below the LEO) and caps the HW.
func (b *Broker) truncate(p *Partition, offset int64, why string) {
	leo := p.LogEndOffset()
	if offset < leo {
		if err := p.log.TruncateTo(offset); err != nil {
			panic(fmt.Sprintf("broker %d: truncating %s to %d: %v", b.cfg.BrokerID, p.tp, offset, err))
		}
	} else if c := p.log.EpochCache(); c != nil {
		// NB: as Kafka's Log.truncateTo does (KAFKA-7415): a replica that
		// became leader may hold an epoch entry starting at its LEO with no
		// record in it; left in place it makes the KIP-279 walk-back ask
		// about that epoch forever (found by kafkasim explore).
		if err := c.TruncateFromEnd(leo); err != nil {
			panic(fmt.Sprintf("broker %d: truncating the epoch cache of %s: %v", b.cfg.BrokerID, p.tp, err))
		}
	}
	p.hw = min(p.hw, p.LogEndOffset())
	b.logp("truncate", p, sim.S("rule", why), sim.I("to", offset), sim.I("leo-before", leo), sim.I("leo", p.LogEndOffset()), sim.I("hw", p.hw))
}

func (b *Broker) removeFromFetcher(tp storage.TopicPartition) {
	for _, id := range b.fetcherIDs() {
		f := b.fetchers[id]
		if i, _ := f.find(tp); i >= 0 {
			f.parts = append(f.parts[:i], f.parts[i+1:]...)
			f.reset()
			b.kickFetcher(f)
		}
	}
}

func (b *Broker) updateFetchEpoch(tp storage.TopicPartition, epoch int32) {
	for _, id := range b.fetcherIDs() {
		if _, fp := b.fetchers[id].find(tp); fp != nil {
			fp.epoch = epoch
		}
	}
}

func (b *Broker) fetcherIDs() []int32 {
	ids := make([]int32, 0, len(b.fetchers))
	for id := range b.fetchers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func (b *Broker) fetcherBackoffDone(t sim.TimerID) {
	for _, id := range b.fetcherIDs() {
		if f := b.fetchers[id]; f.backoff == t {
			f.backoff = 0
			b.kickFetcher(f)
		}
	}
}

func (b *Broker) backOff(f *fetcher) {
	if f.backoff == 0 {
		f.backoff = b.ctx.SetTimer(b.cfg.ReplicaFetchBackoff, timerFetchBackoff)
	}
}

// kickFetcher sends the fetcher's next request, if it has none in flight:
// OffsetsForLeaderEpoch while any partition still needs truncating, else a
// Fetch.
func (b *Broker) kickFetcher(f *fetcher) {
	if f.inflight || f.backoff != 0 || len(f.parts) == 0 {
		return
	}
	var trunc, fetch []*fetchPartition
	for _, fp := range f.parts {
		switch fp.status {
		case truncating:
			trunc = append(trunc, fp)
		case fetching:
			fetch = append(fetch, fp)
		}
	}
	if len(trunc) > 0 {
		b.sendOffsetsForLeaderEpoch(f, trunc)
		return
	}
	if len(fetch) > 0 {
		b.sendFetch(f, fetch)
	}
}

// epochRequestVersion is OffsetsForLeaderEpoch's version per protocol: v0
// answers only an end offset (KIP-101); v1 adds the leader epoch (KIP-279);
// v2 adds the current leader epoch for fencing (KIP-320); v3 the replica id.
func (b *Broker) epochRequestVersion() int16 {
	switch {
	case b.cfg.Truncation == TruncateKIP101:
		return 0
	case b.cfg.KIP320:
		return 3
	}
	return 1
}

func (b *Broker) sendOffsetsForLeaderEpoch(f *fetcher, parts []*fetchPartition) {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version = b.epochRequestVersion()
	req.ReplicaID = b.cfg.BrokerID
	asked := map[storage.TopicPartition]int32{}
	for _, fp := range parts {
		p := b.partitions[fp.tp]
		epoch := b.latestEpoch(p)
		asked[fp.tp] = epoch
		t := topicOf(&req.Topics, fp.tp.Topic, func(name string) kmsg.OffsetForLeaderEpochRequestTopic {
			return kmsg.OffsetForLeaderEpochRequestTopic{Topic: name}
		}, func(t *kmsg.OffsetForLeaderEpochRequestTopic) string { return t.Topic })
		t.Partitions = append(t.Partitions, kmsg.OffsetForLeaderEpochRequestTopicPartition{Partition: fp.tp.Partition, CurrentLeaderEpoch: fp.epoch, LeaderEpoch: epoch})
		b.logp("offsets-for-leader-epoch", p, sim.I("leader", int64(f.leader)), sim.I("epoch", int64(epoch)))
	}
	fetcherSend(b, f, req, b.cfg.ReplicaSocketTimeout, func(r *kmsg.OffsetForLeaderEpochResponse) {
		failed := false
		for _, t := range r.Topics {
			for _, rp := range t.Partitions {
				tp := storage.TopicPartition{Topic: t.Topic, Partition: rp.Partition}
				_, fp := f.find(tp)
				p := b.partitions[tp]
				if fp == nil || fp.status != truncating || p == nil {
					continue // moved on meanwhile
				}
				if rp.ErrorCode != 0 {
					b.logp("offsets-for-leader-epoch-error", p, sim.S("error", kerr.ErrorForCode(rp.ErrorCode).Error()))
					failed = true
					continue
				}
				b.applyEpochAnswer(p, fp, asked[tp], rp.LeaderEpoch, rp.EndOffset, req.Version)
			}
		}
		if failed {
			b.backOff(f)
		}
		b.kickFetcher(f)
	})
}

// applyEpochAnswer truncates after the leader's OffsetsForLeaderEpoch
// answer and, once truncation is complete, starts fetching.
func (b *Broker) applyEpochAnswer(p *Partition, fp *fetchPartition, asked, leaderEpoch int32, endOffset int64, version int16) {
	leo := p.LogEndOffset()
	done := true
	switch {
	case endOffset < 0:
		// UNDEFINED_EPOCH_OFFSET: the leader has no epoch information.
		b.truncate(p, p.hw, "hw-fallback")
	case version == 0 || leaderEpoch < 0:
		// KIP-101: trust the end offset of the follower's epoch as the leader
		// sees it.
		b.truncate(p, min(endOffset, leo), "kip101")
	default:
		done = b.truncateToEpochEnd(p, leaderEpoch, endOffset, "kip279")
	}
	b.logp("epoch-answer", p, sim.I("asked", int64(asked)), sim.I("leader-epoch", int64(leaderEpoch)), sim.I("end-offset", endOffset), sim.I("leo", p.LogEndOffset()))
	if done {
		fp.status, fp.offset = fetching, p.LogEndOffset()
	}
}

// truncateToEpochEnd is KIP-279's rule (AbstractFetcherThread.
// getOffsetTruncationState) for the leader's (epoch, end offset): truncate
// to the smaller of the two ends of that epoch, or, when the follower lacks
// the epoch, to the end of its largest smaller epoch and report that
// truncation is not complete (the follower asks again). rule names the
// path in the trace ("kip279", or "diverging-epoch" in Fetch).
func (b *Broker) truncateToEpochEnd(p *Partition, leaderEpoch int32, endOffset int64, rule string) bool {
	leo := p.LogEndOffset()
	fEpoch, fEnd := p.log.EndOffsetForEpoch(leaderEpoch)
	switch {
	case fEpoch < 0:
		b.truncate(p, min(endOffset, leo), rule)
	case fEpoch != leaderEpoch:
		b.truncate(p, min(fEnd, leo), rule+"-walk-back")
		return false
	default:
		b.truncate(p, min(fEnd, endOffset, leo), rule)
	}
	return true
}

// topicOf returns the entry for topic in *list, appending one made by mk.
func topicOf[T any](list *[]T, topic string, mk func(string) T, name func(*T) string) *T {
	for i := range *list {
		if name(&(*list)[i]) == topic {
			return &(*list)[i]
		}
	}
	*list = append(*list, mk(topic))
	return &(*list)[len(*list)-1]
}

// fetchVersion is the Fetch version a follower sends: v5 (0.11, with log
// start offsets), with KIP-320 fencing v10 (CurrentLeaderEpoch), with
// truncation inside Fetch v12 (LastFetchedEpoch, DivergingEpoch).
func (b *Broker) fetchVersion() int16 {
	if b.truncationInFetch() {
		return 12
	}
	if b.cfg.KIP320 {
		return 10
	}
	return 5
}

// fetchCall is a follower's Fetch request and its wire envelope in one
// block of the broker's slab, with room for two topics and two partitions
// inline (a follower fetching from each of the other brokers with a topic's
// partitions spread evenly, and __consumer_offsets beside it).
// Immutable once sent, as every message.
type fetchCall struct {
	msg    wire.Request
	body   kmsg.FetchRequest
	topics [2]kmsg.FetchRequestTopic // a topic and __consumer_offsets
	parts  [2]kmsg.FetchRequestTopicPartition
}

func (b *Broker) sendFetch(f *fetcher, parts []*fetchPartition) {
	c := b.fetchCalls.New()
	c.body = kmsg.NewFetchRequest()
	req := &c.body
	req.Version = b.fetchVersion()
	req.ReplicaID = b.cfg.BrokerID
	req.MaxWaitMillis = int32(b.cfg.ReplicaFetchWaitMax.Milliseconds())
	req.MinBytes = b.cfg.ReplicaFetchMinBytes
	req.MaxBytes = b.cfg.ReplicaFetchMaxBytes
	req.SessionEpoch = -1
	// The topics in order of first appearance, each with its partitions in
	// the order of parts, in one flat array.
	req.Topics = c.topics[:0]
	flat := c.parts[:0]
	if len(parts) > len(c.parts) {
		flat = b.fetchReqParts.Slice(len(parts))
	}
	for i, fp := range parts {
		if seenTopic(parts[:i], fp.tp.Topic) {
			continue
		}
		start := len(flat)
		for _, fq := range parts[i:] {
			if fq.tp.Topic != fp.tp.Topic {
				continue
			}
			p := b.partition(fq.tp)
			last := int32(-1)
			if req.Version >= 12 && !b.cfg.Mutants.On(mutant.FollowerSkipsTruncation) {
				last = b.latestEpoch(p)
			}
			flat = append(flat, kmsg.FetchRequestTopicPartition{
				Partition: fq.tp.Partition, CurrentLeaderEpoch: fq.epoch, FetchOffset: fq.offset,
				LogStartOffset: p.log.LogStartOffset(), PartitionMaxBytes: b.cfg.ReplicaFetchMaxBytes, LastFetchedEpoch: last,
			})
		}
		req.Topics = append(req.Topics, kmsg.FetchRequestTopic{Topic: fp.tp.Topic, Partitions: flat[start:len(flat):len(flat)]})
	}
	f.inflight = true
	b.sendPending(f.leader, req, &c.msg, b.cfg.ReplicaSocketTimeout+b.cfg.ReplicaFetchWaitMax, pending{fetch: f, gen: f.gen, sent: req})
}

func seenTopic(parts []*fetchPartition, topic string) bool {
	for _, fp := range parts {
		if fp.tp.Topic == topic {
			return true
		}
	}
	return false
}

// fetchAnswered is sendFetch's callback (as fetcherSend's): the answer to
// req, sent at generation gen, applied unless the fetcher moved on.
func (b *Broker) fetchAnswered(f *fetcher, gen int, req *kmsg.FetchRequest, r kmsg.Response, err error) {
	if gen != f.gen {
		return
	}
	f.inflight = false
	resp, ok := r.(*kmsg.FetchResponse)
	if err != nil || !ok {
		b.backOff(f)
		return
	}
	failed := false
	for _, t := range resp.Topics {
		for i := range t.Partitions {
			rp := &t.Partitions[i]
			tp := storage.TopicPartition{Topic: t.Topic, Partition: rp.Partition}
			_, fp := f.find(tp)
			p := b.partition(tp)
			if fp == nil || fp.status != fetching || p == nil || fp.offset != sentOffset(req, tp) {
				continue // the partition moved on while the fetch was out
			}
			if !b.processFetched(f, p, fp, rp) {
				failed = true
			}
		}
	}
	if failed {
		b.backOff(f)
	}
	b.kickFetcher(f)
}

// sentOffset returns the fetch offset req asked for tp.
func sentOffset(req *kmsg.FetchRequest, tp storage.TopicPartition) int64 {
	for _, t := range req.Topics {
		if t.Topic == tp.Topic {
			for _, p := range t.Partitions {
				if p.Partition == tp.Partition {
					return p.FetchOffset
				}
			}
		}
	}
	return -1
}

// processFetched applies one partition of a fetch response: append, then
// HW = min(LEO, leader's HW), the lag of one round that KIP-101 is about.
func (b *Broker) processFetched(f *fetcher, p *Partition, fp *fetchPartition, rp *kmsg.FetchResponseTopicPartition) bool {
	switch err := kerr.ErrorForCode(rp.ErrorCode); err {
	case nil:
	case kerr.OffsetOutOfRange:
		b.handleOffsetOutOfRange(f, p, fp, rp)
		return true
	default:
		b.logp("fetch-error", p, sim.I("leader", int64(f.leader)), sim.S("error", err.Error()))
		return false
	}
	if d := rp.DivergingEpoch; b.truncationInFetch() && d.EndOffset >= 0 {
		// KAFKA-10554: the leader's log diverges from ours at the end of
		// epoch d.Epoch; it sent no records.
		leo := p.LogEndOffset()
		b.truncateToEpochEnd(p, d.Epoch, d.EndOffset, "diverging-epoch")
		b.logp("diverging-epoch", p, sim.I("leader", int64(f.leader)), sim.I("epoch", int64(d.Epoch)), sim.I("end-offset", d.EndOffset),
			sim.I("leo-before", leo), sim.I("leo", p.LogEndOffset()))
	}
	if len(rp.RecordBatches) > 0 {
		info, err := p.log.AppendAsFollower(rp.RecordBatches)
		if err != nil {
			panic(fmt.Sprintf("broker %d: follower append to %s: %v", b.cfg.BrokerID, p.tp, err))
		}
		b.logp("follower-append", p, sim.I("first", info.FirstOffset), sim.I("last", info.LastOffset), sim.I("leo", p.LogEndOffset()))
	}
	hw := min(p.LogEndOffset(), rp.HighWatermark)
	if b.cfg.Mutants.On(mutant.FollowerHWPastLEO) {
		hw = rp.HighWatermark // NOT Kafka (mutant follower-hw-past-leo): not capped at the LEO
	}
	if hw != p.hw {
		b.logp("follower-hw", p, sim.I("hw", hw), sim.I("was", p.hw))
		p.hw = hw
		if len(b.fetches) > 0 {
			b.completeFollowerReads()
		}
	}
	// The follower follows the leader's log start offset (DeleteRecords,
	// retention), as ReplicaFetcherThread.processPartitionData does,
	// never past its own HW.
	if start := min(rp.LogStartOffset, p.hw); start > p.log.LogStartOffset() {
		if err := p.log.MaybeIncrementLogStartOffset(start); err != nil {
			panic(fmt.Sprintf("broker %d: %s: following the leader's log start offset: %v", b.cfg.BrokerID, p.tp, err))
		}
		b.logp("follower-log-start", p, sim.I("log-start", start))
	}
	fp.offset = p.LogEndOffset()
	return true
}

// handleOffsetOutOfRange is the follower's answer to a leader that does not
// have its fetch offset (ReplicaFetcherThread.handleOffsetOutOfRange): a
// log ahead of the leader's is cut to the leader's LEO, or, before 0.11 with
// unclean election off, the broker halts; a log behind the leader's start
// starts over at it.
func (b *Broker) handleOffsetOutOfRange(f *fetcher, p *Partition, fp *fetchPartition, rp *kmsg.FetchResponseTopicPartition) {
	if fp.offset < rp.LogStartOffset {
		if err := p.log.TruncateFullyAndStartAt(rp.LogStartOffset); err != nil {
			panic(fmt.Sprintf("broker %d: resetting %s: %v", b.cfg.BrokerID, p.tp, err))
		}
		p.hw = rp.LogStartOffset
		b.logp("truncate-fully", p, sim.I("start", rp.LogStartOffset))
		fp.offset = p.LogEndOffset()
		return
	}
	// The leader's log is shorter: ask for its LEO.
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 1
	req.ReplicaID = b.cfg.BrokerID
	req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: p.tp.Topic, Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: p.tp.Partition, Timestamp: storage.LatestTimestamp, CurrentLeaderEpoch: -1}}}}
	fp.status = resetting
	b.send(f.leader, req, b.cfg.ReplicaSocketTimeout, func(r kmsg.Response, err error) {
		if _, cur := f.find(p.tp); cur != fp || fp.status != resetting || b.halted {
			return // the partition moved on meanwhile
		}
		lr, _ := r.(*kmsg.ListOffsetsResponse)
		if err != nil || lr == nil || len(lr.Topics) == 0 || len(lr.Topics[0].Partitions) == 0 || lr.Topics[0].Partitions[0].ErrorCode != 0 {
			fp.status = fetching
			b.backOff(f)
			return
		}
		leaderLEO := lr.Topics[0].Partitions[0].Offset
		if leaderLEO < p.LogEndOffset() && b.cfg.Truncation == TruncateHW && !p.unclean {
			b.halt(fmt.Sprintf("exiting because log truncation is not allowed for partition %s: current leader %d's latest offset %d is less than replica %d's latest offset %d",
				p.tp, f.leader, leaderLEO, b.cfg.BrokerID, p.LogEndOffset()))
			return
		}
		b.truncate(p, leaderLEO, "offset-out-of-range")
		fp.status, fp.offset = fetching, p.LogEndOffset()
		b.kickFetcher(f)
	})
}

// fetcherSend sends the fetcher's one request in flight to its leader and
// hands the response, of type R, to handle, unless the fetcher was reset
// meanwhile (its generation moved on: the answer is for a partition set,
// leader epoch or session that is no longer current) or the request failed,
// which backs it off. A response of another type than R fails the request
// too: the fetcher never assumes the answer is of the kind it last sent.
func fetcherSend[R kmsg.Response](b *Broker, f *fetcher, req kmsg.Request, timeout sim.Duration, handle func(R)) {
	f.inflight = true
	gen := f.gen
	b.send(f.leader, req, timeout, func(r kmsg.Response, err error) {
		if gen != f.gen {
			return
		}
		f.inflight = false
		resp, ok := r.(R)
		if err != nil || !ok {
			b.backOff(f)
			return
		}
		handle(resp)
	})
}
