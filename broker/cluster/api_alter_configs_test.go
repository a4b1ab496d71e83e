package cluster

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func incAlter(v int16, topic string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version = v
	req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: topic, Configs: ops}}
	return req
}

func op(o kmsg.IncrementalAlterConfigOp, name string, value ...string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: name, Op: o}
	if len(value) > 0 {
		v := value[0]
		c.Value = &v
	}
	return c
}

func legacyAlter(v int16, topic string, kv ...string) *kmsg.AlterConfigsRequest {
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Version = v
	r := kmsg.AlterConfigsRequestResource{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: topic}
	for i := 0; i+1 < len(kv); i += 2 {
		val := kv[i+1]
		r.Configs = append(r.Configs, kmsg.AlterConfigsRequestResourceConfig{Name: kv[i], Value: &val})
	}
	req.Resources = []kmsg.AlterConfigsRequestResource{r}
	return req
}

// topicConfig returns a topic config's value and source as broker i
// describes it.
func (a *apiCluster) topicConfig(i int, topic, name string) (string, kmsg.ConfigSource) {
	a.t.Helper()
	r := a.call(i, describeConfigs(4, kmsg.ConfigResourceTypeTopic, topic, name)).(*kmsg.DescribeConfigsResponse).Resources[0]
	c, ok := configNamed(r, name)
	if r.ErrorCode != 0 || !ok {
		a.t.Fatalf("DescribeConfigs %s %s on b%d: %s", topic, name, i, errName(r.ErrorCode))
	}
	return *c.Value, c.Source
}

// settle runs until every broker describes topic's config name as want.
func (a *apiCluster) settleConfig(topic, name, want string) {
	a.t.Helper()
	for range 50 {
		ok := true
		for i := range a.c.Brokers {
			if v, _ := a.topicConfig(i, topic, name); v != want {
				ok = false
			}
		}
		if ok {
			return
		}
		a.run(100 * sim.Millisecond)
	}
	for i := range a.c.Brokers {
		v, _ := a.topicConfig(i, topic, name)
		a.t.Errorf("b%d: %s %s = %s, want %s", i, topic, name, v, want)
	}
	a.t.FailNow()
}

const bigValue = "a value long enough to pass one hundred bytes once the batch header is counted"

// IncrementalAlterConfigs at every advertised version, in both modes,
// sent to a broker that is not the controller: the topic's new config is
// described by every broker as its own (TOPIC_CONFIG) and takes effect
// (max.message.bytes refuses a larger batch); DELETE puts the broker's
// back; APPEND adds to cleanup.policy; a restarted broker keeps the
// change; validate_only changes nothing.
func TestIncrementalAlterConfigsEveryVersion(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, nil), nil)
			lo, hi := a.versions(44)
			if lo != 0 || hi != 1 {
				t.Fatalf("IncrementalAlterConfigs advertised v%d-v%d", lo, hi)
			}
			to := (a.controller() + 1) % 3
			for v := lo; v <= hi; v++ {
				resp := a.call(to, incAlter(v, "t", op(kmsg.IncrementalAlterConfigOpSet, "max.message.bytes", "100"))).(*kmsg.IncrementalAlterConfigsResponse)
				if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 || resp.Resources[0].ResourceName != "t" {
					t.Fatalf("v%d: %+v", v, resp.Resources)
				}
				a.settleConfig("t", "max.message.bytes", "100")
				if _, src := a.topicConfig(0, "t", "max.message.bytes"); src != kmsg.ConfigSourceDynamicTopicConfig {
					t.Fatalf("v%d: source %v", v, src)
				}
				if p := a.produce("t", 0, 7, bigValue); p.ErrorCode != kerr.MessageTooLarge.Code {
					t.Fatalf("v%d: a large batch: %s, want MESSAGE_TOO_LARGE", v, errName(p.ErrorCode))
				}
				resp = a.call(to, incAlter(v, "t", op(kmsg.IncrementalAlterConfigOpDelete, "max.message.bytes"))).(*kmsg.IncrementalAlterConfigsResponse)
				if resp.Resources[0].ErrorCode != 0 {
					t.Fatalf("v%d DELETE: %s", v, errName(resp.Resources[0].ErrorCode))
				}
				a.settleConfig("t", "max.message.bytes", "1048588")
				if p := a.produce("t", 0, 7, bigValue); p.ErrorCode != 0 {
					t.Fatalf("v%d: after DELETE: %s", v, errName(p.ErrorCode))
				}
			}
			// APPEND to the list in force (the broker's delete).
			resp := a.call(to, incAlter(1, "t", op(kmsg.IncrementalAlterConfigOpAppend, "cleanup.policy", "compact"))).(*kmsg.IncrementalAlterConfigsResponse)
			if resp.Resources[0].ErrorCode != 0 {
				t.Fatalf("APPEND: %s", errName(resp.Resources[0].ErrorCode))
			}
			got, _ := a.topicConfig(0, "t", "cleanup.policy")
			for i := 0; i < 50 && got == "delete"; i++ {
				a.run(100 * sim.Millisecond)
				got, _ = a.topicConfig(0, "t", "cleanup.policy")
			}
			a.settleConfig("t", "cleanup.policy", got)
			if !strings.Contains(got, "compact") || !strings.Contains(got, "delete") {
				t.Errorf("cleanup.policy after APPEND compact: %q", got)
			}
			// validate_only.
			req := incAlter(1, "t", op(kmsg.IncrementalAlterConfigOpSet, "min.insync.replicas", "2"))
			req.ValidateOnly = true
			if resp := a.call(to, req).(*kmsg.IncrementalAlterConfigsResponse); resp.Resources[0].ErrorCode != 0 {
				t.Fatalf("validate_only: %s", errName(resp.Resources[0].ErrorCode))
			}
			a.run(sim.Second)
			if v, _ := a.topicConfig(0, "t", "min.insync.replicas"); v != "1" {
				t.Errorf("validate_only changed min.insync.replicas to %s", v)
			}
			// A restarted broker keeps the change.
			if resp := a.call(to, incAlter(1, "t", op(kmsg.IncrementalAlterConfigOpSet, "min.insync.replicas", "2"))).(*kmsg.IncrementalAlterConfigsResponse); resp.Resources[0].ErrorCode != 0 {
				t.Fatalf("min.insync.replicas: %s", errName(resp.Resources[0].ErrorCode))
			}
			a.settleConfig("t", "min.insync.replicas", "2")
			if err := a.c.World.Inject(sim.Crash{Node: a.c.Brokers[2]}); err != nil {
				t.Fatal(err)
			}
			a.run(sim.Second)
			if err := a.c.World.Inject(sim.Restart{Node: a.c.Brokers[2]}); err != nil {
				t.Fatal(err)
			}
			a.run(15 * sim.Second)
			if v, _ := a.topicConfig(2, "t", "min.insync.replicas"); v != "2" {
				t.Errorf("restarted b2: min.insync.replicas %s, want 2", v)
			}
		})
	}
}

