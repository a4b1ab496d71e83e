package server

// This file serves Fetch (api key 1) on the leader, for followers
// (ReplicaID >= 0, read up to the LEO) and consumers (ReplicaID -1, read up
// to the HW), and holds fetches that found too little data in the delayed
// fetch purgatory until fetch.min.bytes arrive or fetch.max.wait.ms passes.
//
// Versions: v4 to v11 answered the same way; CurrentLeaderEpoch (v9+) is
// checked when KIP-320 fencing is on. A follower's fetch offset is its LEO:
// the leader records it, may expand the ISR and advance the HW. As in Kafka
// after KAFKA-7104, the HW in an immediate answer is the one read before
// this fetch moved it, so the follower learns of a new HW one round later.
// Simplifications: no fetch sessions, no isolation level (no transactions),
// no fetch from follower (KIP-392) yet; a delayed fetch completes on bytes
// or time only, not on a HW change alone (0.11 to 2.x behaviour).

import (
	"errors"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleFetch(from sim.NodeID, req *wire.Request, body *kmsg.FetchRequest) {
	follower := body.ReplicaID >= 0
	resp, bytes, anyErr := b.readForFetch(body, follower, true)
	if body.MaxWaitMillis <= 0 || bytes >= int(body.MinBytes) || anyErr || len(body.Topics) == 0 {
		b.respond(from, req, resp)
		return
	}
	b.delayFetch(from, req, body, sim.Ms(int64(body.MaxWaitMillis)))
}

// readForFetch reads every partition of a fetch. On first arrival
// (update=true) a follower's fetch offsets are recorded.
func (b *Broker) readForFetch(body *kmsg.FetchRequest, follower, update bool) (*kmsg.FetchResponse, int, bool) {
	resp := kmsg.NewPtrFetchResponse()
	resp.Topics = make([]kmsg.FetchResponseTopic, 0, len(body.Topics))
	total := 0
	anyErr := false
	for _, t := range body.Topics {
		rt := kmsg.FetchResponseTopic{Topic: t.Topic, Partitions: make([]kmsg.FetchResponseTopicPartition, 0, len(t.Partitions))}
		for _, fp := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition = fp.Partition
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			tp := storage.TopicPartition{Topic: t.Topic, Partition: fp.Partition}
			if err := b.readPartition(tp, body, &fp, follower, update, &rp); err != nil {
				rp.ErrorCode = err.Code
				anyErr = true
			}
			total += len(rp.RecordBatches)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, total, anyErr
}

// checkLeader returns the error for a request to p that this broker cannot
// serve as leader, with KIP-320 epoch fencing when on.
func (b *Broker) checkLeader(p *Partition, currentEpoch int32) *kerr.Error {
	if p == nil {
		return kerr.UnknownTopicOrPartition
	}
	if p.role != Leader {
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
	p := b.partitions[tp]
	current := int32(-1)
	if body.Version >= 9 {
		current = fp.CurrentLeaderEpoch
	}
	if err := b.checkLeader(p, current); err != nil {
		return err
	}
	var r *remoteReplica
	if follower {
		if r = p.remote(body.ReplicaID); r == nil {
			return kerr.NotLeaderForPartition // not an assigned replica
		}
	}
	hwBefore := p.hw
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = hwBefore, hwBefore, p.log.LogStartOffset()
	leo := p.LogEndOffset()
	if fp.FetchOffset < p.log.LogStartOffset() || fp.FetchOffset > leo {
		return kerr.OffsetOutOfRange
	}
	maxOffset := hwBefore
	if follower {
		maxOffset = leo
	}
	data, err := p.log.Read(fp.FetchOffset, int(fp.PartitionMaxBytes), maxOffset)
	if err != nil {
		if errors.Is(err, storage.ErrOffsetOutOfRange) {
			return kerr.OffsetOutOfRange
		}
		panic(err)
	}
	rp.RecordBatches = data
	if follower && update {
		p.updateFollowerFetchState(r, fp.FetchOffset, b.ctx.Now())
		b.maybeExpandISR(p, r)
		if p.maybeIncrementHW() {
			b.hwIncremented(p)
		}
	}
	return nil
}
