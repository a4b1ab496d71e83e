package coordinator

// This file places groups on __consumer_offsets partitions, bit-exact with
// Kafka: partitionFor(groupId) = Utils.abs(groupId.hashCode) %
// groupMetadataTopicPartitionCount (GroupMetadataManager.partitionFor),
// with Java's String.hashCode from assignor.JavaStringHashCode.

import "github.com/kafkasim/kafkasim/broker/assignor"

// OffsetsTopic is the internal topic that holds committed offsets and group
// metadata.
const OffsetsTopic = "__consumer_offsets"

// KafkaAbs is Kafka's Utils.abs: the absolute value, except that
// Integer.MIN_VALUE maps to 0 (Math.abs would leave it negative).
func KafkaAbs(n int32) int32 {
	switch {
	case n == -1<<31:
		return 0
	case n < 0:
		return -n
	}
	return n
}

// CoordinatorPartition returns the __consumer_offsets partition whose leader
// coordinates groupID, with numPartitions = offsets.topic.num.partitions.
// It panics if numPartitions < 1.
func CoordinatorPartition(groupID string, numPartitions int) int {
	if numPartitions < 1 {
		panic("coordinator: offsets.topic.num.partitions must be >= 1")
	}
	return int(KafkaAbs(assignor.JavaStringHashCode(groupID))) % numPartitions
}
