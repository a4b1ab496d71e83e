package server

// This file hosts the transaction coordinator (package txn) in the broker,
// as group_coordinator.go hosts the group coordinator: the broker leads the
// transactional ids of the __transaction_state partitions it leads;
// makeLeader starts loading one (COORDINATOR_LOAD_IN_PROGRESS until the
// load timer fires and the log is read up to its LEO, as Kafka's
// TransactionStateManager.loadTransactionsForTxnTopicPartition), and
// losing leadership resigns it. The coordinator's records are appended as
// leader with acks=all (Kafka's TransactionLog.ENFORCED_REQUIRED_ACKS) and
// the coordinator is told once the HW passes them.
//
// The markers channel follows Kafka's TransactionMarkerChannelManager:
// each marker (one transaction end, one partition) waits in a queue until
// its partition has a known leader in the metadata cache; the queue is
// drained into one WriteTxnMarkers request (api key 27, v1; v2 with
// transaction version 2) per leader broker, one request in flight per
// broker. NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
// NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR
// and a failed request put the marker back in the queue, to be sent again
// to whichever broker the metadata cache (kept current by the controller's
// UpdateMetadata) then names leader; INVALID_PRODUCER_EPOCH and
// TRANSACTION_COORDINATOR_FENCED drop it (a newer coordinator or producer
// epoch owns the partition); UNSUPPORTED_FOR_MESSAGE_FORMAT counts as
// written. Once every marker of an end is written, the coordinator writes
// CompleteCommit or CompleteAbort. Resigning a partition drops its markers
// (the next coordinator resends them from the log).
//
// Versions: FindCoordinator key_type 1 (transaction) in
// group_coordinator.go; InitProducerId (init_producer_id.go),
// AddPartitionsToTxn, AddOffsetsToTxn, EndTxn in their own files.
// Simplifications: __transaction_state is created by the cluster's admin
// (package cluster) when kafkasim.transactions is set, rather than on the
// first FindCoordinator; loading takes a fixed txnLoadTime; markers for
// unknown leaders are retried every txnMarkerRetry instead of on every
// poll of the send thread; a marker's request times out after
// txnMarkerTimeout (request.timeout.ms); a coordinator append waits for
// the HW at most offsets.commit.timeout.ms, as the group coordinator's do
// (Kafka: request.timeout.ms), then fails with REQUEST_TIMED_OUT
// (COORDINATOR_NOT_AVAILABLE to the client).
//
// For the lead: the brokers' WriteTxnMarkers handler (api 27) is the data
// plane's; it must answer each partition's marker (NOT_LEADER_OR_FOLLOWER
// when not the leader, which this channel retries). The produce path's
// KIP-890 part 1 check is VerifyTxnPartitions (add_partitions_to_txn.go).

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Timer names of the transaction coordinator's host.
const (
	timerTxnTick        = "txn-coordinator"
	timerTxnLoad        = "txn-load"
	timerTxnMarkerRetry = "txn-marker-retry"
)

const (
	txnLoadTime      = 200 * sim.Millisecond
	txnMarkerRetry   = 100 * sim.Millisecond
	txnMarkerTimeout = 30 * sim.Second
)

// txnHost is the broker's state for its transaction coordinator.
type txnHost struct {
	coord  *txn.Coordinator
	tick   deadlineTimer
	loads  map[sim.TimerID]groupLoad
	epochs map[int32]int32 // __transaction_state partition -> leader epoch (the coordinator epoch)

	queue    []*txnMarker   // markers waiting to be sent
	inflight map[int32]bool // brokers with a WriteTxnMarkers in flight
	retry    sim.TimerID
}

// txnEnd is one transaction end whose markers are being written.
type txnEnd struct {
	partition        int32 // of __transaction_state
	coordinatorEpoch int32
	m                txn.Markers
	left             int // markers not yet written
	done             func(sim.Time)
	dropped          bool
}

// txnMarker is one partition's marker of a transaction end.
type txnMarker struct {
	end *txnEnd
	tp  storage.TopicPartition
}

func (b *Broker) startTxnCoordinator() {
	b.txn = txnHost{loads: map[sim.TimerID]groupLoad{}, epochs: map[int32]int32{}, inflight: map[int32]bool{}}
	b.txn.coord = txn.New(b.cfg.Txn, txn.Env{
		Append:        b.appendTxnRecords,
		NewProducerID: func(done func(int64, *kerr.Error)) { b.nextProducerID(done) },
		WriteMarkers:  b.writeTxnMarkers,
		Log:           func(kind string, fields ...sim.Field) { b.ctx.Log(kind, fields...) },
	})
	if b.cfg.TxnPartitionVerification {
		b.SetTxnVerifier(coordinatorVerifier{b})
	}
}

// coordinatorVerifier is the produce path's KIP-890 verifier: it asks the
// transactional id's coordinator (VerifyTxnPartitions: this broker, or
// AddPartitionsToTxn v4 VerifyOnly to the coordinator's broker) and maps
// its answer to the Produce error as Kafka's AddPartitionsToTxnManager
// does: a coordinator that is moving, loading or busy becomes
// NOT_ENOUGH_REPLICAS (retriable: the producer sends again), anything else
// (INVALID_TXN_STATE: the partition was never added) passes through.
type coordinatorVerifier struct{ b *Broker }

