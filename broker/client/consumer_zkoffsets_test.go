package client

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

// TestConsumerOffsetsInZooKeeper: with offsets.storage=zookeeper the
// group's commits land in /consumers/g/offsets/t/<p> (and none in the
// coordinator's offset cache), and a member that takes over resumes from
// them: nothing consumed twice, nothing skipped.
func TestConsumerOffsetsInZooKeeper(t *testing.T) {
	w, c := groupCluster(t, 11)
	a1 := addConsumer(t, w, "c1", "offsets.storage", "zookeeper")
	run(t, w, 6*sim.Second)
	produceN(t, w, "p1", 40, 0)
	run(t, w, 5*sim.Second)
	checkConsumed(t, 40, a1)
	if a1.commitOK == 0 {
		t.Fatal("no commit succeeded")
	}
	z := w.Node(c.ZK).(*zk.Server)
	for p := int32(0); p < 4; p++ {
		data, _, ok := z.Get(zk.ConsumerOffsetPath("g", "t", p))
		if !ok || string(data) != "10" {
			t.Errorf("znode of t-%d: %q (present %v), want \"10\"", p, data, ok)
		}
	}
	for i := range c.Brokers {
		if b := c.Broker(i); b != nil {
			for p := int32(0); p < 4; p++ {
				if off, ok := b.Coordinator().Committed("g", "t", p); ok {
					t.Errorf("b%d's coordinator has t-%d committed at %v: v0 commits must bypass __consumer_offsets", i, p, off)
				}
			}
		}
	}
	id, _ := w.Lookup("c1")
	must(t, w.Act(id, func(ctx *sim.Context) { a1.c.Close(ctx) }))
	run(t, w, 2*sim.Second)
	a2 := addConsumer(t, w, "c2", "offsets.storage", "zookeeper")
	run(t, w, 6*sim.Second)
	produceN(t, w, "p2", 40, 40)
	run(t, w, 5*sim.Second)
	if len(a2.got) != 40 {
		t.Errorf("c2 consumed %d records, want the 40 new ones", len(a2.got))
	}
	for _, r := range a2.got {
		if v := string(r.Value); v < "v0040" {
			t.Errorf("c2 re-consumed %s, committed in ZooKeeper by c1", v)
		}
	}
	checkConsumed(t, 80, a1, a2)
}
