package server

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// kip101Scenario1 plays KIP-101 scenario 1 ("High Watermark Truncation
// followed by Immediate Leader Election"): A (b0) follows B (b1); A fetches
// m2 and B acknowledges it (HW=2) before A learns the new HW; A restarts,
// B dies before A fetches again, and A becomes leader. It returns A's log.
func kip101Scenario1(t *testing.T, trunc Truncation) (*cluster, string, []string) {
	c := newCluster(t, 2, func(cfg *Config) { cfg.Truncation = trunc; cfg.KIP320 = trunc == TruncateKIP279 })
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 1, 0, []int32{0, 1}, []int32{1, 0})
	}
	m1 := c.produce(1, -1, "m1")
	c.run(10 * sim.Second) // m1 committed; A's HW (1) checkpointed
	if *m1 != "ok@0" {
		t.Fatalf("m1: %q", *m1)
	}
	m2 := c.produce(1, -1, "m2")
	c.runUntil("m2 acknowledged", func() bool { return *m2 != "" })
	if *m2 != "ok@1" {
		t.Fatalf("m2: %q", *m2)
	}
	// A has m2 but its HW is still 1: the response that would carry HW=2 is
	// parked in B's purgatory.
	if got := c.values(0); !slices.Equal(got, []string{"m1", "m2"}) {
		t.Fatalf("A's log before restart: %v", got)
	}
	// A restarts (a process crash: its page cache keeps m2) and cannot reach
	// B again; the controller tells it B still leads epoch 0.
	c.must(c.w.Inject(sim.Cut{From: c.brokers[0], To: c.brokers[1]}))
	c.must(c.w.Inject(sim.Crash{Node: c.brokers[0]}))
	c.must(c.w.Inject(sim.Restart{Node: c.brokers[0]}))
	c.leaderAndISR(0, 1, 0, []int32{0, 1}, []int32{1, 0})
	c.run(100 * sim.Millisecond)
	// B dies; the controller elects A, which is in the ISR, in epoch 1.
	c.must(c.w.Inject(sim.Crash{Node: c.brokers[1]}))
	c.leaderAndISR(0, 0, 1, []int32{0}, []int32{1, 0})
	c.run(100 * sim.Millisecond)
	return c, *m2, c.values(0)
}

func TestKIP101Scenario1LosesAckedWriteUnderHWTruncation(t *testing.T) {
	c, ack, log := kip101Scenario1(t, TruncateHW)
	if ack != "ok@1" || !slices.Equal(log, []string{"m1"}) {
		t.Fatalf("hw truncation: m2 acked %q; new leader's log %v, want [m1] (m2 lost)\n%s", ack, log, c.timeline())
	}
}

func TestKIP101Scenario1KeepsAckedWriteWithLeaderEpochs(t *testing.T) {
	for _, trunc := range []Truncation{TruncateKIP101, TruncateKIP279} {
		c, ack, log := kip101Scenario1(t, trunc)
		if ack != "ok@1" || !slices.Equal(log, []string{"m1", "m2"}) {
			t.Fatalf("%v: m2 acked %q; new leader's log %v, want [m1 m2]\n%s", trunc, ack, log, c.timeline())
		}
	}
}
