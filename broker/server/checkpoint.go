package server

// This file checkpoints the high watermarks of every replica to
// replication-offset-checkpoint every
// replica.high.watermark.checkpoint.interval.ms: the HW a restarted broker
// starts from (capped by its LEO), and, under hw truncation, where it cuts.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

func (b *Broker) checkpointHighWatermarks() {
	ps := b.Partitions()
	hws := make([]storage.PartitionOffset, 0, len(ps))
	for _, p := range ps {
		hws = append(hws, storage.PartitionOffset{TopicPartition: p.tp, Offset: p.hw})
	}
	if err := b.logs.WriteHighWatermarks(hws); err != nil {
		panic(fmt.Sprintf("broker %d: writing replication-offset-checkpoint: %v", b.cfg.BrokerID, err))
	}
}

// Shutdown implements sim.Stopper: a controlled shutdown. The broker
// checkpoints its HWs, flushes every log and writes the clean-shutdown
// marker (so the next start skips recovery), and closes its ZooKeeper
// session, which deletes its registration at once: the controller moves
// leadership without waiting for the session to expire.
// Simplification: Kafka first asks the controller to move leadership away
// (ControlledShutdown, api key 7) and waits; here the controller learns of
// it from the deleted registration.
func (b *Broker) Shutdown(ctx *sim.Context) {
	b.ctx = ctx
	if b.halted {
		return
	}
	if k := b.cfg.KRaft; k == nil || k.Broker {
		b.checkpointHighWatermarks()
	}
	if err := b.logs.Close(); err != nil {
		panic(fmt.Sprintf("broker %d: closing the logs: %v", b.cfg.BrokerID, err))
	}
	if b.zk != nil {
		b.zk.Close(ctx)
	}
	b.shutdownKRaft()
	ctx.Log("controlled-shutdown")
	b.halted = true
}
