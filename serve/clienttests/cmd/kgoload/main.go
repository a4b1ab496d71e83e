// Command kgoload is a steady franz-go (kgo) workload for measuring a
// long-running kafkasim serve: an idempotent acks=all producer writes
// -rate records a second of -size bytes to -topic, and a consumer group
// reads them back, for -duration. It prints what it produced and consumed
// every minute and at the end (docs/serve.md, "Memory").
//
//	go run ./cmd/kafkasim serve -tape /tmp/long.tape &
//	/usr/bin/time -v go run ./serve/clienttests/cmd/kgoload -duration 30m
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	seeds := flag.String("seeds", "127.0.0.1:9092", "comma-separated seed brokers")
	topic := flag.String("topic", "t", "topic to produce to and consume from")
	rate := flag.Int("rate", 1000, "records produced per second")
	size := flag.Int("size", 100, "bytes per record value")
	duration := flag.Duration("duration", 30*time.Minute, "how long to produce")
	flag.Parse()
	if *rate <= 0 || *size <= 0 || *duration <= 0 {
		fmt.Fprintln(os.Stderr, "kgoload: -rate, -size and -duration must be above 0")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	brokers := strings.Split(*seeds, ",")
	prod, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(*topic))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgoload:", err)
		os.Exit(1)
	}
	defer prod.Close()
	cons, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(*topic), kgo.ConsumerGroup("kgoload"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgoload:", err)
		os.Exit(1)
	}
	defer cons.Close()
	var acked, failed, consumed atomic.Int64
	go func() {
		for ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			fs.EachRecord(func(*kgo.Record) { consumed.Add(1) })
		}
	}()
	pad := strings.Repeat("x", *size)
	tick := time.NewTicker(time.Second / time.Duration(*rate))
	defer tick.Stop()
	report := time.NewTicker(time.Minute)
	defer report.Stop()
	start := time.Now()
	say := func() {
		fmt.Printf("%v: produced %d (failed %d), consumed %d\n", time.Since(start).Round(time.Second), acked.Load(), failed.Load(), consumed.Load())
	}
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			prod.Flush(context.Background())
			say()
			return
		case <-report.C:
			say()
		case <-tick.C:
		}
		v := fmt.Sprintf("%d-%s", i, pad)[:*size]
		prod.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
				return
			}
			acked.Add(1)
		})
	}
}
