package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// TestReplicaSelectorAndTruncationDetection: replica.selector.class takes
// null or the rack-aware selector (by its class name, fully qualified or
// not), refuses others and protocol versions before 2.4; the consumer's
// kafkasim.truncation.detection follows the brokers' KIP-320 fencing
// unless given.
func TestReplicaSelectorAndTruncationDetection(t *testing.T) {
	for _, v := range []string{"RackAwareReplicaSelector", "org.apache.kafka.common.replica.RackAwareReplicaSelector"} {
		c, err := Parse(map[string]string{"replica.selector.class": v})
		if err != nil || c.Broker.ReplicaSelectorClass != SelectorRackAware {
			t.Errorf("%s: %v %q", v, err, c.Broker.ReplicaSelectorClass)
		}
	}
	if c, err := Parse(nil); err != nil || c.Broker.ReplicaSelectorClass != SelectorNone {
		t.Errorf("default: %v %q", err, c.Broker.ReplicaSelectorClass)
	}
	var e *Error
	if _, err := Parse(map[string]string{"replica.selector.class": "com.example.MySelector"}); !errors.As(err, &e) || e.Kind != BadValue {
		t.Errorf("custom selector: %v", err)
	}
	// Kafka 2.3 has no replica.selector.class (KIP-392 came with 2.4).
	if _, err := Parse(map[string]string{"replica.selector.class": "RackAwareReplicaSelector", "inter.broker.protocol.version": "2.3"}); !errors.As(err, &e) || e.Kind != NotInRelease || !strings.Contains(err.Error(), "2.4 to") {
		t.Errorf("selector at 2.3: %v", err)
	}
	for _, tc := range []struct {
		props map[string]string
		want  bool
	}{
		{nil, true},
		{map[string]string{"inter.broker.protocol.version": "2.0"}, false},
		{map[string]string{"kafkasim.leader.epoch.fencing": "false"}, false},
		{map[string]string{"inter.broker.protocol.version": "2.0", "kafkasim.truncation.detection": "true"}, true},
		{map[string]string{"consumer.kafkasim.truncation.detection": "false"}, false},
	} {
		c, err := Parse(tc.props)
		if err != nil || c.Consumer.TruncationDetection != tc.want {
			t.Errorf("%v: detection %v (%v), want %v", tc.props, c.Consumer.TruncationDetection, err, tc.want)
		}
		if tc.props == nil && len(c.NonDefaultPairs()) != 0 {
			t.Errorf("defaults render as %v", c.NonDefaultPairs())
		}
	}
	c, _ := Parse(map[string]string{"inter.broker.protocol.version": "2.0"})
	for _, kv := range c.NonDefaultPairs() {
		if kv == "kafkasim.truncation.detection=false" {
			t.Errorf("the version's default detection is rendered: %v", c.NonDefaultPairs())
		}
	}
}

// TestReconnectBackoff: reconnect.backoff.ms and reconnect.backoff.max.ms
// parse, default to Kafka's 50ms and 1s, and refuse negative values.
func TestReconnectBackoff(t *testing.T) {
	c, err := ParseConsumer(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if c.ReconnectBackoff != sim.Ms(50) || c.ReconnectBackoffMax != sim.Ms(1000) {
		t.Errorf("defaults %v %v, want 50ms 1s", c.ReconnectBackoff, c.ReconnectBackoffMax)
	}
	c, err = ParseConsumer(map[string]string{"reconnect.backoff.ms": "10", "reconnect.backoff.max.ms": "80"})
	if err != nil || c.ReconnectBackoff != sim.Ms(10) || c.ReconnectBackoffMax != sim.Ms(80) {
		t.Errorf("got %v %v (%v), want 10ms 80ms", c.ReconnectBackoff, c.ReconnectBackoffMax, err)
	}
	if _, err := ParseConsumer(map[string]string{"reconnect.backoff.ms": "-1"}); err == nil {
		t.Error("reconnect.backoff.ms=-1 accepted")
	}
}
