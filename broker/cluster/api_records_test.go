package cluster

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateTopics accepts the modelled records configs with valid values and
// answers INVALID_CONFIG for invalid ones; DescribeConfigs lists a topic's
// own max.message.bytes and compression.type as topic configs, the
// broker's otherwise, and follows AlterTopicConfig.
func TestRecordsConfigsOnTheWire(t *testing.T) {
	a := newAPICluster(t, map[string]string{"compression.type": "gzip"}, func(s *Spec) {
		s.Topics[0].Config = map[string]string{"max.message.bytes": "2000"}
	})
	to := a.c.ActiveController()
	for _, c := range []struct {
		name, value string
		want        *kerr.Error
	}{
		{"compression.type", "lz4", nil},
		{"compression.type", "producer", nil},
		{"compression.type", "brotli", kerr.InvalidConfig},
		{"compression.type", "none", kerr.InvalidConfig}, // the producer's spelling, not a topic's
		{"max.message.bytes", "2000", nil},
		{"max.message.bytes", "big", kerr.InvalidConfig},
	} {
		req := createTopic(4, "c-"+c.value, 1, 1)
		v := c.value
		req.Topics[0].Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: c.name, Value: &v}}
		ts := a.createTopics(to, req)
		if want := int16(0); c.want != nil && ts[0].ErrorCode != c.want.Code || c.want == nil && ts[0].ErrorCode != want {
			t.Errorf("%s=%s: %s, want %v", c.name, c.value, errName(ts[0].ErrorCode), c.want)
		}
	}
	describe := func(name string) kmsg.DescribeConfigsResponseResourceConfig {
		r := a.call(0, describeConfigs(3, kmsg.ConfigResourceTypeTopic, "t", name)).(*kmsg.DescribeConfigsResponse).Resources[0]
		c, ok := configNamed(r, name)
		if !ok {
			t.Fatalf("topic t: no %s in %+v", name, r.Configs)
		}
		return c
	}
	if c := describe("max.message.bytes"); *c.Value != "2000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig || c.ConfigType != kmsg.ConfigTypeInt {
		t.Errorf("max.message.bytes: %s %v %v", *c.Value, c.Source, c.ConfigType)
	}
	if c := describe("compression.type"); *c.Value != "gzip" || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Errorf("compression.type: %s %v, want the broker's gzip", *c.Value, c.Source)
	}
	if _, err := a.c.AlterTopicConfig("t", map[string]string{"compression.type": "zstd", "max.message.bytes": "500"}); err != nil {
		t.Fatal(err)
	}
	if c := describe("compression.type"); *c.Value != "zstd" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("after alter: compression.type %s %v", *c.Value, c.Source)
	}
	if c := describe("max.message.bytes"); *c.Value != "500" {
		t.Errorf("after alter: max.message.bytes %s", *c.Value)
	}
	if _, err := a.c.AlterTopicConfig("t", map[string]string{"min.insync.replicas": "4"}); err == nil {
		t.Errorf("min.insync.replicas=4 on a topic of 3 replicas accepted")
	}
	// A broker started after the change reads it (ZooKeeper's
	// /config/topics/<t>).
	b0 := a.c.Brokers[0]
	if err := a.c.World.Inject(sim.Crash{Node: b0}); err != nil {
		t.Fatal(err)
	}
	if err := a.c.World.Inject(sim.Restart{Node: b0}); err != nil {
		t.Fatal(err)
	}
	a.run(sim.Second)
	if s, ok := a.c.Broker(0).TopicSettings("t"); !ok || s.CompressionType != "zstd" || *s.MaxMessageBytes != 500 {
		t.Errorf("after a restart: %+v, want compression.type zstd and max.message.bytes 500", s)
	}
}