// AlterConfigs (v0-v2) replaces the topic's own configs: those not named
// go back to the broker's.
func TestAlterConfigsEveryVersion(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, nil), nil)
			lo, hi := a.versions(33)
			if lo != 0 || hi != 2 {
				t.Fatalf("AlterConfigs advertised v%d-v%d", lo, hi)
			}
			for v := lo; v <= hi; v++ {
				resp := a.call(0, legacyAlter(v, "t", "retention.ms", "60000", "min.insync.replicas", "2")).(*kmsg.AlterConfigsResponse)
				if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
					t.Fatalf("v%d: %+v", v, resp.Resources)
				}
				a.settleConfig("t", "retention.ms", "60000")
				a.settleConfig("t", "min.insync.replicas", "2")
				resp = a.call(0, legacyAlter(v, "t", "retention.ms", "120000")).(*kmsg.AlterConfigsResponse)
				if resp.Resources[0].ErrorCode != 0 {
					t.Fatalf("v%d replace: %s", v, errName(resp.Resources[0].ErrorCode))
				}
				a.settleConfig("t", "retention.ms", "120000")
				a.settleConfig("t", "min.insync.replicas", "1")
				if _, src := a.topicConfig(1, "t", "min.insync.replicas"); src == kmsg.ConfigSourceDynamicTopicConfig {
					t.Fatalf("v%d: min.insync.replicas still the topic's own", v)
				}
				resp = a.call(0, legacyAlter(v, "t")).(*kmsg.AlterConfigsResponse)
				if resp.Resources[0].ErrorCode != 0 {
					t.Fatalf("v%d clear: %s", v, errName(resp.Resources[0].ErrorCode))
				}
				a.settleConfig("t", "retention.ms", "604800000")
			}
		})
	}
}

// The alter-config refusals, as Kafka answers them.
func TestAlterConfigsErrors(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, nil), nil)
			set := kmsg.IncrementalAlterConfigOpSet
			cases := []struct {
				name string
				req  *kmsg.IncrementalAlterConfigsRequest
				want *kerr.Error
			}{
				{"unknown config", incAlter(1, "t", op(set, "no.such.config", "1")), kerr.InvalidConfig},
				{"bad value", incAlter(1, "t", op(set, "min.insync.replicas", "many")), kerr.InvalidConfig},
				{"bad compression", incAlter(1, "t", op(set, "compression.type", "rar")), kerr.InvalidConfig},
				{"unknown topic", incAlter(1, "nope", op(set, "retention.ms", "1000")), kerr.UnknownTopicOrPartition},
				{"bad topic name", incAlter(1, "bad name!", op(set, "retention.ms", "1000")), kerr.InvalidTopicException},
				{"APPEND to a non-list", incAlter(1, "t", op(kmsg.IncrementalAlterConfigOpAppend, "retention.ms", "1")), kerr.InvalidConfig},
				{"SET without a value", incAlter(1, "t", op(set, "retention.ms")), kerr.InvalidRequest},
				{"a key twice", incAlter(1, "t", op(set, "retention.ms", "1"), op(set, "retention.ms", "2")), kerr.InvalidRequest},
			}
			for _, c := range cases {
				r := a.call(1, c.req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
				if r.ErrorCode != c.want.Code || r.ErrorMessage == nil {
					t.Errorf("%s: %s, want %s", c.name, errName(r.ErrorCode), c.want.Message)
				}
			}
			// Broker configs are not modelled: a clear INVALID_REQUEST.
			req := incAlter(1, "1", op(set, "log.retention.ms", "1000"))
			req.Resources[0].ResourceType = kmsg.ConfigResourceTypeBroker
			r := a.call(1, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
			if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, "broker configs") {
				t.Errorf("broker resource: %s %v", errName(r.ErrorCode), r.ErrorMessage)
			}
			// The legacy API: a null value.
			lreq := legacyAlter(1, "t", "retention.ms", "1")
			lreq.Resources[0].Configs[0].Value = nil
			if r := a.call(1, lreq).(*kmsg.AlterConfigsResponse).Resources[0]; r.ErrorCode != kerr.InvalidRequest.Code {
				t.Errorf("legacy null value: %s", errName(r.ErrorCode))
			}
			// Nothing changed.
			if v, _ := a.topicConfig(0, "t", "retention.ms"); v != "604800000" {
				t.Errorf("retention.ms changed to %s", v)
			}
		})
	}
}
