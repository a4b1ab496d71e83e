package checkers

import (
	"strings"
	"testing"
)

// TestDivergenceKIP101Scenario2 is KIP-101's "Replica Divergence on Restart
// after Multiple Hard Failures" (reference §1.3): after a power loss A (b0)
// kept m2 at offset 1 under its HW 2 while B (b1), the new leader at epoch 1,
// wrote m3 there.
func TestDivergenceKIP101Scenario2(t *testing.T) {
	f := final1(1, 1, Facts{Healed: true},
		replica(0, Follower, 1, 2, "m1", "m2"),
		replica(1, Leader, 1, 2, "m1", "m3@1"))
	v := Divergence(f)
	mustResult(t, v, ResultViolation)
	var div *Anomaly
	for i := range v.Anomalies {
		if v.Anomalies[i].Kind == "divergent" {
			div = &v.Anomalies[i]
		}
	}
	if div == nil || div.Offsets[0] != 1 || div.Permitted {
		t.Fatalf("no divergent anomaly at offset 1:\n%s", v)
	}
	for _, want := range []string{"b0 has m2 (epoch 0) at 1", "b1 has m3 (epoch 1) at 1"} {
		if !strings.Contains(div.Description, want) {
			t.Errorf("description %q lacks %q", div.Description, want)
		}
	}
	// Under KIP-101 A truncates m2 and fetches m3: the logs match.
	f.Partitions[0].Replicas[0] = replica(0, Follower, 1, 2, "m1", "m3@1")
	mustResult(t, Divergence(f), ResultOK)
}

// TestDivergenceOnlyBelowBothHWs: entries above either HW may differ (an
// uncommitted suffix the follower will truncate).
func TestDivergenceOnlyBelowBothHWs(t *testing.T) {
	f := final1(1, 1, Facts{},
		replica(0, Follower, 1, 1, "m1", "m2"),
		replica(1, Leader, 1, 2, "m1", "m3@1"))
	mustResult(t, Divergence(f), ResultOK)
	// Same epochs, different values below both HWs.
	f.Partitions[0].Replicas[0].HW = 2
	mustResult(t, Divergence(f), ResultViolation)
	// A dead replica is not compared.
	f.Partitions[0].Replicas[0].Alive = false
	mustResult(t, Divergence(f), ResultOK)
}

// TestDivergenceConvergence: once healed, every live replica must hold the
// leader's log up to its LEO.
func TestDivergenceConvergence(t *testing.T) {
	f := final1(0, 0, Facts{Healed: false},
		replica(0, Leader, 0, 2, "m1", "m2", "m3"),
		replica(1, Follower, 0, 2, "m1", "m2"),
		replica(2, Follower, 0, 2, "m1", "m2", "m3"))
	v := Divergence(f)
	mustResult(t, v, ResultOK)
	f.Facts.Healed = true
	v = Divergence(f)
	a := onlyAnomaly(t, v)
	if a.Kind != "not-converged" || a.Offsets[0] != 2 || a.Replicas[1] != 1 || !strings.Contains(a.Description, "b1 has nothing at 2") {
		t.Fatalf("anomaly = %s", a)
	}
	// A follower with an extra entry past the leader's LEO has not converged either.
	f.Partitions[0].Replicas[1] = replica(1, Follower, 0, 2, "m1", "m2", "m3", "m4")
	if a := onlyAnomaly(t, Divergence(f)); a.Offsets[0] != 3 {
		t.Fatalf("anomaly = %s", a)
	}
}

// TestDivergencePermittedOnlyAfterAllReplicasDownWithLoss: two records of
// one leader epoch at one offset are permitted when every replica was down
// at once and one of them lost unflushed data (the epoch was reused), and
// break the contract when one replica stayed up or nobody lost data;
// records of different epochs (KIP-101 scenario 2) never are.
func TestDivergencePermittedOnlyAfterAllReplicasDownWithLoss(t *testing.T) {
	epochOf := "m2@1"
	div := func(facts Facts) *Anomaly {
		t.Helper()
		facts.ReplicationFactor = 2
		v := Divergence(final1(1, 1, facts,
			replica(0, Follower, 1, 2, "m1", epochOf),
			replica(1, Leader, 1, 2, "m1", "m3@1")))
		for i := range v.Anomalies {
			if v.Anomalies[i].Kind == "divergent" {
				return &v.Anomalies[i]
			}
		}
		t.Fatalf("no divergent anomaly:\n%s", v)
		return nil
	}
	both := []Failure{{Broker: 0, Kind: Crash, Time: 1000, End: 5000}, {Broker: 1, Kind: PowerLoss, Time: 2000, End: 3000, LostUnflushed: true}}
	if a := div(Facts{Failures: both}); !a.Permitted || !strings.Contains(a.Description, "were down at once") {
		t.Errorf("all replicas down, one lost data: permitted=%v %q", a.Permitted, a.Description)
	}
	apart := []Failure{{Broker: 0, Kind: Crash, Time: 1000, End: 1500}, {Broker: 1, Kind: PowerLoss, Time: 2000, End: 3000, LostUnflushed: true}}
	if a := div(Facts{Failures: apart}); a.Permitted {
		t.Errorf("replicas down at different times: permitted: %q", a.Description)
	}
	noLoss := []Failure{{Broker: 0, Kind: Crash, Time: 1000, End: 5000}, {Broker: 1, Kind: Crash, Time: 2000, End: 3000}}
	if a := div(Facts{Failures: noLoss}); a.Permitted {
		t.Errorf("nobody lost data: permitted: %q", a.Description)
	}
	epochOf = "m2" // epoch 0 against epoch 1: what KIP-101 truncation repairs
	if a := div(Facts{Failures: both}); a.Permitted {
		t.Errorf("different epochs: permitted: %q", a.Description)
	}
	// Different epochs at the first difference, but epoch 1 used twice
	// further on: the reuse that made truncation miss the first one.
	v := Divergence(final1(1, 1, Facts{Failures: both, ReplicationFactor: 2},
		replica(0, Follower, 1, 3, "m1", "m2", "x@1"),
		replica(1, Leader, 1, 3, "m1", "m3@1", "y@1")))
	if len(v.Anomalies) == 0 || !v.Anomalies[0].Permitted || !strings.Contains(v.Anomalies[0].Description, "leader epoch 1 holds different records at 2") {
		t.Errorf("epoch reused after the first difference: %s", v)
	}
}

// TestDivergenceOfflineByDesign: replicas of a partition left leaderless by
// design (Facts.Offline) cannot converge, and that is permitted; without
// the fact the same final state is a contract break.
func TestDivergenceOfflineByDesign(t *testing.T) {
	f := final1(1, 1, Facts{Healed: true},
		replica(2, Follower, 0, 1, "m1"), replica(1, Follower, 0, 0))
	v := Divergence(f)
	if v.Result != ResultViolation || !v.ContractBroken() {
		t.Fatalf("without the fact: %s, want a contract break", v)
	}
	f.Facts.Offline = []OfflinePartition{{Topic: "t", Partition: 0, Why: "permitted: KIP-966 keeps t-0 offline"}}
	v = Divergence(f)
	if v.Result != ResultViolation || v.ContractBroken() || !strings.Contains(v.String(), "KIP-966") {
		t.Fatalf("offline by design: %s, want permitted naming KIP-966", v)
	}
}
