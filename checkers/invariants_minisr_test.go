package checkers

import "testing"

// leaderMin is a leader of epoch 1 with min.insync.replicas=2.
func leaderMin(leo, hw int64, isr ...int32) ReplicaState {
	r := rs(0, Leader, 1, leo, hw, isr...)
	r.MinISR = 2
	return r
}

// TestAckedBelowMinISR: min.insync.replicas' promise (the producer's
// acks=all contract): a send invoked and acknowledged while the only
// leader's ISR was [0] with min.insync.replicas=2 is a contract break;
// one invoked while the ISR still had two members is not judged (the
// leader may have answered before the shrink).
func TestAckedBelowMinISR(t *testing.T) {
	m := NewMonitor()
	observeAll(m,
		snap(leaderMin(1, 1, 0, 1), rs(1, Follower, 1, 1, 1)), // 1ms: ISR [0 1]
		snap(leaderMin(1, 1, 0), rs(1, Follower, 1, 1, 1)),    // 2ms: ISR [0]
		snap(leaderMin(3, 3, 0), rs(1, Follower, 1, 1, 1)),    // 3ms: appended alone
		snap(leaderMin(3, 3, 0, 1), rs(1, Follower, 1, 3, 3)), // 4ms: ISR [0 1] again
	)
	h := History{Ops: []Op{
		{Index: 0, Process: "p1", Kind: Send, Topic: "t", Value: "early", Acks: -1, Leader: 0, Invoke: 1 * ms, Complete: 3 * ms, Outcome: OK, Offset: 1},
		{Index: 1, Process: "p1", Kind: Send, Topic: "t", Value: "alone", Acks: -1, Leader: 0, Invoke: 2*ms + 1, Complete: 3*ms + 1, Outcome: OK, Offset: 2},
		{Index: 2, Process: "p1", Kind: Send, Topic: "t", Value: "acks1", Acks: 1, Leader: 0, Invoke: 2*ms + 1, Complete: 3*ms + 1, Outcome: OK, Offset: 3},
	}}
	v := m.ackedBelowMinISR(m.Verdict(), h)
	mustResult(t, v, ResultViolation)
	if len(v.Anomalies) != 1 || v.Anomalies[0].Kind != KindAckedBelowMinISR || v.Anomalies[0].Value != "alone" || v.Anomalies[0].Permitted {
		t.Fatalf("verdict:\n%s", v)
	}
}

// TestJoiningFollowerBelowHW (KIP-497's maximal ISR): a follower whose
// ISR expansion is in flight already counts for the HW, so the leader's
// HW above its LEO breaks StrongIsr as for an ISR member.
func TestJoiningFollowerBelowHW(t *testing.T) {
	joining := rs(0, Leader, 1, 5, 5, 0)
	joining.PendingISR = []int32{0, 1}
	m := NewMonitor()
	observeAll(m, snap(joining, rs(1, Follower, 1, 2, 2)))
	v := m.Verdict()
	mustResult(t, v, ResultViolation)
	if a := v.Anomalies[0]; a.Kind != "leader-hw-above-follower-leo" || a.Permitted {
		t.Fatalf("anomaly = %s", a)
	}
	ok := NewMonitor()
	joining.HW = 2
	observeAll(ok, snap(joining, rs(1, Follower, 1, 2, 2)))
	mustResult(t, ok.Verdict(), ResultOK)
}
