package checkers

import (
	"strings"
	"testing"
)

// kip101Scenario1 is KIP-101's "High Watermark Truncation followed by
// Immediate Leader Election" (reference §1.2): B (b1) leads epoch 0, m2 is
// acknowledged at offset 1 under acks=all once A (b0) fetched it, A restarts
// and truncates to its HW 1, B dies, A leads epoch 1 with [m1].
func kip101Scenario1() (History, Final) {
	h := History{Ops: []Op{
		send(0, "p1", "m1", -1, 0, 2*ms, OK, 0),
		send(1, "p1", "m2", -1, 3*ms, 6*ms, OK, 1),
	}}
	f := final1(0, 1, Facts{ReplicationFactor: 2, MinInsyncReplicas: 1,
		Failures: []Failure{{Broker: 0, Kind: Crash, Time: 7 * ms, End: 8 * ms}, {Broker: 1, Kind: Crash, Time: 9 * ms}}},
		replica(0, Leader, 1, 1, "m1"),
		dead(replica(1, NoRole, 0, 2, "m1", "m2")))
	return h, f
}

// TestAckedLossKIP101Scenario1 is the spec claim of KIP-101: under HW
// truncation an acknowledged acks=all write is lost without any fault the
// contract allows for.
func TestAckedLossKIP101Scenario1(t *testing.T) {
	h, f := kip101Scenario1()
	v := AckedLoss(h, f)
	mustResult(t, v, ResultViolation)
	a := onlyAnomaly(t, v)
	if a.Kind != "lost" || a.Value != "m2" || a.Permitted || a.Offsets[0] != 1 {
		t.Fatalf("anomaly = %s", a)
	}
	if len(a.Replicas) != 1 || a.Replicas[0] != 1 {
		t.Fatalf("m2 should still be held by dead b1 only: %v", a.Replicas)
	}
	if !v.ContractBroken() || !strings.Contains(v.String(), "acked-loss: violation") {
		t.Fatalf("verdict = %s", v)
	}
}

// TestAckedLossKIP101Fixed is the same run under KIP-101: A keeps m2.
func TestAckedLossKIP101Fixed(t *testing.T) {
	h, f := kip101Scenario1()
	f.Partitions[0].Replicas[0] = replica(0, Leader, 1, 2, "m1", "m2")
	mustResult(t, AckedLoss(h, f), ResultOK)
}

// TestAckedLossUncleanElectionPermitted: a loss after an unclean election is
// within the contract (unclean.leader.election.enable=true).
func TestAckedLossUncleanElectionPermitted(t *testing.T) {
	h := History{Ops: []Op{
		send(0, "p1", "m1", -1, 0, 2*ms, OK, 0),
		send(1, "p1", "m2", -1, 3*ms, 6*ms, OK, 1),
		send(2, "p1", "m3", -1, 20*ms, 22*ms, OK, 1),
	}}
	f := final1(1, 2, Facts{ReplicationFactor: 2, UncleanElectionEnabled: true,
		UncleanElections: []UncleanElection{{Topic: "t", Partition: 0, Broker: 1, Epoch: 2, Time: 15 * ms}}},
		replica(1, Leader, 2, 2, "m1", "m3@2"),
		replica(0, Follower, 2, 2, "m1", "m3@2"))
	v := AckedLoss(h, f)
	mustResult(t, v, ResultViolation)
	a := onlyAnomaly(t, v)
	if a.Value != "m2" || !a.Permitted || !strings.Contains(a.Description, "unclean election") {
		t.Fatalf("anomaly = %s", a)
	}
	if v.ContractBroken() {
		t.Fatal("a permitted loss was counted as a contract break")
	}
	// The same loss without the unclean election is a protocol bug.
	f.Facts.UncleanElections = nil
	if a := onlyAnomaly(t, AckedLoss(h, f)); a.Permitted {
		t.Fatalf("loss without unclean election permitted: %s", a)
	}
}

