package scenarios

import (
	"math"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// tinySwarm is the swarm scenario cut to a few seconds, for tests.
const tinySwarm = `
brokers 3
topic t partitions=1 rf=3
set zookeeper.session.timeout.ms=6000 replica.lag.time.max.ms=10000
variant safe truncation=kip279 min.insync.replicas=2 $acks=all
run 3s
swarm 4s clients=1 interval=50ms acks=$acks fault-every=500ms crash=0.3 power-loss=0 pause=0 partition=0 heal=0.3
heal
restart-all
run 5s
`

func TestSweepPointsAndShardsCoverTheSpaceOnce(t *testing.T) {
	sw := &Sweep{Grid: []Axis{{"a", []string{"1", "2", "3"}}, {"b", []string{"x", "y"}}}, Seeds: 5}
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
	s, err := Load("acks1-leader-crash")
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
		sw := &Sweep{Scenario: s.Name, Grid: grid, Seeds: 1}
		if err := sw.Validate(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("grid %v: error %v, want it to name %q", grid, err, want)
		}
	}
	sw := &Sweep{Grid: []Axis{{"acks", []string{"1", "all"}}, {"variant", []string{"acks1", "acksall"}}}, Seeds: 1}
	if err := sw.Validate(s); err != nil {
		t.Fatal(err)
	}
	v, set := sw.runArgs(s, sw.Points()[1])
	if v != "acksall" || set["$acks"] != "1" || set["acks"] != "1" {
		t.Fatalf("runArgs: %s %v: acks must set the scripted clients' $acks too", v, set)
	}
}

// TestSwarmRatesFollowScriptVariables: a sweep's $crash reaches the swarm
// step: no crash at rate 0, crashes at rate 1.
func TestSwarmRatesFollowScriptVariables(t *testing.T) {
	s, err := Parse("tiny.txt", "tiny", strings.NewReader(tinySwarm))
	if err != nil {
		t.Fatal(err)
	}
	crashes := func(rate string) int {
		res, err := s.Run("safe", Options{Seed: 3, Set: map[string]string{"$crash": rate, "$heal": "0"}, KeepTrace: true})
		if err != nil || res.Failed != "" {
			t.Fatal(err, res.Failed)
		}
		n := 0
		for _, r := range res.World.Trace().Records() {
			if r.Kind == "crash" {
				n++
			}
		}
		return n
	}
	if a, b := crashes("0"), crashes("1"); a != 0 || b == 0 {
		t.Fatalf("crashes at $crash=0: %d, at $crash=1: %d", a, b)
	}
	if got := ReplayCommand("tiny", "safe", 3, map[string]string{"$crash": "1"}); !strings.HasSuffix(got, "-set '$crash=1'") {
		t.Fatalf("replay command %q: the $ must be quoted for the shell", got)
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
