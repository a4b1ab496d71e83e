package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// TestLastReplicaStandingELR is KIP-966's claim on Vanlightly's trace: the
// last ISR member loses power with unflushed data and comes back; without
// eligible leader replicas (ZooKeeper, KRaft 4.0 by default) it is
// re-elected and committed records are lost cluster-wide (permitted, naming
// the last replica standing); with eligible.leader.replicas.version=1 an
// ELR member leads and nothing acknowledged is lost.
func TestLastReplicaStandingELR(t *testing.T) {
	s, err := scenarios.Load("last-replica-standing")
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2, 3} {
		for _, v := range []string{"no-elr", "kraft-no-elr", "elr"} {
			res, err := Run(s, v, Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed != "" || len(res.Mismatches) > 0 {
				t.Fatalf("%s seed %d: failed %q, not as expected: %v", v, seed, res.Failed, res.Mismatches)
			}
			lost := res.Stats.AckedLost > 0
			if lost != (v != "elr") {
				t.Errorf("%s seed %d: %d of %d acknowledged records lost; want loss only without ELR", v, seed, res.Stats.AckedLost, res.Stats.Acked)
			}
			for _, vd := range res.Verdicts {
				if vd.Checker != "acked-loss" || !lost {
					continue
				}
				if vd.ContractBroken() || len(vd.Anomalies) == 0 || !strings.Contains(vd.Anomalies[0].Description, "last replica standing") {
					t.Errorf("%s seed %d: acked-loss %v; want a permitted loss naming the last replica standing", v, seed, vd)
				}
			}
		}
	}
}
