package checkers

import (
	"strings"
	"testing"
)

// withCommitted adds ever-committed records to a snapshot.
func withCommitted(s []PartitionSnapshot, es ...Entry) []PartitionSnapshot {
	s[0].Committed = es
	return s
}

// candidateSnapshots: b0 leads epoch 0 and commits offsets 0 and 1 (HW=2)
// with b1 in its ISR; b0 dies and b1 leads epoch 1 with LEO=candidateLEO.
func candidateSnapshots(candidateLEO int64) [][]PartitionSnapshot {
	down := rs(0, NoRole, 0, 2, 2)
	down.Alive = false
	return [][]PartitionSnapshot{
		snap(rs(0, Leader, 0, 2, 0, 0, 1), rs(1, Follower, 0, 2, 0)),
		withCommitted(snap(rs(0, Leader, 0, 2, 2, 0, 1), rs(1, Follower, 0, 2, 0)), Entry{Offset: 0, Value: "m1"}, Entry{Offset: 1, Value: "m2"}),
		snap(down, rs(1, Leader, 1, candidateLEO, 0, 1)),
	}
}

func TestLeaderCandidateCompleteness(t *testing.T) {
	m := NewMonitor()
	observeAll(m, candidateSnapshots(2)...)
	mustResult(t, m.Verdict(), ResultOK)

	m = NewMonitor()
	observeAll(m, candidateSnapshots(1)...)
	a := onlyAnomaly(t, m.Verdict())
	if a.Kind != KindLeaderCandidateCompleteness || a.Permitted || a.Steps[0] != 3 || a.Steps[1] != 2 ||
		a.Offsets[0] != 1 || a.Offsets[1] != 2 || a.Replicas[0] != 1 || a.Replicas[1] != 0 {
		t.Fatalf("anomaly = %s", a)
	}
	// An unclean election at or before the new leader's election permits it.
	h := History{Ops: []Op{send(0, "p", "m1", -1, 0, ms, OK, 0), send(1, "p", "m2", -1, 0, ms, OK, 1)}}
	f := final1(1, 1, Facts{ReplicationFactor: 2, UncleanElectionEnabled: true,
		UncleanElections: []UncleanElection{{Topic: "t", Partition: 0, Broker: 1, Epoch: 1, Time: 3 * ms}}},
		replica(1, Leader, 1, 1, "m1"))
	a = onlyAnomaly(t, m.VerdictWith(h, f))
	if !a.Permitted || !strings.Contains(a.Description, "unclean election") {
		t.Fatalf("anomaly = %s", a)
	}
	f.Facts.UncleanElections = nil
	if a := onlyAnomaly(t, m.VerdictWith(h, f)); a.Permitted {
		t.Fatalf("anomaly permitted without a loss fact: %s", a)
	}
	// After the break the new leader's log is the true one: it is
	// reported once.
	m = NewMonitor()
	observeAll(m, append(candidateSnapshots(1), snap(rs(1, Leader, 2, 1, 1, 1)))...)
	onlyAnomaly(t, m.Verdict())
}

func TestCommittedLost(t *testing.T) {
	// m2 was committed, never acknowledged (its send timed out), and is
	// not in the final committed log.
	h := History{Ops: []Op{send(0, "p", "m1", -1, 0, ms, OK, 0), send(1, "p", "m2", -1, 0, 5*ms, Info, -1)}}
	m := NewMonitor()
	observeAll(m, candidateSnapshots(1)...)
	lost := final1(1, 1, Facts{ReplicationFactor: 2}, replica(1, Leader, 1, 1, "m1"))
	v := m.CommittedLoss(AckedLoss(h, lost), h, lost)
	mustResult(t, v, ResultViolation)
	a := onlyAnomaly(t, v)
	if a.Kind != KindCommittedLost || a.Value != "m2" || a.Offsets[0] != 1 || a.Permitted || a.Steps[0] != 2 {
		t.Fatalf("anomaly = %s", a)
	}
	// Permitted by the same loss facts as acked-loss.
	lost.Facts.UncleanElections = []UncleanElection{{Topic: "t", Partition: 0, Broker: 1, Epoch: 1, Time: 3 * ms}}
	if a := onlyAnomaly(t, m.CommittedLoss(AckedLoss(h, lost), h, lost)); !a.Permitted {
		t.Fatalf("anomaly = %s", a)
	}
	// Kept: nothing to report.
	kept := final1(1, 1, Facts{ReplicationFactor: 2}, replica(1, Leader, 1, 2, "m1", "m2"))
	mustResult(t, m.CommittedLoss(AckedLoss(h, kept), h, kept), ResultOK)
	// An acknowledged record lost is reported once, by acked-loss.
	h.Ops[1] = send(1, "p", "m2", -1, 0, ms, OK, 1)
	lost.Facts.UncleanElections = nil
	if a := onlyAnomaly(t, m.CommittedLoss(AckedLoss(h, lost), h, lost)); a.Kind != "lost" {
		t.Fatalf("anomaly = %s", a)
	}
}

// TestReplicationQuorumSuperset: the controller's ISR must sit inside the
// non-stale leader's maximal ISR (its ISR and any change in flight).
func TestReplicationQuorumSuperset(t *testing.T) {
	withController := func(s []PartitionSnapshot, leader, epoch int32, isr ...int32) []PartitionSnapshot {
		s[0].Controller = &ControllerView{Leader: leader, LeaderEpoch: epoch, ISR: isr}
		return s
	}
	// b0 leads epoch 1 with ISR {0,1}; the controller agrees: ok.
	m := NewMonitor()
	observeAll(m, withController(snap(rs(0, Leader, 1, 2, 2, 0, 1), rs(1, Follower, 1, 2, 2)), 0, 1, 0, 1))
	mustResult(t, m.Verdict(), ResultOK)

	// The controller committed an expansion to {0,1,2} still in flight on
	// the leader: the maximal ISR covers it. (b2 joins at an LEO the HW
	// has not passed, as Kafka's expansion requires.)
	pending := rs(0, Leader, 1, 2, 2, 0, 1)
	pending.PendingISR = []int32{0, 1, 2}
	m = NewMonitor()
	observeAll(m, withController(snap(pending, rs(1, Follower, 1, 2, 2), rs(2, Follower, 1, 2, 1)), 0, 1, 0, 1, 2))
	mustResult(t, m.Verdict(), ResultOK)

	// The leader dropped b2 while the controller still has it: a break,
	// naming both.
	m = NewMonitor()
	observeAll(m, withController(snap(rs(0, Leader, 1, 2, 2, 0, 1), rs(1, Follower, 1, 2, 2), rs(2, Follower, 1, 1, 1)), 0, 1, 0, 1, 2))
	a := onlyAnomaly(t, m.Verdict())
	if a.Kind != KindReplicationQuorumSuperset || a.Permitted || a.Replicas[0] != 0 || a.Replicas[1] != 2 || !strings.Contains(a.Description, "b2") {
		t.Fatalf("anomaly = %s", a)
	}

	// A stale leader (the controller names another epoch) is not held to it.
	m = NewMonitor()
	observeAll(m, withController(snap(rs(0, Leader, 1, 2, 2, 0), rs(1, Follower, 1, 2, 2)), 1, 2, 1, 2))
	mustResult(t, m.Verdict(), ResultOK)
}
