package server

// This file serves DeleteGroups (api key 42), v0-v2, and OffsetDelete
// (47), v0, through the group coordinator (broker/coordinator/delete.go
// says how): each group is answered by its coordinator, which is the
// broker the client found with FindCoordinator (NOT_COORDINATOR
// elsewhere). OffsetDelete's partitions of a topic the metadata cache
// does not have are UNKNOWN_TOPIC_OR_PARTITION, as KafkaApis answers them
// before the coordinator. The same in both modes.

import (
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleDeleteGroups(from sim.NodeID, req *wire.Request, body *kmsg.DeleteGroupsRequest) {
	b.respond(from, req, b.group.coord.DeleteGroups(b.ctx.Now(), body))
}

func (b *Broker) handleOffsetDelete(from sim.NodeID, req *wire.Request, body *kmsg.OffsetDeleteRequest) {
	unknown := func(topic string) bool { return b.metadata.topicPartitions(topic) == 0 }
	b.respond(from, req, b.group.coord.OffsetDelete(b.ctx.Now(), body, unknown))
}
