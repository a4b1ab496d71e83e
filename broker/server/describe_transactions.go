package server

// This file serves the describe APIs of transactions and producers
// (KIP-664, Kafka 3.0+), the same in both modes:
//   - DescribeTransactions (api key 65), v0: each transactional id as its
//     coordinator holds it (broker/txn/describe.go): state, producer id
//     and epoch, timeout, start time, partitions;
//   - ListTransactions (66), v0-v1: the ids this broker coordinates,
//     filtered by state names (unknown ones listed back), producer ids
//     and, v1 (KIP-994), a minimum running time;
//   - DescribeProducers (61), v0: the active producers of each partition
//     this broker leads, from its log's producer state
//     (NOT_LEADER_OR_FOLLOWER elsewhere, UNKNOWN_TOPIC_OR_PARTITION for a
//     partition the metadata cache does not have).
//
// Simplified: no authorization (Kafka leaves out the ids a client may
// not describe).

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) describeTransactions(body *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse {
	resp := body.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range body.TransactionalIDs {
		ts := kmsg.NewDescribeTransactionsResponseTransactionState()
		ts.TransactionalID = id
		m, err := b.txn.coord.Describe(id)
		if err != nil {
			ts.ErrorCode = err.Code
			resp.TransactionStates = append(resp.TransactionStates, ts)
			continue
		}
		ts.State, ts.TimeoutMillis, ts.StartTimestamp = m.State.String(), m.TxnTimeoutMs, m.TxnStartTimestamp
		ts.ProducerID, ts.ProducerEpoch = m.ProducerID, m.ProducerEpoch
		for _, tp := range m.TopicPartitions { // sorted: one run per topic
			if n := len(ts.Topics); n == 0 || ts.Topics[n-1].Topic != tp.Topic {
				ts.Topics = append(ts.Topics, kmsg.DescribeTransactionsResponseTransactionStateTopic{Topic: tp.Topic})
			}
			t := &ts.Topics[len(ts.Topics)-1]
			t.Partitions = append(t.Partitions, tp.Partition)
		}
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	return resp
}

func (b *Broker) listTransactions(body *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse {
	resp := body.ResponseKind().(*kmsg.ListTransactionsResponse)
	all, err := b.txn.coord.List()
	if err != nil {
		resp.ErrorCode = err.Code
		return resp
	}
	var states []txn.State
	for _, n := range body.StateFilters {
		if s, ok := txn.StateByName(n); ok {
			states = append(states, s)
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, n)
		}
	}
	duration := int64(-1)
	if body.Version >= 1 {
		duration = body.DurationFilterMillis
	}
	now := int64(b.ctx.Now()) / 1e6
	for _, m := range all {
		switch {
		case len(body.ProducerIDFilters) > 0 && !slices.Contains(body.ProducerIDFilters, m.ProducerID):
			continue
		case len(body.StateFilters) > 0 && !slices.Contains(states, m.State):
			continue
		case duration >= 0 && now-m.TxnStartTimestamp <= duration:
			continue
		}
		resp.TransactionStates = append(resp.TransactionStates, kmsg.ListTransactionsResponseTransactionState{
			TransactionalID: m.TransactionalID, ProducerID: m.ProducerID, TransactionState: m.State.String()})
	}
	return resp
}

func (b *Broker) describeProducers(body *kmsg.DescribeProducersRequest) *kmsg.DescribeProducersResponse {
	resp := body.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, t := range body.Topics {
		rt := kmsg.DescribeProducersResponseTopic{Topic: t.Topic}
		for _, pid := range t.Partitions {
			rp := kmsg.DescribeProducersResponseTopicPartition{Partition: pid}
			tp := storage.TopicPartition{Topic: t.Topic, Partition: pid}
			p := b.partitions[tp]
			switch _, known := b.metadata.partitions[tp]; {
			case !known:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case p == nil || p.role != Leader:
				rp.ErrorCode = kerr.NotLeaderForPartition.Code
			default:
				for _, e := range p.log.ProducerStates() {
					rp.ActiveProducers = append(rp.ActiveProducers, kmsg.DescribeProducersResponseTopicPartitionActiveProducer{
						ProducerID: e.ProducerID, ProducerEpoch: int32(e.Epoch), LastSequence: e.LastSequence,
						LastTimestamp: e.Timestamp, CoordinatorEpoch: e.CoordinatorEpoch, CurrentTxnStartOffset: e.CurrentTxnFirstOffset})
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
