package client

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/sim"
)

// owns is what a member's callbacks say it owns, sorted.
func owns(a *consumerApp) []TopicPartition {
	out := slices.Clone(a.owned)
	slices.SortFunc(out, assignor.Compare)
	return out
}

// TestConsumerCooperativeRebalance: with cooperative-sticky, a third
// member joining takes partitions from the two others without their
// revoking everything: each revokes only what moves (one partition), the
// moved partitions reach the newcomer one rebalance later, and every record
// is consumed. With the eager protocol (sticky) the same join revokes
// everything.
func TestConsumerCooperativeRebalance(t *testing.T) {
	for _, strategy := range []string{"cooperative-sticky", "sticky"} {
		w, _ := groupCluster(t, 5)
		a1 := addConsumer(t, w, "c1", "partition.assignment.strategy", strategy)
		a2 := addConsumer(t, w, "c2", "partition.assignment.strategy", strategy)
		run(t, w, 8*sim.Second)
		produceN(t, w, "p1", 60, 0)
		run(t, w, 2*sim.Second)
		before1, before2 := owns(a1), owns(a2)
		if len(before1) != 2 || len(before2) != 2 {
			t.Fatalf("%s: before: c1 %v c2 %v, want two each", strategy, before1, before2)
		}
		r1, r2 := len(a1.revokes), len(a2.revokes)
		a3 := addConsumer(t, w, "c3", "partition.assignment.strategy", strategy)
		run(t, w, 10*sim.Second)
		produceN(t, w, "p2", 60, 60)
		run(t, w, 5*sim.Second)
		checkConsumed(t, 120, a1, a2, a3)
		after := [][]TopicPartition{owns(a1), owns(a2), owns(a3)}
		all := slices.Concat(after...)
		slices.SortFunc(all, assignor.Compare)
		if len(all) != 4 || len(slices.Compact(all)) != 4 {
			t.Fatalf("%s: after: %v, want the 4 partitions owned once", strategy, after)
		}
		if len(after[2]) != 1 || len(after[0])+len(after[1]) != 3 {
			t.Errorf("%s: after: %v, want 2+1+1", strategy, after)
		}
		for i, a := range []*consumerApp{a1, a2} {
			before := [][]TopicPartition{before1, before2}[i]
			for _, tp := range after[i] {
				if !slices.Contains(before, tp) {
					t.Errorf("%s: c%d got %v it did not own: not sticky", strategy, i+1, tp)
				}
			}
			revs := a.revokes[[]int{r1, r2}[i]:]
			if strategy == "sticky" {
				if len(revs) == 0 || len(revs[0]) != 2 {
					t.Errorf("eager: c%d revoked %v, want its whole assignment first", i+1, revs)
				}
				continue
			}
			n := 0
			for _, r := range revs {
				n += len(r)
			}
			if n != len(before)-len(after[i]) {
				t.Errorf("cooperative: c%d revoked %v, want only the %d partition(s) it lost", i+1, revs, len(before)-len(after[i]))
			}
		}
		if strategy == "cooperative-sticky" && len(traceKinds(w, "consumer-joined")) < 5 {
			t.Errorf("cooperative: %d joins, want a follow-up rebalance after the revocation", len(traceKinds(w, "consumer-joined")))
		}
	}
}
