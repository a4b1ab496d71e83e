package harness

import (
	"runtime"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/scenarios"
)

// BenchmarkSwarm is issue 5's benchmark: one swarm run (kip279-safe: 3
// brokers, 3 partitions, RF=3, 60 s of faults and load, then healing) per
// op, with every checker. Run with -cpu 1 for the one-core figure. It
// reports runs per second, the simulated-to-wall speedup and the peak heap
// of a run. The linearizability budget is the suite's (2 s): a seed whose
// history makes porcupine search long spends up to that.
func BenchmarkSwarm(b *testing.B) {
	s := scenarios.Swarm()
	var simulated float64
	var peak uint64
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := Run(s, "kip279-safe", Options{Seed: uint64(i + 1), Budget: 2 * time.Second})
		if err != nil || res.Failed != "" {
			b.Fatal(err, res.Failed)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		peak = max(peak, after.HeapInuse)
		simulated += float64(res.SimTime) / 1e9
	}
	wall := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/wall, "runs/s")
	b.ReportMetric(simulated/wall, "speedup")
	b.ReportMetric(float64(peak)/(1<<20), "heap-MB")
}
