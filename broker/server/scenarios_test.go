package server

// The published replication failures, step for step (reference §1.3, §2.1,
// §2.3, §4.3, §4.4), with the test's driver playing the controller: each
// runs under the protocol that loses or diverges and under the one that
// fixes it.

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// KIP-101 scenario 2, "Replica Divergence on Restart after Multiple Hard
// Failures": A (b0) leads, B (b1) has m2 in its page cache only; a power
// outage takes both; B comes back first, is elected and takes m3; A comes
// back as follower.
func kip101Scenario2(t *testing.T, trunc Truncation) (*cluster, []string, []string) {
	c := newCluster(t, 2, func(cfg *Config) {
		cfg.Truncation = trunc
		cfg.Storage.FlushIntervalMs = 10 * sim.Second
	})
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 0, 0, []int32{0, 1}, []int32{0, 1})
	}
	c.expectAck("m1", c.produceAndWait(0, -1, "m1", 12*sim.Second), "ok@0") // m1 flushed on both by now
	c.expectAck("m2", c.produceAndWait(0, -1, "m2", 4*sim.Second), "ok@1")  // A's HW=2 checkpointed; m2 unflushed
	c.crash(0, false)                                                       // A keeps its page cache (m2 survives on A)
	c.crash(1, true)                                                        // B loses what it did not flush (m2)
	c.restart(1)
	c.leaderAndISR(1, 1, 1, []int32{1}, []int32{0, 1})
	c.run(100 * sim.Millisecond)
	c.expectAck("m3", c.produceAndWait(1, 1, "m3", 100*sim.Millisecond), "ok@1")
	c.restart(0)
	c.leaderAndISR(0, 1, 1, []int32{1}, []int32{0, 1})
	c.run(3 * sim.Second)
	return c, c.values(0), c.values(1)
}

func TestKIP101Scenario2DivergesUnderHWTruncation(t *testing.T) {
	c, a, b := kip101Scenario2(t, TruncateHW)
	if !slices.Equal(a, []string{"m1", "m2"}) || !slices.Equal(b, []string{"m1", "m3"}) {
		t.Fatalf("hw: A %v, B %v; want A [m1 m2] and B [m1 m3] (diverged at offset 1)\n%s", a, b, c.timeline())
	}
}

func TestKIP101Scenario2ConvergesWithLeaderEpochs(t *testing.T) {
	for _, trunc := range []Truncation{TruncateKIP101, TruncateKIP279} {
		c, a, b := kip101Scenario2(t, trunc)
		if !slices.Equal(a, []string{"m1", "m3"}) || !slices.Equal(b, a) {
			t.Fatalf("%v: A %v, B %v; want both [m1 m3]\n%s", trunc, a, b, c.timeline())
		}
	}
}

// KAFKA-6361 (the fast fail-over divergence KIP-279 fixes): A (b0) leads
// epoch 1 and writes a0, a1; only a0 reaches B (b1). B is elected in epoch 2
// before A truncates and writes b1; then A is elected again in epoch 3 and
// writes a2; B follows and asks for the end of its epoch 2.
func kafka6361(t *testing.T, trunc Truncation) (*cluster, []string, []string) {
	c := newCluster(t, 2, func(cfg *Config) { cfg.Truncation = trunc; cfg.KIP320 = trunc == TruncateKIP279 })
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 0, 1, []int32{0, 1}, []int32{0, 1})
	}
	c.expectAck("a0", c.produceAndWait(0, -1, "a0", 2*sim.Second), "ok@0")
	c.cut(0, 1) // B's fetches get no answers from now on
	c.expectAck("a1", c.produceAndWait(0, 1, "a1", 100*sim.Millisecond), "ok@1")
	// A's session expires: B leads epoch 2 (A does not hear of it).
	c.leaderAndISR(1, 1, 2, []int32{1}, []int32{0, 1})
	c.run(10 * sim.Millisecond)
	c.expectAck("b1", c.produceAndWait(1, 1, "b1", 100*sim.Millisecond), "ok@1")
	// B's session expires before A truncated: A leads epoch 3.
	c.leaderAndISR(0, 0, 3, []int32{0}, []int32{0, 1})
	c.run(10 * sim.Millisecond)
	c.expectAck("a2", c.produceAndWait(0, 1, "a2", 100*sim.Millisecond), "ok@2")
	c.heal()
	c.leaderAndISR(1, 0, 3, []int32{0}, []int32{0, 1})
	c.run(3 * sim.Second)
	return c, c.values(0), c.values(1)
}

