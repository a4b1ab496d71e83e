package cluster

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// modeProps returns the properties of a ZooKeeper or KRaft (4.0) cluster.
func modeProps(mode string, more map[string]string) map[string]string {
	props := map[string]string{}
	if mode == "kraft" {
		props["inter.broker.protocol.version"] = "4.0"
	}
	for k, v := range more {
		props[k] = v
	}
	return props
}

// adminTarget is where a client sends a controller API: the controller in
// ZooKeeper mode, any broker (forwarding it) in KRaft mode.
func (a *apiCluster) adminTarget(mode string) int {
	if mode == "zk" {
		return a.controller()
	}
	return 1
}

func deleteTopicsReq(v int16, names ...string) *kmsg.DeleteTopicsRequest {
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version, req.TimeoutMillis = v, 10000
	for _, n := range names {
		if v >= 6 {
			name := n
			req.Topics = append(req.Topics, kmsg.DeleteTopicsRequestTopic{Topic: &name})
		} else {
			req.TopicNames = append(req.TopicNames, n)
		}
	}
	return req
}

func (a *apiCluster) deleteTopics(to int, req *kmsg.DeleteTopicsRequest) []kmsg.DeleteTopicsResponseTopic {
	a.t.Helper()
	return a.call(to, req).(*kmsg.DeleteTopicsResponse).Topics
}

// hostsReplica reports whether some running broker holds a replica of
// topic-p.
func (a *apiCluster) hostsReplica(topic string, p int32) bool {
	for i := range a.c.Brokers {
		if b := a.c.Broker(i); b != nil {
			if _, ok := b.Partition(storage.TopicPartition{Topic: topic, Partition: p}); ok {
				return true
			}
		}
	}
	return false
}

// DeleteTopics at every advertised version deletes the topic: the
// metadata answers UNKNOWN_TOPIC_OR_PARTITION, no broker keeps a replica,
// and the name can be created again.
func TestDeleteTopicsEveryVersion(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, nil), nil)
			to := a.adminTarget(mode)
			lo, hi := a.versions(20)
			if mode == "kraft" && lo != 1 || mode == "zk" && lo != 0 || hi != 6 {
				t.Fatalf("DeleteTopics advertised v%d-v%d", lo, hi)
			}
			for v := lo; v <= hi; v++ {
				name := fmt.Sprintf("dt-v%d", v)
				if ts := a.createTopics(to, createTopic(4, name, 2, 3)); ts[0].ErrorCode != 0 {
					t.Fatalf("CreateTopics %s: %s", name, errName(ts[0].ErrorCode))
				}
				a.waitLeaders(name, 2)
				if p := a.produce(name, 0, 7, "x"); p.ErrorCode != 0 {
					t.Fatalf("produce: %s", errName(p.ErrorCode))
				}
				ts := a.deleteTopics(to, deleteTopicsReq(v, name))
				if len(ts) != 1 || ts[0].ErrorCode != 0 || ts[0].Topic == nil || *ts[0].Topic != name {
					t.Fatalf("DeleteTopics v%d: %+v", v, ts)
				}
				a.run(2 * sim.Second)
				for i := range a.c.Brokers {
					if md := a.metadata(i, name); md.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
						t.Fatalf("v%d: b%d's metadata still has %s: %s", v, i, name, errName(md.Topics[0].ErrorCode))
					}
				}
				if a.hostsReplica(name, 0) || a.hostsReplica(name, 1) {
					t.Fatalf("v%d: a broker still holds a replica of %s", v, name)
				}
			}
			// The name is free again.
			if ts := a.createTopics(to, createTopic(4, "dt-v3", 1, 2)); ts[0].ErrorCode != 0 {
				t.Fatalf("CreateTopics again: %s", errName(ts[0].ErrorCode))
			}
			a.waitLeaders("dt-v3", 1)
			if p := a.produce("dt-v3", 0, 7, "again"); p.ErrorCode != 0 || p.BaseOffset != 0 {
				t.Fatalf("produce to the new topic: %s at %d", errName(p.ErrorCode), p.BaseOffset)
			}
		})
	}
}

