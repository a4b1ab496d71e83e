package serve

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
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

// BenchmarkKgo measures one franz-go client against the served cluster:
// b.N records of 100 bytes produced (idempotent, acks=all, async, to t's
// three partitions), then consumed back from the start, at a pace of 1,
// 10 and 100 virtual seconds per wall second. It reports produced and
// consumed records per wall second.
func BenchmarkKgo(b *testing.B) {
	for _, speed := range []float64{1, 10, 100} {
		b.Run(speedName(speed), func(b *testing.B) {
			s, err := Start(Config{Script: ClusterScenario(), Seed: 1, Speed: speed})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { s.Command("stop"); s.Wait() }()
			<-s.Ready()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			prod, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.DefaultProduceTopic("t"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
			if err != nil {
				b.Fatal(err)
			}
			defer prod.Close()
			value := make([]byte, 100)
			// Connections, metadata and the producer id first: the
			// measure is the steady state.
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			var failed error
			var mu sync.Mutex
			for i := 0; i < b.N; i++ {
				wg.Add(1)
				prod.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
					if err != nil {
						mu.Lock()
						failed = err
						mu.Unlock()
					}
					wg.Done()
				})
			}
			wg.Wait()
			produced := time.Since(start)
			if failed != nil {
				b.Fatal(failed)
			}
			cons, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				b.Fatal(err)
			}
			defer cons.Close()
			start = time.Now()
			for n := 0; n < b.N+1; {
				fs := cons.PollFetches(ctx)
				if err := ctx.Err(); err != nil {
					b.Fatalf("consumed %d of %d: %v", n, b.N+1, err)
				}
				n += fs.NumRecords()
			}
			consumed := time.Since(start)
			b.ReportMetric(float64(b.N)/produced.Seconds(), "produced/s")
			b.ReportMetric(float64(b.N)/consumed.Seconds(), "consumed/s")
		})
	}
}
