package checkers

import (
	"strings"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/sim"
)

// lastReplicaStanding is KIP-966's motivating loss (swarm kip279-safe seed
// 19): RF=3, acks=all; b0 and b1 leave the ISR, the ISR is [2], b2 loses
// power with m2 unflushed, comes back as the only ISR member and is
// elected; b0 and b1 truncate to it, and m3 is written at offset 1.
func lastReplicaStanding(isr []int32) (History, Final) {
	h := History{Ops: []Op{
		send(0, "p1", "m1", -1, 0, 2*ms, OK, 0),
		send(1, "p1", "m2", -1, 3*ms, 6*ms, OK, 1),
		poll(2, "c1", 7*ms, 8*ms, 0, Record{Offset: 0, Value: "m1"}, Record{Offset: 1, Value: "m2"}),
		send(3, "p1", "m3", -1, 30*ms, 32*ms, OK, 1),
		poll(4, "c1", 40*ms, 41*ms, 0, Record{Offset: 0, Value: "m1"}, Record{Offset: 1, Value: "m3"}),
	}}
	f := final1(2, 2, Facts{ReplicationFactor: 3, MinInsyncReplicas: 2,
		ISRChanges: []ISRChange{{Topic: "t", Partition: 0, Time: 0, ISR: []int32{0, 1, 2}}, {Topic: "t", Partition: 0, Time: 10 * ms, ISR: isr}},
		Failures:   []Failure{{Broker: 2, Kind: PowerLoss, Time: 20 * ms, End: 25 * ms, LostUnflushed: true}}},
		replica(0, Follower, 2, 2, "m1", "m3@2"),
		replica(1, Follower, 2, 2, "m1", "m3@2"),
		replica(2, Leader, 2, 2, "m1", "m3@2"))
	return h, f
}

// TestContractLastReplicaStanding: with the ISR shrunk to the replica that
// lost power, every client-view and log checker calls the loss permitted
// and names KIP-966's case; with b0 and b1 still in the ISR (up, holding
// m2), the same loss breaks the contract in every one of them.
func TestContractLastReplicaStanding(t *testing.T) {
	for _, tc := range []struct {
		isr       []int32
		permitted bool
	}{{[]int32{2}, true}, {[]int32{0, 1, 2}, false}} {
		h, f := lastReplicaStanding(tc.isr)
		for _, v := range []Verdict{AckedLoss(h, f), Linearizability(h, f, 5*time.Second), Ordering(h, f)} {
			mustResult(t, v, ResultViolation)
			a := v.Anomalies[0]
			if a.Permitted != tc.permitted {
				t.Fatalf("ISR %v: %s permitted=%v, want %v\n%s", tc.isr, v.Checker, a.Permitted, tc.permitted, v)
			}
			if tc.permitted && !strings.Contains(a.Description, "last replica standing") {
				t.Fatalf("%s does not name the fact: %s", v.Checker, a.Description)
			}
		}
	}
}

// TestContractLastReplicaStandingWithELR: with eligible leader replicas
// on (KIP-966), the same loss is no longer permitted by rule 4 or rule 5:
// the fence exists; with them off it is (the test above).
func TestContractLastReplicaStandingWithELR(t *testing.T) {
	for _, elr := range []bool{false, true} {
		h, f := lastReplicaStanding([]int32{2})
		f.Facts.EligibleLeaderReplicas = elr
		for _, v := range []Verdict{AckedLoss(h, f), Linearizability(h, f, 5*time.Second), Ordering(h, f)} {
			mustResult(t, v, ResultViolation)
			if a := v.Anomalies[0]; a.Permitted == elr {
				t.Fatalf("ELR %v: %s permitted=%v, want %v\n%s", elr, v.Checker, a.Permitted, !elr, v)
			}
		}
	}
}

