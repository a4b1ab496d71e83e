package sweep

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
	"pgregory.net/rapid"
)

func TestSweepPointsAndShardsCoverTheSpaceOnce(t *testing.T) {
	sw := &Spec{Grid: []Axis{{"a", []string{"1", "2", "3"}}, {"b", []string{"x", "y"}}}, Seeds: 5}
	pts := sw.Points()
	if len(pts) != 6 || strings.Join(sw.Pairs(pts[1]), " ") != "a=1 b=y" || strings.Join(sw.Pairs(pts[5]), " ") != "a=3 b=y" {
		t.Fatalf("points %v: want the first axis slowest", pts)
	}
	all := sw.Jobs(0, 0)
	seen := map[Job]int{}
	for i := 0; i < 4; i++ {
		for _, j := range sw.Jobs(i, 4) {
			seen[j]++
		}
	}
	if len(all) != 30 || len(seen) != 30 {
		t.Fatalf("%d jobs, %d seen across shards: want 30", len(all), len(seen))
	}
	for j, n := range seen {
		if n != 1 {
			t.Fatalf("job %v in %d shards", j, n)
		}
	}
}

func TestParseShardRefusesBadSpecs(t *testing.T) {
	for _, bad := range []string{"3/2", "0/0", "2/2", "-1/3", "1", "a/b", "1/"} {
		if _, _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q): no error", bad)
		}
	}
	if i, n, err := ParseShard("2/3"); err != nil || i != 2 || n != 3 {
		t.Fatalf("ParseShard(2/3) = %d, %d, %v", i, n, err)
	}
}

func TestSweepValidateNamesTheBadKeyOrValue(t *testing.T) {
	s, err := scenarios.Load("acks1-leader-crash")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]Axis{
		"no.such.property":    {{"no.such.property", []string{"1"}}},
		"min.insync.replicas": {{"min.insync.replicas", []string{"banana"}}},
		"$nope":               {{"$nope", []string{"1"}}},
		"acks":                {{"acks", []string{"2"}}},
		"variant":             {{"variant", []string{"acks1", "nosuch"}}},
		"configuration":       {{"min.insync.replicas", []string{"3"}}}, // more than rf=2
	}
	for want, grid := range cases {
		sw := &Spec{Scenario: s.Name, Grid: grid, Seeds: 1}
		if err := sw.Validate(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("grid %v: error %v, want it to name %q", grid, err, want)
		}
	}
	sw := &Spec{Grid: []Axis{{"acks", []string{"1", "all"}}, {"variant", []string{"acks1", "acksall"}}}, Seeds: 1}
	if err := sw.Validate(s); err != nil {
		t.Fatal(err)
	}
	v, set := sw.runArgs(s, sw.Points()[1])
	if v != "acksall" || set["$acks"] != "1" || set["acks"] != "1" {
		t.Fatalf("runArgs: %s %v: acks must set the scripted clients' $acks too", v, set)
	}
}

// TestHistogramQuantileMatchesSorting: the histogram's quantiles are
// within a bucket (1/32 of the value) of the exact nearest-rank quantile,
// and merging equals adding everything to one histogram.
func TestHistogramQuantileMatchesSorting(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		xs := rapid.SliceOfN(rapid.Int64Range(0, 20e9), 1, 300).Draw(t, "xs")
		cut := rapid.IntRange(0, len(xs)).Draw(t, "cut")
		var a, b, all Histogram
		for i, x := range xs {
			all.Add(x)
			if i < cut {
				a.Add(x)
			} else {
				b.Add(x)
			}
		}
		m := a.Merge(b)
		if len(m) != len(all) {
			t.Fatalf("merge %v != %v", m, all)
		}
		for i := range m {
			if m[i] != all[i] {
				t.Fatalf("merge %v != %v", m, all)
			}
		}
		sorted := append([]int64{}, xs...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		for _, q := range []float64{0.5, 0.99} {
			exact := sorted[int(math.Ceil(q*float64(len(sorted))))-1]
			got := all.Quantile(q)
			if math.Abs(float64(got-exact)) > float64(exact)/32+1 {
				t.Fatalf("q%.2f = %d, exact %d", q, got, exact)
			}
		}
	})
}
