package client

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// TestAgainstRealCluster is the end-to-end smoke test: a producer with
// acks=all and idempotence off, against a 3-broker cluster from package
// cluster, sends keyed, keyless and explicitly placed records in the three
// styles; every record is acknowledged and sits at its offset in the
// leader's log.
func TestAgainstRealCluster(t *testing.T) {
	bcfg, err := config.Parse(nil)
	must(t, err)
	w, err := sim.New(sim.Config{Seed: 3, KeepTrace: true})
	must(t, err)
	c, err := cluster.Build(w, cluster.Spec{Brokers: 3, Topics: []cluster.Topic{{Name: "t", Partitions: 3, ReplicationFactor: 3}}, Config: bcfg})
	must(t, err)
	run(t, w, 10*sim.Second) // controller elected, leaders in place

	cfg := config.DefaultProducer()
	cfg.EnableIdempotence = false
	cfg.Acks = config.AcksAll
	cfg.Linger = 5 * sim.Millisecond
	a := &app{cfg: cfg, bootstrap: []int32{0, 1, 2}, results: map[string]result{}}
	id, err := w.AddNode("producer", func() sim.Node { return a }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: id}))

	const n = 300
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("v%04d", i)
		r := Record{Topic: "t", Partition: AnyPartition, Value: []byte(v)}
		switch i % 3 {
		case 0:
			r.Key = []byte(fmt.Sprint("key", i%17))
		case 1:
			r.Partition = int32(i % 3)
		}
		switch i % 4 {
		case 0: // fire and forget: the outcome is only counted in Pending
			must(t, w.Act(id, func(ctx *sim.Context) { must(t, a.p.Send(ctx, r, nil)) }))
		case 1: // synchronous: the next record waits for this one
			must(t, w.Act(id, func(ctx *sim.Context) {
				must(t, a.p.SendSync(ctx, []Record{r}, func(ctx *sim.Context, _ int, md RecordMetadata, err error) bool {
					a.record(v)(ctx, md, err)
					return true
				}))
			}))
			for j := 0; j < 100 && a.results[v] == (result{}); j++ {
				run(t, w, sim.Millisecond)
			}
		default: // asynchronous with a callback
			send(t, w, id, a, r)
		}
		run(t, w, 2*sim.Millisecond)
	}
	run(t, w, 10*sim.Second)
	if a.p.Pending() != 0 {
		t.Fatalf("%d records still pending", a.p.Pending())
	}
	logs := map[int32]map[int64]string{}
	for p := int32(0); p < 3; p++ {
		logs[p] = leaderLog(t, c, storage.TopicPartition{Topic: "t", Partition: p})
	}
	t.Logf("%d callbacks, %d produce requests, %d retries", len(a.results), len(traceKinds(w, "produce-send")), len(traceKinds(w, "produce-retry")))
	seen := map[string]int{}
	for _, l := range logs {
		for _, v := range l {
			seen[v]++
		}
	}
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("v%04d", i)
		if seen[v] != 1 {
			t.Errorf("%s appears %d times in the logs", v, seen[v])
		}
		if i%4 == 0 {
			continue
		}
		r, ok := a.results[v]
		switch {
		case !ok:
			t.Errorf("%s: no callback", v)
		case r.err != nil:
			t.Errorf("%s: %v", v, r.err)
		case logs[r.md.Partition][r.md.Offset] != v:
			t.Errorf("%s acknowledged at %d/%d, the leader's log has %q there", v, r.md.Partition, r.md.Offset, logs[r.md.Partition][r.md.Offset])
		}
		if i%3 == 0 && r.md.Partition != int32(PartitionForKey([]byte(fmt.Sprint("key", i%17)), 3)) {
			t.Errorf("%s: keyed record on partition %d", v, r.md.Partition)
		}
	}
}

// leaderLog returns the values of tp's leader's log by offset.
func leaderLog(t *testing.T, c *cluster.Cluster, tp storage.TopicPartition) map[int64]string {
	t.Helper()
	for i := range c.Brokers {
		b := c.Broker(i)
		if b == nil {
			continue
		}
		p, ok := b.Partition(tp)
		if !ok || p.Role() != server.Leader {
			continue
		}
		out := map[int64]string{}
		l := p.Log()
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			data, err := l.Read(off, 1<<20, l.LogEndOffset())
			must(t, err)
			bs, err := storage.DecodeBatches(data)
			must(t, err)
			if len(bs) == 0 {
				t.Fatalf("%v: empty read at %d", tp, off)
			}
			for _, rb := range bs {
				for _, r := range rb.Records {
					out[r.Offset] = string(r.Value)
				}
				off = rb.NextOffset()
			}
		}
		return out
	}
	t.Fatalf("%v: no leader", tp)
	return nil
}

// TestLeaderCrashAgainstRealCluster: the leader of partition 0 crashes
// mid-stream; the producer times out, refreshes metadata and retries on
// the new leader. Every acknowledged record is in the new leader's log at
// its offset, and every record is acknowledged in the end (acks=all,
// delivery.timeout.ms outlasts the failover).
func TestLeaderCrashAgainstRealCluster(t *testing.T) {
	bcfg, err := config.Parse(nil)
	must(t, err)
	w, err := sim.New(sim.Config{Seed: 5, KeepTrace: true})
	must(t, err)
	c, err := cluster.Build(w, cluster.Spec{Brokers: 3, Topics: []cluster.Topic{{Name: "t", Partitions: 1, ReplicationFactor: 3}}, Config: bcfg})
	must(t, err)
	run(t, w, 10*sim.Second)
	cfg := config.DefaultProducer()
	cfg.EnableIdempotence = false
	cfg.RequestTimeout = 2 * sim.Second
	a := &app{cfg: cfg, bootstrap: []int32{1, 2}, results: map[string]result{}}
	id, err := w.AddNode("producer", func() sim.Node { return a }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: id}))
	const n = 200
	for i := 0; i < n; i++ {
		if i == 50 {
			must(t, w.Inject(sim.Crash{Node: c.Brokers[0]})) // b0 leads t-0
		}
		send(t, w, id, a, rec(0, fmt.Sprintf("v%04d", i)))
		run(t, w, 10*sim.Millisecond)
	}
	run(t, w, 60*sim.Second)
	log := leaderLog(t, c, storage.TopicPartition{Topic: "t", Partition: 0})
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("v%04d", i)
		r := a.results[v]
		if r.err != nil {
			t.Errorf("%s: %v", v, r.err)
		} else if log[r.md.Offset] != v {
			t.Errorf("%s acknowledged at %d, the new leader has %q there", v, r.md.Offset, log[r.md.Offset])
		}
	}
	if len(traceKinds(w, "produce-retry")) == 0 {
		t.Fatal("no retry: the crash did not hit the producer")
	}
}
