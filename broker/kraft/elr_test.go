package kraft

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KIP-966 part 1 (eligible leader replicas) on the controller, as Kafka
// 4.0's PartitionChangeBuilder and ReplicationControlManager.

func newELRHarness(t *testing.T, elr bool) *harness {
	return newHarness(t, func(c *Config) {
		c.ELR = elr
		c.MinISR = func(string) int { return 2 }
	})
}

// reregister registers a new incarnation of broker id with
// PreviousBrokerEpoch prev (-1: no clean-shutdown file).
func (h *harness) reregister(id int32, inc byte, prev int64) *kmsg.BrokerRegistrationResponse {
	h.t.Helper()
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.Version = 4
	req.BrokerID, req.IncarnationID, req.PreviousBrokerEpoch = id, incarnation(id, inc), prev
	r, _ := h.call(req).(*kmsg.BrokerRegistrationResponse)
	if r == nil || r.ErrorCode != 0 {
		h.t.Fatalf("register %d again: %+v", id, r)
	}
	return r
}

func (h *harness) wantPartition(what string, leader int32, isr, elr, lastKnown []int32) {
	h.t.Helper()
	p := h.partition("t", 0)
	if p.Leader != leader || !slices.Equal(p.ISR, isr) || !slices.Equal(p.ELR, elr) || !slices.Equal(p.LastKnownELR, lastKnown) {
		h.t.Fatalf("%s: leader %d isr %v elr %v last-known-elr %v; want %d %v %v %v", what, p.Leader, p.ISR, p.ELR, p.LastKnownELR, leader, isr, elr, lastKnown)
	}
}

// TestELRShrinkBelowMinISREntersELR: a leader's ISR shrink to or above
// min.insync.replicas leaves the ELR empty; below it, the replica removed
// enters the ELR (it holds every record the strict min ISR rule let the HW
// pass). With ELR off nothing enters.
func TestELRShrinkBelowMinISREntersELR(t *testing.T) {
	for _, on := range []bool{false, true} {
		h := newELRHarness(t, on)
		ep := h.up(1, 2, 3)
		h.createTopic("t", []int32{1, 2, 3})
		if r := h.alter(1, ep[1], "t", 0, []int32{1, 2}, 0, 0); r.ErrorCode != 0 {
			t.Fatalf("shrink to 2: %+v", r)
		}
		h.wantPartition("ISR at min ISR", 1, []int32{1, 2}, nil, nil)
		if r := h.alter(1, ep[1], "t", 0, []int32{1}, 0, 1); r.ErrorCode != 0 {
			t.Fatalf("shrink to 1: %+v", r)
		}
		if !on {
			h.wantPartition("ELR off, below min ISR", 1, []int32{1}, nil, nil)
			continue
		}
		h.wantPartition("ELR on, below min ISR", 1, []int32{1}, []int32{2}, nil)
		// The expansion back to min ISR clears the ELR.
		if r := h.alter(1, ep[1], "t", 0, []int32{1, 3}, 0, 2); r.ErrorCode != 0 {
			t.Fatalf("expand: %+v", r)
		}
		h.wantPartition("back at min ISR", 1, []int32{1, 3}, nil, nil)
	}
}

// TestELRElection: the last ISR member fenced empties the ISR (ELR on) and
// enters the ELR itself; an unfenced ELR member is elected, its ISR just
// it; with every ELR member fenced the partition waits leaderless until one
// is unfenced. With ELR off the last member stays in the ISR, leaderless.
func TestELRElection(t *testing.T) {
	h := newELRHarness(t, true)
	ep := h.up(1, 2, 3)
	h.createTopic("t", []int32{1, 2, 3})
	h.alter(1, ep[1], "t", 0, []int32{1}, 0, 0)
	h.wantPartition("shrunk", 1, []int32{1}, []int32{2, 3}, nil)
	h.heartbeat(1, ep[1], h.q.hw, true, false) // 1 fenced
	h.wantPartition("leader fenced: elected from the ELR", 2, []int32{2}, []int32{1, 3}, nil)

	// Everyone in the ELR and the ISR fenced: no leader, an empty ISR.
	h.heartbeat(3, ep[3], h.q.hw, true, false)
	h.heartbeat(2, ep[2], h.q.hw, true, false)
	// The change that empties the ISR records the last leader (2) in the
	// LastKnownELR; a new leader clears it.
	h.wantPartition("all fenced", -1, []int32{}, []int32{1, 2, 3}, []int32{2})
	h.heartbeat(3, ep[3], h.q.hw, false, false) // 3 unfenced: the ELR member leads
	h.wantPartition("3 back", 3, []int32{3}, []int32{1, 2}, nil)

	off := newELRHarness(t, false)
	ep = off.up(1, 2, 3)
	off.createTopic("t", []int32{1, 2, 3})
	off.alter(1, ep[1], "t", 0, []int32{1}, 0, 0)
	off.heartbeat(1, ep[1], off.q.hw, true, false)
	off.wantPartition("ELR off: the last member stays", -1, []int32{1}, nil, nil)
}

