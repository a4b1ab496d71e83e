package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// TestEstimateCountsThePlan: the estimate counts what the plan says (the
// brokers, each topic's partitions times its replicas, the internal
// topics a group or a transaction creates, the records the steps send)
// and grows with each.
func TestEstimateCountsThePlan(t *testing.T) {
	parse := func(src string) *scenarios.Script {
		t.Helper()
		s, err := scenarios.Parse("plan.txt", "plan", strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	small := parse("describe small\nbrokers 3\ntopic t partitions=2 rf=3\nproducer p1 acks=all\nsend p1 t/0 100\nproduce c9 t/1 m0\nrun 1s\n")
	e, err := EstimateRun(small, "", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if e.Brokers != 3 || e.PartitionReplicas != 6 || e.Records != 101 || e.Consumers != 0 {
		t.Errorf("small: %+v, want 3 brokers, 6 partition replicas, 101 records, 0 consumers", e)
	}
	big := parse("describe big\nbrokers 6\ntopic t partitions=3000 rf=3\nrun 1s\n")
	eb, err := EstimateRun(big, "", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	// Measured (docs/commands.md, "Memory"): 251 MiB peak; the estimate
	// errs high, within a factor of two.
	if eb.PartitionReplicas != 9000 || eb.Bytes < 251<<20 || eb.Bytes > 502<<20 {
		t.Errorf("6 brokers x 3,000 partitions rf 3: %+v (%d MiB), want 9,000 replicas and 251..502 MiB", eb, eb.Bytes>>20)
	}
	group := parse("describe group\nbrokers 3\ntopic t partitions=3 rf=3\nset offsets.topic.num.partitions=4\nconsumer c1 group.id=g topic=t\nswarm 10s clients=2 interval=10ms crash=0\nrun 1s\n")
	eg, err := EstimateRun(group, "", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if eg.PartitionReplicas != 9+4*3 || eg.Records != 2000 || eg.Consumers != 1 {
		t.Errorf("group: %+v, want 21 partition replicas (with __consumer_offsets' 4 x 3), 2,000 records, 1 consumer", eg)
	}
	traced, _ := EstimateRun(group, "", nil, true)
	if traced.Bytes <= eg.Bytes || eg.Bytes <= e.Bytes {
		t.Errorf("the estimate does not grow with the plan: small %d, group %d, group traced %d", e.Bytes, eg.Bytes, traced.Bytes)
	}
}
