package suite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

// TestSuiteKeepsOnlySummaries: a suite keeps of each run what its table,
// JSON and JUnit read (verdicts, counts, replay), not the run's world,
// history, final state or porcupine evidence, so its memory stays flat in
// the number of seeds (suite -seeds 200 used to reach 18 GB).
func TestSuiteKeepsOnlySummaries(t *testing.T) {
	s, err := scenarios.Load("acks1-leader-crash")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Run([]*scenarios.Script{s}, Options{Seeds: 2, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, r := range c.Runs {
			full, err := harness.Run(s, c.Variant, harness.Options{Seed: r.Seed})
			if err != nil {
				t.Fatal(err)
			}
			if full.History.Ops == nil || full.Final.Partitions == nil {
				t.Fatal("a full run has no history or final state: the test checks nothing")
			}
			type heavy struct {
				World   *sim.World
				History checkers.History
				Final   checkers.Final
				Changes []harness.StateChange
				Trunc   []harness.Truncation
				Porc    []*checkers.PorcupineEvidence
			}
			var porc []*checkers.PorcupineEvidence
			for _, v := range r.Verdicts {
				porc = append(porc, v.Porcupine)
			}
			if d := cmp.Diff(heavy{Porc: make([]*checkers.PorcupineEvidence, len(r.Verdicts))},
				heavy{r.World, r.History, r.Final, r.Changes, r.Truncations, porc}, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b *sim.World) bool { return a == b }),
				cmp.Comparer(func(a, b *checkers.PorcupineEvidence) bool { return a == b })); d != "" {
				t.Errorf("%s/%s seed %d keeps more than its summary (-want +got):\n%.2000s", c.Scenario, c.Variant, r.Seed, d)
			}
			// The summary is the full run's, verdicts and all.
			full.Summarize()
			if d := cmp.Diff(full, r, cmpopts.IgnoreUnexported(checkers.Verdict{}), cmp.Comparer(func(a, b *sim.World) bool { return a == b })); d != "" {
				t.Errorf("%s/%s seed %d: the summary differs from the run's (-full +suite):\n%s", c.Scenario, c.Variant, r.Seed, d)
			}
		}
	}
}
