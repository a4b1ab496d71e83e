package cluster

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func createTopic(v int16, name string, partitions int32, rf int16) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.TimeoutMillis = v, 10000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
	req.Topics = []kmsg.CreateTopicsRequestTopic{t}
	return req
}

func (a *apiCluster) createTopics(to int, req *kmsg.CreateTopicsRequest) []kmsg.CreateTopicsResponseTopic {
	a.t.Helper()
	return a.call(to, req).(*kmsg.CreateTopicsResponse).Topics
}

// CreateTopics at every advertised version, in ZooKeeper mode on the
// controller and in KRaft mode on any broker (forwarded to the active
// controller): the topic gets leaders and takes records; -1 from v4 means
// num.partitions and default.replication.factor; v5+ answers carry the
// counts and configs.
func TestCreateTopicsEveryVersion(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			props := map[string]string{"num.partitions": "2", "default.replication.factor": "2"}
			if mode == "kraft" {
				props["inter.broker.protocol.version"] = "4.0"
			}
			a := newAPICluster(t, props, nil)
			to := 1
			if mode == "zk" {
				to = a.controller()
			}
			lo, hi := a.versions(19)
			for v := lo; v <= hi; v++ {
				name := fmt.Sprintf("ct-v%d", v)
				np, rf := int32(2), int16(2)
				if v >= 4 {
					np, rf = -1, -1
				}
				ts := a.createTopics(to, createTopic(v, name, np, rf))
				if len(ts) != 1 || ts[0].Topic != name || ts[0].ErrorCode != 0 {
					t.Fatalf("CreateTopics v%d: %+v", v, ts)
				}
				if v >= 5 && (ts[0].NumPartitions != 2 || ts[0].ReplicationFactor != 2) {
					t.Fatalf("CreateTopics v%d: %d partitions, replication factor %d", v, ts[0].NumPartitions, ts[0].ReplicationFactor)
				}
				if v >= 5 && len(ts[0].Configs) == 0 {
					t.Fatalf("CreateTopics v%d: no configs", v)
				}
				if mode == "kraft" && v >= 7 && ts[0].TopicID == [16]byte{} {
					t.Fatalf("CreateTopics v%d: no topic id", v)
				}
				a.waitLeaders(name, 2)
				if p := a.produce(name, 1, 7, "x"); p.ErrorCode != 0 {
					t.Fatalf("Produce to %s: %s", name, errName(p.ErrorCode))
				}
				md := a.metadata(0, name)
				if len(md.Topics[0].Partitions) != 2 || len(md.Topics[0].Partitions[0].Replicas) != 2 {
					t.Fatalf("%s: %+v", name, md.Topics[0])
				}
			}
		})
	}
}

