package server

// This file serves ElectLeaders (api key 43), v0-v2: v0 elects preferred
// leaders (KIP-183), v1+ carries the election type (KIP-460: 0
// preferred, 1 unclean) and a top-level error code; a null partition list
// means every partition, and then the answer leaves out those that needed
// no election (ELECTION_NOT_NEEDED).
//
// ZooKeeper mode, as KafkaApis.handleElectLeaders and
// ReplicaManager.electLeaders: the broker hands the partitions to its own
// controller (package controller's ElectLeaders), which answers
// NOT_CONTROLLER for each unless it is the active one. KRaft mode:
// forwarded to the active controller (broker/kraft/elect_leaders.go).
// An unclean election through this API counts for the checkers as any
// unclean election (the controller's unclean-election trace record).
//
// Simplified: the answer comes once the controller has written and
// announced the new leaders (Kafka's DelayedElectLeader waits until the
// metadata cache shows them); an unknown election type is INVALID_REQUEST
// for the whole request.

import (
	"github.com/kafkasim/kafkasim/broker/controller"
	"github.com/kafkasim/kafkasim/broker/kraft"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleElectLeaders(from sim.NodeID, req *wire.Request, body *kmsg.ElectLeadersRequest) {
	if b.kraft != nil {
		b.forwardAdmin(from, req, body)
		return
	}
	typ := kraft.ElectionPreferred
	if body.Version >= 1 {
		typ = body.ElectionType
	}
	if typ != kraft.ElectionPreferred && typ != kraft.ElectionUnclean {
		b.respond(from, req, kraft.ErrorResponse(body, kerr.InvalidRequest))
		return
	}
	if b.controller == nil {
		b.respond(from, req, kraft.ErrorResponse(body, kerr.NotController))
		return
	}
	var tps []controller.TP
	if body.Topics == nil {
		for _, tp := range b.metadata.sortedPartitions() {
			tps = append(tps, controller.TP{Topic: tp.Topic, Partition: tp.Partition})
		}
	} else {
		for _, t := range body.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, controller.TP{Topic: t.Topic, Partition: p})
			}
		}
	}
	b.controller.ElectLeaders(b.ctx, tps, typ == kraft.ElectionUnclean, func(errs []*kerr.Error) {
		resp := body.ResponseKind().(*kmsg.ElectLeadersResponse)
		for i, tp := range tps {
			e := errs[i]
			if body.Topics == nil && e == kerr.ElectionNotNeeded {
				continue
			}
			if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != tp.Topic {
				resp.Topics = append(resp.Topics, kmsg.ElectLeadersResponseTopic{Topic: tp.Topic})
			}
			pr := kmsg.ElectLeadersResponseTopicPartition{Partition: tp.Partition}
			if e != nil {
				m := e.Message
				pr.ErrorCode, pr.ErrorMessage = e.Code, &m
			}
			rt := &resp.Topics[len(resp.Topics)-1]
			rt.Partitions = append(rt.Partitions, pr)
		}
		b.respond(from, req, resp)
	})
}