func (v coordinatorVerifier) VerifyTxn(transactionalID string, pid int64, epoch int16, tp storage.TopicPartition, done func(*kerr.Error)) {
	v.b.VerifyTxnPartitions(transactionalID, pid, epoch, []storage.TopicPartition{tp}, func(errs []*kerr.Error) {
		err := errs[0]
		switch err {
		case kerr.CoordinatorNotAvailable, kerr.NotCoordinator, kerr.CoordinatorLoadInProgress, kerr.ConcurrentTransactions:
			err = kerr.NotEnoughReplicas
		}
		done(err)
	})
}

// TxnCoordinator returns the broker's transaction coordinator.
func (b *Broker) TxnCoordinator() *txn.Coordinator { return b.txn.coord }

// serveTxn serves the transaction coordinator's APIs and reports whether
// req was one.
func (b *Broker) serveTxn(from sim.NodeID, req *wire.Request) bool {
	switch body := req.Body.(type) {
	case *kmsg.AddPartitionsToTxnRequest:
		b.handleAddPartitionsToTxn(from, req, body)
	case *kmsg.AddOffsetsToTxnRequest:
		b.handleAddOffsetsToTxn(from, req, body)
	case *kmsg.EndTxnRequest:
		b.handleEndTxn(from, req, body)
	default:
		return false
	}
	b.armTxnTick()
	return true
}

// txnLogLeader starts loading a __transaction_state partition this broker
// now leads.
func (b *Broker) txnLogLeader(p *Partition) {
	if p.tp.Topic != txn.StateTopic {
		return
	}
	b.txn.coord.BecomeLeader(b.ctx.Now(), p.tp.Partition)
	b.txn.epochs[p.tp.Partition] = p.leaderEpoch
	b.dropTxnMarkers(p.tp.Partition)
	id := b.ctx.SetTimer(txnLoadTime, timerTxnLoad)
	b.txn.loads[id] = groupLoad{partition: p.tp.Partition, epoch: p.leaderEpoch}
	b.armTxnTick()
}

// txnLogLost resigns a __transaction_state partition this broker no longer
// leads (its appends are failed by offsetsLost's caller).
func (b *Broker) txnLogLost(tp storage.TopicPartition) {
	if tp.Topic != txn.StateTopic || b.txn.coord == nil {
		return
	}
	b.txn.coord.Resign(b.ctx.Now(), tp.Partition)
	delete(b.txn.epochs, tp.Partition)
	b.dropTxnMarkers(tp.Partition)
}

// appendTxnRecords appends the coordinator's records as leader, acks=all.
func (b *Broker) appendTxnRecords(partition int32, recs []storage.Record, done func(sim.Time, *kerr.Error)) {
	b.appendCoordinatorRecords(storage.TopicPartition{Topic: txn.StateTopic, Partition: partition}, recs,
		func(now sim.Time, err *kerr.Error) { done(now, err); b.armTxnTick() })
}

// handleTxnTimer handles the transaction coordinator's timers.
func (b *Broker) handleTxnTimer(id sim.TimerID, name string) bool {
	switch name {
	case timerTxnTick:
		if b.txn.tick.fired(id) {
			b.txn.coord.Tick(b.ctx.Now())
		}
	case timerTxnLoad:
		p, partition, ok := b.loadDue(b.txn.loads, id, txn.StateTopic)
		if !ok {
			return true
		}
		recs, err := readAll(p.log)
		if err == nil {
			err = b.txn.coord.Load(b.ctx.Now(), partition, recs)
		}
		if err != nil {
			panic(fmt.Sprintf("broker %d: loading %s-%d: %v", b.cfg.BrokerID, txn.StateTopic, partition, err))
		}
	case timerTxnMarkerRetry:
		if id == b.txn.retry {
			b.txn.retry = 0
			b.drainTxnMarkers()
		}
	default:
		return false
	}
	b.armTxnTick()
	return true
}

// armTxnTick sets the coordinator's timer for its next deadline.
func (b *Broker) armTxnTick() {
	at, ok := b.txn.coord.NextDeadline()
	b.txn.tick.arm(b.ctx, at, ok, timerTxnTick)
}

// writeTxnMarkers queues the markers of one transaction end.
func (b *Broker) writeTxnMarkers(partition int32, m txn.Markers, done func(sim.Time)) {
	end := &txnEnd{partition: partition, coordinatorEpoch: b.txn.epochs[partition], m: m, left: len(m.Partitions), done: done}
	if end.left == 0 {
		done(b.ctx.Now())
		return
	}
	for _, tp := range m.Partitions {
		b.txn.queue = append(b.txn.queue, &txnMarker{end: end, tp: tp})
	}
	b.drainTxnMarkers()
}

