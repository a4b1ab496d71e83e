package cluster

import (
	"runtime"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/sim"
)

// BenchmarkCluster60s is issue 4's benchmark: 3 brokers, one topic with 6
// partitions and RF=3, a driver sending 10,000 records of 100 bytes with
// acks=all over 60 simulated seconds, no faults. It reports the simulated
// to wall-clock speedup and the peak heap in use (sampled every simulated
// second). The KRaft sub-benchmark runs the same workload on a cluster
// with three dedicated controllers (issue 14), the driver starting once
// the quorum has elected a leader and the brokers are unfenced.
func BenchmarkCluster60s(b *testing.B) {
	b.Run("zookeeper", func(b *testing.B) { benchCluster60s(b, nil, 0, sim.Second) })
	b.Run("kraft", func(b *testing.B) {
		benchCluster60s(b, map[string]string{"inter.broker.protocol.version": "4.0"}, 3, 5*sim.Second)
	})
}

func benchCluster60s(b *testing.B, props map[string]string, controllers int, start sim.Duration) {
	cfg, err := config.Parse(props)
	if err != nil {
		b.Fatal(err)
	}
	var peak uint64
	var acked int
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		w, _ := sim.New(sim.Config{Seed: uint64(i + 1)})
		if _, err := Build(w, Spec{Brokers: 3, Controllers: controllers, Topics: []Topic{{Name: "t", Partitions: 6, ReplicationFactor: 3}}, Config: cfg}); err != nil {
			b.Fatal(err)
		}
		d := &Driver{Topic: "t", Partitions: 6, Records: 10000, ValueSize: 100, Acks: -1, Interval: 5 * sim.Millisecond, Timeout: 30 * sim.Second, Brokers: 3}
		dn, _ := w.AddNode("driver", func() sim.Node { return d }, sim.NodeOptions{})
		w.At(sim.Time(start), "start-driver", func(w *sim.World) { w.Inject(sim.Start{Node: dn}) })
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
		acked = 0
		for _, o := range d.Outcomes {
			if o.Acked() {
				acked++
			}
		}
		if acked != 10000 {
			b.Fatalf("only %d of 10000 records acknowledged", acked)
		}
	}
	perRun := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perRun*1000, "ms/run")
	b.ReportMetric(60/perRun, "speedup")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}
