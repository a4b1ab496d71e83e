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
// once: the leader must know its partition (kafka-go's
// TestOffsetFetchRequestWithOneTopic and TestReader got
// UNKNOWN_TOPIC_OR_PARTITION here).
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
		resp, err := dial(t, leader).do(produceReq(topic, 0, 1, "v"))
		if err != nil {
			t.Fatal(err)
		}
		if ec := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; ec != 0 {
			t.Fatalf("%s: produce to leader %s right after Metadata named it: error %d", topic, leader, ec)
		}
	}
}