// In KRaft mode the configs CreateTopics gives a topic (its ConfigRecords)
// take effect on the brokers: max.message.bytes refuses a larger batch,
// compression.type recompresses what is stored.
func TestKRaftCreateTopicsConfigsTakeEffect(t *testing.T) {
	a := newAPICluster(t, map[string]string{"process.roles": "broker,controller", "inter.broker.protocol.version": "3.9"}, nil)
	req := createTopic(7, "limited", 1, 3)
	limit, codec := "100", "gzip"
	req.Topics[0].Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "max.message.bytes", Value: &limit}, {Name: "compression.type", Value: &codec}}
	if ts := a.createTopics(0, req); ts[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics: %s", errName(ts[0].ErrorCode))
	}
	a.waitLeaders("limited", 1)
	if p := a.produce("limited", 0, 7, "small"); p.ErrorCode != 0 {
		t.Fatalf("small: %s", errName(p.ErrorCode))
	}
	if p := a.produce("limited", 0, 7, "a value long enough to pass one hundred bytes once the batch header is counted"); p.ErrorCode != kerr.MessageTooLarge.Code {
		t.Fatalf("large: %s, want MESSAGE_TOO_LARGE", errName(p.ErrorCode))
	}
	l := a.leader("limited", 0)
	part, _ := a.c.Broker(l).Partition(storage.TopicPartition{Topic: "limited", Partition: 0})
	var codecs []int16
	if err := part.Log().Batches(0, func(bi storage.BatchInfo) { codecs = append(codecs, bi.Attributes&storage.CompressionCodecMask) }); err != nil {
		t.Fatal(err)
	}
	if len(codecs) != 1 || codecs[0] != storage.CodecGzip {
		t.Errorf("stored codecs %v, want the topic's gzip", codecs)
	}
}

// In ZooKeeper mode the configs CreateTopics gives a topic are stored at
// /config/topics/<t> (AdminZkClient.createTopicWithAssignment) and take
// effect on the brokers, a broker restarted later included: the same
// limits as in KRaft mode.
func TestZooKeeperCreateTopicsConfigsTakeEffect(t *testing.T) {
	a := newAPICluster(t, map[string]string{"inter.broker.protocol.version": "3.9"}, nil)
	req := createTopic(7, "limited", 1, 3)
	limit, codec := "100", "gzip"
	req.Topics[0].Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "max.message.bytes", Value: &limit}, {Name: "compression.type", Value: &codec}}
	ts := a.createTopics(a.controller(), req)
	if ts[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics: %s", errName(ts[0].ErrorCode))
	}
	for _, c := range ts[0].Configs {
		if c.Name == "max.message.bytes" && (c.Value == nil || *c.Value != "100" || c.Source != int8(kmsg.ConfigSourceDynamicTopicConfig)) {
			t.Errorf("the answer's max.message.bytes: %v source %d, want the topic's own 100", c.Value, c.Source)
		}
	}
	a.waitLeaders("limited", 1)
	if p := a.produce("limited", 0, 7, "small"); p.ErrorCode != 0 {
		t.Fatalf("small: %s", errName(p.ErrorCode))
	}
	large := "a value long enough to pass one hundred bytes once the batch header is counted"
	if p := a.produce("limited", 0, 7, large); p.ErrorCode != kerr.MessageTooLarge.Code {
		t.Fatalf("large: %s, want MESSAGE_TOO_LARGE", errName(p.ErrorCode))
	}
	l := a.leader("limited", 0)
	part, _ := a.c.Broker(l).Partition(storage.TopicPartition{Topic: "limited", Partition: 0})
	var codecs []int16
	if err := part.Log().Batches(0, func(bi storage.BatchInfo) { codecs = append(codecs, bi.Attributes&storage.CompressionCodecMask) }); err != nil {
		t.Fatal(err)
	}
	if len(codecs) != 1 || codecs[0] != storage.CodecGzip {
		t.Errorf("stored codecs %v, want the topic's gzip", codecs)
	}
	if s, ok := a.c.Broker(l).TopicSettings("limited"); !ok || s.MaxMessageBytes == nil || *s.MaxMessageBytes != 100 {
		t.Errorf("b%d's settings of limited: %+v %v, want max.message.bytes 100", l, s, ok)
	}
	// Another topic, created without configs, keeps the brokers'.
	if ts := a.createTopics(a.controller(), createTopic(7, "plain", 1, 3)); ts[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics plain: %s", errName(ts[0].ErrorCode))
	}
	a.waitLeaders("plain", 1)
	if p := a.produce("plain", 0, 7, large); p.ErrorCode != 0 {
		t.Fatalf("plain, large: %s", errName(p.ErrorCode))
	}
}
