package serve

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKgoCompressedBatches: franz-go's producer compresses its batches
// with each codec; the brokers store them as produced (Kafka's
// compression.type=producer), so a raw Fetch answers every batch with its
// codec bits set, franz-go's consumer reads every record back, and the
// history counts each record an acknowledged send.
func TestKgoCompressedBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("real client over TCP: skipped with -short")
	}
	s := startServer(t, 20, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
	}{{"gzip", kgo.GzipCompression()}, {"snappy", kgo.SnappyCompression()}, {"lz4", kgo.Lz4Compression()}, {"zstd", kgo.ZstdCompression()}}
	const perCodec = 10
	for _, c := range codecs {
		p, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.ClientID("p-"+c.name), kgo.DefaultProduceTopic("t"),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(c.codec), kgo.ProducerLinger(0))
		if err != nil {
			t.Fatal(err)
		}
		var rs []*kgo.Record
		for i := 0; i < perCodec; i++ {
			// Repetitive values: franz-go sends a batch uncompressed when
			// compressing would not make it smaller.
			rs = append(rs, &kgo.Record{Partition: 0, Value: []byte(fmt.Sprintf("%s-%d-%s", c.name, i, strings.Repeat("abc", 40)))})
		}
		if err := p.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p.Close()
	}

	raw := dial(t, leaderOf(t, s, 0))
	resp, err := raw.do(fetchReq("t", 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	data := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches
	var seen []int16
	for rest := data; len(rest) >= 61; {
		n := int(binary.BigEndian.Uint32(rest[8:])) + 12
		var b kmsg.RecordBatch
		if err := b.ReadFrom(rest[:n]); err != nil {
			t.Fatal(err)
		}
		if c := b.Attributes & storage.CompressionCodecMask; !slices.Contains(seen, c) {
			seen = append(seen, c)
		}
		rest = rest[n:]
	}
	if !slices.Equal(seen, []int16{storage.CodecGzip, storage.CodecSnappy, storage.CodecLZ4, storage.CodecZstd}) {
		t.Fatalf("the fetched batches' codecs are %v, want gzip, snappy, lz4, zstd (1 to 4) as produced", seen)
	}

	cons, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.ClientID("reader"),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"t": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []string
	for len(got) < perCodec*len(codecs) {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read back %d of %d records: %v", len(got), perCodec*len(codecs), err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("consuming %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, strings.SplitN(string(r.Value), "-", 3)[0]) })
	}
	cons.Close()
	for _, c := range codecs {
		if n := strings.Count(strings.Join(got, " ")+" ", c.name+" "); n != perCodec {
			t.Errorf("franz-go read %d %s records back, want %d", n, c.name, perCodec)
		}
	}

	res := stopAndWait(t, s)
	if n := ackedSends(res, "p-"); n != perCodec*len(codecs) {
		t.Fatalf("the history holds %d acknowledged sends, want %d", n, perCodec*len(codecs))
	}
	for _, v := range res.Verdicts {
		if v.ContractBroken() {
			t.Errorf("%s: %v", v.Checker, v)
		}
	}
}