// CreateTopics' refusals, as Kafka words them.
func TestCreateTopicsBadInput(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			props := map[string]string{}
			if mode == "kraft" {
				props["inter.broker.protocol.version"] = "4.0"
			}
			a := newAPICluster(t, props, nil)
			to := 1
			if mode == "zk" {
				to = a.controller()
			}
			cases := []struct {
				name string
				req  *kmsg.CreateTopicsRequest
				want int16
			}{
				{"exists", createTopic(4, "t", 1, 1), kerr.TopicAlreadyExists.Code},
				{"bad name", createTopic(4, "bad name!", 1, 1), kerr.InvalidTopicException.Code},
				{"dot", createTopic(4, "..", 1, 1), kerr.InvalidTopicException.Code},
				{"no partitions", createTopic(4, "p0", 0, 1), kerr.InvalidPartitions.Code},
				{"negative partitions", createTopic(4, "pneg", -5, 1), kerr.InvalidPartitions.Code},
				{"rf 0", createTopic(4, "rf0", 1, 0), kerr.InvalidReplicationFactor.Code},
				{"rf above brokers", createTopic(4, "rf4", 1, 4), kerr.InvalidReplicationFactor.Code},
			}
			for _, c := range cases {
				ts := a.createTopics(to, c.req)
				if len(ts) != 1 || ts[0].ErrorCode != c.want {
					t.Errorf("%s: %s, want %s", c.name, errName(ts[0].ErrorCode), errName(c.want))
				}
				if ts[0].ErrorCode != 0 && (ts[0].ErrorMessage == nil || *ts[0].ErrorMessage == "") {
					t.Errorf("%s: no error message", c.name)
				}
			}
			// A name twice in one request.
			req := createTopic(4, "dup", 1, 1)
			req.Topics = append(req.Topics, req.Topics[0])
			if ts := a.createTopics(to, req); ts[0].ErrorCode != kerr.InvalidRequest.Code || ts[1].ErrorCode != kerr.InvalidRequest.Code {
				t.Errorf("duplicate names: %s, %s", errName(ts[0].ErrorCode), errName(ts[1].ErrorCode))
			}
			// An explicit assignment: with counts INVALID_REQUEST; with a
			// gap INVALID_REPLICA_ASSIGNMENT; right, the replicas asked for.
			req = createTopic(4, "manual", 3, -1)
			req.Topics[0].ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: []int32{2, 0}}, {Partition: 1, Replicas: []int32{1, 2}}}
			if ts := a.createTopics(to, req); ts[0].ErrorCode != kerr.InvalidRequest.Code {
				t.Errorf("assignment with counts: %s", errName(ts[0].ErrorCode))
			}
			req.Topics[0].NumPartitions = -1
			req.Topics[0].ReplicaAssignment[1].Partition = 2
			if ts := a.createTopics(to, req); ts[0].ErrorCode != kerr.InvalidReplicaAssignment.Code {
				t.Errorf("assignment with a gap: %s", errName(ts[0].ErrorCode))
			}
			req.Topics[0].ReplicaAssignment[1].Partition = 1
			if ts := a.createTopics(to, req); ts[0].ErrorCode != 0 {
				t.Fatalf("assignment: %s", errName(ts[0].ErrorCode))
			}
			a.waitLeaders("manual", 2)
			md := a.metadata(0, "manual")
			if !slices.Equal(md.Topics[0].Partitions[0].Replicas, []int32{2, 0}) || md.Topics[0].Partitions[0].Leader != 2 {
				t.Errorf("manual assignment: %+v", md.Topics[0].Partitions[0])
			}
			// validate_only creates nothing.
			req = createTopic(4, "validated", 2, 3)
			req.ValidateOnly = true
			if ts := a.createTopics(to, req); ts[0].ErrorCode != 0 {
				t.Fatalf("validate_only: %s", errName(ts[0].ErrorCode))
			}
			a.run(2 * sim.Second)
			if md := a.metadata(0, "validated"); md.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
				t.Errorf("validate_only created the topic: %s", errName(md.Topics[0].ErrorCode))
			}
			if mode == "zk" {
				// Not the controller.
				if ts := a.createTopics((to+1)%3, createTopic(4, "elsewhere", 1, 1)); ts[0].ErrorCode != kerr.NotController.Code {
					t.Errorf("on a broker that is not the controller: %s", errName(ts[0].ErrorCode))
				}
				// An unknown config.
				req = createTopic(4, "cfg", 1, 1)
				v := "1"
				req.Topics[0].Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "no.such.config", Value: &v}}
				if ts := a.createTopics(to, req); ts[0].ErrorCode != kerr.InvalidConfig.Code {
					t.Errorf("unknown config: %s", errName(ts[0].ErrorCode))
				}
				for name, bad := range map[string]string{"retention.ms": "soon", "cleanup.policy": "forever", "unclean.leader.election.enable": "yes"} {
					req.Topics[0].Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: name, Value: &bad}}
					if ts := a.createTopics(to, req); ts[0].ErrorCode != kerr.InvalidConfig.Code {
						t.Errorf("%s=%s: %s", name, bad, errName(ts[0].ErrorCode))
					}
				}
				good := "compact,delete"
				req.Topics[0].Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "cleanup.policy", Value: &good}}
				if ts := a.createTopics(to, req); ts[0].ErrorCode != 0 {
					t.Errorf("cleanup.policy=compact,delete: %s", errName(ts[0].ErrorCode))
				}
				// timeout 0: answered at once, created later.
				req = createTopic(4, "t0", 1, 1)
				req.TimeoutMillis = 0
				if ts := a.createTopics(to, req); ts[0].ErrorCode != 0 {
					t.Errorf("timeout 0: %s", errName(ts[0].ErrorCode))
				}
				a.waitLeaders("t0", 1)
				// The same topic twice in flight: the second already exists.
				c1 := a.send(to, createTopic(4, "twice", 1, 1))
				c2 := a.send(to, createTopic(4, "twice", 1, 1))
				r1 := a.await(c1, createTopic(4, "twice", 1, 1)).(*kmsg.CreateTopicsResponse)
				r2 := a.await(c2, createTopic(4, "twice", 1, 1)).(*kmsg.CreateTopicsResponse)
				if r1.Topics[0].ErrorCode != 0 || r2.Topics[0].ErrorCode != kerr.TopicAlreadyExists.Code {
					t.Errorf("twice: %s, %s", errName(r1.Topics[0].ErrorCode), errName(r2.Topics[0].ErrorCode))
				}
			}
		})
	}
}

