package sweep

// This file computes the 95% intervals of a sweep's rows, over runs (seeds)
// rather than over records.
//
// Why: an acknowledged record is not an independent trial. Losses come in
// whole runs (one unclean election or one power loss drops hundreds of
// records at once, the next seed drops none), so a binomial interval over
// records (Wilson on lost/acked) is far too narrow: 4 seeds of which one
// lost 426 records read as 11.4% [10.4%, 12.5%]. The unit of replication
// is the run, so every interval here resamples or counts runs:
//
//   - p_run_loss, the fraction of runs that lost at least one acknowledged
//     record, with its 95% Wilson score interval over runs (Wilson).
//   - loss_rate and unavailability stay pooled ratios (sum of numerators
//     over sum of denominators, all runs), with a 95% percentile bootstrap
//     interval over runs (BootstrapRatio): resample the runs with
//     replacement, take each resample's pooled ratio, report the 2.5% and
//     97.5% percentiles.
//
// Determinism: the bootstrap draws from a PCG generator (math/rand/v2)
// seeded with a fixed constant and a hash of the configuration and the
// metric, reads the runs in seed order, and maps draws to indices with its
// own bounded draw (not Rand.IntN, whose algorithm is not part of Go's
// promise), so a sweep, its rerun and the merge of its shards write the
// same bytes.
//
// Edge cases (documented in docs/sweeps.md):
//   - No run, or no run with a non-zero denominator: the ratio is 0 and its
//     interval [0, 1] (nothing is known).
//   - One run with a non-zero denominator: a bootstrap can only resample
//     that run, a zero-width interval that would claim certainty; the
//     interval is [0, 1] instead. With a few seeds the percentile bootstrap
//     is still too narrow (it cannot see losses no seed had): read it as a
//     lower bound on the uncertainty.
//   - A resample whose denominators sum to 0 has no ratio: it is skipped
//     (the interval is that of the ratio given that something was
//     acknowledged or attempted), not counted as 0.
//   - A percentile interval of a ratio need not contain the pooled ratio
//     (the bootstrap distribution of a ratio of sums is skewed); it is
//     widened to contain it, so an error bar never points the wrong way.

import (
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// WilsonZ is the 97.5% standard normal quantile, for 95% intervals.
const WilsonZ = 1.959963984540054

// BootstrapResamples is the number of resamples of each bootstrap.
const BootstrapResamples = 2000

// bootstrapSeed is the first PCG seed of every bootstrap ("kafkasim"); the
// second is a hash of the configuration and the metric.
const bootstrapSeed = 0x6b61666b6173696d

// Wilson returns the 95% Wilson score interval of k successes in n trials,
// [0, 1] when n is 0.
func Wilson(k, n int) (float64, float64) {
	if n == 0 {
		return 0, 1
	}
	const z = WilsonZ
	p, fn := float64(k)/float64(n), float64(n)
	den := 1 + z*z/fn
	centre := (p + z*z/(2*fn)) / den
	half := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / den
	return math.Max(0, centre-half), math.Min(1, centre+half)
}

// Ratio is one run's numerator and denominator: records lost and
// acknowledged, or produce attempts unavailable and made.
type Ratio struct{ Num, Den int }

// PooledRatio returns sum(Num)/sum(Den), or 0 when sum(Den) is 0.
func PooledRatio(runs []Ratio) float64 {
	var num, den int
	for _, r := range runs {
		num, den = num+r.Num, den+r.Den
	}
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// BootstrapRatio returns the 95% percentile bootstrap interval of the
// pooled ratio of runs (in the order given; the caller sorts them by seed),
// drawn from a generator seeded by key. See the file comment for the edge
// cases: [0, 1] when fewer than two runs have a non-zero denominator.
func BootstrapRatio(runs []Ratio, key string) (float64, float64) {
	informative := 0
	for _, r := range runs {
		if r.Den > 0 {
			informative++
		}
	}
	if informative < 2 {
		return 0, 1
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	src := rand.NewPCG(bootstrapSeed, h.Sum64())
	n := uint64(len(runs))
	ratios := make([]float64, 0, BootstrapResamples)
	for b := 0; b < BootstrapResamples; b++ {
		var num, den int
		for range runs {
			r := runs[below(src, n)]
			num, den = num+r.Num, den+r.Den
		}
		if den == 0 {
			continue // no ratio in this resample: skipped, not counted as 0
		}
		ratios = append(ratios, float64(num)/float64(den))
	}
	if len(ratios) == 0 {
		return 0, 1
	}
	sort.Float64s(ratios)
	point := PooledRatio(runs)
	lo, hi := percentile(ratios, 0.025), percentile(ratios, 0.975)
	return math.Min(lo, point), math.Max(hi, point)
}

// below returns a uniform draw in [0, n) (Lemire's multiply-and-reject).
func below(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// percentile returns the q-quantile of sorted xs by linear interpolation
// between order statistics at q*(len-1) (R's type 7, numpy's default).
// NB: the explicit float64 conversions forbid a fused multiply-add, whose
// rounding differs by architecture.
func percentile(xs []float64, q float64) float64 {
	pos := float64(q * float64(len(xs)-1))
	i := int(pos)
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	frac := pos - float64(i)
	return xs[i] + float64(frac*float64(xs[i+1]-xs[i]))
}

// runSample is what one run contributes to its row's intervals.
type runSample struct {
	seed          uint64
	loss, unavail Ratio
}

// setIntervals fills the row's rates and intervals from its runs' samples:
// the pooled loss rate and unavailability with bootstrap intervals over
// runs, and the probability that a run loses data with its Wilson interval
// over runs. key names the configuration (it seeds the bootstraps).
func (row *Row) setIntervals(key string, samples []runSample) {
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].seed < samples[j].seed })
	loss := make([]Ratio, len(samples))
	unavail := make([]Ratio, len(samples))
	for i, s := range samples {
		loss[i], unavail[i] = s.loss, s.unavail
	}
	row.LossRate = PooledRatio(loss)
	row.LossLow, row.LossHigh = BootstrapRatio(loss, key+"\x00loss_rate")
	row.PRunLoss = 0
	if row.Runs > 0 {
		row.PRunLoss = float64(row.RunsWithLoss) / float64(row.Runs)
	}
	row.PRunLossLow, row.PRunLossHigh = Wilson(row.RunsWithLoss, row.Runs)
	row.Unavailability = PooledRatio(unavail)
	row.UnavailLow, row.UnavailHigh = BootstrapRatio(unavail, key+"\x00unavailability")
}
