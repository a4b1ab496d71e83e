package sweep

// This file is the sweep's latency histogram (runs.jsonl's "latency",
// results' percentiles): sparse, log-linear, mergeable across shards.

import (
	"math"
	"math/bits"
	"sort"
)

// Histogram is a sparse log-linear histogram of non-negative values
// (nanoseconds): pairs of (bucket, count) in bucket order. Values below 32
// have a bucket each; above, each power of two is cut into 32 buckets.
type Histogram [][2]int64

const subBits = 5

func bucketOf(v int64) int64 {
	if v < 1<<subBits {
		return max(v, 0)
	}
	e := int64(bits.Len64(uint64(v))) - 1
	sub := (v >> (e - subBits)) & (1<<subBits - 1)
	return (e-subBits+1)<<subBits + sub
}

// bucketMid returns the middle of a bucket's range.
func bucketMid(b int64) int64 {
	if b < 1<<subBits {
		return b
	}
	e := b>>subBits + subBits - 1
	sub := b & (1<<subBits - 1)
	lo := (1<<subBits + sub) << (e - subBits)
	return lo + (int64(1)<<(e-subBits))/2
}

// Add counts one value.
func (h *Histogram) Add(v int64) {
	b := bucketOf(v)
	i := sort.Search(len(*h), func(i int) bool { return (*h)[i][0] >= b })
	if i < len(*h) && (*h)[i][0] == b {
		(*h)[i][1]++
		return
	}
	*h = append(*h, [2]int64{})
	copy((*h)[i+1:], (*h)[i:])
	(*h)[i] = [2]int64{b, 1}
}

// Merge returns the sum of two histograms.
func (h Histogram) Merge(o Histogram) Histogram {
	out := make(Histogram, 0, len(h)+len(o))
	i, j := 0, 0
	for i < len(h) || j < len(o) {
		switch {
		case j == len(o) || (i < len(h) && h[i][0] < o[j][0]):
			out = append(out, h[i])
			i++
		case i == len(h) || o[j][0] < h[i][0]:
			out = append(out, o[j])
			j++
		default:
			out = append(out, [2]int64{h[i][0], h[i][1] + o[j][1]})
			i++
			j++
		}
	}
	return out
}

// Quantile returns the nearest-rank q-quantile (the middle of its bucket),
// or 0 for an empty histogram.
func (h Histogram) Quantile(q float64) int64 {
	var n int64
	for _, b := range h {
		n += b[1]
	}
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var seen int64
	for _, b := range h {
		seen += b[1]
		if seen >= rank {
			return bucketMid(b[0])
		}
	}
	return bucketMid(h[len(h)-1][0])
}
