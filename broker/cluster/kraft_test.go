package cluster

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/sim"
)

func buildKRaft(t *testing.T, seed uint64, controllers int, props map[string]string) *Cluster {
	t.Helper()
	cfg, err := config.Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.New(sim.Config{Seed: seed, KeepTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Build(w, Spec{Brokers: 3, Controllers: controllers, Topics: []Topic{{Name: "t", Partitions: 3, ReplicationFactor: 3}}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func run(t *testing.T, c *Cluster, d sim.Duration) {
	t.Helper()
	if res := c.World.RunFor(d); res.Reason == sim.Panicked {
		t.Fatal(res.Panic, res.Panic.Stack)
	}
}

// TestKRaftClusterComesUpAndFailsOver: dedicated controllers elect a
// quorum leader, the brokers register and are unfenced, the admin creates
// the topic through the controller and every partition gets its preferred
// leader; a dead leader is fenced after broker.session.timeout.ms and its
// partitions move; a dead active controller is replaced.
func TestKRaftClusterComesUpAndFailsOver(t *testing.T) {
	c := buildKRaft(t, 1, 3, map[string]string{"inter.broker.protocol.version": "4.0"})
	run(t, c, 10*sim.Second)
	if len(c.Controllers) != 3 {
		t.Fatalf("%d controller nodes, want 3", len(c.Controllers))
	}
	active := c.ActiveQuorumController()
	if active == "" {
		t.Fatal("no active controller")
	}
	for p := int32(0); p < 3; p++ {
		l, _, isr := c.leaderOf(t, p)
		if l != int(p) || len(isr) != 3 {
			t.Fatalf("partition %d: leader b%d isr %v; want the preferred leader b%d and the full ISR", p, l, isr, p)
		}
	}
	if err := c.World.Inject(sim.Crash{Node: c.Brokers[0]}); err != nil {
		t.Fatal(err)
	}
	run(t, c, 20*sim.Second)
	l, epoch, isr := c.leaderOf(t, 0)
	if l <= 0 || epoch < 1 || len(isr) != 2 {
		t.Fatalf("after b0 died: leader b%d epoch %d isr %v; want a new leader, a bumped epoch and an ISR of 2", l, epoch, isr)
	}
	id, _ := c.World.Lookup(active)
	if err := c.World.Inject(sim.Crash{Node: id}); err != nil {
		t.Fatal(err)
	}
	run(t, c, 10*sim.Second)
	if now := c.ActiveQuorumController(); now == "" || now == active {
		t.Fatalf("after %s died the active controller is %q, want another", active, now)
	}
	if err := c.World.Inject(sim.Restart{Node: c.Brokers[0]}); err != nil {
		t.Fatal(err)
	}
	run(t, c, 40*sim.Second)
	if _, _, isr := c.leaderOf(t, 0); len(isr) != 3 {
		t.Fatalf("after b0 restarted: isr %v, want all 3 back (AlterPartition)", isr)
	}
}

func TestKRaftCombinedMode(t *testing.T) {
	c := buildKRaft(t, 2, 0, map[string]string{"process.roles": "broker,controller"})
	run(t, c, 10*sim.Second)
	if len(c.Controllers) != 0 {
		t.Fatalf("%d dedicated controllers in combined mode", len(c.Controllers))
	}
	if a := c.ActiveQuorumController(); !strings.HasPrefix(a, "b") {
		t.Fatalf("active controller %q, want a broker", a)
	}
	for p := int32(0); p < 3; p++ {
		if l, _, isr := c.leaderOf(t, p); l < 0 || len(isr) != 3 {
			t.Fatalf("partition %d: leader b%d isr %v", p, l, isr)
		}
	}
	if b := c.Broker(0); b.Raft() == nil || !b.Raft().IsVoter() {
		t.Fatal("b0 is not a voter in combined mode")
	}
}

func TestKRaftSpecBadInput(t *testing.T) {
	for _, tc := range []struct {
		props       map[string]string
		controllers int
		want        string
	}{
		{map[string]string{}, 3, "need KRaft mode"},
		{map[string]string{"process.roles": "broker", "controller.quorum.voters": "3000@c0:9093,7@b7:9093"}, 3, "node 7 is not a controller"},
		{map[string]string{"process.roles": "broker"}, 10, "controllers 10"},
	} {
		cfg, err := config.Parse(tc.props)
		if err != nil {
			t.Fatal(err)
		}
		err = Spec{Brokers: 3, Controllers: tc.controllers, Topics: []Topic{{Name: "t", Partitions: 1, ReplicationFactor: 3}}, Config: cfg}.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v controllers=%d: %v, want %q", tc.props, tc.controllers, err, tc.want)
		}
	}
	if server.NodeName(3001) != "ctl1" {
		t.Errorf("NodeName(3001) = %q, want ctl1", server.NodeName(3001))
	}
}
