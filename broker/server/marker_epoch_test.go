package server

import (
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// writeMarkerV2 sends a WriteTxnMarkers v2 marker with its transaction
// version for t-0 to broker `to` and returns the answer ("ok" or the error).
func (c *cluster) writeMarkerV2(to int, pid int64, epoch int16, tv int8, commit bool) string {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 2
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.TransactionVersion = pid, epoch, commit, tv
	m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "t", Partitions: []int32{0}}}
	req.Markers = []kmsg.WriteTxnMarkersRequestMarker{m}
	out := ""
	c.call(to, req, func(r kmsg.Response) {
		if code := r.(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode; code != 0 {
			out = kerr.ErrorForCode(code).Error()
		} else {
			out = "ok"
		}
	})
	c.run(sim.Second)
	return out
}

// TestStrictTV2MarkerEpochIsReleaseDependent: a TV2 marker at the epoch of
// the ongoing transaction's data (a late marker of the transaction before,
// which the coordinator wrote at the bumped epoch) ends that transaction in
// every release up to 4.1 (the legacy check: not below the producer's
// epoch); with KAFKA-19446 (StrictTV2MarkerEpoch, Kafka 4.2) the leader
// answers INVALID_PRODUCER_EPOCH and the transaction stays open. A TV1
// marker at that epoch is accepted by both.
func TestStrictTV2MarkerEpochIsReleaseDependent(t *testing.T) {
	for _, tc := range []struct {
		strict bool
		tv     int8
		want   string
	}{
		{false, 2, "ok"},
		{true, 2, kerr.InvalidProducerEpoch.Error()},
		{true, 1, "ok"},
		{false, 1, "ok"},
	} {
		c := newCluster(t, 2, func(cfg *Config) { cfg.StrictTV2MarkerEpoch = tc.strict })
		for i := 0; i < 2; i++ {
			c.leaderAndISR(i, 0, 0, []int32{0, 1}, []int32{0, 1})
		}
		c.run(100 * sim.Millisecond)
		c.expectAck("txn", c.produceTxn(0, 10, 3, 0, "a"), "ok@0")
		if got := c.writeMarkerV2(0, 10, 3, tc.tv, true); got != tc.want {
			t.Fatalf("strict=%v TV%d marker at the data's epoch: %q, want %q", tc.strict, tc.tv, got, tc.want)
		}
		p, _ := c.broker(0).Partition(tp0)
		if open := p.LastStableOffset() == 0; open != (tc.want != "ok") {
			t.Fatalf("strict=%v TV%d: LSO %d, transaction open %v, want %v", tc.strict, tc.tv, p.LastStableOffset(), open, tc.want != "ok")
		}
		// The coordinator's own marker, at the bumped epoch, always ends it.
		if tc.want != "ok" {
			if got := c.writeMarkerV2(0, 10, 4, tc.tv, true); got != "ok" {
				t.Fatalf("strict=%v TV%d marker at the bumped epoch: %q", tc.strict, tc.tv, got)
			}
		}
	}
}
