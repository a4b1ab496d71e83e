package server

// Spec-claim tests for truncation inside Fetch (2.7+, KIP-595's
// LastFetchedEpoch/DivergingEpoch applied to replication, KAFKA-10554),
// against the OffsetsForLeaderEpoch path of 2.0 to 2.6 (KIP-279).

import (
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// inFetch sets the truncation-in-Fetch switch of every broker.
func inFetch(on bool) func(*Config) {
	return func(cfg *Config) { cfg.TruncationInFetch = on }
}

// brokerEvents returns the timeline lines that broker name logged as event.
func brokerEvents(timeline, name, event string) []string {
	var out []string
	for _, l := range strings.Split(timeline, "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && f[2] == name && f[3] == event {
			out = append(out, l)
		}
	}
	return out
}

// divergentWalkBack leaves b0 with a tail in an epoch the new leader b1
// never had: x0 in epoch 0 on both; b1 leads epoch 1 and writes y; b0,
// not hearing of it, leads epoch 2 and writes z; b1 leads epoch 3 and b0
// follows it. b0 = [x0(0) z(2)], b1 = [x0(0) y(1)].
func divergentWalkBack(t *testing.T) *cluster {
	c := newCluster(t, 2, nil)
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 0, 0, []int32{0, 1}, []int32{0, 1})
	}
	c.expectAck("x0", c.produceAndWait(0, -1, "x0", 2*sim.Second), "ok@0")
	c.cut(0, 1)
	c.cut(1, 0)
	c.leaderAndISR(1, 1, 1, []int32{1}, []int32{0, 1})
	c.run(10 * sim.Millisecond)
	c.expectAck("y", c.produceAndWait(1, 1, "y", 100*sim.Millisecond), "ok@1")
	c.leaderAndISR(0, 0, 2, []int32{0}, []int32{0, 1})
	c.run(10 * sim.Millisecond)
	c.expectAck("z", c.produceAndWait(0, 1, "z", 100*sim.Millisecond), "ok@1")
	c.leaderAndISR(1, 1, 3, []int32{1}, []int32{0, 1})
	c.run(10 * sim.Millisecond)
	c.heal()
	c.leaderAndISR(0, 1, 3, []int32{1}, []int32{0, 1})
	c.run(3 * sim.Second)
	return c
}

// A follower with a divergent tail truncates on the leader's
// DivergingEpoch, walking back an epoch it has and the leader lacks,
// without ever sending OffsetsForLeaderEpoch (KAFKA-10554).
func TestTruncationInFetchWalksBackWithoutOffsetsForLeaderEpoch(t *testing.T) {
	c := divergentWalkBack(t)
	tl := c.timeline()
	if a, b := c.values(0), c.values(1); !slices.Equal(a, []string{"x0", "y"}) || !slices.Equal(b, a) {
		t.Fatalf("b0 %v, b1 %v; want both [x0 y]\n%s", a, b, tl)
	}
	if got := brokerEvents(tl, "b0", "offsets-for-leader-epoch"); len(got) != 0 {
		t.Errorf("b0 sent OffsetsForLeaderEpoch with truncation in Fetch: %v", got)
	}
	if got := brokerEvents(tl, "b1", "diverging-epoch-answer"); len(got) == 0 || !strings.Contains(got[0], "last-fetched-epoch=2 fetch-offset=2 epoch=1 end-offset=2") {
		t.Errorf("b1's DivergingEpoch answers %v; want the first for last-fetched-epoch 2 at offset 2: epoch 1 ending at 2\n%s", got, tl)
	}
	walk := false
	for _, l := range brokerEvents(tl, "b0", "truncate") {
		walk = walk || strings.Contains(l, "rule=diverging-epoch-walk-back to=1")
	}
	if !walk {
		t.Errorf("b0 did not walk back to the end of its epoch 0 (offset 1)\n%s", tl)
	}
}

// The same divergence at 2.0 to 2.6 (truncation in Fetch off) goes through
// OffsetsForLeaderEpoch (KIP-279) and ends the same way; the leader never
// answers DivergingEpoch.
func TestWithoutTruncationInFetchOffsetsForLeaderEpochWalksBack(t *testing.T) {
	var c *cluster
	withConfig(inFetch(false), func() { c = divergentWalkBack(t) })
	tl := c.timeline()
	if a, b := c.values(0), c.values(1); !slices.Equal(a, []string{"x0", "y"}) || !slices.Equal(b, a) {
		t.Fatalf("b0 %v, b1 %v; want both [x0 y]\n%s", a, b, tl)
	}
	if got := brokerEvents(tl, "b0", "offsets-for-leader-epoch"); len(got) < 2 {
		t.Errorf("b0 sent %d OffsetsForLeaderEpoch, want 2 (epoch 2, then walked back to 0)\n%s", len(got), tl)
	}
	if got := brokerEvents(tl, "b1", "diverging-epoch-answer"); len(got) != 0 {
		t.Errorf("DivergingEpoch without truncation in Fetch: %v", got)
	}
}

