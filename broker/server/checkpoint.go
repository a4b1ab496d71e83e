package server

// This file checkpoints the high watermarks of every replica to
// replication-offset-checkpoint every
// replica.high.watermark.checkpoint.interval.ms: the HW a restarted broker
// starts from (capped by its LEO), and, under hw truncation, where it cuts.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/storage"
)

func (b *Broker) checkpointHighWatermarks() {
	var hws []storage.PartitionOffset
	for _, p := range b.Partitions() {
		hws = append(hws, storage.PartitionOffset{TopicPartition: p.tp, Offset: p.hw})
	}
	if err := b.logs.WriteHighWatermarks(hws); err != nil {
		panic(fmt.Sprintf("broker %d: writing replication-offset-checkpoint: %v", b.cfg.BrokerID, err))
	}
}
