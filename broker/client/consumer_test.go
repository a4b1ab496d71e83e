package client

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// consumerApp polls every 100ms and commits synchronously after each
// non-empty poll (process-then-commit: at-least-once).
type consumerApp struct {
	cfg      config.Consumer
	c        *Consumer
	got      []ConsumerRecord
	assigned [][]TopicPartition
	revoked  int
	revokes  [][]TopicPartition
	owned    []TopicPartition // what the callbacks say it owns now
	brokers  []int32          // bootstrap; b0, b1, b2 when nil
	commitOK int
	errs     []error
}

func (a *consumerApp) Start(ctx *sim.Context) {
	var err error
	if a.brokers == nil {
		a.brokers = []int32{0, 1, 2}
	}
	if a.c, err = NewConsumer(a.cfg, a.brokers); err != nil {
		panic(err)
	}
	a.c.Start(ctx)
	l := RebalanceListener{
		OnAssigned: func(ctx *sim.Context, tps []TopicPartition) {
			a.assigned = append(a.assigned, tps)
			a.owned = append(a.owned, tps...)
		},
		OnLost: func(ctx *sim.Context, tps []TopicPartition) { a.owned = nil },
		OnRevoked: func(ctx *sim.Context, tps []TopicPartition) {
			a.revoked++
			a.revokes = append(a.revokes, tps)
			a.owned = slices.DeleteFunc(a.owned, func(tp TopicPartition) bool { return slices.Contains(tps, tp) })
			a.c.CommitSync(ctx, nil, nil) // commit before the rebalance
		},
	}
	if err := a.c.Subscribe(ctx, []string{"t"}, l); err != nil {
		panic(err)
	}
	ctx.SetTimer(100*sim.Millisecond, "app-poll")
}

func (a *consumerApp) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	a.c.HandleMessage(ctx, from, m)
}

func (a *consumerApp) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	if a.c.HandleTimer(ctx, id, name) {
		return
	}
	recs, err := a.c.Poll(ctx)
	if err != nil {
		a.errs = append(a.errs, err)
	}
	a.got = append(a.got, recs...)
	if len(recs) > 0 {
		a.c.CommitSync(ctx, nil, func(ctx *sim.Context, _ []TopicPartitionOffset, err error) {
			if err == nil {
				a.commitOK++
			}
		})
	}
	if !a.c.closed {
		ctx.SetTimer(100*sim.Millisecond, "app-poll")
	}
}

func groupCluster(t *testing.T, seed uint64) (*sim.World, *cluster.Cluster) {
	bcfg, err := config.Parse(map[string]string{"offsets.topic.num.partitions": "4", "offsets.topic.replication.factor": "3",
		"min.insync.replicas": "2", "zookeeper.session.timeout.ms": "6000"})
	must(t, err)
	w, err := sim.New(sim.Config{Seed: seed, KeepTrace: true})
	must(t, err)
	c, err := cluster.Build(w, cluster.Spec{Brokers: 3, OffsetsTopic: true, Config: bcfg,
		Topics: []cluster.Topic{{Name: "t", Partitions: 4, ReplicationFactor: 3}}})
	must(t, err)
	run(t, w, 10*sim.Second)
	return w, c
}

func addConsumer(t *testing.T, w *sim.World, name string, extra ...string) *consumerApp {
	props := map[string]string{"group.id": "g", "client.id": name, "auto.offset.reset": "earliest",
		"enable.auto.commit": "false", "session.timeout.ms": "6000", "heartbeat.interval.ms": "1000", "max.poll.interval.ms": "10000"}
	for i := 0; i+1 < len(extra); i += 2 {
		props[extra[i]] = extra[i+1]
	}
	cfg, err := config.ParseConsumer(props)
	must(t, err)
	a := &consumerApp{cfg: cfg}
	id, err := w.AddNode(name, func() sim.Node { return a }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: id}))
	return a
}

func produceN(t *testing.T, w *sim.World, name string, n int, from int) {
	cfg := config.DefaultProducer()
	cfg.EnableIdempotence = false
	cfg.Acks = config.AcksAll
	a := &app{cfg: cfg, bootstrap: []int32{0, 1, 2}, results: map[string]result{}}
	id, err := w.AddNode(name, func() sim.Node { return a }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: id}))
	for i := 0; i < n; i++ {
		send(t, w, id, a, Record{Topic: "t", Partition: int32(i % 4), Value: []byte(fmt.Sprintf("v%04d", from+i))})
		run(t, w, 5*sim.Millisecond)
	}
}