// DeleteTopics' refusals, as Kafka answers them.
func TestDeleteTopicsErrors(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, nil), nil)
			to := a.adminTarget(mode)
			if ts := a.deleteTopics(to, deleteTopicsReq(4, "nope")); ts[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
				t.Errorf("unknown topic: %s", errName(ts[0].ErrorCode))
			}
			req := deleteTopicsReq(6)
			req.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: [16]byte{1, 2, 3}}}
			if ts := a.deleteTopics(to, req); ts[0].ErrorCode != kerr.UnknownTopicID.Code {
				t.Errorf("unknown topic id: %s", errName(ts[0].ErrorCode))
			}
			name := "t"
			req.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: &name, TopicID: [16]byte{1}}}
			if ts := a.deleteTopics(to, req); ts[0].ErrorCode != kerr.InvalidRequest.Code {
				t.Errorf("name and id: %s", errName(ts[0].ErrorCode))
			}
			if mode == "zk" {
				other := (to + 1) % 3
				if ts := a.deleteTopics(other, deleteTopicsReq(4, "t")); ts[0].ErrorCode != kerr.NotController.Code {
					t.Errorf("not the controller: %s", errName(ts[0].ErrorCode))
				}
				return
			}
			// KRaft: by topic id.
			id, _ := a.c.Broker(0).Image().TopicID("t")
			req.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: id}}
			ts := a.deleteTopics(to, req)
			if ts[0].ErrorCode != 0 || ts[0].Topic == nil || *ts[0].Topic != "t" {
				t.Fatalf("by id: %s %+v", errName(ts[0].ErrorCode), ts[0])
			}
			a.run(2 * sim.Second)
			if md := a.metadata(2, "t"); md.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
				t.Errorf("deleted by id, still listed: %s", errName(md.Topics[0].ErrorCode))
			}
		})
	}
}

// delete.topic.enable=false: TOPIC_DELETION_DISABLED, INVALID_REQUEST
// below v3; the topic stays.
func TestDeleteTopicsDisabled(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, map[string]string{"delete.topic.enable": "false"}), nil)
			to := a.adminTarget(mode)
			if ts := a.deleteTopics(to, deleteTopicsReq(3, "t")); ts[0].ErrorCode != kerr.TopicDeletionDisabled.Code {
				t.Errorf("v3: %s", errName(ts[0].ErrorCode))
			}
			if ts := a.deleteTopics(to, deleteTopicsReq(2, "t")); ts[0].ErrorCode != kerr.InvalidRequest.Code {
				t.Errorf("v2: %s", errName(ts[0].ErrorCode))
			}
			a.run(sim.Second)
			if md := a.metadata(0, "t"); md.Topics[0].ErrorCode != 0 {
				t.Errorf("the topic went: %s", errName(md.Topics[0].ErrorCode))
			}
		})
	}
}

func createPartitionsReq(v int16, topic string, count int32, assignment ...[]int32) *kmsg.CreatePartitionsRequest {
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version, req.TimeoutMillis = v, 10000
	t := kmsg.CreatePartitionsRequestTopic{Topic: topic, Count: count}
	for _, a := range assignment {
		t.Assignment = append(t.Assignment, kmsg.CreatePartitionsRequestTopicAssignment{Replicas: a})
	}
	req.Topics = []kmsg.CreatePartitionsRequestTopic{t}
	return req
}

func (a *apiCluster) createPartitions(to int, req *kmsg.CreatePartitionsRequest) []kmsg.CreatePartitionsResponseTopic {
	a.t.Helper()
	return a.call(to, req).(*kmsg.CreatePartitionsResponse).Topics
}

