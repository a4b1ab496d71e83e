package server

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// TestHWWaitsForAJoiningFollower: while the ZooKeeper write adding a
// caught-up follower to the ISR is out, the HW counts that follower
// already, so it cannot move past the LEO at which the follower joins (the
// group-swarm sweep caught a follower joining the ISR below the HW when it
// did not).
func TestHWWaitsForAJoiningFollower(t *testing.T) {
	c := newCluster(t, 2, nil)
	c.leaderAndISR(0, 0, 0, []int32{0}, []int32{0, 1})
	c.run(10 * sim.Millisecond)
	for _, v := range []string{"a", "b", "c", "d", "e"} {
		c.produce(0, 1, v)
	}
	c.run(10 * sim.Millisecond)
	p, ok := c.broker(0).Partition(storage.TopicPartition{Topic: "t", Partition: 0})
	if !ok || p.LogEndOffset() != 5 {
		t.Fatalf("leader log: ok=%v", ok)
	}
	r := p.remote(1)
	if r == nil {
		t.Fatal("no remote replica 1")
	}
	check := func(pending []int32, want int64) {
		t.Helper()
		p.hw, r.leo, p.pendingISR = 1, 2, pending
		p.maybeIncrementHW()
		if p.hw != want {
			t.Errorf("pending ISR %v: HW %d, want %d", pending, p.hw, want)
		}
	}
	check(nil, 5)           // ISR [0]: the leader alone
	check([]int32{0, 1}, 2) // b1 joining at LEO 2: the HW waits for it
	check([]int32{0}, 5)    // a shrink being written changes nothing
}