func TestKAFKA6361DivergesUnderKIP101(t *testing.T) {
	c, a, b := kafka6361(t, TruncateKIP101)
	if !slices.Equal(a, []string{"a0", "a1", "a2"}) || !slices.Equal(b, []string{"a0", "b1", "a2"}) {
		t.Fatalf("kip101: A %v, B %v; want A [a0 a1 a2], B [a0 b1 a2] (silent divergence at offset 1)\n%s", a, b, c.timeline())
	}
}

func TestKAFKA6361ConvergesUnderKIP279(t *testing.T) {
	c, a, b := kafka6361(t, TruncateKIP279)
	if !slices.Equal(a, []string{"a0", "a1", "a2"}) || !slices.Equal(b, a) {
		t.Fatalf("kip279: A %v, B %v; want both [a0 a1 a2]\n%s", a, b, c.timeline())
	}
}

// KAFKA-7164: r1 (b0) leads epoch 0 and writes x0, which only r3 (b2)
// replicates; r2 (b1) leads epoch 1 and r1 truncates, r3 does not hear of
// it; r2 fails and r1 leads epoch 2 and writes y0; r3 learns of epoch 2
// with the same leader as before (r1).
func kafka7164(t *testing.T, bug bool) (*cluster, []string, []string) {
	c := newCluster(t, 3, func(cfg *Config) { cfg.TruncateOnLeaderChangeOnly = bug })
	for i := 0; i < 3; i++ {
		c.leaderAndISR(i, 0, 0, []int32{0, 1, 2}, []int32{0, 1, 2})
	}
	c.cut(0, 1) // r2 gets nothing from r1
	c.expectAck("x0", c.produceAndWait(0, 1, "x0", sim.Second), "ok@0")
	if got := c.values(2); !slices.Equal(got, []string{"x0"}) {
		t.Fatalf("r3 did not replicate x0: %v", got)
	}
	c.heal()
	c.cut(0, 2) // from here r3 gets nothing from r1 until the end
	c.leaderAndISR(1, 1, 1, []int32{0, 1}, []int32{0, 1, 2})
	c.leaderAndISR(0, 1, 1, []int32{0, 1}, []int32{0, 1, 2})
	c.run(sim.Second) // r1 truncates x0 away
	if got := c.values(0); len(got) != 0 {
		t.Fatalf("r1 kept %v after following r2", got)
	}
	c.crash(1, false)
	c.leaderAndISR(0, 0, 2, []int32{0}, []int32{0, 1, 2})
	c.run(10 * sim.Millisecond)
	c.expectAck("y0", c.produceAndWait(0, 1, "y0", 100*sim.Millisecond), "ok@0")
	c.heal()
	c.leaderAndISR(2, 0, 2, []int32{0}, []int32{0, 1, 2})
	c.run(40 * sim.Second) // r3's fetch lost in the cut is retried after replica.socket.timeout.ms
	return c, c.values(0), c.values(2)
}

// The bug lived in 2.0, before truncation inside Fetch (2.7), which catches
// it (TestKAFKA7164ConvergesWithTruncationInFetch).
func TestKAFKA7164DivergesWithTheBug(t *testing.T) {
	var c *cluster
	var r1, r3 []string
	withConfig(func(cfg *Config) { cfg.TruncationInFetch = false }, func() { c, r1, r3 = kafka7164(t, true) })
	if !slices.Equal(r1, []string{"y0"}) || !slices.Equal(r3, []string{"x0"}) {
		t.Fatalf("bug: r1 %v, r3 %v; want r1 [y0], r3 [x0] (diverged)\n%s", r1, r3, c.timeline())
	}
}

func TestKAFKA7164ConvergesWithTheFix(t *testing.T) {
	c, r1, r3 := kafka7164(t, false)
	if !slices.Equal(r1, []string{"y0"}) || !slices.Equal(r3, r1) {
		t.Fatalf("fix: r1 %v, r3 %v; want both [y0]\n%s", r1, r3, c.timeline())
	}
}

