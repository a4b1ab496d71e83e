package serve

import (
	"testing"
	"time"
)

// BenchmarkRoundTrip measures what the socket layer adds to a request: a
// Metadata request and its answer over loopback TCP, through the inbox,
// the world and back. The brokers answer Metadata at once, and at -speed
// 1000 the virtual network's 0.1–1 ms hops take at most 2 µs of wall
// time, so what is left is the socket layer's cost (and the world's
// handling of one request).
func BenchmarkRoundTrip(b *testing.B) {
	for _, speed := range []float64{1, 1000} {
		b.Run(speedName(speed), func(b *testing.B) {
			s, err := Start(Config{Script: ClusterScenario(), Seed: 1, Speed: speed})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { s.Command("stop"); s.Wait() }()
			<-s.Ready()
			t := &testing.T{}
			c := dial(t, s.Addrs()[0])
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := c.do(metadataReq()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/roundtrip")
		})
	}
}

func speedName(s float64) string {
	switch s {
	case 1:
		return "speed=1"
	case 10:
		return "speed=10"
	case 100:
		return "speed=100"
	}
	return "speed=1000"
}