// TestContractAllReplicasDown: the ISR unrecorded means every replica; all
// three down with one losing data permits the loss, two of three does not.
func TestContractAllReplicasDown(t *testing.T) {
	h, f := lastReplicaStanding(nil)
	f.Facts.ISRChanges = nil
	f.Facts.Failures = []Failure{
		{Broker: 0, Kind: Crash, Time: 15 * ms, End: 26 * ms},
		{Broker: 1, Kind: Crash, Time: 16 * ms, End: 26 * ms},
		{Broker: 2, Kind: PowerLoss, Time: 20 * ms, End: 25 * ms, LostUnflushed: true},
	}
	a := onlyAnomaly(t, AckedLoss(h, f))
	if !a.Permitted || !strings.Contains(a.Description, "3 replicas [0 1 2] were down at once") {
		t.Fatalf("anomaly = %s", a)
	}
	f.Facts.Failures = f.Facts.Failures[1:]
	if a := onlyAnomaly(t, AckedLoss(h, f)); a.Permitted {
		t.Fatalf("two of three replicas down: %s", a)
	}
}

// TestContractUncleanElection: a read of m2, an unclean election, and m3
// read at m2's offset: permitted for linearizability only when the unclean
// election happened, and only for the records sent before it.
func TestContractUncleanElection(t *testing.T) {
	h := History{Ops: []Op{
		send(0, "p1", "m1", -1, 0, 2*ms, OK, 0),
		send(1, "p1", "m2", -1, 3*ms, 6*ms, OK, 1),
		poll(2, "c1", 7*ms, 8*ms, 0, Record{Offset: 0, Value: "m1"}, Record{Offset: 1, Value: "m2"}),
		send(3, "p1", "m3", -1, 30*ms, 32*ms, OK, 1),
		poll(4, "c1", 40*ms, 41*ms, 0, Record{Offset: 0, Value: "m1"}, Record{Offset: 1, Value: "m3"}),
	}}
	f := final1(1, 1, Facts{UncleanElectionEnabled: true}, replica(1, Leader, 1, 2, "m1", "m3@1"))
	if a := onlyAnomaly(t, Linearizability(h, f, 5*time.Second)); a.Permitted {
		t.Fatalf("no unclean election: %s", a)
	}
	f.Facts.UncleanElections = []UncleanElection{{Topic: "t", Partition: 0, Broker: 1, Epoch: 1, Time: 20 * ms}}
	a := onlyAnomaly(t, Linearizability(h, f, 5*time.Second))
	if !a.Permitted || !strings.Contains(a.Description, "unclean election of b1") {
		t.Fatalf("after an unclean election: %s", a)
	}
	// An unclean election before m2 was sent does not excuse losing it.
	f.Facts.UncleanElections[0].Time = 2 * ms
	if a := onlyAnomaly(t, Linearizability(h, f, 5*time.Second)); a.Permitted {
		t.Fatalf("unclean election before the send: %s", a)
	}
}

// TestContractLeaderFailureAcks: an acks=1 leader failure excuses losing
// acks=1 records, never acks=all ones.
func TestContractLeaderFailureAcks(t *testing.T) {
	build := func(acks int16) (History, Final) {
		h := History{Ops: []Op{
			send(0, "p1", "m1", -1, 0, 2*ms, OK, 0),
			send(1, "p1", "m2", acks, 3*ms, 6*ms, OK, 1),
			poll(2, "c1", 7*ms, 8*ms, 0, Record{Offset: 0, Value: "m1"}, Record{Offset: 1, Value: "m2"}),
			send(3, "p2", "m3", acks, 30*ms, 32*ms, OK, 1),
			poll(4, "c1", 40*ms, 41*ms, 0, Record{Offset: 0, Value: "m1"}, Record{Offset: 1, Value: "m3"}),
		}}
		h.Ops[1].Leader = 0
		f := final1(1, 1, Facts{Failures: []Failure{{Broker: 0, Kind: Crash, Time: 10 * ms}}},
			replica(1, Leader, 1, 2, "m1", "m3@1"), dead(replica(0, NoRole, 0, 2, "m1", "m2")))
		return h, f
	}
	h, f := build(1)
	// NB: with no budget at all as well: m2 and m3 both took offset 1
	// (linearizability_conflict.go) and the contract model's linearization
	// is exhibited (linearizability_contract_witness.go), neither reading
	// a clock.
	for _, v := range []Verdict{AckedLoss(h, f), Linearizability(h, f, 5*time.Second), Linearizability(h, f, time.Nanosecond)} {
		if a := onlyAnomaly(t, v); !a.Permitted || !strings.Contains(a.Description, "acks=1 and the leader b0 failed") {
			t.Fatalf("acks=1: %s", a)
		}
	}
	h, f = build(-1)
	for _, v := range []Verdict{AckedLoss(h, f), Linearizability(h, f, 5*time.Second)} {
		if a := onlyAnomaly(t, v); a.Permitted {
			t.Fatalf("acks=all: %s", a)
		}
	}
}

