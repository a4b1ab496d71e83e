package client

// This file picks the partition of a record sent without one
// (partitioner.class). Kafka's versions it follows:
//   - PartitionerDefault: murmur2 of the key when there is one
//     (PartitionForKey); without a key, the sticky partitioner of KIP-480
//     (Kafka 2.4–3.2): all keyless records go to one partition until a
//     record would open a new batch there — because the batch was sent or
//     is full — and then another partition is chosen (StickyPartitionCache,
//     preferring partitions that have a leader, never the one just left).
//   - PartitionerUniformSticky: the same stickiness for every record, keys
//     ignored (UniformStickyPartitioner).
//   - PartitionerRoundRobin: every record to the next partition with a
//     leader, keys ignored (RoundRobinPartitioner, one counter per topic).
// Simplified vs Kafka: the KIP-794 adaptive partitioner of 3.3+ (switching
// after batch.size bytes, weighting by broker queue length) is not modelled;
// KAFKA-9965 (RoundRobinPartitioner skipping every other partition when
// each record opens a batch) is not reproduced.
//
// Random choices: the sticky partitioner draws from ctx.Rand(), the node's
// own seeded stream, as Kafka draws from ThreadLocalRandom. It is a
// load-spreading choice, not a workload decision an explorer should branch
// on, and drawing it from the world's chooser would shift every later
// fault decision whenever the number of records changes.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/sim"
)

// partitioner keeps the per-topic state of partitioner.class.
type partitioner struct {
	kind    config.Partitioner
	sticky  map[string]int32 // topic -> current sticky partition
	counter map[string]int32 // topic -> round-robin counter
}

func newPartitioner(kind config.Partitioner) *partitioner {
	if kind == "" {
		kind = config.PartitionerDefault
	}
	return &partitioner{kind: kind, sticky: map[string]int32{}, counter: map[string]int32{}}
}

// usesSticky reports whether a record with this key is placed by the
// sticky cache, and so may be moved when it would open a new batch
// (KIP-480's abortOnNewBatch).
func (pt *partitioner) usesSticky(key []byte) bool {
	switch pt.kind {
	case config.PartitionerUniformSticky:
		return true
	case config.PartitionerRoundRobin:
		return false
	}
	return key == nil
}

// partition returns the partition for a record of topic with key, the
// topic having n partitions of which avail (sorted) have a leader.
func (pt *partitioner) partition(ctx *sim.Context, topic string, key []byte, n int, avail []int32) int32 {
	switch {
	case pt.kind == config.PartitionerRoundRobin:
		c := pt.counter[topic]
		pt.counter[topic] = c + 1 // wraps like Java's int; toPositive keeps it usable
		if len(avail) > 0 {
			return avail[int(toPositive(c))%len(avail)]
		}
		return int32(int(toPositive(c)) % n)
	case pt.usesSticky(key):
		if p, ok := pt.sticky[topic]; ok && int(p) < n {
			return p
		}
		return pt.nextSticky(ctx, topic, -1, n, avail)
	}
	return int32(PartitionForKey(key, n))
}

// nextSticky is StickyPartitionCache.nextPartition: a record would open a
// new batch on prev, so the topic moves to another partition — unless the
// sticky partition already moved away from prev.
func (pt *partitioner) nextSticky(ctx *sim.Context, topic string, prev int32, n int, avail []int32) int32 {
	old, ok := pt.sticky[topic]
	if ok && old != prev && int(old) < n {
		return old
	}
	var next int32
	switch {
	case len(avail) == 0:
		next = int32(ctx.Rand().IntN(n))
	case len(avail) == 1:
		next = avail[0]
	default:
		// Uniform over the available partitions other than the old one,
		// which is what Kafka's draw-until-different loop amounts to.
		i := slices.Index(avail, old)
		if !ok || i < 0 {
			next = avail[ctx.Rand().IntN(len(avail))]
		} else {
			j := ctx.Rand().IntN(len(avail) - 1)
			if j >= i {
				j++
			}
			next = avail[j]
		}
	}
	pt.sticky[topic] = next
	return next
}