// checkConsumed: every value was consumed by the group, and each member
// saw each partition's records in increasing offset order.
func checkConsumed(t *testing.T, n int, apps ...*consumerApp) {
	t.Helper()
	seen := map[string]bool{}
	for _, a := range apps {
		last := map[TopicPartition]int64{}
		for _, r := range a.got {
			tp := TopicPartition{Topic: r.Topic, Partition: r.Partition}
			if prev, ok := last[tp]; ok && r.Offset <= prev && a.revoked == 0 {
				t.Errorf("%s: %v offset %d after %d", a.cfg.ClientID, tp, r.Offset, prev)
			}
			last[tp] = r.Offset
			seen[string(r.Value)] = true
		}
	}
	for i := 0; i < n; i++ {
		if v := fmt.Sprintf("v%04d", i); !seen[v] {
			t.Errorf("%s never consumed", v)
		}
	}
}

// TestConsumerGroupRebalanceAndFailover: two members share a 4-partition
// topic (2 each, Range); the coordinator's broker crashes and a new
// coordinator loads the group and offsets from __consumer_offsets; a third
// member joins; one closes; every record is consumed (at-least-once), and
// the committed offsets end at the log ends.
func TestConsumerGroupRebalanceAndFailover(t *testing.T) {
	w, c := groupCluster(t, 7)
	a1, a2 := addConsumer(t, w, "c1"), addConsumer(t, w, "c2")
	run(t, w, 8*sim.Second)
	if len(a1.assigned) == 0 || len(a2.assigned) == 0 {
		t.Fatalf("not assigned: c1 %v c2 %v", a1.assigned, a2.assigned)
	}
	if got := len(a1.assigned[len(a1.assigned)-1]) + len(a2.assigned[len(a2.assigned)-1]); got != 4 {
		t.Fatalf("assigned %v + %v, want 4 partitions", a1.assigned, a2.assigned)
	}
	produceN(t, w, "p1", 100, 0)
	run(t, w, 3*sim.Second)
	// Crash the coordinator's broker.
	part := coordinator.CoordinatorPartition("g", 4)
	coord := -1
	for i := range c.Brokers {
		if b := c.Broker(i); b != nil {
			if p, ok := b.Partition(offsetsTP(part)); ok && p.Role().String() == "leader" {
				coord = i
			}
		}
	}
	if coord < 0 {
		t.Fatal("no coordinator")
	}
	must(t, w.Inject(sim.Crash{Node: c.Brokers[coord]}))
	run(t, w, 15*sim.Second)
	produceN(t, w, "p2", 100, 100)
	a3 := addConsumer(t, w, "c3")
	run(t, w, 15*sim.Second)
	must(t, w.Inject(sim.Restart{Node: c.Brokers[coord]}))
	id, _ := w.Lookup("c1")
	must(t, w.Act(id, func(ctx *sim.Context) { a1.c.Close(ctx) }))
	run(t, w, 20*sim.Second)
	checkConsumed(t, 200, a1, a2, a3)
	if len(traceKinds(w, "coordinator-loaded")) < 2 {
		t.Errorf("expected a second coordinator to load the group")
	}
	for _, a := range []*consumerApp{a2, a3} {
		if len(a.errs) > 0 {
			t.Errorf("%s: poll errors %v", a.cfg.ClientID, a.errs)
		}
	}
	t.Logf("consumed c1=%d c2=%d c3=%d; assignments c2=%v c3=%v", len(a1.got), len(a2.got), len(a3.got), a2.assigned, a3.assigned)
}

// TestConsumerBadInput: the consumer refuses what Kafka's refuses.
func TestConsumerBadInput(t *testing.T) {
	cfg := config.DefaultConsumer()
	if _, err := NewConsumer(cfg, nil); err == nil {
		t.Error("empty bootstrap accepted")
	}
	c, err := NewConsumer(cfg, []int32{0})
	must(t, err)
	if err := c.Subscribe(nil, []string{"t"}, RebalanceListener{}); err == nil {
		t.Error("Subscribe without group.id accepted")
	}
	must(t, c.Assign(nil, []TopicPartition{{Topic: "t", Partition: 0}}))
	if err := c.Seek(TopicPartition{Topic: "t", Partition: 0}, -1); err == nil {
		t.Error("negative seek accepted")
	}
	if err := c.Seek(TopicPartition{Topic: "t", Partition: 1}, 0); err == nil {
		t.Error("seek of an unassigned partition accepted")
	}
	if err := c.CommitSync(nil, nil, nil); err == nil {
		t.Error("commit without group.id accepted")
	}
	if !slices.Equal(c.Assignment(), []TopicPartition{{Topic: "t", Partition: 0}}) {
		t.Errorf("assignment %v", c.Assignment())
	}
}

func offsetsTP(p int) storage.TopicPartition {
	return storage.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: int32(p)}
}
