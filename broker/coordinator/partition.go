package coordinator

// This file places groups on __consumer_offsets partitions, bit-exact with
// Kafka: partitionFor(groupId) = Utils.abs(groupId.hashCode) %
// groupMetadataTopicPartitionCount (GroupMetadataManager.partitionFor).

import "unicode/utf16"

// OffsetsTopic is the internal topic that holds committed offsets and group
// metadata.
const OffsetsTopic = "__consumer_offsets"

// JavaStringHashCode is Java's String.hashCode: h = 31*h + c over the
// string's UTF-16 code units, in wrapping 32-bit arithmetic.
func JavaStringHashCode(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
	}
	return h
}

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
	return int(KafkaAbs(JavaStringHashCode(groupID))) % numPartitions
}