// acks=1 with a leader crash (reference §4.3): L (b0) acknowledges m after
// its own append; it dies before F (b1) fetches; F is elected; L returns and
// truncates m away. With acks=all, m is not acknowledged at all.
func TestAcks1LeaderCrashLosesAcknowledgedWrite(t *testing.T) {
	for _, trunc := range []Truncation{TruncateHW, TruncateKIP101, TruncateKIP279} {
		c := newCluster(t, 2, func(cfg *Config) { cfg.Truncation = trunc })
		for i := 0; i < 2; i++ {
			c.leaderAndISR(i, 0, 0, []int32{0, 1}, []int32{0, 1})
		}
		c.expectAck("m0", c.produceAndWait(0, -1, "m0", 2*sim.Second), "ok@0")
		c.cut(0, 1)
		c.expectAck("m1", c.produceAndWait(0, 1, "m1", 10*sim.Millisecond), "ok@1")
		c.crash(0, false)
		c.leaderAndISR(1, 1, 1, []int32{1}, []int32{0, 1})
		c.run(10 * sim.Millisecond)
		c.heal()
		c.restart(0)
		c.leaderAndISR(0, 1, 1, []int32{1}, []int32{0, 1})
		c.run(3 * sim.Second)
		if a, b := c.values(0), c.values(1); !slices.Equal(a, []string{"m0"}) || !slices.Equal(b, a) {
			t.Fatalf("%v: old leader %v, new leader %v; want both [m0]: the acks=1 write is lost\n%s", trunc, a, b, c.timeline())
		}
	}
}

// Unclean election (reference §4.4): F (b1) falls out of the ISR; L (b0)
// commits m alone (min.insync.replicas=1); L dies; F is elected from
// outside the ISR; L returns as follower and truncates m away.
func TestUncleanElectionLosesCommittedWrite(t *testing.T) {
	c := newCluster(t, 2, func(cfg *Config) { cfg.ReplicaLagTimeMax = sim.Second })
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 0, 0, []int32{0, 1}, []int32{0, 1})
	}
	c.expectAck("m0", c.produceAndWait(0, -1, "m0", 2*sim.Second), "ok@0")
	c.cut(1, 0) // F is cut off from L both ways
	c.cut(0, 1)
	// m1 waits for F until F is out of the ISR, then commits with L alone.
	c.expectAck("m1", c.produceAndWait(0, -1, "m1", 3*sim.Second), "ok@1")
	if isr := c.broker(0).partitions[tp0].ISR(); !slices.Equal(isr, []int32{0}) {
		t.Fatalf("ISR after F stalled: %v, want [0]", isr)
	}
	c.crash(0, false)
	c.heal()
	c.leaderAndISR(1, 1, 1, []int32{1}, []int32{0, 1}) // unclean: F was not in the ISR
	c.run(10 * sim.Millisecond)
	c.restart(0)
	c.leaderAndISR(0, 1, 1, []int32{1}, []int32{0, 1})
	c.run(3 * sim.Second)
	if a, b := c.values(0), c.values(1); !slices.Equal(a, []string{"m0"}) || !slices.Equal(b, a) {
		t.Fatalf("old leader %v, new leader %v; want both [m0]: the committed m1 is lost\n%s", a, b, c.timeline())
	}
}

// A follower that was briefly leader of an epoch it wrote nothing in keeps
// that epoch's entry at its LEO; the KIP-279 walk-back must drop it (as
// Kafka's Log.truncateTo does) instead of asking about it forever. Found by
// kafkasim explore at depth 10: produce m1; elect b0; produce m2; elect b1;
// elect b0.
func TestKIP279WalkBackDropsEmptyEpochAtLEO(t *testing.T) {
	c := newCluster(t, 2, func(cfg *Config) { cfg.Truncation = TruncateKIP279 })
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 1, 0, []int32{0, 1}, []int32{1, 0})
	}
	c.run(100 * sim.Millisecond)
	c.cut(0, 1)
	c.cut(1, 0)
	c.leaderAndISR(0, 0, 1, []int32{0, 1}, []int32{1, 0}) // b1 does not hear of epoch 1
	c.run(10 * sim.Millisecond)
	c.expectAck("m1", c.produceAndWait(1, 1, "m1", 10*sim.Millisecond), "ok@0")
	c.expectAck("m2", c.produceAndWait(0, 1, "m2", 10*sim.Millisecond), "ok@0")
	c.leaderAndISR(1, 1, 2, []int32{0, 1}, []int32{1, 0}) // b1 leads epoch 2 at LEO 1, writes nothing
	c.leaderAndISR(0, 0, 3, []int32{0, 1}, []int32{1, 0})
	c.run(10 * sim.Millisecond)
	c.heal()
	c.leaderAndISR(1, 0, 3, []int32{0, 1}, []int32{1, 0}) // b1 follows b0 and asks about epoch 2
	c.run(3 * sim.Second)
	if a, b := c.values(0), c.values(1); !slices.Equal(a, []string{"m2"}) || !slices.Equal(b, a) {
		t.Fatalf("b0 %v, b1 %v; want both [m2]\n%s", a, b, c.timeline())
	}
}
