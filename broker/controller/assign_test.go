package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The seeds' example: brokers 1-4, two topics of two partitions, RF 2,
// round-robin continuing across topics: 1-1 -> [1,2], 1-2 -> [2,3],
// 2-1 -> [3,4], 2-2 -> [4,1].
func TestAssignRackUnawareSeedsExample(t *testing.T) {
	brokers := []Broker{{ID: 3}, {ID: 1}, {ID: 4}, {ID: 2}}
	t1, err := AssignReplicas(brokers, 2, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := AssignReplicas(brokers, 2, 2, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]int32{{1, 2}, {2, 3}}, t1); diff != "" {
		t.Errorf("topic 1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]int32{{3, 4}, {4, 1}}, t2); diff != "" {
		t.Errorf("topic 2 (-want +got):\n%s", diff)
	}
}

// Kafka's own vector (AdminRackAwareTest / AdminUtilsTest): 5 brokers,
// 10 partitions, RF 3, start 0, shift 0.
func TestAssignRackUnawareKafkaVector(t *testing.T) {
	var brokers []Broker
	for i := int32(0); i < 5; i++ {
		brokers = append(brokers, Broker{ID: i})
	}
	got, err := AssignReplicas(brokers, 10, 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{{0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4, 0}, {4, 0, 1}, {0, 2, 3}, {1, 3, 4}, {2, 4, 0}, {3, 0, 1}, {4, 1, 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The seeds' rack example: brokers 1,2 on rack 1 and 3,4 on rack 2: leaders
// alternate racks and each partition's replicas span both racks.
func TestAssignRackAware(t *testing.T) {
	brokers := []Broker{{1, "r1"}, {2, "r1"}, {3, "r2"}, {4, "r2"}}
	got, err := AssignReplicas(brokers, 4, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{{1, 3}, {3, 2}, {2, 4}, {4, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	rack := map[int32]string{1: "r1", 2: "r1", 3: "r2", 4: "r2"}
	for p, rs := range got {
		if rack[rs[0]] == rack[rs[1]] {
			t.Errorf("partition %d: replicas %v on one rack", p, rs)
		}
	}
}

func TestAssignBadInput(t *testing.T) {
	b := []Broker{{ID: 0}, {ID: 1}}
	for _, c := range []struct{ parts, rf int }{{0, 1}, {1, 0}, {1, 3}} {
		if _, err := AssignReplicas(b, c.parts, c.rf, 0, 0); err == nil {
			t.Errorf("partitions %d rf %d accepted", c.parts, c.rf)
		}
	}
	if _, err := AssignReplicas([]Broker{{0, "a"}, {1, ""}}, 1, 1, 0, 0); err == nil {
		t.Error("racks on some brokers only accepted")
	}
}
