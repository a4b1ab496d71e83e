package cluster

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func describeConfigs(v int16, typ kmsg.ConfigResourceType, name string, keys ...string) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version, req.IncludeSynonyms = v, v >= 1
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = typ, name, keys
	req.Resources = []kmsg.DescribeConfigsRequestResource{r}
	return req
}

func configNamed(r kmsg.DescribeConfigsResponseResource, name string) (kmsg.DescribeConfigsResponseResourceConfig, bool) {
	for _, c := range r.Configs {
		if c.Name == name {
			return c, true
		}
	}
	return kmsg.DescribeConfigsResponseResourceConfig{}, false
}

// DescribeConfigs at every advertised version: a topic's effective
// configs with Kafka's names, values and sources (v0 is_default), the
// synonyms chain (v1+), types (v3+); broker resources; the filter; and
// the errors for unknown topics, bad names, another broker's id and an
// unknown resource type.
func TestDescribeConfigsEveryVersion(t *testing.T) {
	a := newAPICluster(t, map[string]string{"log.retention.ms": "3600000", "offsets.topic.num.partitions": "2"},
		func(s *Spec) { s.OffsetsTopic = true })
	lo, hi := a.versions(32)
	for v := lo; v <= hi; v++ {
		r := a.call(0, describeConfigs(v, kmsg.ConfigResourceTypeTopic, "t")).(*kmsg.DescribeConfigsResponse).Resources[0]
		if r.ErrorCode != 0 || len(r.Configs) < 10 {
			t.Fatalf("v%d topic t: %s, %d configs", v, errName(r.ErrorCode), len(r.Configs))
		}
		ret, ok := configNamed(r, "retention.ms")
		seg, ok2 := configNamed(r, "segment.bytes")
		if !ok || !ok2 || *ret.Value != "3600000" || *seg.Value != "1073741824" || ret.ReadOnly {
			t.Fatalf("v%d: retention.ms %+v segment.bytes %+v", v, ret, seg)
		}
		if v == 0 && (ret.IsDefault || !seg.IsDefault) {
			t.Fatalf("v0: is_default retention.ms %v segment.bytes %v", ret.IsDefault, seg.IsDefault)
		}
		if v >= 1 {
			if ret.Source != kmsg.ConfigSourceStaticBrokerConfig || seg.Source != kmsg.ConfigSourceDefaultConfig {
				t.Fatalf("v%d: sources %v %v", v, ret.Source, seg.Source)
			}
			if len(ret.ConfigSynonyms) != 2 || ret.ConfigSynonyms[0].Name != "log.retention.ms" || ret.ConfigSynonyms[1].Source != kmsg.ConfigSourceDefaultConfig ||
				*ret.ConfigSynonyms[1].Value != "604800000" {
				t.Fatalf("v%d: retention.ms synonyms %+v", v, ret.ConfigSynonyms)
			}
		}
		if v >= 3 && (ret.ConfigType != kmsg.ConfigTypeLong || seg.ConfigType != kmsg.ConfigTypeInt) {
			t.Fatalf("v%d: types %v %v", v, ret.ConfigType, seg.ConfigType)
		}
		// The filter.
		r = a.call(0, describeConfigs(v, kmsg.ConfigResourceTypeTopic, "t", "min.insync.replicas", "no.such")).(*kmsg.DescribeConfigsResponse).Resources[0]
		if len(r.Configs) != 1 || r.Configs[0].Name != "min.insync.replicas" || *r.Configs[0].Value != "1" {
			t.Fatalf("v%d filtered: %+v", v, r.Configs)
		}
		// An internal topic is compacted by its own config.
		r = a.call(0, describeConfigs(v, kmsg.ConfigResourceTypeTopic, "__consumer_offsets", "cleanup.policy")).(*kmsg.DescribeConfigsResponse).Resources[0]
		if len(r.Configs) != 1 || *r.Configs[0].Value != "compact" || v >= 1 && r.Configs[0].Source != kmsg.ConfigSourceDynamicTopicConfig {
			t.Fatalf("v%d __consumer_offsets cleanup.policy: %+v", v, r.Configs)
		}
		// The broker.
		r = a.call(1, describeConfigs(v, kmsg.ConfigResourceTypeBroker, "1")).(*kmsg.DescribeConfigsResponse).Resources[0]
		id, ok := configNamed(r, "broker.id")
		lr, ok2 := configNamed(r, "log.retention.ms")
		if r.ErrorCode != 0 || !ok || *id.Value != "1" || !id.ReadOnly || !ok2 || *lr.Value != "3600000" || lr.ReadOnly {
			t.Fatalf("v%d broker 1: %s %+v %+v", v, errName(r.ErrorCode), id, lr)
		}
		// "": the cluster-wide dynamic defaults, none.
		if r = a.call(1, describeConfigs(v, kmsg.ConfigResourceTypeBroker, "")).(*kmsg.DescribeConfigsResponse).Resources[0]; r.ErrorCode != 0 || len(r.Configs) != 0 {
			t.Fatalf("v%d broker \"\": %s, %d configs", v, errName(r.ErrorCode), len(r.Configs))
		}
		for _, c := range []struct {
			typ  kmsg.ConfigResourceType
			name string
			want int16
		}{
			{kmsg.ConfigResourceTypeTopic, "missing", kerr.UnknownTopicOrPartition.Code},
			{kmsg.ConfigResourceTypeTopic, "bad name!", kerr.InvalidTopicException.Code},
			{kmsg.ConfigResourceTypeBroker, "2", kerr.InvalidRequest.Code},
			{kmsg.ConfigResourceTypeBroker, "one", kerr.InvalidRequest.Code},
			{kmsg.ConfigResourceType(99), "x", kerr.InvalidRequest.Code},
		} {
			r := a.call(1, describeConfigs(v, c.typ, c.name)).(*kmsg.DescribeConfigsResponse).Resources[0]
			if r.ErrorCode != c.want || len(r.Configs) != 0 {
				t.Fatalf("v%d %v %q: %s, want %s", v, c.typ, c.name, errName(r.ErrorCode), errName(c.want))
			}
		}
	}
}

// In KRaft mode a topic created with a config reports it as its own.
func TestDescribeConfigsKRaftTopicConfig(t *testing.T) {
	a := newAPICluster(t, kraftProps(), nil)
	req := createTopic(7, "withcfg", 1, 3)
	val := "5000"
	req.Topics[0].Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.ms", Value: &val}}
	ts := a.createTopics(0, req)
	if ts[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics: %s", errName(ts[0].ErrorCode))
	}
	found := false
	for _, c := range ts[0].Configs {
		if c.Name == "retention.ms" {
			found = *c.Value == "5000" && c.Source == int8(kmsg.ConfigSourceDynamicTopicConfig)
		}
	}
	if !found {
		t.Fatalf("CreateTopics v7 configs: %+v", ts[0].Configs)
	}
	a.waitLeaders("withcfg", 1)
	r := a.call(2, describeConfigs(4, kmsg.ConfigResourceTypeTopic, "withcfg", "retention.ms")).(*kmsg.DescribeConfigsResponse).Resources[0]
	if r.ErrorCode != 0 || len(r.Configs) != 1 || *r.Configs[0].Value != "5000" || r.Configs[0].Source != kmsg.ConfigSourceDynamicTopicConfig ||
		len(r.Configs[0].ConfigSynonyms) != 2 {
		t.Fatalf("retention.ms: %s %+v", errName(r.ErrorCode), r.Configs)
	}
}
