package bench

import "testing"

// BenchmarkWorkloads runs each standard workload as a sub-benchmark, for
// profiling one with -bench 'Workloads/explore' -memprofile.
func BenchmarkWorkloads(b *testing.B) {
	for _, w := range Workloads {
		b.Run(w.Name, func(b *testing.B) {
			run := w.Run
			if w.Setup != nil {
				var err error
				if run, err = w.Setup(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
