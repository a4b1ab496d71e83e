package server

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
)

// TestSupportedAPIsConsumerGroupProtocol: ConsumerGroupHeartbeat (68) and
// ConsumerGroupDescribe (69) are advertised from 4.0 in KRaft mode when the
// coordinator serves the consumer protocol (KIP-848), and not otherwise.
func TestSupportedAPIsConsumerGroupProtocol(t *testing.T) {
	for _, c := range []struct {
		v       config.Version
		kraft   bool
		enabled bool
		want68  bool
	}{{config.V4_0, true, true, true}, {config.V4_1, true, true, true}, {config.V4_0, true, false, false}, {config.V3_9, true, true, false}} {
		cfg := releaseConfig(c.v, c.kraft)
		cfg.Coordinator.Consumer.Enabled = c.enabled
		lo, hi, ok := SupportedVersions(cfg, 68)
		if ok != c.want68 || (ok && (lo != 0 || hi != 1)) {
			t.Errorf("%v enabled=%v: ConsumerGroupHeartbeat %d-%d %v, want 0-1: %v", c.v, c.enabled, lo, hi, ok, c.want68)
		}
		lo, hi, ok = SupportedVersions(cfg, 69)
		if ok != c.want68 || (ok && (lo != 0 || hi != 1)) {
			t.Errorf("%v enabled=%v: ConsumerGroupDescribe %d-%d %v, want 0-1: %v", c.v, c.enabled, lo, hi, ok, c.want68)
		}
	}
}