// A follower whose fetch matches the leader's log gets records, never a
// DivergingEpoch: a plain replicated run has no divergence answers, and the
// follower's fetches carry its last epoch.
func TestTruncationInFetchNoDivergenceWhenLogsAgree(t *testing.T) {
	c := newCluster(t, 2, nil)
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 0, 0, []int32{0, 1}, []int32{0, 1})
	}
	for _, v := range []string{"m1", "m2", "m3"} {
		c.produceAndWait(0, -1, v, 2*sim.Second)
	}
	tl := c.timeline()
	if b := c.values(1); !slices.Equal(b, []string{"m1", "m2", "m3"}) {
		t.Fatalf("follower %v\n%s", b, tl)
	}
	if got := brokerEvents(tl, "b0", "diverging-epoch-answer"); len(got) != 0 {
		t.Errorf("DivergingEpoch for agreeing logs: %v", got)
	}
	if v := c.broker(1).fetchVersion(); v != 12 {
		t.Errorf("Fetch version %d with truncation in Fetch, want 12", v)
	}
}

// The scenarios of KIP-101 and KAFKA-6361 keep their outcomes at 2.0 (no
// truncation in Fetch): the KIP-279 tests run with it on (the default).
func TestLeaderEpochScenariosWithoutTruncationInFetch(t *testing.T) {
	withConfig(inFetch(false), func() {
		for _, trunc := range []Truncation{TruncateKIP101, TruncateKIP279} {
			if _, ack, log := kip101Scenario1(t, trunc); ack != "ok@1" || !slices.Equal(log, []string{"m1", "m2"}) {
				t.Errorf("%v scenario 1: m2 acked %q, new leader's log %v", trunc, ack, log)
			}
			if _, a, b := kip101Scenario2(t, trunc); !slices.Equal(a, []string{"m1", "m3"}) || !slices.Equal(b, a) {
				t.Errorf("%v scenario 2: A %v, B %v", trunc, a, b)
			}
		}
		if _, a, b := kafka6361(t, TruncateKIP279); !slices.Equal(a, []string{"a0", "a1", "a2"}) || !slices.Equal(b, a) {
			t.Errorf("KAFKA-6361 under kip279 at 2.0: A %v, B %v", a, b)
		}
		if c, a, b := kafka6361(t, TruncateKIP279); len(brokerEvents(c.timeline(), "b1", "offsets-for-leader-epoch")) == 0 {
			t.Errorf("KAFKA-6361 at 2.0 sent no OffsetsForLeaderEpoch: A %v, B %v", a, b)
		}
	})
	c, _, _ := kafka6361(t, TruncateKIP279)
	tl := c.timeline()
	if got := brokerEvents(tl, "b1", "offsets-for-leader-epoch"); len(got) != 0 {
		t.Errorf("KAFKA-6361 at 2.7+ sent OffsetsForLeaderEpoch: %v", got)
	}
	if got := brokerEvents(tl, "b1", "diverging-epoch"); len(got) != 1 {
		t.Errorf("KAFKA-6361 at 2.7+: %d DivergingEpoch truncations, want 1\n%s", len(got), tl)
	}
}

// KAFKA-7164's bug (no truncation step on a new epoch with the same leader)
// cannot diverge from 2.7 on: r3's next Fetch carries its last epoch (0),
// which the leader no longer has, and the DivergingEpoch answer truncates x0.
func TestKAFKA7164ConvergesWithTruncationInFetch(t *testing.T) {
	c, r1, r3 := kafka7164(t, true)
	if !slices.Equal(r1, []string{"y0"}) || !slices.Equal(r3, r1) {
		t.Fatalf("bug with truncation in Fetch: r1 %v, r3 %v; want both [y0]\n%s", r1, r3, c.timeline())
	}
	if got := brokerEvents(c.timeline(), "b0", "diverging-epoch-answer"); len(got) == 0 {
		t.Errorf("r1 answered no DivergingEpoch")
	}
}
