package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafkasim/kafkasim/broker/config/catalog"
)

// TestOverlayLaterWins: what Overlay leaves is what Parse reads as the
// later layer winning, and every replaced value is returned.
func TestOverlayLaterWins(t *testing.T) {
	acc := map[string]string{"producer.acks": "1", "consumer.client.id": "c", "min.insync.replicas": "2", "log.flush.interval.messages": "5"}
	got := Overlay(acc, map[string]string{"acks": "all", "client.id": "x", "min.insync.replicas": "1", "log.flush.interval.messages": "5", "producer.retries": "3"})
	want := []Replaced{{Old: "producer.acks", New: "acks"}, {Old: "consumer.client.id", New: "client.id"}, {Old: "min.insync.replicas", New: "min.insync.replicas"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("replaced (-want +got):\n%s", d)
	}
	c, err := Parse(acc)
	if err != nil {
		t.Fatal(err)
	}
	if c.Producer.Acks != AcksAll || c.Consumer.ClientID != "x" || c.Broker.MinInsyncReplicas != 1 {
		t.Errorf("Parse of %v: acks %v, consumer client.id %q, min.insync.replicas %d: the later layer does not win", acc, c.Producer.Acks, c.Consumer.ClientID, c.Broker.MinInsyncReplicas)
	}
	// A layer giving both forms keeps both: Parse prefers the prefixed one.
	acc = map[string]string{"producer.acks": "0"}
	Overlay(acc, map[string]string{"acks": "all", "producer.acks": "1"})
	if d := cmp.Diff(map[string]string{"acks": "all", "producer.acks": "1"}, acc); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestIsKind(t *testing.T) {
	for _, c := range []struct {
		k    catalog.Kind
		name string
		want bool
	}{
		{catalog.Broker, "min.insync.replicas", true},
		{catalog.Broker, "acks", false},
		{catalog.Producer, "acks", true},
		{catalog.Consumer, "group.id", true},
		{catalog.Broker, "message.max.bytes", true}, // in the catalog (placeholder and generated alike), not modelled
		{catalog.Broker, "no.such.property", false},
	} {
		if got := IsKind(c.k, c.name); got != c.want {
			t.Errorf("IsKind(%v, %s) = %v, want %v", c.k, c.name, got, c.want)
		}
	}
}