// TestAckedLossAcks1LeaderCrash: acks=1 loses what the leader acknowledged
// if it dies before the followers copy it; acks=all must not.
func TestAckedLossAcks1LeaderCrash(t *testing.T) {
	m2 := send(1, "p1", "m2", 1, 3*ms, 4*ms, OK, 1)
	m2.Leader = 1
	h := History{Ops: []Op{send(0, "p1", "m1", 1, 0, 2*ms, OK, 0), m2}}
	f := final1(0, 1, Facts{ReplicationFactor: 2, Failures: []Failure{{Broker: 1, Kind: Crash, Time: 5 * ms}}},
		replica(0, Leader, 1, 1, "m1"), dead(replica(1, NoRole, 0, 1, "m1", "m2")))
	a := onlyAnomaly(t, AckedLoss(h, f))
	if !a.Permitted || !strings.Contains(a.Description, "acks=1") {
		t.Fatalf("anomaly = %s", a)
	}
	// Another broker's crash does not excuse it.
	f.Facts.Failures[0].Broker = 0
	if a := onlyAnomaly(t, AckedLoss(h, f)); a.Permitted {
		t.Fatalf("loss permitted though the acknowledging leader never failed: %s", a)
	}
	// acks=all is not excused by a leader crash.
	h.Ops[1].Acks = -1
	f.Facts.Failures[0].Broker = 1
	if a := onlyAnomaly(t, AckedLoss(h, f)); a.Permitted {
		t.Fatalf("acks=all loss permitted by a single crash: %s", a)
	}
}

// TestAckedLossPowerLoss is KIP-101 scenario 2's loss: both replicas lose
// power and unflushed m2; "it is acceptable ... that we could lose data if n
// replicas are lost". One replica losing power is not enough.
func TestAckedLossPowerLoss(t *testing.T) {
	h := History{Ops: []Op{send(0, "p1", "m1", -1, 0, 2*ms, OK, 0), send(1, "p1", "m2", -1, 3*ms, 6*ms, OK, 1)}}
	both := []Failure{
		{Broker: 0, Kind: PowerLoss, Time: 10 * ms, End: 30 * ms, LostUnflushed: true},
		{Broker: 1, Kind: PowerLoss, Time: 10 * ms, End: 20 * ms, LostUnflushed: true},
	}
	f := final1(1, 1, Facts{ReplicationFactor: 2, Failures: both},
		replica(1, Leader, 1, 2, "m1", "m3@1"), replica(0, Follower, 1, 2, "m1", "m3@1"))
	a := onlyAnomaly(t, AckedLoss(h, f))
	if !a.Permitted || !strings.Contains(a.Description, "having lost unflushed data") {
		t.Fatalf("anomaly = %s", a)
	}
	f.Facts.Failures = both[:1]
	if a := onlyAnomaly(t, AckedLoss(h, f)); a.Permitted {
		t.Fatalf("one replica's power loss permitted a loss with RF=2: %s", a)
	}
	// Two power losses that never overlap are not "at once".
	f.Facts.Failures = []Failure{both[0], {Broker: 1, Kind: PowerLoss, Time: 40 * ms, End: 50 * ms, LostUnflushed: true}}
	if a := onlyAnomaly(t, AckedLoss(h, f)); a.Permitted {
		t.Fatalf("power losses one after the other permitted a loss: %s", a)
	}
}

func TestAckedLossKinds(t *testing.T) {
	h := History{Ops: []Op{
		send(0, "p1", "m1", -1, 0, 1*ms, OK, 0),
		send(1, "p1", "m2", -1, 0, 1*ms, OK, 1),
		send(2, "p1", "m3", -1, 0, 1*ms, OK, 2),
		send(3, "p1", "m4", -1, 0, 1*ms, Fail, 0),
		send(4, "p1", "m5", 0, 0, 1*ms, Info, 0),
	}}
	// The leader committed m2 at offset 2 and holds m3 above its HW.
	f := final1(0, 0, Facts{}, Replica{ReplicaState: ReplicaState{Broker: 0, Alive: true, Role: Leader, LEO: 4, HW: 3},
		Log: entries("m1", "m0", "m2", "m3")})
	v := AckedLoss(h, f)
	if len(v.Anomalies) != 2 {
		t.Fatalf("anomalies:\n%s", v)
	}
	if a := v.Anomalies[0]; a.Kind != "moved" || a.Value != "m2" || a.Offsets[1] != 2 {
		t.Fatalf("first anomaly = %s", a)
	}
	if a := v.Anomalies[1]; a.Kind != "lost" || a.Value != "m3" {
		t.Fatalf("second anomaly = %s", a)
	}
	// m3 sits at its offset but above the HW.
	f.Partitions[0].Replicas[0].Log = entries("m1", "m2", "m3")
	f.Partitions[0].Replicas[0].HW, f.Partitions[0].Replicas[0].LEO = 2, 3
	if a := onlyAnomaly(t, AckedLoss(h, f)); a.Kind != "uncommitted" || a.Value != "m3" {
		t.Fatalf("anomaly = %s", a)
	}
}

