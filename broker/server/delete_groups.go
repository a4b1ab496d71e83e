package server

// This file serves DeleteGroups (api key 42), v0-v2, and OffsetDelete
// (47), v0, through the group coordinator (broker/coordinator/delete.go
// says how): each group is answered by its coordinator, which is the
// broker the client found with FindCoordinator (NOT_COORDINATOR
// elsewhere). OffsetDelete's partitions of a topic the metadata cache
// does not have are UNKNOWN_TOPIC_OR_PARTITION, as KafkaApis answers them
// before the coordinator. The same in both modes. A share group (KIP-932)
// is deleted by the share group coordinator (share.go): NON_EMPTY_GROUP
// while it has members; its share-partitions on this broker go with it
// (simplified: those on other leaders stay until their leader changes,
// and its __share_group_state entries are deleted as Kafka's
// DeleteShareGroupState does only when persistence is on).

import (
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleDeleteGroups(from sim.NodeID, req *wire.Request, body *kmsg.DeleteGroupsRequest) {
	if b.share.coord == nil {
		b.respond(from, req, b.group.coord.DeleteGroups(b.ctx.Now(), body))
		return
	}
	// Share groups (KIP-932) are deleted by the share group coordinator
	// (NON_EMPTY_GROUP while members remain); the others as before, and
	// the answers keep the request's order.
	rest := kmsg.NewPtrDeleteGroupsRequest()
	rest.Version = body.Version
	for _, g := range body.Groups {
		if !b.share.coord.Has(g) || b.shareGroupCheck(g) != nil {
			rest.Groups = append(rest.Groups, g)
		}
	}
	others := b.group.coord.DeleteGroups(b.ctx.Now(), rest)
	resp := body.ResponseKind().(*kmsg.DeleteGroupsResponse)
	j := 0
	for _, g := range body.Groups {
		if b.share.coord.Has(g) && b.shareGroupCheck(g) == nil {
			resp.Groups = append(resp.Groups, kmsg.DeleteGroupsResponseGroup{Group: g, ErrorCode: errCode(b.deleteShareGroup(g))})
			continue
		}
		if j < len(others.Groups) {
			resp.Groups = append(resp.Groups, others.Groups[j])
			j++
		}
	}
	b.respond(from, req, resp)
}

func (b *Broker) handleOffsetDelete(from sim.NodeID, req *wire.Request, body *kmsg.OffsetDeleteRequest) {
	unknown := func(topic string) bool { return b.metadata.topicPartitions(topic) == 0 }
	b.respond(from, req, b.group.coord.OffsetDelete(b.ctx.Now(), body, unknown))
}
