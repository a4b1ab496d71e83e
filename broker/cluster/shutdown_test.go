package cluster

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// A controlled shutdown of the leader moves leadership at once (its
// ZooKeeper session is closed, not left to expire), checkpoints its HW,
// and a restart needs no log recovery.
func TestControlledShutdown(t *testing.T) {
	cfg, err := config.Parse(map[string]string{"zookeeper.session.timeout.ms": "18000"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := sim.New(sim.Config{Seed: 5, KeepTrace: true})
	c, err := Build(w, Spec{Brokers: 3, Topics: []Topic{{Name: "t", Partitions: 1, ReplicationFactor: 3, Assignment: [][]int32{{0, 1, 2}}}}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	d := &Driver{Topic: "t", Partitions: 1, Records: 20, ValueSize: 10, Acks: -1, Interval: 10 * sim.Millisecond, Timeout: 30 * sim.Second, Brokers: 3}
	dn, _ := w.AddNode("driver", func() sim.Node { return d }, sim.NodeOptions{})
	w.At(sim.Time(2*sim.Second), "driver", func(w *sim.World) { w.Inject(sim.Start{Node: dn}) })
	w.RunFor(5 * sim.Second)
	tp := storage.TopicPartition{Topic: "t", Partition: 0}
	if l, _, _ := leaderOf(c, tp); l != 0 {
		t.Fatalf("leader b%d, want the preferred b0", l)
	}
	if err := w.Inject(sim.Shutdown{Node: c.Brokers[0]}); err != nil {
		t.Fatal(err)
	}
	w.RunFor(2 * sim.Second) // far less than the 18 s session timeout
	if l, epoch, _ := leaderOf(c, tp); l <= 0 || epoch < 1 {
		t.Fatalf("2 s after the controlled shutdown: leader b%d epoch %d, want another leader", l, epoch)
	}
	if err := w.Inject(sim.Restart{Node: c.Brokers[0]}); err != nil {
		t.Fatal(err)
	}
	w.RunFor(10 * sim.Second)
	recovered := false
	for _, r := range w.Trace().Records() {
		if r.Name == "b0" && r.Kind == "log-loaded" {
			if v, _ := r.Get("hw-checkpoint"); v != "20" {
				t.Errorf("b0 restarted with HW checkpoint %s, want 20 (all records committed and checkpointed at shutdown)", v)
			}
			recovered = true
		}
	}
	if !recovered {
		t.Fatal("b0 did not reload its log")
	}
}