// CreatePartitions at every advertised version adds a partition to the
// topic: it gets a leader and takes records; a manual assignment is
// followed; validate_only adds nothing; bad input is refused as Kafka
// refuses it.
func TestCreatePartitionsEveryVersion(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, nil), nil)
			to := a.adminTarget(mode)
			lo, hi := a.versions(37)
			if lo != 0 || hi != 3 {
				t.Fatalf("CreatePartitions advertised v%d-v%d", lo, hi)
			}
			count := int32(3)
			for v := lo; v <= hi; v++ {
				count++
				if ts := a.createPartitions(to, createPartitionsReq(v, "t", count)); len(ts) != 1 || ts[0].ErrorCode != 0 {
					t.Fatalf("v%d: %+v", v, ts)
				}
				a.waitLeaders("t", count)
				if p := a.produce("t", count-1, 7, "new"); p.ErrorCode != 0 {
					t.Fatalf("v%d: produce to the new partition: %s", v, errName(p.ErrorCode))
				}
				if md := a.metadata(0, "t"); len(md.Topics[0].Partitions) != int(count) || len(md.Topics[0].Partitions[count-1].Replicas) != 3 {
					t.Fatalf("v%d: metadata %+v", v, md.Topics[0])
				}
			}
			// A manual assignment.
			count++
			if ts := a.createPartitions(to, createPartitionsReq(3, "t", count, []int32{2, 0, 1})); ts[0].ErrorCode != 0 {
				t.Fatalf("manual: %s", errName(ts[0].ErrorCode))
			}
			a.waitLeaders("t", count)
			if md := a.metadata(0, "t"); md.Topics[0].Partitions[count-1].Leader != 2 {
				t.Errorf("manual assignment: %+v", md.Topics[0].Partitions[count-1])
			}
			// validate_only.
			req := createPartitionsReq(3, "t", count+5)
			req.ValidateOnly = true
			if ts := a.createPartitions(to, req); ts[0].ErrorCode != 0 {
				t.Fatalf("validate_only: %s", errName(ts[0].ErrorCode))
			}
			a.run(2 * sim.Second)
			if md := a.metadata(0, "t"); len(md.Topics[0].Partitions) != int(count) {
				t.Errorf("validate_only added partitions: %d", len(md.Topics[0].Partitions))
			}
			cases := []struct {
				name string
				req  *kmsg.CreatePartitionsRequest
				want *kerr.Error
			}{
				{"same count", createPartitionsReq(3, "t", count), kerr.InvalidPartitions},
				{"fewer", createPartitionsReq(3, "t", 1), kerr.InvalidPartitions},
				{"unknown topic", createPartitionsReq(3, "nope", 5), kerr.UnknownTopicOrPartition},
				{"too few assignments", createPartitionsReq(3, "t", count+2, []int32{0, 1, 2}), kerr.InvalidReplicaAssignment},
				{"wrong replication factor", createPartitionsReq(3, "t", count+1, []int32{0, 1}), kerr.InvalidReplicaAssignment},
				{"repeated broker", createPartitionsReq(3, "t", count+1, []int32{0, 0, 1}), kerr.InvalidReplicaAssignment},
				{"unknown broker", createPartitionsReq(3, "t", count+1, []int32{0, 1, 9}), kerr.InvalidReplicaAssignment},
			}
			for _, c := range cases {
				ts := a.createPartitions(to, c.req)
				if ts[0].ErrorCode != c.want.Code || ts[0].ErrorMessage == nil {
					t.Errorf("%s: %s, want %s", c.name, errName(ts[0].ErrorCode), c.want.Message)
				}
			}
			dup := createPartitionsReq(3, "t", count+1)
			dup.Topics = append(dup.Topics, dup.Topics[0])
			if ts := a.createPartitions(to, dup); ts[0].ErrorCode != kerr.InvalidRequest.Code || ts[1].ErrorCode != kerr.InvalidRequest.Code {
				t.Errorf("a topic twice: %s, %s", errName(ts[0].ErrorCode), errName(ts[1].ErrorCode))
			}
			if mode == "zk" {
				if ts := a.createPartitions((to+1)%3, createPartitionsReq(3, "t", count+1)); ts[0].ErrorCode != kerr.NotController.Code {
					t.Errorf("not the controller: %s", errName(ts[0].ErrorCode))
				}
			}
		})
	}
}
