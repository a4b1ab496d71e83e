package explore

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	engine "github.com/kafkasim/kafkasim/explore"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/scenarios/workload"
	"github.com/kafkasim/kafkasim/sim"
)

// TestExploreSearchSame: a searched run, whose settle may end at
// convergence (workload/explore_settle.go), has the verdicts, history and
// final state of the same run settled for the whole settleTime, over every
// run of explorations with each fault (a cut rules the early end out; the
// partition case checks it stays so).
func TestExploreSearchSame(t *testing.T) {
	if testing.Short() {
		t.Skip("explores every run twice")
	}
	cases := []struct {
		scenario, variant string
		p                 workload.ExploreParams
	}{
		{"kip101-hw-lag", "hw", workload.ExploreParams{Depth: 5, Records: 2, Faults: []string{"crash", "power-loss", "elect", "unclean"}}},
		{"kip101-hw-lag", "kip101", workload.ExploreParams{Depth: 5, Records: 2, Faults: []string{"crash", "power-loss", "elect", "unclean"}}},
		{"kip101-hw-lag", "kip279", workload.ExploreParams{Depth: 6, Records: 2, Faults: []string{"crash", "elect"}}},
		{"kip101-hw-lag", "kip279", workload.ExploreParams{Depth: 3, Records: 1, Faults: []string{"crash", "partition"}}},
		{"kip101-power-loss", "kip101", workload.ExploreParams{Depth: 4, Records: 2, Faults: []string{"crash", "power-loss", "elect"}}},
		{"kip101-hw-lag", "kip279", workload.ExploreParams{Depth: 4, Records: 2, Acks: "1", Faults: []string{"crash", "elect"}}},
		{"kip101-hw-lag", "hw", workload.ExploreParams{Depth: 4, Records: 2, Acks: "0", Faults: []string{"crash", "power-loss", "elect"}}},
		{"kip279-fast-failover", "kip101", workload.ExploreParams{Depth: 4, Records: 2, Faults: []string{"crash", "power-loss", "elect", "unclean"}}},
	}
	for _, tc := range cases {
		s, err := scenarios.Load(tc.scenario)
		if err != nil {
			t.Fatal(err)
		}
		target, err := workload.NewExploreSearch(s, tc.variant, tc.p, nil)
		if err != nil {
			t.Fatal(err)
		}
		var runs, early atomic.Int64
		_, err = engine.Search(func(c sim.Chooser, mark func(uint64)) (string, error) {
			rec := &sim.Recorder{Inner: c}
			opts := harness.Options{Seed: exploreSeed, Chooser: rec, Budget: 10e9}
			a, err := target.Run(opts, mark)
			if err != nil {
				return "", err
			}
			opts.Chooser = &sim.Prefix{Choices: rec.Choices}
			b, err := workload.ExploreRun(s, tc.variant, tc.p, opts, nil)
			if err != nil {
				return "", err
			}
			runs.Add(1)
			if a.SimTime != b.SimTime {
				early.Add(1)
			}
			if d := diffJudged(a, b); d != "" {
				t.Errorf("%s/%s %s: run %v: %s differs with the early settle", tc.scenario, tc.variant, tc.p, rec.Choices, d)
			}
			return "", nil
		}, engine.Options{Parallel: 2, Branch: func(k sim.Kind) bool { return k != sim.KindOrder }})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s/%s %s: %d runs, %d settled early", tc.scenario, tc.variant, tc.p, runs.Load(), early.Load())
	}
}

// diffJudged names the first of what the checkers judged that differs.
func diffJudged(a, b *harness.Result) string {
	switch {
	case a.Failed != b.Failed:
		return "Failed"
	case !reflect.DeepEqual(a.History, b.History):
		return "History"
	case !reflect.DeepEqual(a.Final, b.Final):
		return fmt.Sprintf("Final (%+v vs %+v)", a.Final, b.Final)
	case len(a.Verdicts) != len(b.Verdicts):
		return "Verdicts"
	}
	for i := range a.Verdicts {
		va, vb := a.Verdicts[i], b.Verdicts[i]
		va.Porcupine, vb.Porcupine = nil, nil // not deterministic (checkers/verdict.go)
		if !reflect.DeepEqual(va, vb) {
			return "verdict " + va.Checker
		}
	}
	return ""
}
