package kraft

// This file routes the admin APIs the brokers forward to the active
// controller (KIP-590: DeleteTopics, CreatePartitions, AlterConfigs,
// IncrementalAlterConfigs, ElectLeaders; CreateTopics is create_topics.go)
// and builds the answer that fails a whole request with one error (an
// inactive controller's NOT_CONTROLLER, a write that did not commit).

import (
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleAdmin serves one forwarded admin request on the active controller.
func (c *Controller) handleAdmin(ctx *sim.Context, req kmsg.Request, reply func(kmsg.Response)) {
	switch r := req.(type) {
	case *kmsg.DeleteTopicsRequest:
		c.deleteTopics(ctx, r, reply)
	case *kmsg.CreatePartitionsRequest:
		c.createPartitions(ctx, r, reply)
	case *kmsg.AlterConfigsRequest:
		c.alterConfigs(ctx, r, reply)
	case *kmsg.IncrementalAlterConfigsRequest:
		c.incrementalAlterConfigs(ctx, r, reply)
	case *kmsg.ElectLeadersRequest:
		c.electLeaders(ctx, r, reply)
	}
}

// ErrorResponse answers every entry of an admin request the controller
// serves (CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs,
// IncrementalAlterConfigs, ElectLeaders) with e; nil for another request.
func ErrorResponse(req kmsg.Request, e *kerr.Error) kmsg.Response {
	msg := e.Message
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		return createTopicsError(r, e)
	case *kmsg.DeleteTopicsRequest:
		return deleteTopicsError(r, e)
	case *kmsg.CreatePartitionsRequest:
		resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
		for _, t := range r.Topics {
			resp.Topics = append(resp.Topics, kmsg.CreatePartitionsResponseTopic{Topic: t.Topic, ErrorCode: e.Code, ErrorMessage: &msg})
		}
		return resp
	case *kmsg.AlterConfigsRequest:
		resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
		for _, x := range r.Resources {
			resp.Resources = append(resp.Resources, kmsg.AlterConfigsResponseResource{ResourceType: x.ResourceType, ResourceName: x.ResourceName, ErrorCode: e.Code, ErrorMessage: &msg})
		}
		return resp
	case *kmsg.IncrementalAlterConfigsRequest:
		resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for _, x := range r.Resources {
			resp.Resources = append(resp.Resources, kmsg.IncrementalAlterConfigsResponseResource{ResourceType: x.ResourceType, ResourceName: x.ResourceName, ErrorCode: e.Code, ErrorMessage: &msg})
		}
		return resp
	case *kmsg.ElectLeadersRequest:
		resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
		if r.Version >= 1 {
			resp.ErrorCode = e.Code
		}
		for _, t := range r.Topics {
			rt := kmsg.ElectLeadersResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.ElectLeadersResponseTopicPartition{Partition: p, ErrorCode: e.Code, ErrorMessage: &msg})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	return nil
}
