package server

// This file serves OffsetCommit v0 and OffsetFetch v0, the versions whose
// offsets live in ZooKeeper rather than in __consumer_offsets: a consumer
// with offsets.storage=zookeeper uses them, as Kafka's pre-0.9 consumer
// kept its offsets under /consumers/<group>/offsets/<topic>/<partition>.
// Any broker answers them (Kafka's KafkaApis handles version 0 itself,
// before and without the group coordinator), so they are neither checked
// against a generation or member (v0 carries neither: a fenced member's
// commit still lands) nor lost with a __consumer_offsets replica; they
// last as long as ZooKeeper's synced transaction log.
//
// As in Kafka 1.x–2.x: a partition missing from the metadata cache answers
// UNKNOWN_TOPIC_OR_PARTITION; a commit is setOrCreateConsumerOffset (set
// the znode, creating it and its parents when missing); a fetch of an
// offset never committed answers offset -1 with UNKNOWN_TOPIC_OR_PARTITION
// (OffsetFetchResponse.UNKNOWN_PARTITION), which the consumer reads as "no
// committed offset"; a ZooKeeper failure answers UNKNOWN_SERVER_ERROR
// (Errors.forException of a ZooKeeper exception).
// Simplification: Kafka's ZkClient blocks the request thread while
// ZooKeeper is unreachable; here the request waits in the ZooKeeper client's
// queue and the consumer's request.timeout.ms decides.

import (
	"strconv"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// offsetMetadataMaxBytes is offset.metadata.max.bytes' default.
const offsetMetadataMaxBytes = 4096

// serveZKOffsets serves OffsetCommit v0 and OffsetFetch v0 and reports
// whether req was one of them.
func (b *Broker) serveZKOffsets(from sim.NodeID, req *wire.Request) bool {
	switch body := req.Body.(type) {
	case *kmsg.OffsetCommitRequest:
		if body.Version != 0 {
			return false
		}
		b.commitOffsetsZK(body, func(r *kmsg.OffsetCommitResponse) { b.respond(from, req, r) })
	case *kmsg.OffsetFetchRequest:
		if body.Version != 0 {
			return false
		}
		b.fetchOffsetsZK(body, func(r *kmsg.OffsetFetchResponse) { b.respond(from, req, r) })
	default:
		return false
	}
	return true
}

// zkOffsetsCall counts the ZooKeeper answers a v0 request still waits for
// and answers once the last arrives.
type zkOffsetsCall struct {
	pending int
	done    func()
}

func (z *zkOffsetsCall) finish() {
	if z.pending--; z.pending == 0 {
		z.done()
	}
}

func (b *Broker) commitOffsetsZK(body *kmsg.OffsetCommitRequest, reply func(*kmsg.OffsetCommitResponse)) {
	resp := kmsg.NewPtrOffsetCommitResponse()
	resp.Version = body.Version
	call := &zkOffsetsCall{pending: 1, done: func() { reply(resp) }}
	// Sized up front: the ZooKeeper callbacks write through pointers into them.
	resp.Topics = make([]kmsg.OffsetCommitResponseTopic, len(body.Topics))
	for ti, t := range body.Topics {
		resp.Topics[ti] = kmsg.OffsetCommitResponseTopic{Topic: t.Topic, Partitions: make([]kmsg.OffsetCommitResponseTopicPartition, len(t.Partitions))}
		for pi, p := range t.Partitions {
			rp := &resp.Topics[ti].Partitions[pi]
			rp.Partition = p.Partition
			switch {
			case !b.knowsPartition(t.Topic, p.Partition):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case p.Metadata != nil && len(*p.Metadata) > offsetMetadataMaxBytes:
				rp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
			default:
				call.pending++
				path := zk.ConsumerOffsetPath(body.Group, t.Topic, p.Partition)
				b.setOrCreateZK(path, []byte(strconv.FormatInt(p.Offset, 10)), func(code zk.Code) {
					if code != zk.Ok {
						rp.ErrorCode = kerr.UnknownServerError.Code
					}
					call.finish()
				})
			}
		}
	}
	call.finish()
}

func (b *Broker) fetchOffsetsZK(body *kmsg.OffsetFetchRequest, reply func(*kmsg.OffsetFetchResponse)) {
	resp := kmsg.NewPtrOffsetFetchResponse()
	resp.Version = body.Version
	call := &zkOffsetsCall{pending: 1, done: func() { reply(resp) }}
	resp.Topics = make([]kmsg.OffsetFetchResponseTopic, len(body.Topics))
	for ti, t := range body.Topics {
		resp.Topics[ti] = kmsg.OffsetFetchResponseTopic{Topic: t.Topic, Partitions: make([]kmsg.OffsetFetchResponseTopicPartition, len(t.Partitions))}
		for pi, p := range t.Partitions {
			rp := &resp.Topics[ti].Partitions[pi]
			*rp = kmsg.OffsetFetchResponseTopicPartition{Partition: p, Offset: -1, LeaderEpoch: -1, ErrorCode: kerr.UnknownTopicOrPartition.Code}
			if !b.knowsPartition(t.Topic, p) {
				continue
			}
			if b.zk == nil {
				rp.ErrorCode = kerr.UnknownServerError.Code
				continue
			}
			call.pending++
			b.zk.GetData(b.ctx, zk.ConsumerOffsetPath(body.Group, t.Topic, p), false, func(_ *sim.Context, r *zk.Response) {
				switch r.Code {
				case zk.Ok:
					if off, err := strconv.ParseInt(string(r.Data), 10, 64); err == nil {
						rp.Offset, rp.ErrorCode = off, 0
					} else {
						rp.ErrorCode = kerr.UnknownServerError.Code // Kafka's payload.toLong throws
					}
				case zk.NoNode: // never committed: UNKNOWN_PARTITION, as set above
				default:
					rp.ErrorCode = kerr.UnknownServerError.Code
				}
				call.finish()
			})
		}
	}
	call.finish()
}

// knowsPartition reports whether the metadata cache has the partition.
func (b *Broker) knowsPartition(topic string, partition int32) bool {
	_, ok := b.metadata.partitions[storage.TopicPartition{Topic: topic, Partition: partition}]
	return ok
}

// setOrCreateZK is KafkaZkClient.setOrCreateConsumerOffset: set path's
// data, and when it is missing create it with its parents.
func (b *Broker) setOrCreateZK(path string, data []byte, done func(zk.Code)) {
	if b.zk == nil { // a broker run without ZooKeeper (manual-controller tests)
		done(zk.ConnectionLoss)
		return
	}
	b.zk.SetData(b.ctx, path, data, zk.AnyVersion, func(_ *sim.Context, r *zk.Response) {
		if r.Code != zk.NoNode {
			done(r.Code)
			return
		}
		b.zk.CreateRecursive(b.ctx, path, data, func(_ *sim.Context, r *zk.Response) {
			if r.Code != zk.NodeExists {
				done(r.Code)
				return
			}
			// Created by a concurrent commit in between: set it after all.
			b.zk.SetData(b.ctx, path, data, zk.AnyVersion, func(_ *sim.Context, r *zk.Response) { done(r.Code) })
		})
	})
}
