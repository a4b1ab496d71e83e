package server

// This file serves TxnOffsetCommit (api key 28), which a transactional
// producer sends to the group coordinator after AddOffsetsToTxn (KIP-98,
// KIP-447; KafkaApis.handleTxnOffsetCommitRequest): the group coordinator
// (package coordinator, txn_offsets.go) checks the group and member and
// appends the offsets to the group's __consumer_offsets partition as one
// TRANSACTIONAL batch of the producer id and epoch, as leader with
// acks=all. The partition is one of the transaction's (AddOffsetsToTxn
// added it), so the coordinator's WriteTxnMarkers reach it; once a marker
// is replicated there, write_txn_markers.go calls the marker hook set in
// startCoordinator, which commits or drops the pending offsets. A
// coordinator that loads the partition after a fail-over rebuilds them
// from the log's transactional and control batches (LoadBatches).
//
// Versions: v0-v3 (v3: generation, member id, group instance id).
// Simplifications: no authorization checks (TRANSACTIONAL_ID_ and
// GROUP_AUTHORIZATION_FAILED); v4+ (KIP-890 part 2) not served; the
// batch's sequence is 0 and not checked against the producer's sequences
// (Kafka appends it with AppendOrigin.COORDINATOR, which skips them), but
// its epoch is (INVALID_PRODUCER_EPOCH).

import (
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// appendGroupTxnRecords appends the group coordinator's transactional
// offset records in one batch of producerID/producerEpoch, as leader with
// acks=all, and calls done once the HW passes it.
func (b *Broker) appendGroupTxnRecords(partition int32, producerID int64, producerEpoch int16, recs []storage.Record, done func(sim.Time, *kerr.Error)) {
	tp := storage.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: partition}
	p := b.partitions[tp]
	if err := b.checkLeader(p, -1); err != nil {
		done(b.ctx.Now(), err)
		return
	}
	if len(p.isr) < p.minISR {
		b.logp("not-enough-replicas", p, sim.S("isr", fmtIDs(p.isr)), sim.I("min-isr", int64(p.minISR)))
		done(b.ctx.Now(), kerr.NotEnoughReplicas)
		return
	}
	batch := storage.NewBatch(0, recs)
	batch.ProducerID, batch.ProducerEpoch, batch.BaseSequence = producerID, producerEpoch, 0
	batch.Attributes |= storage.TransactionalFlagMask
	raw := batch.AppendTo(nil)
	if terr := p.checkProducerAppend(raw); terr != nil {
		b.logp("txn-append-error", p, sim.I("producer", producerID), sim.I("producer-epoch", int64(producerEpoch)), sim.S("error", terr.Message))
		done(b.ctx.Now(), terr)
		return
	}
	info, err := p.log.AppendRawAsLeader(raw, p.leaderEpoch, b.ctx.Now())
	if err != nil {
		done(b.ctx.Now(), kerr.CorruptMessage)
		return
	}
	b.logp("append-txn-offsets", p, sim.I("first", info.FirstOffset), sim.I("last", info.LastOffset), sim.I("producer", producerID),
		sim.I("producer-epoch", int64(producerEpoch)), sim.I("lso", p.LastStableOffset()))
	b.leaderAppended(p)
	b.awaitGroupAppend(tp, info.LastOffset, done)
}