// Metadata creates an unknown topic when it may (auto.create.topics.enable,
// and allow_auto_topic_creation from v4), answering LEADER_NOT_AVAILABLE
// meanwhile; the topic then takes records. It does not when either says
// no, and refuses an illegal name.
func TestMetadataAutoCreatesTopics(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			props := map[string]string{"num.partitions": "2", "default.replication.factor": "3"}
			if mode == "kraft" {
				props["inter.broker.protocol.version"] = "4.0"
			}
			a := newAPICluster(t, props, nil)
			lo, hi := a.versions(3)
			ask := func(v int16, name string, allow bool) int16 {
				req := kmsg.NewPtrMetadataRequest()
				req.Version, req.AllowAutoTopicCreation = v, allow
				n := name
				req.Topics = []kmsg.MetadataRequestTopic{{Topic: &n}}
				return a.call(int(v)%3, req).(*kmsg.MetadataResponse).Topics[0].ErrorCode
			}
			for v := lo; v <= hi; v++ {
				name := fmt.Sprintf("auto-v%d", v)
				if c := ask(v, name, true); c != kerr.LeaderNotAvailable.Code {
					t.Fatalf("Metadata v%d, unknown topic: %s, want LEADER_NOT_AVAILABLE", v, errName(c))
				}
				a.waitLeaders(name, 2)
				// The broker asked may learn the leaders a little after
				// the leaders themselves do (KRaft brokers replay the
				// metadata log each at its own pace): a client retries
				// LEADER_NOT_AVAILABLE, and so does this test, briefly.
				c := ask(v, name, true)
				for try := 0; c == kerr.LeaderNotAvailable.Code && try < 20; try++ {
					a.run(100 * sim.Millisecond)
					c = ask(v, name, true)
				}
				if c != 0 {
					t.Fatalf("Metadata v%d after creation: %s", v, errName(c))
				}
				if p := a.produce(name, 0, 7, "x"); p.ErrorCode != 0 {
					t.Fatalf("Produce to %s: %s", name, errName(p.ErrorCode))
				}
				if v >= 4 {
					no := fmt.Sprintf("noauto-v%d", v)
					if c := ask(v, no, false); c != kerr.UnknownTopicOrPartition.Code {
						t.Fatalf("Metadata v%d without allow_auto_topic_creation: %s", v, errName(c))
					}
				}
			}
			if c := ask(7, "bad name!", true); c != kerr.InvalidTopicException.Code {
				t.Errorf("illegal name: %s", errName(c))
			}
			a.run(2 * sim.Second)
			for v := int16(4); v <= hi; v++ {
				if c := ask(7, fmt.Sprintf("noauto-v%d", v), false); c != kerr.UnknownTopicOrPartition.Code {
					t.Fatalf("noauto-v%d was created: %s", v, errName(c))
				}
			}
		})
	}
	// auto.create.topics.enable=false: nothing is created, at any version.
	a := newAPICluster(t, map[string]string{"auto.create.topics.enable": "false"}, nil)
	for v := int16(0); v <= 7; v++ {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		n := "off"
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: &n}}
		if c := a.call(0, req).(*kmsg.MetadataResponse).Topics[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("auto.create.topics.enable=false, v%d: %s", v, errName(c))
		}
	}
	// default.replication.factor above the live brokers: not created.
	for _, ibp := range []string{"3.9", "4.0"} {
		a = newAPICluster(t, map[string]string{"default.replication.factor": "4", "inter.broker.protocol.version": ibp}, nil)
		req := kmsg.NewPtrMetadataRequest()
		req.Version, req.AllowAutoTopicCreation = 7, true
		n := "big"
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: &n}}
		if c := a.call(0, req).(*kmsg.MetadataResponse).Topics[0].ErrorCode; c != kerr.InvalidReplicationFactor.Code {
			t.Fatalf("%s: default.replication.factor 4 of 3 brokers: %s", ibp, errName(c))
		}
	}
}

