package harness

import (
	"strconv"
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
)

// TestRebalanceStormStickyMovesLess: rebalance-storm's claim, measured.
// Over the same seeds, the sticky assignors hand fewer partitions to a
// different member than range does, now that members send their previous
// assignment (StickyAssignorUserData, owned partitions and generation).
func TestRebalanceStormStickyMovesLess(t *testing.T) {
	s := builtinScript(t, "rebalance-storm")
	moves := map[string]int{}
	for _, v := range []string{"range", "sticky", "cooperative"} {
		for seed := uint64(1); seed <= 4; seed++ {
			res, err := Run(s, v, Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			owner := map[string]string{}
			for _, op := range res.History.Ops {
				if op.Kind != checkers.Assign {
					continue
				}
				k := op.Topic + "/" + strconv.Itoa(int(op.Partition))
				if o, ok := owner[k]; ok && o != op.Process {
					moves[v]++
				}
				owner[k] = op.Process
			}
		}
	}
	t.Logf("partitions moved to another member over 4 seeds: %v", moves)
	if moves["sticky"] >= moves["range"] || moves["cooperative"] >= moves["range"] {
		t.Errorf("moves %v: want sticky and cooperative below range", moves)
	}
}
