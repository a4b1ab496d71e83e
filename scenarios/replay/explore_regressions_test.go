package replay

import (
	"testing"

	"github.com/kafkasim/kafkasim/scenarios/workload"

	"github.com/kafkasim/kafkasim/scenarios/harness"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// TestExploreStaleFetchResponseAfterRestart: explore -scenario
// kip101-hw-lag -variant kip279 -depth 12 found b1 crashing with
// "kmsg.Response is *kmsg.FetchResponse, not
// *kmsg.OffsetForLeaderEpochResponse": b1's fetch waited in b0's purgatory
// across b1's restart, and b0's answer to it was matched by correlation id
// alone to the new process's OffsetsForLeaderEpoch request. The saved choice
// list is replayed as a prefix (the fixed run goes on past the old panic and
// asks for more choices, which take their first alternative): the run must
// complete, drop the old answer, and converge.
func TestExploreStaleFetchResponseAfterRestart(t *testing.T) {
	f, err := LoadChoiceFile("../testdata/kip101-hw-lag.kip279.stale-response.choices")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load(f.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckHeader(s, f, nil); err != nil {
		t.Fatal(err)
	}
	res, err := workload.ExploreRun(s, f.Variant, *f.Explore, harness.Options{Seed: f.Seed, Chooser: &sim.Prefix{Choices: f.Choices}, KeepTrace: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != "" {
		t.Fatalf("run failed: %s", res.Failed)
	}
	stale := 0
	for _, r := range res.World.Trace().Records() {
		if r.Kind == "stale-response" {
			stale++
		}
	}
	if stale == 0 {
		t.Errorf("no stale-response dropped: the choices no longer drive the race")
	}
	for _, v := range res.Verdicts {
		if v.Checker == checkers.NameLiveness {
			continue // an exploration has no end phase: unknown by design
		}
		if v.Result != checkers.ResultOK {
			t.Errorf("%s: %v: %v", v.Checker, v.Result, v.Anomalies)
		}
	}
}
