package sweep

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// BenchmarkSweepSwarm is issue 7's benchmark: a sweep of 12 swarm
// configurations (variant × $crash × $partition) with
// KAFKASIM_BENCH_SEEDS seeds each (default 2; the figure is 200,
// about 2,400 runs), on 1 and 2 workers. It reports runs per second; the
// speedup is the ratio of the two. Run with
//
//	KAFKASIM_BENCH_SEEDS=200 go test -run XXX -bench SweepSwarm -benchtime 1x -timeout 2h ./scenarios/sweep/
func BenchmarkSweepSwarm(b *testing.B) {
	seeds := 2
	if v, err := strconv.Atoi(os.Getenv("KAFKASIM_BENCH_SEEDS")); err == nil && v > 0 {
		seeds = v
	}
	sw := &Spec{Scenario: "swarm", Variant: "kip279-safe", Seeds: seeds, BudgetMs: 2000, Grid: []Axis{
		{"variant", []string{"kip279-safe", "hw-unsafe"}}, {"$crash", []string{"0.1", "0.3", "0.5"}}, {"$partition", []string{"0", "0.2"}}}}
	for _, par := range []int{1, 2} {
		b.Run(fmt.Sprintf("parallel=%d", par), func(b *testing.B) {
			runs := 0
			for i := 0; i < b.N; i++ {
				n, _, err := Run(scenarios.Swarm(), sw, Options{Parallel: par})
				if err != nil {
					b.Fatal(err)
				}
				runs += n
			}
			b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}
