package cluster

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

func build(t *testing.T, seed uint64, props map[string]string) *Cluster {
	cfg, err := config.Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.New(sim.Config{Seed: seed, KeepTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Build(w, Spec{Brokers: 3, Topics: []Topic{{Name: "t", Partitions: 3, ReplicationFactor: 3}}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *Cluster) leaderOf(t *testing.T, p int32) (int, int32, []int32) {
	for i := range c.Brokers {
		b := c.Broker(i)
		if b == nil {
			continue
		}
		if part, ok := b.Partition(storage.TopicPartition{Topic: "t", Partition: p}); ok && part.Role().String() == "leader" {
			return i, part.LeaderEpoch(), part.ISR()
		}
	}
	return -1, -1, nil
}

func TestClusterComesUpAndFailsOver(t *testing.T) {
	c := build(t, 1, nil)
	res := c.World.RunFor(10 * sim.Second)
	if res.Reason == sim.Panicked {
		t.Fatal(res.Panic, res.Panic.Stack)
	}
	if c.ActiveController() < 0 {
		t.Fatal("no controller elected")
	}
	for p := int32(0); p < 3; p++ {
		l, epoch, isr := c.leaderOf(t, p)
		if l != int(p) || epoch != 0 || len(isr) != 3 {
			t.Fatalf("partition %d: leader b%d epoch %d isr %v; want preferred leader b%d, epoch 0, full ISR", p, l, epoch, isr, p)
		}
	}
	// Kill partition 0's leader: its session expires and the controller
	// elects another ISR member in epoch 1.
	if err := c.World.Inject(sim.Crash{Node: c.Brokers[0]}); err != nil {
		t.Fatal(err)
	}
	c.World.RunFor(40 * sim.Second)
	l, epoch, isr := c.leaderOf(t, 0)
	if l <= 0 || epoch < 1 || len(isr) != 2 {
		t.Fatalf("after b0 died: leader b%d epoch %d isr %v; want a new leader with a bumped epoch and ISR of 2", l, epoch, isr)
	}
	// Restart it: it rejoins as follower and catches up into the ISR.
	if err := c.World.Inject(sim.Restart{Node: c.Brokers[0]}); err != nil {
		t.Fatal(err)
	}
	res = c.World.RunFor(60 * sim.Second)
	if res.Reason == sim.Panicked {
		t.Fatal(res.Panic, res.Panic.Stack)
	}
	_, _, isr = c.leaderOf(t, 0)
	if len(isr) != 3 {
		t.Fatalf("after b0 restarted: isr %v, want all 3 back", isr)
	}
}