// TestContractDeposedLeaderAcks: a leader that never failed itself is
// deposed (a KRaft controller fenced it; b1 leads epoch 1 from 10ms) and,
// a zombie, acknowledges m2 with acks=1 at 12ms; b1's log replaces it.
// Permitted for acks=1, naming the deposition; a contract break for
// acks=all; and a record b0 acknowledged after it became leader again is
// not excused by the old deposition.
func TestContractDeposedLeaderAcks(t *testing.T) {
	build := func(acks int16, sent sim.Time) (History, Final) {
		h := History{Ops: []Op{
			send(0, "p1", "m1", -1, 0, 2*ms, OK, 0),
			send(1, "p1", "m2", acks, sent, sent+2*ms, OK, 1),
			poll(2, "c1", 40*ms, 41*ms, 0, Record{Offset: 0, Value: "m1"}, Record{Offset: 1, Value: "m3"}),
			send(3, "p2", "m3", -1, 30*ms, 32*ms, OK, 1),
		}}
		h.Ops[1].Leader = 0
		f := final1(1, 1, Facts{ISRChanges: []ISRChange{
			{Topic: "t", Partition: 0, Time: 0, ISR: []int32{0, 1}, Leader: 0, LeaderEpoch: 0},
			{Topic: "t", Partition: 0, Time: 10 * ms, ISR: []int32{1}, Leader: 1, LeaderEpoch: 1},
			{Topic: "t", Partition: 0, Time: 20 * ms, ISR: []int32{0, 1}, Leader: 0, LeaderEpoch: 2}}},
			replica(1, Follower, 2, 2, "m1", "m3@2"), replica(0, Leader, 2, 2, "m1", "m3@2"))
		return h, f
	}
	h, f := build(1, 12*ms)
	if a := onlyAnomaly(t, AckedLoss(h, f)); !a.Permitted || !strings.Contains(a.Description, "acks=1 and the leader b0 was deposed") {
		t.Fatalf("acks=1 zombie: %s", a)
	}
	h, f = build(-1, 12*ms)
	if a := onlyAnomaly(t, AckedLoss(h, f)); a.Permitted {
		t.Fatalf("acks=all zombie: %s", a)
	}
	h, f = build(1, 25*ms)
	if a := onlyAnomaly(t, AckedLoss(h, f)); a.Permitted {
		t.Fatalf("acks=1 after b0 led again: %s", a)
	}
}

// TestContractDuplicates: a record written twice by a retrying producer
// without idempotence is linearizable under the contract and a permitted
// duplicate; with idempotence both are bugs.
func TestContractDuplicates(t *testing.T) {
	build := func(idempotent bool) (History, Final) {
		h := History{Ops: []Op{
			send(0, "p1", "m1", -1, 0, 2*ms, OK, 0),
			send(1, "p1", "m2", -1, 1*ms, 4*ms, OK, 2),
		}, Producers: []Producer{{Process: "p1", Idempotent: idempotent, MaxInFlight: 5, Retries: 10}}}
		f := final1(0, 0, Facts{}, replica(0, Leader, 0, 3, "m1", "m1", "m2"))
		return h, f
	}
	h, f := build(false)
	for _, v := range []Verdict{Linearizability(h, f, 5*time.Second), Duplicates(h, f)} {
		if a := onlyAnomaly(t, v); !a.Permitted {
			t.Fatalf("without idempotence: %s", a)
		}
	}
	h, f = build(true)
	for _, v := range []Verdict{Linearizability(h, f, 5*time.Second), Duplicates(h, f)} {
		if a := onlyAnomaly(t, v); a.Permitted {
			t.Fatalf("with idempotence: %s", a)
		}
	}
}

