package server

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerFetch sends a consumer's Fetch v11 of t-0 at offset with rack to
// broker `to` and returns a pointer to the partition's answer (nil until
// answered).
func (c *cluster) consumerFetch(to int, rack string, offset int64, currentEpoch int32) **kmsg.FetchResponseTopicPartition {
	out := new(*kmsg.FetchResponseTopicPartition)
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 11, -1, 0, 1, 1<<20
	req.SessionEpoch, req.Rack = -1, rack
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch, fp.LogStartOffset = 0, offset, 1<<20, currentEpoch, -1
	req.Topics = []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{fp}}}
	c.call(to, req, func(r kmsg.Response) { *out = &r.(*kmsg.FetchResponse).Topics[0].Partitions[0] })
	return out
}

// fetched runs until the answer and returns it with its record offsets.
func (c *cluster) fetched(out **kmsg.FetchResponseTopicPartition) (*kmsg.FetchResponseTopicPartition, []int64) {
	c.t.Helper()
	c.runUntil("a fetch answer", func() bool { return *out != nil })
	rp := *out
	batches, err := storage.DecodeBatches(rp.RecordBatches)
	c.must(err)
	var offs []int64
	for _, b := range batches {
		for _, r := range b.Records {
			offs = append(offs, r.Offset)
		}
	}
	return rp, offs
}

func (c *cluster) updateMetadata(racks []string) {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version, req.ControllerID, req.ControllerEpoch = 4, 0, c.cEpoch
	for i, r := range racks {
		rack := r
		req.LiveBrokers = append(req.LiveBrokers, kmsg.UpdateMetadataRequestLiveBroker{ID: int32(i), Rack: &rack})
	}
	for i := range c.brokers {
		c.call(i, req, func(kmsg.Response) {})
	}
}

// TestFetchFromFollower (KIP-392): with RackAwareReplicaSelector the leader
// sends a consumer in a follower's rack to that follower (no records), and
// keeps one in its own rack, with no rack, or in an unknown rack; the
// follower serves that consumer up to its own HW only: an offset between
// its HW and LEO gets nothing, one past its LEO OFFSET_OUT_OF_RANGE; a
// consumer without a rack still gets NOT_LEADER_OR_FOLLOWER from a
// follower; without the selector the leader serves everyone; a follower
// out of the ISR is not preferred.
func TestFetchFromFollower(t *testing.T) {
	racks := []string{"r0", "r1", "r2"}
	for _, selector := range []bool{true, false} {
		c := newCluster(t, 3, func(cfg *Config) {
			cfg.Rack = racks[cfg.BrokerID]
			cfg.RackAwareReplicaSelector = selector
		})
		c.updateMetadata(racks)
		for i := range 3 {
			c.leaderAndISR(i, 0, 1, []int32{0, 1, 2}, []int32{0, 1, 2})
		}
		c.run(10 * sim.Millisecond)
		for i := range 10 {
			c.produceAndWait(0, -1, "v"+string(rune('a'+i)), 10*sim.Millisecond)
		}
		c.run(2 * sim.Second)
		if p, _ := c.broker(1).Partition(tp0); p.HighWatermark() != 10 {
			t.Fatalf("follower HW %d, want 10", p.HighWatermark())
		}
		for _, tc := range []struct {
			rack string
			pref int32
		}{{"r1", 1}, {"r2", 2}, {"r0", -1}, {"", -1}, {"r9", -1}} {
			rp, offs := c.fetched(c.consumerFetch(0, tc.rack, 3, 1))
			want := tc.pref
			if !selector {
				want = -1
			}
			if rp.ErrorCode != 0 || rp.PreferredReadReplica != want || rp.HighWatermark != 10 {
				t.Errorf("selector=%v rack %q: error %d preferred %d HW %d, want preferred %d", selector, tc.rack, rp.ErrorCode, rp.PreferredReadReplica, rp.HighWatermark, want)
			}
			if want >= 0 && len(offs) != 0 {
				t.Errorf("rack %q: records %v with a preferred replica", tc.rack, offs)
			}
			if want < 0 && (len(offs) != 7 || offs[0] != 3) {
				t.Errorf("rack %q: leader served %v, want 3..9", tc.rack, offs)
			}
		}
		// The follower serves a consumer with a rack, not one without.
		if rp, offs := c.fetched(c.consumerFetch(1, "r1", 0, 1)); rp.ErrorCode != 0 || len(offs) != 10 || rp.HighWatermark != 10 {
			t.Errorf("follower read: error %d offsets %v HW %d", rp.ErrorCode, offs, rp.HighWatermark)
		}
		if rp, _ := c.fetched(c.consumerFetch(1, "", 0, 1)); rp.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Errorf("follower read without a rack: error %d, want NOT_LEADER_OR_FOLLOWER", rp.ErrorCode)
		}
		if rp, _ := c.fetched(c.consumerFetch(1, "r1", 0, 0)); rp.ErrorCode != kerr.FencedLeaderEpoch.Code {
			t.Errorf("follower read with an old epoch: error %d, want FENCED_LEADER_EPOCH", rp.ErrorCode)
		}
		if !selector {
			continue
		}
		// Hold b1's HW back: it has fetched the new records but the
		// leader's answers carrying the new HW are cut.
		for i := range 5 {
			c.produce(0, 1, "w"+string(rune('a'+i)))
		}
		c.runUntil("b1 has the records", func() bool {
			p, _ := c.broker(1).Partition(tp0)
			return p.LogEndOffset() == 15
		})
		c.cut(0, 1)
		c.run(sim.Second)
		p1, _ := c.broker(1).Partition(tp0)
		hw1 := p1.HighWatermark()
		if hw1 >= 15 || p1.LogEndOffset() != 15 {
			t.Fatalf("b1 HW %d LEO %d: want the HW behind the LEO", hw1, p1.LogEndOffset())
		}
		if rp, offs := c.fetched(c.consumerFetch(1, "r1", 0, 1)); rp.ErrorCode != 0 || int64(len(offs)) != hw1 || rp.HighWatermark != hw1 {
			t.Errorf("follower read with HW %d: error %d offsets %v HW %d", hw1, rp.ErrorCode, offs, rp.HighWatermark)
		}
		if rp, offs := c.fetched(c.consumerFetch(1, "r1", 14, 1)); rp.ErrorCode != 0 || len(offs) != 0 {
			t.Errorf("follower read between HW and LEO: error %d offsets %v", rp.ErrorCode, offs)
		}
		if rp, _ := c.fetched(c.consumerFetch(1, "r1", 16, 1)); rp.ErrorCode != kerr.OffsetOutOfRange.Code {
			t.Errorf("follower read past its LEO: error %d, want OFFSET_OUT_OF_RANGE", rp.ErrorCode)
		}
		c.heal()
		// Out of the ISR: not preferred.
		c.leaderAndISR(0, 0, 2, []int32{0, 2}, []int32{0, 1, 2})
		c.run(10 * sim.Millisecond)
		if rp, _ := c.fetched(c.consumerFetch(0, "r1", 3, 2)); rp.PreferredReadReplica != -1 {
			t.Errorf("out-of-ISR follower preferred: %d", rp.PreferredReadReplica)
		}
	}
}
