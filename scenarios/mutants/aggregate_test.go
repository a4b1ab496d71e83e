package mutants

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSeedsToDetectionWraps(t *testing.T) {
	got := SeedsToDetection([]bool{false, false, true, false})
	// From seed 1: 3 seeds (1, 2, 3); from 2: 2; from 3: 1; from 4: 4, 1, 2, 3 = 4.
	if want := []int{3, 2, 1, 4}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := SeedsToDetection([]bool{false, false}); got != nil {
		t.Errorf("nothing detected: got %v, want nil", got)
	}
	if got := SeedsToDetection([]bool{true, true}); !slices.Equal(got, []int{1, 1}) {
		t.Errorf("every seed: got %v", got)
	}
}

func TestQuantileNearestRank(t *testing.T) {
	xs := []int{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	if q := quantile(xs, 0.5); q != 5 {
		t.Errorf("median %d, want 5", q)
	}
	if q := quantile(xs, 0.9); q != 9 {
		t.Errorf("p90 %d, want 9", q)
	}
}

func TestAggregateCountsSeedsNotRuns(t *testing.T) {
	sp := &Spec{Mutants: []string{"fsync-lies", "index-off-by-one"}, Seeds: 4}
	recs := []RunRecord{
		{Mutant: Control, Scenario: "swarm", Variant: "kip279-safe", Seed: 1},
		{Mutant: "fsync-lies", Scenario: "swarm", Variant: "kip279-safe", Seed: 2, Detected: true, Checkers: []string{"acked-loss"}, Replay: "r2"},
		{Mutant: "fsync-lies", Scenario: "kraft-swarm", Variant: "kraft-safe", Seed: 2, Detected: true, Checkers: []string{"acked-loss", "invariants"}},
		{Mutant: "fsync-lies", Scenario: "swarm", Variant: "kip279-safe", Seed: 4, Detected: true, Checkers: []string{"failed"}},
		{Mutant: "fsync-lies", Scenario: "swarm", Variant: "kip279-safe", Seed: 1},
		{Mutant: "fsync-lies", Scenario: "swarm", Variant: "kip279-safe", Seed: 3},
		{Mutant: "index-off-by-one", Scenario: "swarm", Variant: "kip279-safe", Seed: 1},
	}
	rows := Aggregate(sp, recs)
	if len(rows) != 3 || rows[0].Mutant != Control {
		t.Fatalf("rows %v", rows)
	}
	f := rows[1]
	want := Row{Mutant: "fsync-lies", Runs: 5, Seeds: 4, SeedsDetected: 2, DetectionRate: 0.5, Detected: true,
		Checkers: []string{"acked-loss=2", "failed=1", "invariants=1"}, FirstSeed: 2, FirstTarget: "swarm/kip279-safe", FirstReplay: "r2",
		SeedsToDetectionMedian: 1, SeedsToDetectionP90: 2}
	got := f
	got.Layer, got.Mistake, got.Targets = "", "", nil
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("fsync-lies row (-want +got):\n%s", d)
	}
	if r := rows[2]; r.Detected || r.SeedsToDetectionMedian != -1 || r.Seeds != 1 {
		t.Errorf("undetected row %+v", r)
	}
	if c := Curve(rows, 4); !slices.Equal(c, []float64{0, 0.5, 0.5, 0.5}) {
		t.Errorf("curve %v", c)
	}
}

func TestSpecSelectsAndShards(t *testing.T) {
	if _, err := NewSpec([]string{"no-such"}, 10); err == nil {
		t.Error("an unknown mutant was accepted")
	}
	if _, err := NewSpec(nil, 0); err == nil {
		t.Error("0 seeds accepted")
	}
	sp, err := NewSpec([]string{"raft", "kafkasim.mutant.fsync-lies"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sp.Mutants, "fsync-lies") || !slices.Contains(sp.Mutants, "raft-hw-without-majority") || slices.Contains(sp.Mutants, "index-off-by-one") {
		t.Errorf("selected %v", sp.Mutants)
	}
	all := sp.Jobs(0, 1)
	if all[0].Mutant != Control {
		t.Errorf("the control does not come first: %v", all[0])
	}
	var union []string
	for i := 0; i < 3; i++ {
		for _, j := range sp.Jobs(i, 3) {
			union = append(union, j.Key())
		}
	}
	var keys []string
	for _, j := range all {
		keys = append(keys, j.Key())
	}
	slices.Sort(union)
	slices.Sort(keys)
	if !slices.Equal(union, keys) {
		t.Errorf("the shards' jobs are not the plan's: %d vs %d", len(union), len(keys))
	}
}
