package server

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCreateTopicsTakesEveryTopicConfigOfTheRelease: a topic config
// kafkasim does not model is accepted when the release has it and its
// value passes Kafka's validator; INVALID_CONFIG otherwise, naming why.
func TestCreateTopicsTakesEveryTopicConfigOfTheRelease(t *testing.T) {
	topic := func(name, value string) *kmsg.CreateTopicsRequestTopic {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "t", 1, 1
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = name, &value
		rt.Configs = append(rt.Configs, c)
		return &rt
	}
	for _, tc := range []struct {
		name, value string
		release     config.Version
		want        *kerr.Error
		msg         string
	}{
		{"max.compaction.lag.ms", "60000", config.V3_9, nil, ""},
		{"message.timestamp.type", "LogAppendTime", config.V3_9, nil, ""},
		{"max.compaction.lag.ms", "0", config.V3_9, kerr.InvalidConfig, "below the minimum 1"},
		{"message.timestamp.type", "Sometime", config.V3_9, kerr.InvalidConfig, "CreateTime, LogAppendTime"},
		// KIP-354's max.compaction.lag.ms arrived in 2.3.
		{"max.compaction.lag.ms", "60000", config.V2_2, kerr.InvalidConfig, "not a topic property of Kafka 2.2"},
		{"no.such.config", "1", config.V3_9, kerr.InvalidConfig, "unknown property"},
	} {
		err, msg := precheckCreateTopic(topic(tc.name, tc.value), false, tc.release)
		if err != tc.want || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s=%s under %s: %v %q, want %v and %q", tc.name, tc.value, tc.release, err, msg, tc.want, tc.msg)
		}
	}
}