// The broker defaults of CreateTopics (-1) came with KIP-464 (2.4), at
// every request version; a 2.3 broker refuses -1 as a count.
func TestCreateTopicsDefaultsByRelease(t *testing.T) {
	a := newAPICluster(t, map[string]string{"inter.broker.protocol.version": "2.3"}, nil)
	to := a.controller()
	if ts := a.createTopics(to, createTopic(3, "d", -1, 1)); ts[0].ErrorCode != kerr.InvalidPartitions.Code {
		t.Errorf("2.3, -1 partitions: %s, want INVALID_PARTITIONS", errName(ts[0].ErrorCode))
	}
	if ts := a.createTopics(to, createTopic(3, "d", 1, -1)); ts[0].ErrorCode != kerr.InvalidReplicationFactor.Code {
		t.Errorf("2.3, -1 replication factor: %s, want INVALID_REPLICATION_FACTOR", errName(ts[0].ErrorCode))
	}
	a = newAPICluster(t, map[string]string{"inter.broker.protocol.version": "2.4"}, nil)
	if ts := a.createTopics(a.controller(), createTopic(3, "d", -1, -1)); ts[0].ErrorCode != 0 || ts[0].Topic != "d" {
		t.Errorf("2.4, v3 with -1: %s, want the defaults", errName(ts[0].ErrorCode))
	}
	a.waitLeaders("d", 1)
}

// A created topic whose partitions get no leader within timeout_ms is
// answered REQUEST_TIMED_OUT (DelayedCreatePartitions): here its one
// replica is on a broker that is down.
func TestCreateTopicsTimesOut(t *testing.T) {
	a := newAPICluster(t, nil, nil)
	to := a.controller()
	down := (to + 1) % 3
	if err := a.c.World.Inject(sim.Crash{Node: a.c.Brokers[down]}); err != nil {
		t.Fatal(err)
	}
	a.run(25 * sim.Second) // past zookeeper.session.timeout.ms: the controller sees it dead
	req := createTopic(4, "orphan", -1, -1)
	req.TimeoutMillis = 2000
	req.Topics[0].ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: []int32{int32(down)}}}
	start := a.c.World.Now()
	ts := a.createTopics(to, req)
	if ts[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("a topic without a live replica: %s, want REQUEST_TIMED_OUT", errName(ts[0].ErrorCode))
	}
	if took := a.c.World.Now().Sub(start); took < 2*sim.Second || took > 3*sim.Second {
		t.Fatalf("answered after %v, want timeout_ms", took)
	}
}

// With broker.rack on every broker, CreateTopics and auto-creation place
// each partition's replicas in different racks (AdminUtils' rack-aware
// assignment), and draw their start from the node's random stream: the
// same seed gives the same assignment.
func TestCreateTopicsRackAware(t *testing.T) {
	assign := func() [][]int32 {
		a := newAPICluster(t, map[string]string{"num.partitions": "6", "default.replication.factor": "2"}, func(s *Spec) { s.Racks = []string{"a", "a", "b"} })
		if ts := a.createTopics(a.controller(), createTopic(4, "racked", -1, -1)); ts[0].ErrorCode != 0 {
			t.Fatalf("CreateTopics: %s", errName(ts[0].ErrorCode))
		}
		var out [][]int32
		for _, p := range a.metadata(0, "racked").Topics[0].Partitions {
			if !slices.Contains(p.Replicas, 2) || len(p.Replicas) != 2 {
				t.Fatalf("partition %d on %v: not in both racks", p.Partition, p.Replicas)
			}
			out = append(out, p.Replicas)
		}
		return out
	}
	first, again := assign(), assign()
	if len(first) != 6 || fmt.Sprint(first) != fmt.Sprint(again) {
		t.Fatalf("assignments %v then %v: want 6 partitions, the same both times", first, again)
	}
}

// In combined mode (process.roles=broker,controller) a client's
// CreateTopics to any node reaches the active controller: the active one
// answers it, the others forward it (KIP-590); metadata auto-creation
// works from every node.
func TestCreateTopicsCombinedMode(t *testing.T) {
	a := newAPICluster(t, map[string]string{"process.roles": "broker,controller", "inter.broker.protocol.version": "3.9"}, nil)
	for i := range 3 {
		name := fmt.Sprintf("combined-%d", i)
		if ts := a.createTopics(i, createTopic(7, name, 1, 3)); ts[0].ErrorCode != 0 {
			t.Fatalf("CreateTopics on b%d: %s", i, errName(ts[0].ErrorCode))
		}
		a.waitLeaders(name, 1)
		req := kmsg.NewPtrMetadataRequest()
		req.Version, req.AllowAutoTopicCreation = 12, true
		n := fmt.Sprintf("combined-auto-%d", i)
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: &n}}
		if c := a.call(i, req).(*kmsg.MetadataResponse).Topics[0].ErrorCode; c != kerr.LeaderNotAvailable.Code {
			t.Fatalf("Metadata on b%d: %s", i, errName(c))
		}
		a.waitLeaders(n, 1)
	}
}
