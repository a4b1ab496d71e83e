package server

// This file serves the cluster-metadata APIs kept in security.Store (the
// package says what it simplifies): CreateAcls, DescribeAcls, DeleteAcls
// (v0-v3; v1-v3 from 4.0, KIP-896), AlterUserScramCredentials,
// DescribeUserScramCredentials (v0), AlterClientQuotas,
// DescribeClientQuotas (v0-v1); and ListPartitionReassignments (v0).
//
// Any broker answers them, in both modes, from the cluster's one Store
// (Config.Security). Kafka's ZooKeeper-mode broker writes the znodes
// itself, as this does; a KRaft broker forwards the writes to the active
// controller and answers the reads from its metadata image, so here a
// write is seen by every broker at once, where Kafka's brokers may lag
// the controller by a fetch of the metadata log.
//
// Partition reassignments (KIP-455) are not modelled: no reassignment is
// ever in progress, so ListPartitionReassignments answers none (for
// topics that exist; KRaft's controller answers UNKNOWN_TOPIC_OR_PARTITION
// for one that does not, as ReplicationControlManager does), and
// AlterPartitionReassignments is left out of ApiVersions (api_versions.go).

import (
	"github.com/kafkasim/kafkasim/broker/security"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// store is the cluster's security metadata.
func (b *Broker) store() *security.Store {
	if b.cfg.Security == nil {
		b.cfg.Security = security.NewStore() // a Broker made without New
	}
	return b.cfg.Security
}

// SetSecurity makes s the broker's security metadata: a cluster gives
// every node the same Store.
func (b *Broker) SetSecurity(s *security.Store) { b.cfg.Security = s }

// serveSecurity serves the APIs of this file and reports whether req was one.
func (b *Broker) serveSecurity(from sim.NodeID, req *wire.Request) bool {
	var resp kmsg.Response
	switch body := req.Body.(type) {
	case *kmsg.CreateACLsRequest:
		resp = b.store().CreateAcls(body)
	case *kmsg.DescribeACLsRequest:
		resp = b.store().DescribeAcls(body)
	case *kmsg.DeleteACLsRequest:
		resp = b.store().DeleteAcls(body)
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		resp = b.store().AlterUserScramCredentials(body)
	case *kmsg.DescribeUserSCRAMCredentialsRequest:
		resp = b.store().DescribeUserScramCredentials(body)
	case *kmsg.AlterClientQuotasRequest:
		resp = b.store().AlterClientQuotas(body)
	case *kmsg.DescribeClientQuotasRequest:
		resp = b.store().DescribeClientQuotas(body)
	case *kmsg.ListPartitionReassignmentsRequest:
		resp = b.listPartitionReassignments(body)
	default:
		return false
	}
	b.respond(from, req, resp)
	return true
}

// listPartitionReassignments answers that no reassignment is in progress.
func (b *Broker) listPartitionReassignments(body *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	resp := kmsg.NewPtrListPartitionReassignmentsResponse()
	resp.Version = body.Version
	if b.kraftMode() {
		for _, t := range body.Topics {
			if b.metadata.topicPartitions(t.Topic) == 0 {
				msg := "topic " + t.Topic + " does not exist"
				resp.ErrorCode, resp.ErrorMessage = kerr.UnknownTopicOrPartition.Code, &msg
				return resp
			}
		}
	}
	return resp
}
