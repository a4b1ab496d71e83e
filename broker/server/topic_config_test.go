package server

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// batchBytes is the size of the one-record batch c.produce sends for value.
func batchBytes(value string) int {
	b := storage.NewBatch(0, []storage.Record{{Value: []byte(value)}})
	return len(b.AppendTo(nil))
}

// TestProduceAboveMaxMessageBytesIsMessageTooLarge: a batch larger than
// the topic's max.message.bytes is refused with MESSAGE_TOO_LARGE (10)
// before it is appended (UnifiedLog.analyzeAndValidateRecords); one of
// exactly the limit is appended.
func TestProduceAboveMaxMessageBytesIsMessageTooLarge(t *testing.T) {
	small, big := "m0", strings.Repeat("x", 40)
	limit := batchBytes(small)
	maxBytes := limit
	c := newCluster(t, 2, func(cfg *Config) {
		cfg.TopicOverrides = map[string]TopicSettings{"t": {MaxMessageBytes: &maxBytes}}
	})
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 0, 0, []int32{0, 1}, []int32{0, 1})
	}
	c.expectAck("m0 (at the limit)", c.produceAndWait(0, -1, small, 2*sim.Second), "ok@0")
	maxBytes = limit - 1 // NB: the broker's map holds the pointer: one byte less refuses m0
	c.expectAck("m0 again (one byte over)", c.produceAndWait(0, -1, small, 2*sim.Second), strconv.Itoa(int(kerr.MessageTooLarge.Code)))
	maxBytes = limit
	c.expectAck("big", c.produceAndWait(0, -1, big, 2*sim.Second), strconv.Itoa(int(kerr.MessageTooLarge.Code)))
	if got := c.values(0); !slices.Equal(got, []string{"m0"}) {
		t.Fatalf("leader log %v, want [m0]", got)
	}
}

// TestMessageMaxBytesIsTheTopicDefault: without a topic override the
// broker's message.max.bytes applies.
func TestMessageMaxBytesIsTheTopicDefault(t *testing.T) {
	c := newCluster(t, 1, func(cfg *Config) { cfg.MessageMaxBytes = 70 })
	c.leaderAndISR(0, 0, 0, []int32{0}, []int32{0})
	c.expectAck("big", c.produceAndWait(0, 1, strings.Repeat("x", 10), sim.Second), strconv.Itoa(int(kerr.MessageTooLarge.Code)))
}

// TestFollowerReplicatesBatchesAboveALoweredLimit: batches accepted before
// max.message.bytes was lowered still replicate (followers do not check
// the limit; replica.fetch.max.bytes is not a hard limit, KIP-74).
func TestFollowerReplicatesBatchesAboveALoweredLimit(t *testing.T) {
	c := newCluster(t, 2, func(cfg *Config) { cfg.ReplicaFetchMaxBytes = 10 })
	c.leaderAndISR(0, 0, 0, []int32{0}, []int32{0, 1})
	c.expectAck("big", c.produceAndWait(0, 1, strings.Repeat("x", 40), 100*sim.Millisecond), "ok@0")
	one := 10
	for i := 0; i < 2; i++ {
		c.must(c.w.Act(c.brokers[i], func(ctx *sim.Context) {
			c.must(c.broker(i).AlterTopicConfig(ctx, "t", TopicSettings{MaxMessageBytes: &one}))
		}))
	}
	c.leaderAndISR(1, 0, 0, []int32{0}, []int32{0, 1})
	c.run(2 * sim.Second)
	if got := c.values(1); len(got) != 1 {
		t.Fatalf("follower log %v, want the big batch replicated\n%s", got, c.timeline())
	}
}

// TestAlterTopicConfigChangesMinISR: min.insync.replicas changed on a
// running broker applies to the next acks=all produce.
func TestAlterTopicConfigChangesMinISR(t *testing.T) {
	c := newCluster(t, 1, nil)
	c.leaderAndISR(0, 0, 0, []int32{0}, []int32{0})
	c.expectAck("m0", c.produceAndWait(0, -1, "m0", sim.Second), "ok@0")
	c.must(c.w.Act(c.brokers[0], func(ctx *sim.Context) {
		c.must(c.broker(0).AlterTopicConfig(ctx, "t", TopicSettings{MinInsyncReplicas: 2}))
	}))
	c.expectAck("m1", c.produceAndWait(0, -1, "m1", sim.Second), strconv.Itoa(int(kerr.NotEnoughReplicas.Code)))
	bad := -1
	c.must(c.w.Act(c.brokers[0], func(ctx *sim.Context) {
		if err := c.broker(0).AlterTopicConfig(ctx, "t", TopicSettings{MaxMessageBytes: &bad}); err == nil || !strings.Contains(err.Error(), "max.message.bytes -1") {
			t.Errorf("max.message.bytes=-1: %v", err)
		}
	}))
}

// TestCompactedTopicRefusesRecordsWithoutKey: LogValidator's validateKey:
// INVALID_RECORD from 2.4 (KIP-467), CORRUPT_MESSAGE before.
func TestCompactedTopicRefusesRecordsWithoutKey(t *testing.T) {
	for _, c := range []struct {
		release config.Version
		want    *kerr.Error
	}{{config.V2_4, kerr.InvalidRecord}, {config.V2_3, kerr.CorruptMessage}, {config.Latest, kerr.InvalidRecord}} {
		c2 := newCluster(t, 1, func(cfg *Config) {
			cfg.Release = c.release
			cfg.TopicOverrides = map[string]TopicSettings{"t": {CleanupPolicy: storage.CleanupCompact}}
		})
		c2.leaderAndISR(0, 0, 0, []int32{0}, []int32{0})
		c2.expectAck(c.release.String(), c2.produceAndWait(0, 1, "m0", sim.Second), strconv.Itoa(int(c.want.Code)))
	}
}
