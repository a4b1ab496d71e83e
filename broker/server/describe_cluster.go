package server

// This file serves DescribeCluster (api key 60), v0-v2 (KIP-700), as
// Kafka's KafkaApis.handleDescribeCluster: the brokers and controller of
// the metadata cache (the same a Metadata answer names), the cluster id
// and, when asked for, the cluster's authorized operations (all of them:
// no authorizer; -2147483648 otherwise). v1 (KIP-919) carries the
// endpoint type: a broker answers a request for controllers (type 2)
// MISMATCHED_ENDPOINT_TYPE; v2 (KIP-1073) lists the fenced brokers too
// when asked, from the KRaft metadata image.
//
// Simplified: the cluster id is KRaft's cluster.id; in ZooKeeper mode
// /cluster/id is not modelled and the id is "".

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Endpoint types of DescribeCluster v1+ (EndpointType).
const (
	endpointBroker     int8 = 1
	endpointController int8 = 2
)

func (b *Broker) describeCluster(body *kmsg.DescribeClusterRequest) *kmsg.DescribeClusterResponse {
	resp := body.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = endpointBroker
	if body.Version >= 1 && body.EndpointType != endpointBroker {
		m := "the request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"
		if body.EndpointType != endpointController {
			m = "unknown endpoint type " + itoa64(int64(body.EndpointType))
		}
		resp.ErrorCode, resp.ErrorMessage = kerr.MismatchedEndpointType.Code, &m
		return resp
	}
	if k := b.cfg.KRaft; k != nil {
		resp.ClusterID = k.Raft.ClusterID
	}
	resp.ControllerID = b.metadata.controller
	resp.ClusterAuthorizedOperations = -2147483648
	if body.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterAuthorizedOps
	}
	if img := b.Image(); img != nil && body.Version >= 2 && body.IncludeFencedBrokers {
		for _, bs := range img.Brokers() {
			var rack *string
			if bs.Rack != "" {
				r := bs.Rack
				rack = &r
			}
			resp.Brokers = append(resp.Brokers, kmsg.DescribeClusterResponseBroker{NodeID: bs.ID, Host: NodeName(bs.ID), Port: 9092, Rack: rack, IsFenced: bs.Fenced})
		}
		return resp
	}
	for _, bi := range b.metadata.brokers {
		resp.Brokers = append(resp.Brokers, kmsg.DescribeClusterResponseBroker{NodeID: bi.id, Host: NodeName(bi.id), Port: 9092, Rack: bi.rack})
	}
	return resp
}
