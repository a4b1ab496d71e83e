package client

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/sim"
)

// kip848Cluster is groupCluster on Kafka 4.0 in KRaft mode (three
// controllers), where the consumer group protocol is on by default.
func kip848Cluster(t *testing.T, seed uint64) (*sim.World, *cluster.Cluster) {
	bcfg, err := config.Parse(map[string]string{"offsets.topic.num.partitions": "4", "offsets.topic.replication.factor": "3",
		"min.insync.replicas": "2", "inter.broker.protocol.version": "4.0",
		"group.consumer.session.timeout.ms": "6000", "group.consumer.heartbeat.interval.ms": "500"})
	must(t, err)
	w, err := sim.New(sim.Config{Seed: seed, KeepTrace: true})
	must(t, err)
	c, err := cluster.Build(w, cluster.Spec{Brokers: 3, Controllers: 3, OffsetsTopic: true, Config: bcfg,
		Topics: []cluster.Topic{{Name: "t", Partitions: 4, ReplicationFactor: 3}}})
	must(t, err)
	run(t, w, 10*sim.Second)
	return w, c
}

// TestKIP848ConsumerIncrementalHandover: under group.protocol=consumer a
// third member joining takes partitions from the two others, which revoke
// only what moves (OnRevoked with those alone; their kept partitions stay
// assigned throughout), every partition ends owned once, and every record
// is consumed: no stop-the-world rebalance, nothing skipped.
func TestKIP848ConsumerIncrementalHandover(t *testing.T) {
	w, _ := kip848Cluster(t, 5)
	a1 := addConsumer(t, w, "c1", "group.protocol", "consumer")
	a2 := addConsumer(t, w, "c2", "group.protocol", "consumer")
	run(t, w, 8*sim.Second)
	produceN(t, w, "p1", 60, 0)
	run(t, w, 2*sim.Second)
	before := [][]TopicPartition{owns(a1), owns(a2)}
	if len(before[0]) != 2 || len(before[1]) != 2 {
		t.Fatalf("before: c1 %v c2 %v, want two each (uniform)", before[0], before[1])
	}
	r1, r2 := len(a1.revokes), len(a2.revokes)
	a3 := addConsumer(t, w, "c3", "group.protocol", "consumer")
	// Sample the two first members' assignments while c3 joins: each
	// keeps at least one partition at every instant.
	for range 100 {
		run(t, w, 100*sim.Millisecond)
		for i, a := range []*consumerApp{a1, a2} {
			if len(a.c.Assignment()) == 0 {
				t.Fatalf("c%d owned nothing at %v during the rebalance: a stop-the-world pause", i+1, w.Now())
			}
		}
	}
	produceN(t, w, "p2", 60, 60)
	run(t, w, 5*sim.Second)
	checkConsumed(t, 120, a1, a2, a3)
	after := [][]TopicPartition{owns(a1), owns(a2), owns(a3)}
	all := slices.Concat(after...)
	slices.SortFunc(all, assignor.Compare)
	if len(all) != 4 || len(slices.Compact(all)) != 4 || len(after[2]) == 0 {
		t.Fatalf("after: %v, want the 4 partitions owned once, c3 among the owners", after)
	}
	for i, a := range []*consumerApp{a1, a2} {
		n := 0
		for _, r := range a.revokes[[]int{r1, r2}[i]:] {
			n += len(r)
		}
		if n != len(before[i])-len(after[i]) {
			t.Errorf("c%d revoked %v, want only the %d partition(s) it lost", i+1, a.revokes, len(before[i])-len(after[i]))
		}
	}
	if n := len(traceKinds(w, "consumer-joined")); n != 0 {
		t.Errorf("%d classic joins, want none (no JoinGroup under the consumer protocol)", n)
	}
	for _, a := range []*consumerApp{a1, a2, a3} {
		if len(a.errs) > 0 {
			t.Errorf("%s: Poll errors %v", a.cfg.ClientID, a.errs)
		}
	}
}

// TestKIP848ConsumerRefusedBelow40: group.protocol=consumer against
// brokers that do not serve the protocol is bad input naming the property.
func TestKIP848ConsumerRefusedBelow40(t *testing.T) {
	for _, props := range []map[string]string{
		{"inter.broker.protocol.version": "3.9", "consumer.group.protocol": "consumer"},
		{"inter.broker.protocol.version": "4.0", "group.coordinator.rebalance.protocols": "classic", "consumer.group.protocol": "consumer"},
	} {
		cfg, err := config.Parse(props)
		if err == nil {
			err = cfg.Validate(3, 3)
		}
		if err == nil {
			t.Errorf("%v: accepted", props)
		}
	}
	cfg, err := config.Parse(map[string]string{"inter.broker.protocol.version": "4.0", "consumer.group.protocol": "consumer"})
	if err == nil {
		err = cfg.Validate(3, 3)
	}
	if err != nil {
		t.Errorf("4.0 with group.protocol=consumer: %v", err)
	}
}
