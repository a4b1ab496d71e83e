package kraft

// This file serves DeleteTopicsRequest (api key 20), v0-v6, as Kafka 4.0's
// ControllerApis.deleteTopics and ReplicationControlManager.deleteTopic:
// with delete.topic.enable off every topic is TOPIC_DELETION_DISABLED
// (INVALID_REQUEST below v3); a v6 entry with neither name nor id, or
// both, is INVALID_REQUEST, as is a name or an id given twice; an unknown
// name is UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID.
// Every topic found gets one RemoveTopicRecord, all in one batch; the
// reply waits for it to commit (the brokers then stop and delete their
// replicas: server/kraft_metadata.go).
//
// Simplified: the answers come in request order (Kafka's come in the
// order of its hash sets); no quotas or authorization.

import (
	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// deleteTarget is one topic a DeleteTopics request names.
type deleteTarget struct {
	name string // "" when named by id only
	id   [16]byte
}

// DeleteTopicsTargets returns the topics of a DeleteTopics request in
// order: the names of v0-v5, the (name, id) entries of v6.
func deleteTopicsTargets(req *kmsg.DeleteTopicsRequest) []deleteTarget {
	if req.Version < 6 {
		out := make([]deleteTarget, len(req.TopicNames))
		for i, n := range req.TopicNames {
			out[i].name = n
		}
		return out
	}
	out := make([]deleteTarget, len(req.Topics))
	for i, t := range req.Topics {
		if t.Topic != nil {
			out[i].name = *t.Topic
		}
		out[i].id = t.TopicID
	}
	return out
}

func deleteTopicResult(t deleteTarget, e *kerr.Error, msg string) kmsg.DeleteTopicsResponseTopic {
	rt := kmsg.NewDeleteTopicsResponseTopic()
	if t.name != "" {
		n := t.name
		rt.Topic = &n
	}
	rt.TopicID = t.id
	if e != nil {
		rt.ErrorCode = e.Code
		if msg == "" {
			msg = e.Message
		}
		rt.ErrorMessage = &msg
	}
	return rt
}

func deleteTopicsError(req *kmsg.DeleteTopicsRequest, e *kerr.Error) *kmsg.DeleteTopicsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	for _, t := range deleteTopicsTargets(req) {
		resp.Topics = append(resp.Topics, deleteTopicResult(t, e, ""))
	}
	return resp
}

func (c *Controller) deleteTopics(ctx *sim.Context, req *kmsg.DeleteTopicsRequest, reply func(kmsg.Response)) {
	if !c.cfg.DeleteTopicEnable {
		e := kerr.TopicDeletionDisabled
		if req.Version < 3 {
			e = kerr.InvalidRequest
		}
		reply(deleteTopicsError(req, e))
		return
	}
	targets := deleteTopicsTargets(req)
	names, ids := map[string]int{}, map[[16]byte]int{}
	for _, t := range targets {
		if t.name != "" {
			names[t.name]++
		} else {
			ids[t.id]++
		}
	}
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	var recs []metadata.Record
	removed := map[[16]byte]bool{}
	for _, t := range targets {
		var e *kerr.Error
		var msg string
		switch {
		case t.name == "" && t.id == [16]byte{}:
			e, msg = kerr.InvalidRequest, "Neither topic name nor id were specified."
		case t.name != "" && t.id != [16]byte{}:
			e, msg = kerr.InvalidRequest, "You may not specify both topic name and topic id."
		case t.name != "" && names[t.name] > 1:
			e, msg = kerr.InvalidRequest, "Duplicate topic name."
		case t.name == "" && ids[t.id] > 1:
			e, msg = kerr.InvalidRequest, "Duplicate topic id."
		case t.name != "":
			id, ok := c.working.img.TopicID(t.name)
			if !ok {
				e, msg = kerr.UnknownTopicOrPartition, "This server does not host this topic-partition."
				break
			}
			t.id = id
		default:
			name, ok := c.working.img.TopicName(t.id)
			if !ok {
				e, msg = kerr.UnknownTopicID, "This server does not host this topic ID."
				break
			}
			t.name = name
		}
		if e != nil {
			resp.Topics = append(resp.Topics, deleteTopicResult(t, e, msg))
			continue
		}
		if !removed[t.id] {
			removed[t.id] = true
			recs = append(recs, &metadata.RemoveTopicRecord{TopicID: t.id})
		}
		resp.Topics = append(resp.Topics, deleteTopicResult(t, nil, ""))
	}
	c.write(ctx, recs, func() {
		for _, rt := range resp.Topics {
			if rt.ErrorCode == 0 && rt.Topic != nil {
				ctx.Log("topic-deleted", sim.S("topic", *rt.Topic))
			}
		}
		reply(resp)
	}, func(e *kerr.Error) { reply(deleteTopicsError(req, e)) })
}
