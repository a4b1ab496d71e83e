package sweep

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestWilsonInterval checks the Wilson score interval against values
// computed by hand: for 1 of 4, p=0.25, z²=3.8415, centre
// (0.25+0.4802)/1.9604=0.3725, half 1.96·sqrt(0.0469+0.0600)/1.9604=0.3269.
func TestWilsonInterval(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{{1, 4, 0.0456, 0.6994}, {0, 10, 0, 0.2775}, {5, 10, 0.2366, 0.7634}, {10, 10, 0.7225, 1},
		{1, 1000, 0.000177, 0.005643}, {0, 0, 0, 1}, {1, 1, 0.2065, 1}} {
		lo, hi := Wilson(c.k, c.n)
		if math.Abs(lo-c.lo) > 1e-4 || math.Abs(hi-c.hi) > 1e-4 {
			t.Errorf("Wilson(%d, %d) = [%.6f, %.6f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestBootstrapOfEqualSeedsIsThePoint(t *testing.T) {
	runs := []Ratio{{5, 100}, {5, 100}, {5, 100}, {5, 100}}
	if lo, hi := BootstrapRatio(runs, "k"); lo != 0.05 || hi != 0.05 {
		t.Fatalf("four equal seeds: [%v, %v], want [0.05, 0.05]", lo, hi)
	}
}

// TestBootstrapOfOneHeavySeedIsWide is the case of issue 12: one seed of
// four lost 426 of 1000 records, the others none. Pooled, 10.65%; Wilson
// over the 4000 records says about [9.7%, 11.6%]. Over seeds: a resample
// without the heavy seed (probability (3/4)^4 = 32%) has ratio 0, so the
// 2.5% percentile is 0; three or four copies of it (probability 5.1%, of
// which 0.4% four) reach 3·426/4000 = 0.3195, so the 97.5% percentile is
// 0.3195.
func TestBootstrapOfOneHeavySeedIsWide(t *testing.T) {
	runs := []Ratio{{0, 1000}, {426, 1000}, {0, 1000}, {0, 1000}}
	lo, hi := BootstrapRatio(runs, "swarm kip279-safe $crash=0.3")
	if lo != 0 || math.Abs(hi-0.3195) > 1e-9 {
		t.Fatalf("one heavy seed of four: [%v, %v], want [0, 0.3195]", lo, hi)
	}
	if wlo, whi := Wilson(426, 4000); whi-wlo > 0.02 || hi-lo < 0.3 {
		t.Fatalf("the record-level interval [%v, %v] should be narrow, the seed-level one [%v, %v] wide", wlo, whi, lo, hi)
	}
}

// TestBootstrapEdgeCases: no information gives [0, 1]; a resample with
// nothing acknowledged is skipped, not counted as a ratio of 0.
func TestBootstrapEdgeCases(t *testing.T) {
	for name, runs := range map[string][]Ratio{
		"no run":                   nil,
		"one run":                  {{3, 10}},
		"one run acknowledged any": {{3, 10}, {0, 0}, {0, 0}},
		"nothing acknowledged":     {{0, 0}, {0, 0}},
	} {
		if lo, hi := BootstrapRatio(runs, name); lo != 0 || hi != 1 {
			t.Errorf("%s: [%v, %v], want [0, 1]", name, lo, hi)
		}
	}
	// Resamples of only the empty run ((1/3)^3 = 3.7% > 2.5%) would put
	// the lower bound at 0 if counted as 0; skipped, every ratio is >= 1/2.
	if lo, hi := BootstrapRatio([]Ratio{{0, 0}, {1, 2}, {3, 4}}, "skip"); lo < 0.5 || hi > 0.75 {
		t.Fatalf("[%v, %v]: want within [0.5, 0.75]", lo, hi)
	}
}

// TestBootstrapIsDeterministicAndContainsThePoint: the same runs and key
// give the same interval, which lies in [0, 1] and contains the pooled
// ratio.
func TestBootstrapIsDeterministicAndContainsThePoint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 30).Draw(t, "n")
		runs := make([]Ratio, n)
		for i := range runs {
			den := rapid.IntRange(0, 500).Draw(t, "den")
			runs[i] = Ratio{rapid.IntRange(0, den).Draw(t, "num"), den}
		}
		lo, hi := BootstrapRatio(runs, "key")
		lo2, hi2 := BootstrapRatio(append([]Ratio{}, runs...), "key")
		p := PooledRatio(runs)
		if lo != lo2 || hi != hi2 {
			t.Fatalf("two bootstraps of the same runs: [%v, %v] and [%v, %v]", lo, hi, lo2, hi2)
		}
		if lo < 0 || hi > 1 || lo > p || p > hi {
			t.Fatalf("[%v, %v] with pooled ratio %v", lo, hi, p)
		}
	})
}

// TestAggregateIntervalsIgnoreRecordOrder: rows depend on the runs, not on
// the order their records come in (shards, completion order).
func TestAggregateIntervalsIgnoreRecordOrder(t *testing.T) {
	sw := &Spec{Grid: []Axis{{"$crash", []string{"0.1", "0.3"}}}, Seeds: 4}
	var recs []RunRecord
	for _, p := range sw.Points() {
		for s := 1; s <= sw.Seeds; s++ {
			lost := 0
			if s == 2 {
				lost = 426 * p.Index
			}
			recs = append(recs, RunRecord{Point: p.Index, Config: sw.Pairs(p), Seed: uint64(s), Acked: 1000, AckedLost: lost, Attempts: 1100, Unavailable: 25 * s})
		}
	}
	rows := Aggregate(sw, recs)
	shuffled := append([]RunRecord{}, recs...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if diff := cmp.Diff(rows, Aggregate(sw, shuffled)); diff != "" {
		t.Fatalf("rows differ with the records shuffled (-in order +shuffled):\n%s", diff)
	}
	r := rows[1]
	if r.PRunLoss != 0.25 || math.Abs(r.PRunLossLow-0.0456) > 1e-4 || math.Abs(r.PRunLossHigh-0.6994) > 1e-4 {
		t.Errorf("p_run_loss %v [%v, %v], want 0.25 [0.0456, 0.6994]", r.PRunLoss, r.PRunLossLow, r.PRunLossHigh)
	}
	if r.LossRate != 0.1065 || r.LossLow != 0 || r.LossHigh < 0.3 {
		t.Errorf("loss %v [%v, %v], want 0.1065 [0, >0.3]", r.LossRate, r.LossLow, r.LossHigh)
	}
	if r.Unavailability != 250.0/4400 || r.UnavailLow >= r.Unavailability || r.UnavailHigh <= r.Unavailability {
		t.Errorf("unavailability %v [%v, %v]: want a pooled rate inside a proper interval", r.Unavailability, r.UnavailLow, r.UnavailHigh)
	}
	if r0 := rows[0]; r0.PRunLoss != 0 || r0.PRunLossLow != 0 || math.Abs(r0.PRunLossHigh-0.4899) > 1e-4 || r0.LossLow != 0 || r0.LossHigh != 0 {
		t.Errorf("no loss in 4 runs: p_run_loss %v [%v, %v], loss [%v, %v]; want 0 [0, 0.4899], [0, 0]", r0.PRunLoss, r0.PRunLossLow, r0.PRunLossHigh, r0.LossLow, r0.LossHigh)
	}
}
