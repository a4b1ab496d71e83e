package harness

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
)

// TestObserverAddsAndRemovesPartitions: a client's topic added to the
// observer grows every per-partition slice with it (the next observation
// compares it as a first one), and removing a topic keeps the others'
// state at their new indexes.
func TestObserverAddsAndRemovesPartitions(t *testing.T) {
	o := newObserver(nil, []scenarios.TopicSpec{{Name: "t", Partitions: 2}}, map[string][][]int32{"t": {{0, 1}, {1, 0}}})
	// As after some observations: the lazily made slices exist.
	o.prev = [][]replicaSeen{make([]replicaSeen, 2), make([]replicaSeen, 2)}
	o.refs = [][]replicaRef{make([]replicaRef, 2), make([]replicaRef, 2)}
	o.snapBuf, o.committedBuf = make([][]checkers.ReplicaState, 2), make([][]checkers.Entry, 2)
	o.topEpoch, o.zkViews = []int32{3, 4}, make([]zkView, 2)
	o.touched = []uint64{7, 7}
	x := []storage.TopicPartition{{Topic: "x", Partition: 0}, {Topic: "x", Partition: 1}}
	o.addPartitions(x, [][]int32{{1}, {0}})
	lens := func() []int {
		return []int{len(o.Partitions), len(o.reps), len(o.prev), len(o.refs), len(o.snapBuf), len(o.committedBuf), len(o.topEpoch), len(o.zkViews)}
	}
	if got := lens(); slices.Max(got) != 4 || slices.Min(got) != 4 || len(o.Replicas) != 4 {
		t.Fatalf("after adding x: lengths %v, %d replica lists, want 4 each", got, len(o.Replicas))
	}
	if o.prev[2][0].role != 254 || o.onBroker != nil || o.touched[0] == 7 {
		t.Fatal("the new partitions are not compared at the next observation")
	}
}