// TestContractOrderingOffsetReuse: m2 acknowledged at 1, lost, and m3 from
// the same producer acknowledged at 1 again: same-offset, permitted only
// when a loss fact falls between m2's send and m3's acknowledgement.
func TestContractOrderingOffsetReuse(t *testing.T) {
	h := History{Ops: []Op{
		send(0, "p1", "m1", -1, 0, 2*ms, OK, 0),
		send(1, "p1", "m2", 1, 3*ms, 6*ms, OK, 1),
		send(2, "p1", "m3", 1, 30*ms, 32*ms, OK, 1),
	}, Producers: []Producer{{Process: "p1", Idempotent: true, MaxInFlight: 5, Retries: 10}}}
	h.Ops[1].Leader = 0
	f := final1(1, 1, Facts{}, replica(1, Leader, 1, 2, "m1", "m3@1"), dead(replica(0, NoRole, 0, 2, "m1", "m2")))
	if a := onlyAnomaly(t, Ordering(h, f)); a.Kind != "same-offset" || a.Permitted {
		t.Fatalf("no fact: %s", a)
	}
	f.Facts.Failures = []Failure{{Broker: 0, Kind: Crash, Time: 10 * ms}}
	if a := onlyAnomaly(t, Ordering(h, f)); !a.Permitted || !strings.Contains(a.Description, "offset reused") {
		t.Fatalf("after the leader failed: %s", a)
	}
	// A failure after m3 was acknowledged cannot explain the reuse.
	f.Facts.Failures[0].Time = 40 * ms
	if a := onlyAnomaly(t, Ordering(h, f)); a.Permitted {
		t.Fatalf("failure after the reuse: %s", a)
	}
}

// TestContractUncleanShutdownReplicaElected (swarm kip279-safe seed 93):
// b2 loses power with m2 unflushed, comes back still in the ISR and is
// elected: permitted (KIP-966). Removed from the ISR before it came back,
// the same loss is a bug.
func TestContractUncleanShutdownReplicaElected(t *testing.T) {
	h, f := lastReplicaStanding([]int32{0, 1, 2})
	f.Facts.ISRChanges = append(f.Facts.ISRChanges, ISRChange{Topic: "t", Partition: 0, Time: 28 * ms, ISR: []int32{1, 2}, Leader: 2})
	a := onlyAnomaly(t, AckedLoss(h, f))
	if !a.Permitted || !strings.Contains(a.Description, "still in the ISR [0 1 2] and was elected leader") {
		t.Fatalf("elected after an unclean shutdown: %s", a)
	}
	f.Facts.ISRChanges[1] = ISRChange{Topic: "t", Partition: 0, Time: 22 * ms, ISR: []int32{0, 1}, Leader: 0}
	if a := onlyAnomaly(t, AckedLoss(h, f)); a.Permitted {
		t.Fatalf("removed from the ISR while down: %s", a)
	}
}

// TestDivergenceEpochReusedAfterLoss (swarm kip279-safe seed 199 under the
// scripted clients): b1 led epoch 2, lost power, and took epoch 2 again
// with a shorter log; b2 kept the old epoch-0 records where b1 wrote new
// ones. The two epoch-2 histories do not overlap in the final logs, so
// only the recorded leaderships show the reuse: permitted with them, a bug
// without the power loss.
func TestDivergenceEpochReusedAfterLoss(t *testing.T) {
	build := func(lost bool) Final {
		facts := Facts{ReplicationFactor: 3, Healed: true, ISRChanges: []ISRChange{
			{Topic: "t", Partition: 0, Time: 10 * ms, ISR: []int32{1, 2}, Leader: 1, LeaderEpoch: 2},
			{Topic: "t", Partition: 0, Time: 40 * ms, ISR: []int32{1, 2}, Leader: 1, LeaderEpoch: 2},
		}}
		if lost {
			facts.Failures = []Failure{{Broker: 1, Kind: PowerLoss, Time: 20 * ms, End: 30 * ms, LostUnflushed: true}}
		}
		return final1(1, 3, facts,
			replica(1, Leader, 3, 3, "m1@0", "n2@2", "n3@3"),
			replica(2, Follower, 3, 3, "m1@0", "m2@0", "n3@3"))
	}
	v := Divergence(build(true))
	mustResult(t, v, ResultViolation)
	for _, a := range v.Anomalies {
		if !a.Permitted || !strings.Contains(a.Description, "was given epoch 2 again") {
			t.Fatalf("reused after a power loss: %s", a)
		}
	}
	for _, a := range Divergence(build(false)).Anomalies {
		if a.Permitted {
			t.Fatalf("no loss between the two leaderships: %s", a)
		}
	}
}
