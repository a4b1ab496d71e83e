package server

// This file serves WriteTxnMarkers (api key 27), which a transaction
// coordinator sends to the leaders of a transaction's partitions once the
// transaction is prepared (KIP-98; KafkaApis.handleWriteTxnMarkersRequest):
// for each marker and each partition this broker leads, a control batch
// (producer id and epoch, COMMIT or ABORT, coordinator epoch) is appended
// as leader with acks=all, which completes the producer's ongoing
// transaction in the log's producer state, records an aborted one in the
// .txnindex and lets the LSO advance; the answer goes once every marker is
// replicated (the HW passed it) or failed, as Kafka's appendRecords with
// RequiredAcks -1 does. A marker on a __consumer_offsets partition that
// succeeded is then reported to the group coordinator's host
// (groupHost.onTxnMarker; GroupCoordinator.onTransactionCompleted), which
// completes the transactional offset commits it holds.
//
// Versions: v0 to v2. v2's TransactionVersion decides the epoch check
// only where the release has KAFKA-19446 (Config.StrictTV2MarkerEpoch):
// a TV2 marker must then carry an epoch above the producer's, or equal to
// it with no transaction ongoing (a retry, KAFKA-19999); otherwise, and in
// every release before, a marker is refused only below the producer's.
// Errors per partition, as Kafka: UNKNOWN_TOPIC_OR_PARTITION (no replica
// here), NOT_LEADER_OR_FOLLOWER, UNSUPPORTED_FOR_MESSAGE_FORMAT (a log
// below v2), NOT_ENOUGH_REPLICAS (ISR below min.insync.replicas before the
// append), NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT (30 s, the
// request.timeout.ms default), INVALID_PRODUCER_EPOCH (a marker older than
// the producer's epoch, or not newer under the strict check), TRANSACTION_COORDINATOR_FENCED (a coordinator
// epoch below the last marker's).
// Simplification: no authorization (CLUSTER_ACTION) check.

import (
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// markerTimeout bounds the wait for a marker's replication
// (request.timeout.ms, which Kafka passes to appendRecords).
const markerTimeout = 30 * sim.Second

// TxnMarkerHook is told of every transaction marker written and replicated
// on a __consumer_offsets partition this broker leads: the group
// coordinator completes (commit) or drops (abort) the pending
// transactional offset commits of producerID.
type TxnMarkerHook func(partition int32, producerID int64, producerEpoch int16, commit bool)

// SetTxnMarkerHook installs the group coordinator's marker hook (nil: no
// hook). A broker is made fresh at each start: set it when it starts.
func (b *Broker) SetTxnMarkerHook(h TxnMarkerHook) { b.group.onTxnMarker = h }

// markerPartition is one partition of a WriteTxnMarkers request that was
// appended and waits for its replication.
type markerPartition struct {
	mi, ti, pi int
	tp         storage.TopicPartition
	resp       kmsg.ProduceResponseTopicPartition
}

func (b *Broker) handleWriteTxnMarkers(from sim.NodeID, req *wire.Request, body *kmsg.WriteTxnMarkersRequest) {
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	resp.Markers = make([]kmsg.WriteTxnMarkersResponseMarker, len(body.Markers))
	var waiting []*markerPartition
	for mi, m := range body.Markers {
		rm := &resp.Markers[mi]
		rm.ProducerID = m.ProducerID
		rm.Topics = make([]kmsg.WriteTxnMarkersResponseMarkerTopic, len(m.Topics))
		for ti, t := range m.Topics {
			rt := &rm.Topics[ti]
			rt.Topic = t.Topic
			rt.Partitions = make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, len(t.Partitions))
			for pi, part := range t.Partitions {
				rt.Partitions[pi].Partition = part
				tp := storage.TopicPartition{Topic: t.Topic, Partition: part}
				last, err := b.appendTxnMarker(tp, &m)
				if err != nil {
					rt.Partitions[pi].ErrorCode = err.Code
					continue
				}
				mp := &markerPartition{mi: mi, ti: ti, pi: pi, tp: tp}
				mp.resp.Partition = part
				mp.resp.BaseOffset = last
				waiting = append(waiting, mp)
			}
		}
	}
	finish := func() {
		for _, mp := range waiting {
			resp.Markers[mp.mi].Topics[mp.ti].Partitions[mp.pi].ErrorCode = mp.resp.ErrorCode
		}
		for _, mp := range waiting {
			m := &body.Markers[mp.mi]
			if mp.resp.ErrorCode == 0 && mp.tp.Topic == coordinator.OffsetsTopic && b.group.onTxnMarker != nil {
				b.group.onTxnMarker(mp.tp.Partition, m.ProducerID, m.ProducerEpoch, m.Committed)
			}
		}
		b.respond(from, req, resp)
	}
	if len(waiting) == 0 {
		finish()
		return
	}
	d := &delayedProduce{from: from, req: req, onDone: finish}
	for _, mp := range waiting {
		d.parts = append(d.parts, &producePartition{tp: mp.tp, required: mp.resp.BaseOffset + 1, resp: &mp.resp})
	}
	b.delayProduce(d, markerTimeout)
}

// appendTxnMarker appends marker m to partition tp as leader and returns
// the marker's offset.
func (b *Broker) appendTxnMarker(tp storage.TopicPartition, m *kmsg.WriteTxnMarkersRequestMarker) (int64, *kerr.Error) {
	p := b.partitions[tp]
	if err := b.checkLeader(p, -1); err != nil {
		return -1, err
	}
	if p.log.Magic() < storage.MagicV2 {
		return -1, kerr.UnsupportedForMessageFormat
	}
	if len(p.isr) < p.minISR {
		b.logp("not-enough-replicas", p, sim.S("isr", fmtIDs(p.isr)), sim.I("min-isr", int64(p.minISR)))
		return -1, kerr.NotEnoughReplicas
	}
	var tv int16 // the legacy check, as every release before KAFKA-19446
	if b.cfg.StrictTV2MarkerEpoch {
		tv = int16(m.TransactionVersion)
	}
	info, err := p.log.AppendControlAsLeader(m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed, tv, p.leaderEpoch, b.ctx.Now())
	if err != nil {
		terr := txnAppendError(err)
		b.logp("txn-marker-refused", p, sim.I("producer", m.ProducerID), sim.I("producer-epoch", int64(m.ProducerEpoch)),
			sim.I("coordinator-epoch", int64(m.CoordinatorEpoch)), sim.S("error", terr.Message))
		return -1, terr
	}
	p.recordProducerAppend(storage.BatchInfo{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, BaseSequence: storage.NoSequence,
		Attributes: storage.TransactionalFlagMask | storage.ControlFlagMask, BaseOffset: info.FirstOffset, LastOffset: info.LastOffset, Count: 1},
		info.FirstOffset, info.LastOffset)
	kind := "ABORT"
	if m.Committed {
		kind = "COMMIT"
	}
	b.logp("txn-marker", p, sim.I("offset", info.FirstOffset), sim.I("producer", m.ProducerID), sim.I("producer-epoch", int64(m.ProducerEpoch)),
		sim.S("marker", kind), sim.I("coordinator-epoch", int64(m.CoordinatorEpoch)), sim.I("lso", p.LastStableOffset()))
	b.leaderAppended(p)
	return info.FirstOffset, nil
}
