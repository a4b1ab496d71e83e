package server

// This file serves DeleteRecords (api key 21), v0-v2 (KIP-107), as
// Kafka's ReplicaManager.deleteRecords, Partition.deleteRecordsOnLeader
// and DelayedDeleteRecords, the same in both modes: a partition the
// metadata cache does not have is UNKNOWN_TOPIC_OR_PARTITION, one this
// broker does not lead NOT_LEADER_OR_FOLLOWER; a topic whose
// cleanup.policy lacks delete POLICY_VIOLATION; the offset -1 means the
// high watermark; an offset below 0 or above the high watermark is
// OFFSET_OUT_OF_RANGE. Otherwise the leader's log start offset moves up to
// it (records below are gone to every reader: Fetch and ListOffsets
// answer from the new start), and the answer waits until every replica on
// a live broker has moved its own there too (the low watermark: followers
// follow the leader's log start offset on their next fetch, fetcher.go,
// and report theirs in their fetches), REQUEST_TIMED_OUT for a partition
// still short of it at timeout_ms.
//
// Each move is traced (delete-records, with the new log start): the
// checkers read it as the fact that permits the records below it to be
// gone (docs/checkers.md).
//
// Simplified: segments below the new start are deleted at the next
// retention pass, as in Kafka; no authorization.

import (
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lowWatermark is Partition.lowWatermarkIfLeader: the lowest log start
// offset of the replicas on live brokers (a follower that has not fetched
// in this epoch counts as -1).
func (b *Broker) lowWatermark(p *Partition) int64 {
	low := p.log.LogStartOffset()
	for _, r := range p.remotes {
		if b.metadata.hasBroker(r.id) && r.logStart < low {
			low = r.logStart
		}
	}
	return low
}

func (b *Broker) handleDeleteRecords(from sim.NodeID, req *wire.Request, body *kmsg.DeleteRecordsRequest) {
	resp := body.ResponseKind().(*kmsg.DeleteRecordsResponse)
	type pending struct {
		rp     *kmsg.DeleteRecordsResponseTopicPartition
		p      *Partition
		offset int64
	}
	var waiting []pending
	for _, t := range body.Topics {
		rt := kmsg.DeleteRecordsResponseTopic{Topic: t.Topic}
		for _, dp := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.DeleteRecordsResponseTopicPartition{Partition: dp.Partition, LowWatermark: -1})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	for ti, t := range body.Topics {
		for pi, dp := range t.Partitions {
			rp := &resp.Topics[ti].Partitions[pi]
			tp := storage.TopicPartition{Topic: t.Topic, Partition: dp.Partition}
			offset, e := b.deleteRecordsOnLeader(tp, dp.Offset)
			if e != nil {
				rp.ErrorCode = e.Code
				continue
			}
			p := b.partitions[tp]
			rp.LowWatermark = b.lowWatermark(p)
			if rp.LowWatermark < offset {
				rp.ErrorCode = kerr.RequestTimedOut.Code
				waiting = append(waiting, pending{rp, p, offset})
			}
		}
	}
	if len(waiting) == 0 || body.TimeoutMillis <= 0 {
		b.respond(from, req, resp)
		return
	}
	settle := func() bool {
		done := true
		for _, w := range waiting {
			if w.rp.ErrorCode != kerr.RequestTimedOut.Code {
				continue
			}
			if b.partitions[w.p.tp] != w.p || w.p.role != Leader {
				w.rp.ErrorCode = kerr.NotLeaderForPartition.Code
				continue
			}
			if low := b.lowWatermark(w.p); low >= w.offset {
				w.rp.ErrorCode, w.rp.LowWatermark = 0, low
				continue
			}
			done = false
		}
		return done
	}
	b.waitFor(sim.Ms(int64(body.TimeoutMillis)), settle, func() { b.respond(from, req, resp) })
}

// deleteRecordsOnLeader moves tp's log start offset to offset (-1: the
// HW) and returns the offset, or the partition's error.
func (b *Broker) deleteRecordsOnLeader(tp storage.TopicPartition, offset int64) (int64, *kerr.Error) {
	if _, ok := b.metadata.partitions[tp]; !ok {
		return 0, kerr.UnknownTopicOrPartition
	}
	p := b.partitions[tp]
	if p == nil || p.role != Leader {
		return 0, kerr.NotLeaderForPartition
	}
	if pol := p.log.CleanupPolicy(); pol != storage.CleanupDelete && pol != storage.CleanupCompactDelete && pol != "delete,compact" {
		return 0, kerr.PolicyViolation
	}
	if offset == -1 {
		offset = p.hw
	}
	if offset < 0 || offset > p.hw {
		return 0, kerr.OffsetOutOfRange
	}
	if offset > p.log.LogStartOffset() {
		if err := p.log.MaybeIncrementLogStartOffset(offset); err != nil {
			return 0, kerr.OffsetOutOfRange
		}
		b.logp("delete-records", p, sim.I("log-start", offset))
	}
	return offset, nil
}

// hasBroker reports whether the cache lists broker id as alive.
func (m *metadataCache) hasBroker(id int32) bool {
	for _, bi := range m.brokers {
		if bi.id == id {
			return true
		}
	}
	return false
}
