package server

import (
	"math/rand/v2"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
)

// TestPartitionIndexIsTheMap: whatever replicas are added and removed, in
// whatever order the lookups come, partition(tp) is partitions[tp].
func TestPartitionIndexIsTheMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	b := &Broker{partitions: map[storage.TopicPartition]*Partition{}, pindex: partitionIndex{byTopic: map[string][]*Partition{}}}
	topics := []string{"t", "u", "__consumer_offsets"}
	tpOf := func() storage.TopicPartition {
		return storage.TopicPartition{Topic: topics[r.IntN(len(topics))], Partition: int32(r.IntN(12)) - 1}
	}
	for step := 0; step < 20000; step++ {
		tp := tpOf()
		switch r.IntN(4) {
		case 0:
			if tp.Partition >= 0 {
				b.setPartition(tp, &Partition{tp: tp})
			}
		case 1:
			if tp.Partition >= 0 {
				b.setPartition(tp, nil)
			}
		default:
			if got, want := b.partition(tp), b.partitions[tp]; got != want {
				t.Fatalf("step %d: partition(%v) = %p, the map holds %p", step, tp, got, want)
			}
		}
	}
}