// TestELRUncleanShutdownRegistration: a broker registering again with a
// PreviousBrokerEpoch that is not its last epoch (it lost power: no
// clean-shutdown file) leaves every ELR and ISR and may not lead. With its
// last epoch (a clean shutdown) it stays in the ELR.
func TestELRUncleanShutdownRegistration(t *testing.T) {
	for _, clean := range []bool{false, true} {
		h := newELRHarness(t, true)
		ep := h.up(1, 2, 3)
		h.createTopic("t", []int32{1, 2, 3})
		h.alter(1, ep[1], "t", 0, []int32{1}, 0, 0) // ISR [1], ELR [2 3]
		h.heartbeat(2, ep[2], h.q.hw, true, false)  // 2 and 3 fenced: they stay in the ELR
		h.heartbeat(3, ep[3], h.q.hw, true, false)
		h.wantPartition("shrunk", 1, []int32{1}, []int32{2, 3}, nil)

		prev := int64(-1)
		if clean {
			prev = ep[2]
		}
		h.reregister(2, 2, prev)
		if clean {
			h.wantPartition("2 back after a clean shutdown", 1, []int32{1}, []int32{2, 3}, nil)
			continue
		}
		h.wantPartition("2 back after an unclean shutdown", 1, []int32{1}, []int32{3}, nil)

		// The leader, the last ISR member, loses power and registers again
		// (KIP-966's last replica standing): its session expires (it enters
		// the ELR, fenced), then it registers again and may not lead; 3 is
		// fenced, so the partition waits for it. 1 is the last known leader.
		h.w.RunFor(10 * sim.Second)
		h.wantPartition("1 fenced", -1, []int32{}, []int32{1, 3}, []int32{1})
		h.reregister(1, 2, -1)
		h.wantPartition("1 back after an unclean shutdown", -1, []int32{}, []int32{3}, []int32{1})
		h.heartbeat(3, ep[3], h.q.hw, false, false)
		h.wantPartition("3 unfenced", 3, []int32{3}, nil, nil)
	}
}

// TestELRLastKnownLeaderElection: KIP-966's last-known-leader election as
// Kafka 4.x ships it (useLastKnownLeaderInBalancedRecovery): with the ISR
// and the ELR empty, the last leader is elected once it is unfenced, even
// after an unclean shutdown and with unclean.leader.election.enable off —
// an unclean election (ISR just it, RECOVERING). Fenced, it is not
// (KAFKA-19522).
func TestELRLastKnownLeaderElection(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.ELR = true
		c.MinISR = func(string) int { return 1 }
	})
	ep := h.up(1, 2)
	h.createTopic("t", []int32{1, 2})
	h.alter(1, ep[1], "t", 0, []int32{1}, 0, 0) // 2 leaves at min ISR: not eligible
	h.wantPartition("shrunk", 1, []int32{1}, nil, nil)
	h.heartbeat(2, ep[2], h.q.hw, true, false)
	h.w.RunFor(10 * sim.Second) // 1's session expires: fenced, into the ELR
	h.wantPartition("1 fenced", -1, []int32{}, []int32{1}, []int32{1})
	r := h.reregister(1, 2, -1) // an unclean shutdown: 1 leaves the ELR
	h.wantPartition("1 registered, fenced", -1, []int32{}, nil, []int32{1})
	h.heartbeat(1, r.BrokerEpoch, h.q.hw, false, false) // unfenced: elected
	p := h.partition("t", 0)
	h.wantPartition("1 unfenced", 1, []int32{1}, nil, nil)
	if p.LeaderRecoveryState != 1 {
		t.Fatalf("leader recovery state %d, want RECOVERING (1)", p.LeaderRecoveryState)
	}
}
