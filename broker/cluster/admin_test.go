package cluster

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

// zkTool is a test node that writes one znode (the admin tools'
// kafka-reassign-partitions.sh / kafka-topics.sh --delete).
type zkTool struct {
	path string
	data []byte
	c    *zk.Client
	done bool
}

func (z *zkTool) Start(ctx *sim.Context) {
	server, _ := ctx.Lookup(ZKName)
	z.c = zk.NewClient(server, 6*sim.Second)
	z.c.OnSession = func(ctx *sim.Context, ev zk.SessionEvent) {
		if ev.State == zk.SyncConnected && !z.done {
			z.done = true
			z.c.CreateRecursive(ctx, z.path, z.data, func(*sim.Context, *zk.Response) {})
		}
	}
	z.c.Start(ctx)
}
func (z *zkTool) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	z.c.HandleMessage(ctx, from, m)
}
func (z *zkTool) Timer(ctx *sim.Context, id sim.TimerID, name string) { z.c.HandleTimer(ctx, id, name) }

func adminCluster(t *testing.T) (*Cluster, *Driver) {
	cfg, err := config.Parse(map[string]string{"zookeeper.session.timeout.ms": "6000"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := sim.New(sim.Config{Seed: 3})
	c, err := Build(w, Spec{Brokers: 4, Topics: []Topic{{Name: "t", Partitions: 1, ReplicationFactor: 2, Assignment: [][]int32{{0, 1}}}}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	d := &Driver{Topic: "t", Partitions: 1, Records: 50, ValueSize: 10, Acks: -1, Interval: 10 * sim.Millisecond, Timeout: 30 * sim.Second, Brokers: 4}
	dn, _ := w.AddNode("driver", func() sim.Node { return d }, sim.NodeOptions{})
	w.At(sim.Time(2*sim.Second), "driver", func(w *sim.World) { w.Inject(sim.Start{Node: dn}) })
	w.RunFor(5 * sim.Second)
	return c, d
}

func (c *Cluster) tool(t *testing.T, path string, data []byte) {
	id, err := c.World.AddNode("tool-"+path, func() sim.Node { return &zkTool{path: path, data: data} }, sim.NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.World.Inject(sim.Start{Node: id})
}

// A reassignment from [0,1] to [2,3] moves the data and the leadership and
// deletes the old replicas.
func TestPartitionReassignment(t *testing.T) {
	c, d := adminCluster(t)
	c.tool(t, zk.ReassignPartitionsPath, zk.Encode(zk.ReassignPartitions{Version: 1, Partitions: []zk.PartitionReassignment{{Topic: "t", Partition: 0, Replicas: []int32{2, 3}}}}))
	if res := c.World.RunFor(30 * sim.Second); res.Reason == sim.Panicked {
		t.Fatal(res.Panic)
	}
	tp := storage.TopicPartition{Topic: "t", Partition: 0}
	for i := 0; i < 2; i++ {
		if _, ok := c.Broker(i).Partition(tp); ok {
			t.Errorf("b%d still has a replica of t-0 after the reassignment", i)
		}
	}
	acked := 0
	for _, o := range d.Outcomes {
		if o.Acked() {
			acked++
		}
	}
	for i := 2; i < 4; i++ {
		p, ok := c.Broker(i).Partition(tp)
		if !ok {
			t.Fatalf("b%d has no replica of t-0", i)
		}
		if !slices.Equal(p.Replicas(), []int32{2, 3}) || p.LogEndOffset() < int64(acked) {
			t.Errorf("b%d: replicas %v LEO %d, want [2 3] and all %d acknowledged records", i, p.Replicas(), p.LogEndOffset(), acked)
		}
	}
	if l, _, _ := leaderOf(c, tp); l != 2 && l != 3 {
		t.Errorf("leader b%d, want b2 or b3", l)
	}
	if acked == 0 {
		t.Fatal("no record acknowledged: the test proves nothing")
	}
}

func leaderOf(c *Cluster, tp storage.TopicPartition) (int, int32, []int32) {
	for i := range c.Brokers {
		if b := c.Broker(i); b != nil {
			if p, ok := b.Partition(tp); ok && p.Role().String() == "leader" {
				return i, p.LeaderEpoch(), p.ISR()
			}
		}
	}
	return -1, -1, nil
}

// Deleting a topic stops and deletes every replica and its znodes.
func TestTopicDeletion(t *testing.T) {
	c, _ := adminCluster(t)
	c.tool(t, zk.DeleteTopicPath("t"), nil)
	if res := c.World.RunFor(30 * sim.Second); res.Reason == sim.Panicked {
		t.Fatal(res.Panic)
	}
	tp := storage.TopicPartition{Topic: "t", Partition: 0}
	for i := range c.Brokers {
		if _, ok := c.Broker(i).Partition(tp); ok {
			t.Errorf("b%d still has t-0", i)
		}
		if c.World.Disk(c.Brokers[i]).IsDir("/tmp/kafka-logs/t-0") {
			t.Errorf("b%d still has the directory of t-0", i)
		}
	}
	z := c.World.Node(c.ZK).(*zk.Server)
	if _, _, ok := z.Get(zk.TopicPath("t")); ok {
		t.Error("/brokers/topics/t still exists")
	}
	if _, _, ok := z.Get(zk.DeleteTopicPath("t")); ok {
		t.Error("the deletion request was not removed")
	}
}
