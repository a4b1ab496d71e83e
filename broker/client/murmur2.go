package client

// This file is Kafka's key partitioner hash (Utils.murmur2 and
// Utils.toPositive in clients/.../common/utils/Utils.java), bit-exact: a
// keyed record lands on the partition a Java producer would pick, so
// scenarios can name partitions by key and histories can be compared with
// real clusters. Nothing is simplified.

// murmur2 constants, as in Utils.murmur2.
const (
	murmur2Seed = 0x9747b28c
	murmur2M    = 0x5bd1e995
	murmur2R    = 24
)

// Murmur2 returns Kafka's 32-bit murmur2 hash of data (seed 0x9747b28c),
// as the signed int Java returns. Java's int arithmetic wraps at 32 bits
// and its >>> is an unsigned shift, so the computation runs on uint32 and
// is converted at the end.
func Murmur2(data []byte) int32 {
	length := len(data)
	h := uint32(murmur2Seed) ^ uint32(length)
	for i := 0; i+4 <= length; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= murmur2M
		k ^= k >> murmur2R
		k *= murmur2M
		h *= murmur2M
		h ^= k
	}
	tail := length &^ 3
	// NB: Java's switch falls through from case 3 to case 1.
	switch length % 4 {
	case 3:
		h ^= uint32(data[tail+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[tail+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[tail])
		h *= murmur2M
	}
	h ^= h >> 13
	h *= murmur2M
	h ^= h >> 15
	return int32(h)
}

// toPositive is Utils.toPositive: the sign bit cleared (not the absolute
// value: toPositive(-1) is 2147483647).
func toPositive(x int32) int32 { return x & 0x7fffffff }

// PartitionForKey returns the partition Kafka's default partitioner picks
// for a non-nil key: toPositive(murmur2(key)) % numPartitions. It panics if
// numPartitions < 1 (a topic always has a partition).
func PartitionForKey(key []byte, numPartitions int) int {
	if numPartitions < 1 {
		panic("client.PartitionForKey: numPartitions must be >= 1")
	}
	return int(toPositive(Murmur2(key))) % numPartitions
}
