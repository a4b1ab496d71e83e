package server

// This file serves DescribeLogDirs (api key 35), v0-v4 (KIP-113), as
// Kafka's ReplicaManager.describeLogDirs, the same in both modes: every
// log directory of log.dirs, with the partitions this broker holds there
// (those asked for; a null topic list means all): their size in bytes,
// an offset lag of 0 (no future replicas: AlterReplicaLogDirs is not
// served) and is_future false. v3 adds the top-level error code (NONE),
// v4 (KIP-827) the volume's total and usable bytes, answered -1 (unknown):
// the virtual disk's capacity is the run's, not a volume's.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) describeLogDirs(body *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse {
	resp := body.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	wanted := func(tp storage.TopicPartition) bool {
		if body.Topics == nil {
			return true
		}
		for _, t := range body.Topics {
			if t.Topic == tp.Topic && slices.Contains(t.Partitions, tp.Partition) {
				return true
			}
		}
		return false
	}
	for _, dir := range b.cfg.Storage.LogDirs {
		rd := kmsg.DescribeLogDirsResponseDir{Dir: dir, TotalBytes: -1, UsableBytes: -1}
		for _, tp := range b.logs.Partitions() { // sorted: one run per topic
			if b.logs.LogDir(tp) != dir || !wanted(tp) {
				continue
			}
			l, _ := b.logs.Log(tp)
			if n := len(rd.Topics); n == 0 || rd.Topics[n-1].Topic != tp.Topic {
				rd.Topics = append(rd.Topics, kmsg.DescribeLogDirsResponseDirTopic{Topic: tp.Topic})
			}
			t := &rd.Topics[len(rd.Topics)-1]
			t.Partitions = append(t.Partitions, kmsg.DescribeLogDirsResponseDirTopicPartition{Partition: tp.Partition, Size: l.Size()})
		}
		resp.Dirs = append(resp.Dirs, rd)
	}
	return resp
}