// TestAckedLossUnknownWithoutJudge: with no live replica nothing can be
// judged, and that is Unknown, not OK.
func TestAckedLossUnknownWithoutJudge(t *testing.T) {
	h := History{Ops: []Op{send(0, "p1", "m1", -1, 0, 1*ms, OK, 0)}}
	mustResult(t, AckedLoss(h, final1(0, 0, Facts{}, dead(replica(0, Leader, 0, 1, "m1")))), ResultUnknown)
	mustResult(t, AckedLoss(h, Final{}), ResultUnknown)
	// Leader dead: the best live follower judges.
	f := final1(0, 0, Facts{}, dead(replica(0, Leader, 0, 1, "m1")), replica(1, Follower, 0, 1, "m1"), replica(2, Follower, 0, 0))
	mustResult(t, AckedLoss(h, f), ResultOK)
}

// Rule 4: every replica down at once, one of them having lost unflushed
// data, permits the loss (swarm seed 2 of kip279-safe: b1 crashed, b0 lost
// power, b2 crashed; b0 came back first with less and was elected).
func TestAckedLossAllReplicasDownOneLostData(t *testing.T) {
	pf := PartitionFinal{Topic: "t", Partition: 0, Leader: 0, LeaderEpoch: 2, Replicas: []Replica{
		{ReplicaState: ReplicaState{Broker: 0, Alive: true, Role: Leader, LeaderEpoch: 2, LEO: 1, HW: 1}, Log: []Entry{{Offset: 0, LeaderEpoch: 0, Value: "m1"}}},
		{ReplicaState: ReplicaState{Broker: 1, Alive: true, Role: Follower, LeaderEpoch: 2, LEO: 1, HW: 1}, Log: []Entry{{Offset: 0, LeaderEpoch: 0, Value: "m1"}}},
	}}
	rec := NewRecorder()
	id := rec.Send(0, "p", "t", 0, "", "m1", -1)
	rec.Acked(id, 1, 0)
	id = rec.Send(2, "p", "t", 0, "", "m2", -1)
	rec.Acked(id, 3, 1)
	h := rec.Finish(100)
	crashOnly := Facts{ReplicationFactor: 2, Failures: []Failure{{Broker: 1, Kind: Crash, Time: 10, End: 50}, {Broker: 0, Kind: PowerLoss, Time: 20, End: 40, LostUnflushed: true}}}
	v := AckedLoss(h, Final{Partitions: []PartitionFinal{pf}, Facts: crashOnly})
	if v.Result != ResultViolation || v.ContractBroken() {
		t.Fatalf("both replicas down, one lost data: %v", v)
	}
	apart := Facts{ReplicationFactor: 2, Failures: []Failure{{Broker: 1, Kind: Crash, Time: 10, End: 15}, {Broker: 0, Kind: PowerLoss, Time: 20, End: 40, LostUnflushed: true}}}
	if v := AckedLoss(h, Final{Partitions: []PartitionFinal{pf}, Facts: apart}); !v.ContractBroken() {
		t.Fatalf("failures that never overlap must not permit the loss: %v", v)
	}
	noLoss := Facts{ReplicationFactor: 2, Failures: []Failure{{Broker: 1, Kind: Crash, Time: 10, End: 50}, {Broker: 0, Kind: Crash, Time: 20, End: 40}}}
	if v := AckedLoss(h, Final{Partitions: []PartitionFinal{pf}, Facts: noLoss}); !v.ContractBroken() {
		t.Fatalf("crashes that lost no data cannot explain a loss: %v", v)
	}
}