// dropTxnMarkers forgets the queued markers of a __transaction_state
// partition's transactions.
func (b *Broker) dropTxnMarkers(partition int32) {
	kept := b.txn.queue[:0]
	for _, mk := range b.txn.queue {
		if mk.end.partition == partition {
			mk.end.dropped = true
		} else {
			kept = append(kept, mk)
		}
	}
	clear(b.txn.queue[len(kept):])
	b.txn.queue = kept
}

// drainTxnMarkers sends the queued markers whose partitions have a known
// leader, one request per broker without one in flight.
func (b *Broker) drainTxnMarkers() {
	byBroker := map[int32][]*txnMarker{}
	var brokers []int32
	kept := b.txn.queue[:0]
	unknown := false
	for _, mk := range b.txn.queue {
		if mk.end.dropped {
			continue
		}
		ps, ok := b.metadata.partitions[mk.tp]
		switch {
		case !ok || ps.Leader < 0:
			unknown = true
			kept = append(kept, mk)
		case b.txn.inflight[ps.Leader]:
			kept = append(kept, mk)
		default:
			if byBroker[ps.Leader] == nil {
				brokers = append(brokers, ps.Leader)
			}
			byBroker[ps.Leader] = append(byBroker[ps.Leader], mk)
		}
	}
	clear(b.txn.queue[len(kept):])
	b.txn.queue = kept
	slices.Sort(brokers)
	for _, to := range brokers {
		b.sendTxnMarkers(to, byBroker[to])
	}
	if unknown && b.txn.retry == 0 {
		b.txn.retry = b.ctx.SetTimer(txnMarkerRetry, timerTxnMarkerRetry)
	}
}

// sendTxnMarkers sends one WriteTxnMarkers with mks (in queue order) to
// broker to: one marker entry per transaction end, its partitions by topic.
func (b *Broker) sendTxnMarkers(to int32, mks []*txnMarker) {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	var ends []*txnEnd
	parts := map[*txnEnd][]*txnMarker{}
	for _, mk := range mks {
		if parts[mk.end] == nil {
			ends = append(ends, mk.end)
		}
		parts[mk.end] = append(parts[mk.end], mk)
	}
	for _, e := range ends {
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = e.m.ProducerID, e.m.ProducerEpoch, e.m.Commit, e.coordinatorEpoch
		m.TransactionVersion = int8(e.m.TransactionVersion)
		if e.m.TransactionVersion >= 2 {
			req.Version = 2
		}
		for _, mk := range parts[e] {
			if n := len(m.Topics); n == 0 || m.Topics[n-1].Topic != mk.tp.Topic {
				m.Topics = append(m.Topics, kmsg.WriteTxnMarkersRequestMarkerTopic{Topic: mk.tp.Topic})
			}
			t := &m.Topics[len(m.Topics)-1]
			t.Partitions = append(t.Partitions, mk.tp.Partition)
		}
		req.Markers = append(req.Markers, m)
	}
	b.txn.inflight[to] = true
	b.ctx.Log("txn-markers-sent", sim.I("broker", int64(to)), sim.I("markers", int64(len(mks))))
	b.send(to, req, txnMarkerTimeout, func(r kmsg.Response, err error) {
		delete(b.txn.inflight, to)
		var resp *kmsg.WriteTxnMarkersResponse
		if err == nil {
			resp = r.(*kmsg.WriteTxnMarkersResponse)
		}
		for _, mk := range mks {
			b.txnMarkerAnswered(mk, markerError(resp, mk))
		}
		b.drainTxnMarkers()
		b.armTxnTick()
	})
}

// markerError returns mk's error code in resp; a missing response or
// partition is REQUEST_TIMED_OUT (retried).
func markerError(resp *kmsg.WriteTxnMarkersResponse, mk *txnMarker) int16 {
	if resp == nil {
		return kerr.RequestTimedOut.Code
	}
	for _, m := range resp.Markers {
		if m.ProducerID != mk.end.m.ProducerID {
			continue
		}
		for _, t := range m.Topics {
			if t.Topic != mk.tp.Topic {
				continue
			}
			for _, p := range t.Partitions {
				if p.Partition == mk.tp.Partition {
					return p.ErrorCode
				}
			}
		}
	}
	return kerr.RequestTimedOut.Code
}

func (b *Broker) txnMarkerAnswered(mk *txnMarker, code int16) {
	if mk.end.dropped {
		return
	}
	switch kerr.ErrorForCode(code) {
	case nil, kerr.UnsupportedForMessageFormat:
		if mk.end.left--; mk.end.left == 0 {
			b.ctx.Log("txn-markers-written", sim.S("txn", mk.end.m.TransactionalID), sim.I("producer", mk.end.m.ProducerID),
				sim.I("epoch", int64(mk.end.m.ProducerEpoch)), sim.S("commit", strconv.FormatBool(mk.end.m.Commit)))
			mk.end.done(b.ctx.Now())
		}
	case kerr.InvalidProducerEpoch, kerr.TransactionCoordinatorFenced:
		b.ctx.Log("txn-marker-dropped", sim.S("txn", mk.end.m.TransactionalID), sim.S("partition", mk.tp.String()), sim.S("error", kerr.ErrorForCode(code).Error()))
	default:
		b.txn.queue = append(b.txn.queue, mk)
	}
}
