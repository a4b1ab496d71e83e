package server

// This file serves DeleteTopics (api key 20), v0-v6.
//
// ZooKeeper mode, as Kafka 2.x-3.x's KafkaApis.handleDeleteTopicsRequest,
// ZkAdminManager.deleteTopics and DelayedDeleteTopics: only the active
// controller serves it (NOT_CONTROLLER elsewhere); with delete.topic.enable
// off every topic is TOPIC_DELETION_DISABLED (INVALID_REQUEST below v3);
// a v6 entry naming both a name and an id is INVALID_REQUEST, one named by
// an id UNKNOWN_TOPIC_ID (topic ids are zero in ZooKeeper mode here, as
// below IBP 2.8), a topic not in the metadata cache
// UNKNOWN_TOPIC_OR_PARTITION. The others get /admin/delete_topics/<t>
// (one already there counts as asked: TopicAlreadyMarkedForDeletion is
// swallowed); the controller's TopicDeletionManager (package controller)
// tells every broker to forget the topic (UpdateMetadata with the leader
// LeaderDuringDelete, -2), stops and deletes the replicas (StopReplica)
// and removes the znodes. With timeout_ms > 0 the answer waits until the
// metadata cache no longer has the topic (REQUEST_TIMED_OUT for those
// still there at the timeout); with timeout_ms <= 0 the topics asked for
// are answered REQUEST_TIMED_OUT at once, as Kafka does.
//
// KRaft mode: forwarded to the active controller (broker/kraft/delete_topics.go),
// whose RemoveTopicRecord makes every broker drop the topic's replicas and
// logs (kraft_metadata.go).
//
// Simplifications: a replica on a broker that is down when the topic is
// deleted keeps its log on disk (Kafka's controller waits for it to come
// back; a KRaft broker deletes such stray logs at startup); the group
// coordinator keeps the committed offsets of deleted partitions (Kafka
// removes them, GroupMetadataManager.cleanupGroupMetadata); no quotas or
// authorization.

import (
	"github.com/kafkasim/kafkasim/broker/kraft"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleDeleteTopics(from sim.NodeID, req *wire.Request, body *kmsg.DeleteTopicsRequest) {
	if b.kraft != nil {
		b.forwardAdmin(from, req, body)
		return
	}
	fail := func(e *kerr.Error) { b.respond(from, req, kraft.ErrorResponse(body, e)) }
	switch {
	case b.zk == nil || b.controller == nil || !b.controller.Active():
		fail(kerr.NotController)
		return
	case !b.cfg.DeleteTopicEnable && body.Version < 3:
		fail(kerr.InvalidRequest)
		return
	case !b.cfg.DeleteTopicEnable:
		fail(kerr.TopicDeletionDisabled)
		return
	}
	for _, t := range body.Topics {
		if t.Topic != nil && t.TopicID != [16]byte{} {
			fail(kerr.InvalidRequest) // Kafka throws: the whole request fails
			return
		}
	}
	resp := kraft.ErrorResponse(body, kerr.UnknownServerError).(*kmsg.DeleteTopicsResponse)
	var asked []int // indexes of resp.Topics being deleted
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		rt.ErrorCode, rt.ErrorMessage = 0, nil
		var e *kerr.Error
		switch {
		case rt.TopicID != [16]byte{}:
			e = kerr.UnknownTopicID
		case rt.Topic == nil || b.metadata.topicPartitions(*rt.Topic) == 0:
			e = kerr.UnknownTopicOrPartition
		}
		if e != nil {
			rt.ErrorCode = e.Code
			continue
		}
		asked = append(asked, i)
	}
	if len(asked) == 0 {
		b.respond(from, req, resp)
		return
	}
	if body.TimeoutMillis <= 0 {
		for _, i := range asked {
			resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
		}
	}
	writes := len(asked)
	for _, i := range asked {
		name := *resp.Topics[i].Topic
		b.ctx.Log("delete-topic", sim.S("topic", name))
		b.zk.Create(b.ctx, zk.DeleteTopicPath(name), nil, zk.Persistent, func(ctx *sim.Context, r *zk.Response) {
			b.ctx = ctx
			if r.Code != zk.Ok && r.Code != zk.NodeExists {
				resp.Topics[i].ErrorCode = kerr.UnknownServerError.Code
			}
			if writes--; writes > 0 || body.TimeoutMillis <= 0 {
				if writes == 0 {
					b.respond(from, req, resp)
				}
				return
			}
			gone := func() bool {
				for _, i := range asked {
					if resp.Topics[i].ErrorCode == 0 && b.metadata.topicPartitions(*resp.Topics[i].Topic) > 0 {
						return false
					}
				}
				return true
			}
			b.waitFor(sim.Ms(int64(body.TimeoutMillis)), gone, func() {
				for _, i := range asked {
					if rt := &resp.Topics[i]; rt.ErrorCode == 0 && b.metadata.topicPartitions(*rt.Topic) > 0 {
						rt.ErrorCode = kerr.RequestTimedOut.Code
					}
				}
				b.respond(from, req, resp)
			})
		})
	}
}
