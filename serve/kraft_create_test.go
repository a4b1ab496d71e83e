package serve

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKRaftProduceRightAfterCreate creates a topic of RF 1 in KRaft mode,
// waits until one broker's Metadata shows its partition (as kafka-go's
// createTopic does), and produces to the leader that Metadata names at
// once: the leader must know its partition within 100 ms, the network
// hops that carry the metadata log's new high watermark (kafka-go's
// TestOffsetFetchRequestWithOneTopic and TestReader got
// UNKNOWN_TOPIC_OR_PARTITION here: before KIP-1166, 4.1, a broker whose
// metadata fetch was parked learnt of the topic up to 500 ms late).
func TestKRaftProduceRightAfterCreate(t *testing.T) {
	s := startServer(t, 1, nil, map[string]string{"inter.broker.protocol.version": "4.1", "min.insync.replicas": "1"})
	addrs := s.Addrs()
	for i := 0; i < 12; i++ {
		topic := fmt.Sprintf("c%d", i)
		auto := i%2 == 1 // auto-created by the Metadata request below
		create := kmsg.NewPtrCreateTopicsRequest()
		create.Version, create.TimeoutMillis = 2, 5000
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, 1, 1
		create.Topics = append(create.Topics, ct)
		if !auto {
			resp, err := dial(t, addrs[0]).do(create)
			if err != nil || resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode != 0 {
				t.Fatalf("CreateTopics %s: %v %+v", topic, err, resp)
			}
		}
		md := dial(t, addrs[2])
		leader := ""
		for deadline := time.Now().Add(10 * time.Second); leader == "" && time.Now().Before(deadline); {
			req := metadataReq()
			req.Version = 1 // kafka-go's
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = &topic
			req.Topics = append(req.Topics, mt)
			resp, err := md.do(req)
			if err != nil {
				t.Fatal(err)
			}
			m := resp.(*kmsg.MetadataResponse)
			for _, tp := range m.Topics {
				for _, p := range tp.Partitions {
					if p.ErrorCode != 0 {
						continue
					}
					for _, b := range m.Brokers {
						if b.NodeID == p.Leader {
							leader = fmt.Sprintf("%s:%d", b.Host, b.Port)
						}
					}
				}
			}
			if leader == "" {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if leader == "" {
			t.Fatalf("%s: no leader in metadata within 10s", topic)
		}
		c := dial(t, leader)
		for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
			resp, err := c.do(produceReq(topic, 0, 1, "v"))
			if err != nil {
				t.Fatal(err)
			}
			ec := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
			if ec == 0 {
				break
			}
			if time.Since(start) > 100*time.Millisecond {
				t.Fatalf("%s: produce to leader %s still error %d %v after Metadata named it", topic, leader, ec, time.Since(start))
			}
		}
	}
}

// TestKRaftDescribeConfigsRightAfterAlter alters a topic's
// max.message.bytes through one broker and asks each broker for it once
// the answer is back. Kafka answers once the controller committed the
// ConfigRecord, not once every broker applied it, so a broker may lag by
// the network hops that carry the new high watermark; with KIP-1166 (4.1)
// not by a parked fetch's 500 ms (kafka-go's
// TestClientIncrementalAlterConfigs read the old value from such a
// broker). Every broker must show it within 100 ms.
func TestKRaftDescribeConfigsRightAfterAlter(t *testing.T) {
	s := startServer(t, 1, nil, map[string]string{"inter.broker.protocol.version": "4.1"})
	addrs := s.Addrs()
	create := kmsg.NewPtrCreateTopicsRequest()
	create.Version, create.TimeoutMillis = 2, 5000
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "a", 1, 3
	create.Topics = append(create.Topics, ct)
	if resp, err := dial(t, addrs[0]).do(create); err != nil || resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics a: %v %+v", err, resp)
	}
	time.Sleep(time.Second) // every broker has the topic by now
	for i := 0; i < 8; i++ {
		value := fmt.Sprint(200000 + i)
		alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "a"
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = "max.message.bytes", &value, kmsg.IncrementalAlterConfigOpSet
		r.Configs = append(r.Configs, c)
		alter.Resources = append(alter.Resources, r)
		resp, err := dial(t, addrs[i%3]).do(alter)
		if err != nil || resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode != 0 {
			t.Fatalf("IncrementalAlterConfigs: %v %+v", err, resp)
		}
		for b, addr := range addrs {
			describe := kmsg.NewPtrDescribeConfigsRequest()
			describe.Version = 1
			dr := kmsg.NewDescribeConfigsRequestResource()
			dr.ResourceType, dr.ResourceName, dr.ConfigNames = kmsg.ConfigResourceTypeTopic, "a", []string{"max.message.bytes"}
			describe.Resources = append(describe.Resources, dr)
			c := dial(t, addr)
			for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
				resp, err := c.do(describe)
				if err != nil {
					t.Fatal(err)
				}
				got := resp.(*kmsg.DescribeConfigsResponse).Resources[0].Configs
				if len(got) == 1 && got[0].Value != nil && *got[0].Value == value {
					break
				}
				if time.Since(start) > 100*time.Millisecond {
					t.Fatalf("b%d still answered %+v %v after the alter to %s", b, got, time.Since(start), value)
				}
			}
		}
	}
}
