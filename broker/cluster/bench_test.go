package cluster

import (
	"runtime"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// BenchmarkCluster60s is issue 4's benchmark (workload.go): it reports the
// simulated to wall-clock speedup and the peak heap in use (sampled every
// simulated second), in ZooKeeper mode and in KRaft mode (issue 14).
func BenchmarkCluster60s(b *testing.B) {
	b.Run("zookeeper", func(b *testing.B) { benchCluster60s(b, false) })
	b.Run("kraft", func(b *testing.B) { benchCluster60s(b, true) })
}

func benchCluster60s(b *testing.B, kraft bool) {
	var peak uint64
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		w, d, err := Workload60s(uint64(i+1), kraft)
		if err != nil {
			b.Fatal(err)
		}
		var ms runtime.MemStats
		for s := 0; s < 60; s++ {
			if res := w.RunFor(sim.Second); res.Reason == sim.Panicked {
				b.Fatal(res.Panic)
			}
			if i == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
		if err := CheckWorkload60s(d); err != nil {
			b.Fatal(err)
		}
	}
	perRun := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perRun*1000, "ms/run")
	b.ReportMetric(60/perRun, "speedup")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}
