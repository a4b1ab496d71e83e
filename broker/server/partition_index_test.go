package server

import (
	"math/rand/v2"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
)

// TestPartitionIndexIsTheMap: whatever replicas are added and removed, in
// whatever order the lookups come, partition(tp) is partitions[tp]. Each
// round starts from an empty broker, so the per-topic slices grow again,
// and the topic mostly stays the same from one step to the next, as the
// lookups of one fetch do.
func TestPartitionIndexIsTheMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	topics := []string{"t", "u", "__consumer_offsets"}
	for round := 0; round < 2000; round++ {
		b := &Broker{partitions: map[storage.TopicPartition]*Partition{}, pindex: partitionIndex{byTopic: map[string][]*Partition{}}}
		topic := topics[0]
		for step := 0; step < 40; step++ {
			if r.IntN(5) == 0 {
				topic = topics[r.IntN(len(topics))]
			}
			tp := storage.TopicPartition{Topic: topic, Partition: int32(r.IntN(20)) - 1}
			switch r.IntN(3) {
			case 0:
				if tp.Partition >= 0 {
					b.setPartition(tp, &Partition{tp: tp})
				}
			case 1:
				if tp.Partition >= 0 && r.IntN(3) == 0 {
					b.setPartition(tp, nil)
				}
			}
			if got, want := b.partition(tp), b.partitions[tp]; got != want {
				t.Fatalf("round %d step %d: partition(%v) = %p, the map holds %p", round, step, tp, got, want)
			}
		}
	}
}
