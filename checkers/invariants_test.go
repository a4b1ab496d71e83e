package checkers

import (
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

func rs(broker int32, role Role, epoch int32, leo, hw int64, isr ...int32) ReplicaState {
	return ReplicaState{Broker: broker, Alive: true, Role: role, LeaderEpoch: epoch, LEO: leo, HW: hw, ISR: isr}
}

func snap(reps ...ReplicaState) []PartitionSnapshot {
	return []PartitionSnapshot{{Topic: "t", Partition: 0, Replicas: reps}}
}

// observeAll feeds snapshots as steps 1, 2, ... at 1ms intervals.
func observeAll(m *Monitor, steps ...[]PartitionSnapshot) {
	for i, s := range steps {
		m.Observe(uint64(i+1), sim.Time(i+1)*ms, s)
	}
}

// kip101Scenario1Snapshots is the step trace of reference §1.2 as the
// monitor sees it: B (b1) leads epoch 0, A (b0) follows.
func kip101Scenario1Snapshots(restartLEO int64, unclean bool) [][]PartitionSnapshot {
	restarted := rs(0, Follower, 0, restartLEO, 1)
	restarted.UncleanRestart = unclean
	deadA := rs(0, NoRole, 0, 2, 1)
	deadA.Alive = false
	deadB := rs(1, NoRole, 0, 2, 2)
	deadB.Alive = false
	newLeader := rs(0, Leader, 1, restartLEO, 1, 0)
	newLeader.UncleanRestart = unclean
	return [][]PartitionSnapshot{
		snap(rs(1, Leader, 0, 2, 1, 0, 1), rs(0, Follower, 0, 1, 1)), // 1: start
		snap(rs(1, Leader, 0, 2, 1, 0, 1), rs(0, Follower, 0, 2, 1)), // 2: A fetched m2
		snap(rs(1, Leader, 0, 2, 2, 0, 1), rs(0, Follower, 0, 2, 1)), // 3: B's HW reaches 2
		snap(rs(1, Leader, 0, 2, 2, 0, 1), deadA),                    // 4: A crashes
		snap(rs(1, Leader, 0, 2, 2, 0, 1), restarted),                // 5: A back, truncated to its HW
		snap(deadB, newLeader),                                       // 6: B fails, A leads epoch 1
	}
}

// TestInvariantsKIP101Scenario1: the restarted follower truncating below the
// leader's HW breaks StrongIsr at step 5, before any data is lost.
func TestInvariantsKIP101Scenario1(t *testing.T) {
	m := NewMonitor()
	observeAll(m, kip101Scenario1Snapshots(1, false)...)
	v := m.Verdict()
	mustResult(t, v, ResultViolation)
	if len(v.Anomalies) != 2 {
		t.Fatalf("verdict:\n%s", v)
	}
	a := v.Anomalies[0]
	if a.Kind != "leader-hw-above-follower-leo" || a.Steps[0] != 5 || a.Times[0] != 5*ms || a.Permitted {
		t.Fatalf("anomaly = %s", a)
	}
	// At step 6 A leads epoch 1 without m2, which B committed in epoch 0.
	a = v.Anomalies[1]
	if a.Kind != KindLeaderCandidateCompleteness || a.Steps[0] != 6 || a.Offsets[0] != 1 || a.Offsets[1] != 2 || a.Permitted {
		t.Fatalf("anomaly = %s", a)
	}
	// Under KIP-101 A keeps m2: nothing breaks.
	m = NewMonitor()
	observeAll(m, kip101Scenario1Snapshots(2, false)...)
	mustResult(t, m.Verdict(), ResultOK)
	// After a power loss the same shape is permitted.
	m = NewMonitor()
	observeAll(m, kip101Scenario1Snapshots(1, true)...)
	for _, a := range m.Verdict().Anomalies {
		if !a.Permitted {
			t.Fatalf("anomaly after unclean restart not permitted: %s", a)
		}
	}
}

func TestInvariantsEpochsAndLeaders(t *testing.T) {
	m := NewMonitor()
	observeAll(m,
		snap(rs(0, Leader, 1, 1, 1, 0), rs(1, Follower, 1, 1, 1)),
		snap(rs(0, Leader, 1, 1, 1, 0), rs(1, Leader, 1, 1, 1, 1)), // b1 also leads epoch 1
		snap(rs(0, Leader, 1, 1, 1, 0), rs(1, Follower, 0, 1, 1)),  // b1 goes back to epoch 0
	)
	v := m.Verdict()
	if len(v.Anomalies) != 2 || v.Anomalies[0].Kind != "two-leaders-in-epoch" || v.Anomalies[1].Kind != "epoch-decreased" {
		t.Fatalf("verdict:\n%s", v)
	}
	if v.Anomalies[0].Steps[0] != 2 || v.Anomalies[1].Steps[0] != 3 {
		t.Fatalf("steps: %s", v)
	}
	// A restart (seen dead) starts the replica's epoch over.
	down := rs(1, NoRole, 0, 1, 1)
	down.Alive = false
	m = NewMonitor()
	observeAll(m,
		snap(rs(0, Leader, 1, 1, 1, 0), rs(1, Follower, 1, 1, 1)),
		snap(rs(0, Leader, 1, 1, 1, 0), down),
		snap(rs(0, Leader, 1, 1, 1, 0), rs(1, Follower, 0, 1, 1)),
	)
	mustResult(t, m.Verdict(), ResultOK)
}

func TestInvariantsLeaderHW(t *testing.T) {
	m := NewMonitor()
	observeAll(m,
		snap(rs(0, Leader, 0, 3, 3, 0)),
		snap(rs(0, Leader, 0, 3, 2, 0)), // HW went back within epoch 0
		snap(rs(0, Leader, 0, 3, 2, 0)), // still back: reported once
		snap(rs(0, Leader, 0, 3, 4, 0)), // HW above LEO
		snap(rs(0, Leader, 1, 3, 1, 0)), // a new epoch may start lower
	)
	v := m.Verdict()
	if len(v.Anomalies) != 2 || v.Anomalies[0].Kind != "leader-hw-decreased" || v.Anomalies[1].Kind != "hw-above-leo" {
		t.Fatalf("verdict:\n%s", v)
	}
}

// TestInvariantsLeaderHWAfterRestart: a leader that crashes and is made
// leader of the same epoch again starts from its HW checkpoint, lower than
// its HW before the crash: not a break (its HW is not durable).
func TestInvariantsLeaderHWAfterRestart(t *testing.T) {
	dead := rs(0, NoRole, 0, 3, 3)
	dead.Alive = false
	m := NewMonitor()
	observeAll(m,
		snap(rs(0, Leader, 0, 3, 3, 0)),
		snap(dead),
		snap(rs(0, Leader, 0, 3, 1, 0)), // back, epoch 0 again, HW from the checkpoint
		snap(rs(0, Leader, 0, 3, 0, 0)), // but alive it must not go back
	)
	v := m.Verdict()
	if len(v.Anomalies) != 1 || v.Anomalies[0].Kind != "leader-hw-decreased" || v.Anomalies[0].Times[0] != 4*ms {
		t.Fatalf("want one leader-hw-decreased at step 4:\n%s", v)
	}
}

// TestInvariantsSettling: a new leader's stale HW and a follower's old
// suffix are normal until the follower settles; afterwards they break.
func TestInvariantsSettling(t *testing.T) {
	m := NewMonitor()
	observeAll(m,
		// Epoch 1: b1 leads with a stale HW 1; b0 still has HW 2 and an old suffix.
		snap(rs(1, Leader, 1, 2, 1, 0, 1), rs(0, Follower, 1, 3, 2)),
		// b0 truncated and fetched: settled.
		snap(rs(1, Leader, 1, 2, 2, 0, 1), rs(0, Follower, 1, 2, 2)),
		// Now b0 running ahead of its leader is a break.
		snap(rs(1, Leader, 1, 2, 2, 0, 1), rs(0, Follower, 1, 3, 3)),
	)
	v := m.Verdict()
	if len(v.Anomalies) != 2 || v.Anomalies[0].Kind != "follower-hw-above-leader-hw" || v.Anomalies[1].Kind != "follower-leo-above-leader-leo" {
		t.Fatalf("verdict:\n%s", v)
	}
	for _, a := range v.Anomalies {
		if a.Steps[0] != 3 {
			t.Fatalf("anomaly before settling: %s", a)
		}
	}
	// A follower outside the leader's ISR is not held to anything.
	m = NewMonitor()
	observeAll(m, snap(rs(1, Leader, 1, 2, 2, 1), rs(0, Follower, 1, 0, 0)))
	mustResult(t, m.Verdict(), ResultOK)
}

func TestInvariantsNothingObserved(t *testing.T) {
	mustResult(t, NewMonitor().Verdict(), ResultUnknown)
}

// TestInvariantsLeaderTenure (swarm kip279-safe seeds 113, 196, 299): the
// leader b1 restarts and is given epoch 0 again, leading from its HW
// checkpoint (2) while its follower still holds HW 3 from the leader's
// previous life. A new tenure: the follower settles again, no break. The
// same HW gap without the restart is a break.
func TestInvariantsLeaderTenure(t *testing.T) {
	deadLeader := rs(1, NoRole, 0, 4, 3)
	deadLeader.Alive = false
	m := NewMonitor()
	observeAll(m,
		snap(rs(0, Follower, 0, 4, 3), rs(1, Leader, 0, 4, 3, 0, 1)),
		snap(rs(0, Follower, 0, 4, 3), deadLeader),
		snap(rs(0, Follower, 0, 4, 3), rs(1, Leader, 0, 4, 2, 0, 1)),
		snap(rs(0, Follower, 0, 4, 2), rs(1, Leader, 0, 4, 4, 0, 1)))
	mustResult(t, m.Verdict(), ResultOK)
	m = NewMonitor()
	observeAll(m,
		snap(rs(0, Follower, 0, 4, 3), rs(1, Leader, 0, 4, 3, 0, 1)),
		snap(rs(0, Follower, 0, 4, 4), rs(1, Leader, 0, 4, 3, 0, 1)))
	if a := onlyAnomaly(t, m.Verdict()); a.Kind != "follower-hw-above-leader-hw" || a.Permitted {
		t.Fatalf("anomaly = %s", a)
	}
}

// TestInvariantsForget: a topic deleted and created again starts over at
// epoch 0 with an HW of 0, on another broker. Seen as one partition, its
// leader's HW went back within epoch 0; once the monitor forgets the
// deleted topic's partition, the new one owes it nothing.
func TestInvariantsForget(t *testing.T) {
	first := snap(rs(0, Leader, 0, 3, 3, 0))
	again := snap(rs(0, NoRole, -1, 0, 0), rs(1, Leader, 0, 1, 0, 1))
	m := NewMonitor()
	observeAll(m, first, again)
	if v := m.Verdict(); v.Result != ResultViolation {
		t.Fatalf("without Forget: want the HW going back in epoch 0 found:\n%s", v)
	}
	m = NewMonitor()
	observeAll(m, first)
	m.Forget("t", 0)
	m.Observe(2, 2*ms, again)
	mustResult(t, m.Verdict(), ResultOK)
}
