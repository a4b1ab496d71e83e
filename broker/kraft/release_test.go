package kraft

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/sim"
)

// The controller's behaviours that differ by release (the releases table in
// broker/config decides which applies): KAFKA-12670's unclean election and
// periodic check (3.9), KAFKA-15021's leader-epoch bump on ISR shrink
// (below metadata.version 3.6-IV0), KAFKA-19522's fenced last-known leader
// (4.0.0).

// TestUncleanElectionOnlyFrom39: with unclean.leader.election.enable on, a
// 3.9 controller elects a live replica from outside the ISR when the last
// ISR member is fenced; a 3.3-3.8 controller (UncleanElection false:
// uncleanLeaderElectionEnabledForTopic was hard-wired false) leaves the
// partition leaderless, and never schedules the periodic check.
func TestUncleanElectionOnlyFrom39(t *testing.T) {
	for _, honoured := range []bool{false, true} {
		h := newHarness(t, func(c *Config) {
			c.Unclean = func(string) bool { return true }
			c.UncleanElection = honoured
		})
		ep := h.up(1, 2)
		h.createTopic("t", []int32{1, 2})
		h.alter(1, ep[1], "t", 0, []int32{1}, 0, 0)
		h.heartbeat(1, ep[1], h.q.hw, true, false)
		p := h.partition("t", 0)
		if honoured && (p.Leader != 2 || p.LeaderRecoveryState != metadata.Recovering) {
			t.Fatalf("3.9: %+v, want 2 elected uncleanly", p)
		}
		if !honoured && (p.Leader != -1 || !slices.Equal(p.ISR, []int32{1})) {
			t.Fatalf("3.8: %+v, want leaderless with ISR [1]", p)
		}
		if !honoured {
			h.w.RunFor(10 * 60 * sim.Second)
			if p := h.partition("t", 0); p.Leader != -1 || h.c.unclean.armed {
				t.Fatalf("3.8 after 10 minutes: %+v, check armed %v", p, h.c.unclean.armed)
			}
		}
	}
}

// TestUncleanCheckElectsLeaderless: a partition left leaderless while
// unclean election was off for its topic is elected uncleanly by the
// periodic check (maybeElectUncleanLeaders) once the topic allows it, at
// the first check after unclean.leader.election.interval.ms, not before.
func TestUncleanCheckElectsLeaderless(t *testing.T) {
	allow := false
	h := newHarness(t, func(c *Config) {
		c.Unclean = func(string) bool { return allow }
		c.UncleanCheckInterval = 60 * sim.Second
	})
	ep := h.up(1, 2)
	h.createTopic("t", []int32{1, 2})
	h.alter(1, ep[1], "t", 0, []int32{1}, 0, 0)
	h.heartbeat(1, ep[1], h.q.hw, true, false) // leaderless, clean election only
	if p := h.partition("t", 0); p.Leader != -1 || !h.c.unclean.armed {
		t.Fatalf("fenced: %+v, check armed %v; want leaderless with a check scheduled", p, h.c.unclean.armed)
	}
	allow = true // a dynamic topic config change, as Kafka's check exists for
	// Broker 2 keeps its session; the check has not run yet.
	for i := 0; i < 5; i++ {
		h.w.RunFor(8 * sim.Second)
		h.heartbeat(2, ep[2], h.q.hw, false, false)
	}
	if p := h.partition("t", 0); p.Leader != -1 {
		t.Fatalf("before the interval: %+v", p)
	}
	for i := 0; i < 4; i++ {
		h.w.RunFor(8 * sim.Second)
		h.heartbeat(2, ep[2], h.q.hw, false, false)
	}
	p := h.partition("t", 0)
	if p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) || p.LeaderRecoveryState != metadata.Recovering {
		t.Fatalf("after the interval: %+v, want 2 elected uncleanly", p)
	}
	if h.c.unclean.armed {
		t.Fatal("a check is still scheduled with no partition leaderless")
	}
}

// TestISRShrinkBumpsLeaderEpochBelow36: an AlterPartition that shrinks the
// ISR bumps the leader epoch below metadata.version 3.6-IV0 (the record
// names the same leader); from 3.6-IV0 only the partition epoch moves
// (KAFKA-15021). An expansion never bumps it.
func TestISRShrinkBumpsLeaderEpochBelow36(t *testing.T) {
	for _, c := range []struct {
		level int16
		bump  bool
	}{{11, true}, {metadata.MetadataVersion36IV0, false}, {metadata.MetadataVersion40IV3, false}} {
		h := newHarness(t, func(cfg *Config) { cfg.MetadataVersion = c.level })
		ep := h.up(1, 2, 3)
		h.createTopic("t", []int32{1, 2, 3})
		r := h.alter(1, ep[1], "t", 0, []int32{1, 2}, 0, 0)
		want := int32(0)
		if c.bump {
			want = 1
		}
		p := h.partition("t", 0)
		if r.ErrorCode != 0 || p.Leader != 1 || p.LeaderEpoch != want || p.PartitionEpoch != 1 {
			t.Fatalf("level %d shrink: %+v, state %+v; want leader 1 at epoch %d, partition epoch 1", c.level, r, p, want)
		}
		if r.LeaderEpoch != want {
			t.Fatalf("level %d: AlterPartition answered leader epoch %d, want %d", c.level, r.LeaderEpoch, want)
		}
		h.alter(1, ep[1], "t", 0, []int32{1, 2, 3}, want, 1)
		if p := h.partition("t", 0); p.LeaderEpoch != want || p.PartitionEpoch != 2 || len(p.ISR) != 3 {
			t.Fatalf("level %d expand: %+v", c.level, p)
		}
	}
}

// TestFencedLastKnownLeader: KAFKA-19522. With the ISR and ELR empty, 4.0.0
// elects the last known leader although it is fenced (and just came back
// from an unclean shutdown); 4.0.1 waits until it is unfenced.
func TestFencedLastKnownLeader(t *testing.T) {
	for _, bug := range []bool{false, true} {
		h := newHarness(t, func(c *Config) {
			c.ELR = true
			c.MinISR = func(string) int { return 1 }
			c.ElectFencedLastKnownLeader = bug
		})
		ep := h.up(1, 2)
		h.createTopic("t", []int32{1, 2})
		h.alter(1, ep[1], "t", 0, []int32{1}, 0, 0)
		h.heartbeat(2, ep[2], h.q.hw, true, false)
		h.w.RunFor(10 * sim.Second) // 1's session expires: fenced
		if bug {
			// The change that empties the ISR keeps 1 in the ELR: no last-
			// known election yet, the ELR is not empty.
			h.wantPartition("4.0.0: 1 fenced", -1, []int32{}, []int32{1}, []int32{1})
		}
		h.reregister(1, 2, -1) // unclean shutdown: 1 leaves the ELR, still fenced
		b, _ := h.c.Image().Broker(1)
		if !b.Fenced {
			t.Fatal("1 is not fenced after registering")
		}
		p := h.partition("t", 0)
		if bug && (p.Leader != 1 || p.LeaderRecoveryState != metadata.Recovering) {
			t.Fatalf("4.0.0: %+v, want the fenced 1 elected (KAFKA-19522)", p)
		}
		if !bug && p.Leader != -1 {
			t.Fatalf("4.0.1: %+v, want leaderless while 1 is fenced", p)
		}
	}
}
