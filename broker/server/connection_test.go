package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// A response is only ever handled as the answer to the request it answers.
// A follower's fetch parked in the leader's purgatory outlives the
// follower's process: when the follower restarts, its correlation ids start
// over, and the leader answers the old fetch after the new process has sent
// OffsetsForLeaderEpoch requests with the same ids. In Kafka the old
// connection died with the process and its response never reaches the new
// one (NetworkClient matches a response only on its own connection); the
// broker crashed with "kmsg.Response is *kmsg.FetchResponse, not
// *kmsg.OffsetForLeaderEpochResponse" instead. Found by kafkasim explore
// on kip101-hw-lag/kip279 at depth 12.
func TestResponseOfAPreviousLifeIsDropped(t *testing.T) {
	c := newCluster(t, 2, func(cfg *Config) { cfg.Truncation = TruncateKIP279 })
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 0, 1, []int32{0, 1}, []int32{0, 1})
	}
	c.run(100 * sim.Millisecond) // b1's fetch 1 waits in b0's purgatory
	c.expectAck("m1", c.produceAndWait(0, 1, "m1", 10*sim.Millisecond), "ok@0")
	if got := c.values(1); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("b1 before the crash: %v, want [m1]", got)
	}
	// b1's fetch 2 (from offset 1) now waits in b0's purgatory. b1's
	// process dies (its page cache keeps m1) and starts again at once.
	c.crash(1, false)
	c.restart(1)
	// The new process follows b0 twice over: each LeaderAndIsr resets the
	// fetcher, which asks OffsetsForLeaderEpoch with correlation ids 1 and
	// 2. m2 reaches b0 at the same time, and b0 answers the old fetch 2:
	// that FetchResponse reaches b1 while its OffsetsForLeaderEpoch 2 is
	// in flight.
	c.leaderAndISR(1, 0, 1, []int32{0, 1}, []int32{0, 1})
	c.leaderAndISR(1, 0, 2, []int32{0, 1}, []int32{0, 1})
	c.leaderAndISR(0, 0, 2, []int32{0, 1}, []int32{0, 1})
	m2 := c.produce(0, 1, "m2")
	c.run(3 * sim.Second)
	c.expectAck("m2", m2, "ok@1")
	tl := c.timeline()
	if !strings.Contains(tl, "stale-response") {
		t.Fatalf("b1 never saw the old FetchResponse (the test no longer drives the race)\n%s", tl)
	}
	if got := c.values(1); !slices.Equal(got, []string{"m1", "m2"}) {
		t.Fatalf("b1 after the restart: %v, want [m1 m2]\n%s", got, tl)
	}
}
