package config

import (
	"strings"
	"testing"
)

// TestMessageMaxBytesDefaultFollowsRelease checks KafkaConfig's default:
// 1000000 + LOG_OVERHEAD below 2.5, 1024*1024 + LOG_OVERHEAD from 2.5.
func TestMessageMaxBytesDefaultFollowsRelease(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int
	}{{"0.10.2", 1000012}, {"2.4", 1000012}, {"2.5", 1048588}, {"3.9", 1048588}} {
		b, err := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: c.v})
		if err != nil {
			t.Fatal(err)
		}
		if b.Records.MessageMaxBytes != c.want || b.TopicDefaults().MaxMessageBytes != c.want {
			t.Errorf("%s: message.max.bytes %d, topic max.message.bytes %d; want %d", c.v, b.Records.MessageMaxBytes, b.TopicDefaults().MaxMessageBytes, c.want)
		}
		if b.Records.CompressionType != CompressionProducer {
			t.Errorf("%s: compression.type %s, want producer", c.v, b.Records.CompressionType)
		}
	}
}

// TestTopicRecordsOverrides checks that a topic's max.message.bytes and
// compression.type override the broker's, and what is refused.
func TestTopicRecordsOverrides(t *testing.T) {
	b := DefaultBroker()
	tc, err := ParseTopic(b, map[string]string{PropMaxMessageBytes: "2000", PropCompressionType: "lz4"})
	if err != nil {
		t.Fatal(err)
	}
	if tc.MaxMessageBytes != 2000 || tc.CompressionType != CompressionLZ4 || tc.CompressionType.Codec() != 3 {
		t.Fatalf("got %d %s", tc.MaxMessageBytes, tc.CompressionType)
	}
	if got := strings.Join(tc.Overrides(b), " "); got != "compression.type=lz4 max.message.bytes=2000" {
		t.Errorf("overrides %q", got)
	}
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{PropCompressionType: "none"}, "allowed: uncompressed, zstd (2.1+), lz4, snappy, gzip, producer"},
		{map[string]string{PropMaxMessageBytes: "-1"}, "out of range"},
	} {
		if _, err := ParseTopic(b, c.props); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error with %q", c.props, err, c.want)
		}
	}
	old, _ := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: "2.0"})
	if _, err := ParseTopic(old, map[string]string{PropCompressionType: "zstd"}); err == nil || !strings.Contains(err.Error(), "KIP-110") {
		t.Errorf("zstd at 2.0: got %v, want the KIP-110 conflict", err)
	}
	if _, err := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: "2.0", PropCompressionType: "zstd"}); err == nil {
		t.Errorf("broker zstd at 2.0 accepted")
	}
	if _, err := ParseTopic(DefaultBrokerFor(V2_1), map[string]string{PropCompressionType: "zstd"}); err != nil {
		t.Errorf("zstd at 2.1: %v", err)
	}
}

// TestTopicWith checks that With applies a topic's own values over the
// run's topic defaults and validates them.
func TestTopicWith(t *testing.T) {
	b := DefaultBroker()
	base, _ := ParseTopic(b, map[string]string{PropMinInsyncReplicas: "2"})
	got, err := base.With(b, map[string]string{PropUncleanLeaderElection: "true"})
	if err != nil {
		t.Fatal(err)
	}
	if got.MinInsyncReplicas != 2 || !got.UncleanLeaderElectionEnable {
		t.Errorf("got %+v", got)
	}
	if _, err := base.With(b, map[string]string{"max.message.byte": "1"}); err == nil || !strings.Contains(err.Error(), `did you mean "max.message.bytes"`) {
		t.Errorf("typo: %v", err)
	}
}

// TestProducerCompression checks the producer's compression.type values.
func TestProducerCompression(t *testing.T) {
	p, err := ParseProducer(map[string]string{PropCompressionType: "zstd"})
	if err != nil || p.CompressionType != CompressionZstd {
		t.Fatalf("%v %v", p.CompressionType, err)
	}
	if DefaultProducer().CompressionType != CompressionNone {
		t.Errorf("default %s, want none", DefaultProducer().CompressionType)
	}
	if _, err := ParseProducer(map[string]string{PropCompressionType: "producer"}); err == nil || !strings.Contains(err.Error(), "none, gzip, snappy, lz4, zstd") {
		t.Errorf("producer compression.type=producer: %v", err)
	}
}