// TestAckedLossUncommittedOfflineByDesign: an acknowledged record every
// replica holds, above the HW of a partition left leaderless by design
// (KIP-966), is permitted ("uncommitted", not lost); without the fact it
// breaks the contract.
func TestAckedLossUncommittedOfflineByDesign(t *testing.T) {
	h := History{Ops: []Op{send(0, "p1", "m1", -1, 0, 2*ms, OK, 0), send(1, "p1", "m2", -1, 3*ms, 5*ms, OK, 1)}}
	f := final1(-1, 1, Facts{}, replica(1, Follower, 1, 1, "m1", "m2"), replica(2, Follower, 1, 1, "m1", "m2"))
	v := AckedLoss(h, f)
	if len(v.Anomalies) != 1 || v.Anomalies[0].Kind != "uncommitted" || v.Anomalies[0].Permitted {
		t.Fatalf("without the fact: %s, want one uncommitted contract break", v)
	}
	f.Facts.Offline = []OfflinePartition{{Topic: "t", Partition: 0, Why: "permitted: KIP-966 keeps t-0 offline"}}
	v = AckedLoss(h, f)
	if len(v.Anomalies) != 1 || !v.Anomalies[0].Permitted || !strings.Contains(v.Anomalies[0].Description, "KIP-966") {
		t.Fatalf("offline by design: %s, want permitted naming KIP-966", v)
	}
}

// TestAckedLossUncommittedUnwritable: under KIP-966's strict min ISR, a
// partition with fewer replicas than min.insync.replicas never advances its
// HW, so an acks=1 write it acknowledged is held, never committed:
// permitted with Facts.Unwritable, a contract break without (or without
// eligible leader replicas, where the HW would have advanced).
func TestAckedLossUncommittedUnwritable(t *testing.T) {
	h := History{Ops: []Op{send(0, "p1", "m1", 1, 0, 2*ms, OK, 0)}}
	f := final1(0, 0, Facts{EligibleLeaderReplicas: true}, replica(0, Leader, 0, 0, "m1"))
	if v := AckedLoss(h, f); len(v.Anomalies) != 1 || v.Anomalies[0].Kind != "uncommitted" || v.Anomalies[0].Permitted {
		t.Fatalf("without the fact: %s, want one uncommitted contract break", v)
	}
	f.Facts.Unwritable = []OfflinePartition{{Topic: "t", Partition: 0, Why: "permitted: t-0 has 1 replica(s) and min.insync.replicas=2"}}
	if v := AckedLoss(h, f); len(v.Anomalies) != 1 || !v.Anomalies[0].Permitted || !strings.Contains(v.Anomalies[0].Description, "strict min ISR") {
		t.Fatalf("unwritable under KIP-966: %s, want permitted naming the strict min ISR", v)
	}
	f.Facts.EligibleLeaderReplicas = false
	if v := AckedLoss(h, f); len(v.Anomalies) != 1 || v.Anomalies[0].Permitted {
		t.Fatalf("unwritable without KIP-966: %s, want a contract break", v)
	}
}

// TestAckedLossAfterAStaticVoterWipe: contract rule 6. The KIP-101 loss of
// m2 is permitted once a voter of a static KRaft quorum lost its disk
// (KAFKA-14077), and not when the quorum is KIP-853's (kraft.version 1),
// nor when the wiped node is no voter.
func TestAckedLossAfterAStaticVoterWipe(t *testing.T) {
	for _, tc := range []struct {
		version   int16
		voter     bool
		permitted bool
	}{{0, true, true}, {1, true, false}, {0, false, false}} {
		h, f := kip101Scenario1()
		f.Raft = &RaftRun{KRaftVersion: tc.version, Events: []RaftEvent{{Time: 1 * ms, Node: "ctl1", Kind: RaftDiskWiped, Voter: tc.voter}}}
		a := onlyAnomaly(t, AckedLoss(h, f))
		if a.Permitted != tc.permitted || tc.permitted && !strings.Contains(a.Description, "KAFKA-14077: ctl1") {
			t.Errorf("kraft.version %d, voter %v: %s; want permitted %v naming KAFKA-14077", tc.version, tc.voter, a, tc.permitted)
		}
	}
}
