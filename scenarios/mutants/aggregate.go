package mutants

// This file turns a plan's run records into one row per mutant (and one
// for the control): detected or not, by which checkers, the first
// detecting seed, and seeds-to-detection.
//
// Seeds-to-detection is measured from every starting seed: for a start s
// of 1..N, how many seeds s, s+1, ... (wrapping past N to 1) a CI job
// runs before the first that detects the mutant. The N starts are the
// "repeated seed blocks" of the issue, each a block begun at another
// seed; their median and 90th percentile say how many seeds a CI run
// needs, wherever its seeds begin. A seed detects a mutant when any of
// its targets' runs at that seed does.

import (
	"fmt"
	"sort"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// Row is one mutant measured over the plan's seeds.
type Row struct {
	Mutant     string   `json:"mutant"`
	Layer      string   `json:"layer"`
	Mistake    string   `json:"mistake"`
	Equivalent string   `json:"equivalent,omitempty"`
	Targets    []string `json:"targets"`
	Runs       int      `json:"runs"`
	// Seeds counts the seeds run; SeedsDetected those at which some
	// target's run detected the mutant (for the control: broke the
	// contract).
	Seeds         int     `json:"seeds"`
	SeedsDetected int     `json:"seeds_detected"`
	DetectionRate float64 `json:"detection_rate"`
	Detected      bool    `json:"detected"`
	// Checkers are "checker=runs", the checkers that fired and in how
	// many runs, most first.
	Checkers []string `json:"checkers,omitempty"`
	// FirstSeed is the first detecting seed (0 if none), FirstTarget its
	// scenario/variant and FirstReplay the command that repeats it.
	FirstSeed   uint64 `json:"first_seed,omitempty"`
	FirstTarget string `json:"first_target,omitempty"`
	FirstReplay string `json:"first_replay,omitempty"`
	// SeedsToDetectionMedian and P90 are over the starts (file comment);
	// -1 when no seed detects the mutant.
	SeedsToDetectionMedian int `json:"seeds_to_detection_median"`
	SeedsToDetectionP90    int `json:"seeds_to_detection_p90"`
	// Shrink and Explore are the follow-ups (followup.go), when run.
	Shrink  *ShrinkResult   `json:"shrink,omitempty"`
	Explore []ExploreResult `json:"explore,omitempty"`
}

// Aggregate builds the control's row, then one row per selected mutant in
// catalogue order (equivalent mutants with no runs).
func Aggregate(sp *Spec, recs []RunRecord) []Row {
	by := map[string][]RunRecord{}
	for _, r := range recs {
		by[r.Mutant] = append(by[r.Mutant], r)
	}
	control := Row{Mutant: Control, Layer: "-", Mistake: "no mutant: Kafka as modelled"}
	for _, t := range sp.ControlTargets() {
		control.Targets = append(control.Targets, t.Scenario+"/"+t.Variant)
	}
	rows := []Row{fill(control, sp.Seeds, by[Control])}
	for _, name := range sp.Mutants {
		m, _ := mutant.ByName(name)
		row := Row{Mutant: m.Name, Layer: string(m.Layer), Mistake: m.Mistake, Equivalent: m.Equivalent}
		for _, t := range m.Targets {
			row.Targets = append(row.Targets, t.Scenario+"/"+t.Variant)
		}
		rows = append(rows, fill(row, sp.Seeds, by[name]))
	}
	return rows
}

// fill counts one mutant's records into row.
func fill(row Row, seeds int, recs []RunRecord) Row {
	row.SeedsToDetectionMedian, row.SeedsToDetectionP90 = -1, -1
	if len(recs) == 0 {
		return row
	}
	detected := make([]bool, seeds+1)
	ran := make([]bool, seeds+1)
	fired := map[string]int{}
	first := -1
	for i, r := range recs {
		row.Runs++
		if r.Seed < 1 || int(r.Seed) > seeds {
			continue
		}
		ran[r.Seed] = true
		if !r.Detected {
			continue
		}
		detected[r.Seed] = true
		for _, c := range r.Checkers {
			fired[c]++
		}
		if first < 0 || r.Seed < recs[first].Seed {
			first = i
		}
	}
	for s := 1; s <= seeds; s++ {
		if ran[s] {
			row.Seeds++
		}
		if detected[s] {
			row.SeedsDetected++
		}
	}
	if row.Seeds > 0 {
		row.DetectionRate = float64(row.SeedsDetected) / float64(row.Seeds)
	}
	row.Detected = row.SeedsDetected > 0
	names := make([]string, 0, len(fired))
	for c := range fired {
		names = append(names, c)
	}
	sort.Slice(names, func(i, j int) bool {
		if fired[names[i]] != fired[names[j]] {
			return fired[names[i]] > fired[names[j]]
		}
		return names[i] < names[j]
	})
	for _, c := range names {
		row.Checkers = append(row.Checkers, fmt.Sprintf("%s=%d", c, fired[c]))
	}
	if first >= 0 {
		f := recs[first]
		row.FirstSeed, row.FirstTarget, row.FirstReplay = f.Seed, f.Scenario+"/"+f.Variant, f.Replay
	}
	if d := SeedsToDetection(detected[1:]); len(d) > 0 {
		row.SeedsToDetectionMedian, row.SeedsToDetectionP90 = quantile(d, 0.5), quantile(d, 0.9)
	}
	return row
}

// SeedsToDetection returns, for each start s (0-based) of detected, how
// many seeds from s on, wrapping, are run up to and including the first
// detecting one; nil when none detects.
func SeedsToDetection(detected []bool) []int {
	n := len(detected)
	next := -1 // distance to the next detecting seed, computed backwards twice round
	out := make([]int, n)
	any := false
	for pass := 0; pass < 2; pass++ {
		for i := n - 1; i >= 0; i-- {
			if detected[i] {
				next, any = 0, true
			} else if next >= 0 {
				next++
			}
			if pass == 1 {
				out[i] = next + 1
			}
		}
	}
	if !any {
		return nil
	}
	return out
}

// quantile returns the q-quantile of xs by the nearest-rank method.
func quantile(xs []int, q float64) int {
	s := append([]int(nil), xs...)
	sort.Ints(s)
	k := int(q*float64(len(s))+0.999999) - 1
	return s[max(0, min(k, len(s)-1))]
}

// Curve returns, for n = 1..seeds, the fraction of the rows' measured
// mutants (control and equivalent ones apart) first detected at a seed
// <= n: the detection curve.
func Curve(rows []Row, seeds int) []float64 {
	out := make([]float64, seeds)
	total := 0
	for _, r := range rows {
		if r.Mutant == Control || r.Equivalent != "" {
			continue
		}
		total++
		if r.FirstSeed > 0 {
			for n := int(r.FirstSeed); n <= seeds; n++ {
				out[n-1]++
			}
		}
	}
	if total > 0 {
		for i := range out {
			out[i] /= float64(total)
		}
	}
	return out
}
