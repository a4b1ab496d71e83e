package client

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

var fixedLink = sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond}

func tp(topic string, p int32) storage.TopicPartition {
	return storage.TopicPartition{Topic: topic, Partition: p}
}

func rec(p int32, v string) Record { return Record{Topic: "t", Partition: p, Value: []byte(v)} }

// TestLingerBatchesRecords: records sent within linger.ms share one batch;
// the batch leaves when linger.ms has passed since it was created.
func TestLingerBatchesRecords(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	cfg := testConfig()
	cfg.Linger = 50 * sim.Millisecond
	w, id, a := world(t, 1, fixedLink, c, cfg)
	run(t, w, 10*sim.Millisecond)
	for i := 0; i < 10; i++ {
		send(t, w, id, a, rec(0, fmt.Sprintf("v%d", i)))
		run(t, w, sim.Millisecond)
	}
	run(t, w, 30*sim.Millisecond) // 40ms after the first record: still lingering
	if n := len(c.batches[tp("t", 0)]); n != 0 {
		t.Fatalf("%d batches sent before linger.ms passed", n)
	}
	run(t, w, sim.Second)
	if got := c.batches[tp("t", 0)]; len(got) != 1 || got[0] != 10 {
		t.Fatalf("batches %v, want one of 10 records", got)
	}
	for i := 0; i < 10; i++ {
		r := a.results[fmt.Sprintf("v%d", i)]
		if r.err != nil || r.md.Offset != int64(i) {
			t.Fatalf("v%d: %+v, want offset %d", i, r, i)
		}
	}
}

// TestBatchSizeSplitsBatches: a batch never grows past batch.size, and a
// full batch is sent without waiting for linger.ms.
func TestBatchSizeSplitsBatches(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	cfg := testConfig()
	cfg.Linger = 2 * sim.Second
	val := string(make([]byte, 100))
	size := storage.RecordBatchOverhead + 3*estimateSize(&Record{Value: []byte(val)})
	cfg.BatchSize = size + 3 // exactly three records (each value is one byte longer)
	w, id, a := world(t, 1, fixedLink, c, cfg)
	run(t, w, 10*sim.Millisecond)
	var recs []Record
	for i := 0; i < 7; i++ {
		recs = append(recs, rec(0, fmt.Sprintf("%s%d", val, i)))
	}
	send(t, w, id, a, recs...)
	run(t, w, 100*sim.Millisecond)
	if got := c.batches[tp("t", 0)]; fmt.Sprint(got) != "[3 3]" {
		t.Fatalf("batches before linger %v, want [3 3] (full batches leave at once)", got)
	}
	run(t, w, 3*sim.Second)
	if got := c.batches[tp("t", 0)]; fmt.Sprint(got) != "[3 3 1]" {
		t.Fatalf("batches %v, want [3 3 1]", got)
	}
	for v, r := range a.results {
		if r.err != nil {
			t.Fatalf("%q: %v", v, r.err)
		}
	}
	if len(a.results) != 7 {
		t.Fatalf("%d results, want 7", len(a.results))
	}
}

// TestBurstSharesABatchWithoutLinger: with linger.ms=0, records sent in
// the same handler still leave in one request, as a burst does in Kafka.
func TestBurstSharesABatchWithoutLinger(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	w, id, a := world(t, 1, fixedLink, c, testConfig())
	run(t, w, 10*sim.Millisecond)
	send(t, w, id, a, rec(0, "a"), rec(0, "b"), rec(0, "c"))
	run(t, w, sim.Second)
	if got := c.batches[tp("t", 0)]; fmt.Sprint(got) != "[3]" {
		t.Fatalf("batches %v, want [3]", got)
	}
}

// TestKeyedRecordsUseMurmur2: a keyed record's partition is
// PartitionForKey under the default partitioner.
func TestKeyedRecordsUseMurmur2(t *testing.T) {
	c := newFakeCluster(3, map[string]int{"t": 7})
	w, id, a := world(t, 1, fixedLink, c, testConfig())
	run(t, w, 10*sim.Millisecond)
	for i := 0; i < 40; i++ {
		k := fmt.Sprintf("key-%d", i)
		send(t, w, id, a, Record{Topic: "t", Partition: AnyPartition, Key: []byte(k), Value: []byte(k)})
	}
	run(t, w, sim.Second)
	for i := 0; i < 40; i++ {
		k := fmt.Sprintf("key-%d", i)
		r := a.results[k]
		if r.err != nil || int(r.md.Partition) != PartitionForKey([]byte(k), 7) {
			t.Fatalf("%s: %+v, want partition %d", k, r, PartitionForKey([]byte(k), 7))
		}
	}
}

// TestStickyPartitioner (KIP-480): keyless records stick to one partition
// until its batch is sent, then move to another one, never the same; over
// many batches every partition is used about equally.
func TestStickyPartitioner(t *testing.T) {
	for _, kind := range []config.Partitioner{config.PartitionerDefault, config.PartitionerUniformSticky} {
		t.Run(string(kind), func(t *testing.T) {
			c := newFakeCluster(3, map[string]int{"t": 3})
			cfg := testConfig()
			cfg.Partitioner = kind
			cfg.Linger = 5 * sim.Millisecond
			w, id, a := world(t, 7, fixedLink, c, cfg)
			run(t, w, 10*sim.Millisecond)
			counts := map[int32]int{}
			prev := int32(-1)
			const bursts = 300
			for i := 0; i < bursts; i++ {
				var recs []Record
				for j := 0; j < 4; j++ {
					// UniformSticky ignores keys; give them one to show it.
					recs = append(recs, Record{Topic: "t", Partition: AnyPartition, Key: keyFor(kind, i), Value: []byte(fmt.Sprintf("v%d-%d", i, j))})
				}
				send(t, w, id, a, recs...)
				run(t, w, 20*sim.Millisecond)
				part := a.results[fmt.Sprintf("v%d-0", i)].md.Partition
				for j := 1; j < 4; j++ {
					if r := a.results[fmt.Sprintf("v%d-%d", i, j)]; r.err != nil || r.md.Partition != part {
						t.Fatalf("burst %d: record %d went to %+v, record 0 to %d: not sticky", i, j, r, part)
					}
				}
				if part == prev {
					t.Fatalf("burst %d: stayed on partition %d after its batch was sent", i, part)
				}
				prev = part
				counts[part]++
			}
			for p := int32(0); p < 3; p++ {
				if counts[p] < bursts/3-40 || counts[p] > bursts/3+40 {
					t.Fatalf("partition use %v: not uniform", counts)
				}
			}
		})
	}
}

func keyFor(kind config.Partitioner, i int) []byte {
	if kind == config.PartitionerUniformSticky {
		return []byte(fmt.Sprint("k", i))
	}
	return nil
}

// TestRoundRobinPartitioner: every record goes to the next partition.
func TestRoundRobinPartitioner(t *testing.T) {
	c := newFakeCluster(3, map[string]int{"t": 3})
	cfg := testConfig()
	cfg.Partitioner = config.PartitionerRoundRobin
	cfg.Linger = 10 * sim.Millisecond
	w, id, a := world(t, 1, fixedLink, c, cfg)
	run(t, w, 10*sim.Millisecond)
	for i := 0; i < 9; i++ {
		send(t, w, id, a, Record{Topic: "t", Partition: AnyPartition, Key: []byte("same"), Value: []byte(fmt.Sprint(i))})
	}
	run(t, w, sim.Second)
	for i := 0; i < 9; i++ {
		if r := a.results[fmt.Sprint(i)]; r.err != nil || r.md.Partition != int32(i%3) {
			t.Fatalf("record %d: %+v, want partition %d", i, r, i%3)
		}
	}
}

// TestNotLeaderRetriesAfterMetadataRefresh: after a leader change the old
// leader answers NOT_LEADER_OR_FOLLOWER; the producer refreshes metadata
// and retries on the new leader.
func TestNotLeaderRetriesAfterMetadataRefresh(t *testing.T) {
	c := newFakeCluster(2, map[string]int{"t": 1})
	w, id, a := world(t, 1, fixedLink, c, testConfig())
	run(t, w, 10*sim.Millisecond)
	send(t, w, id, a, rec(0, "m1"))
	run(t, w, 100*sim.Millisecond)
	c.leaders[tp("t", 0)], c.epochs[tp("t", 0)] = 1, 1 // b0 -> b1
	send(t, w, id, a, rec(0, "m2"))
	run(t, w, sim.Second)
	for _, v := range []string{"m1", "m2"} {
		if r := a.results[v]; r.err != nil {
			t.Fatalf("%s: %v", v, r.err)
		}
	}
	if got := c.values(tp("t", 0)); fmt.Sprint(got) != "[m1 m2]" {
		t.Fatalf("log %v, want [m1 m2]", got)
	}
	retries := traceKinds(w, "produce-retry")
	if len(retries) != 1 {
		t.Fatalf("retries %q, want one NOT_LEADER retry", retries)
	}
	if len(traceKinds(w, "producer-metadata")) < 2 {
		t.Fatal("metadata was not refreshed after NOT_LEADER_OR_FOLLOWER")
	}
}

// TestTimeoutIsUnknown: a request never answered fails after
// request.timeout.ms; with retries=0 the record's outcome is unknown.
func TestTimeoutIsUnknown(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	c.hook = func(int32, storage.TopicPartition, storage.RecordBatch) (int16, bool, bool) { return 0, false, true }
	cfg := testConfig()
	cfg.Retries = 0
	w, id, a := world(t, 1, fixedLink, c, cfg)
	run(t, w, 10*sim.Millisecond)
	send(t, w, id, a, rec(0, "m"))
	run(t, w, 150*sim.Millisecond)
	if _, done := a.results["m"]; done {
		t.Fatal("completed before request.timeout.ms")
	}
	run(t, w, sim.Second)
	r := a.results["m"]
	if !errors.Is(r.err, ErrRequestTimeout) || Definite(r.err) || Classify(r.md, r.err) != OutcomeUnknown {
		t.Fatalf("result %+v, want an unknown request timeout", r)
	}
}

// TestDeliveryTimeoutBoundsRetries: retrying a dropped request stops at
// delivery.timeout.ms, with an unknown outcome.
func TestDeliveryTimeoutBoundsRetries(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	c.hook = func(int32, storage.TopicPartition, storage.RecordBatch) (int16, bool, bool) { return 0, false, true }
	cfg := testConfig()
	w, id, a := world(t, 1, fixedLink, c, cfg)
	run(t, w, 10*sim.Millisecond)
	start := w.Now()
	var done sim.Time
	must(t, w.Act(id, func(ctx *sim.Context) {
		must(t, a.p.Send(ctx, rec(0, "m"), func(ctx *sim.Context, md RecordMetadata, err error) {
			done = ctx.Now()
			a.results["m"] = result{md, err}
		}))
	}))
	run(t, w, 10*sim.Second)
	r := a.results["m"]
	if !errors.Is(r.err, ErrDeliveryTimeout) || Definite(r.err) {
		t.Fatalf("result %+v, want an unknown delivery timeout", r)
	}
	if d := done.Sub(start); d < cfg.DeliveryTimeout || d > cfg.DeliveryTimeout+cfg.RequestTimeout {
		t.Fatalf("failed after %v, want about delivery.timeout.ms = %v", d, cfg.DeliveryTimeout)
	}
	if se := new(SendError); !errors.As(r.err, &se) || se.Attempts < 10 {
		t.Fatalf("%v: want many attempts", r.err)
	}
}

// TestDefiniteRefusals: errors returned before append keep the outcome
// definite across retries; one unknown attempt makes it unknown for good.
func TestDefiniteRefusals(t *testing.T) {
	cases := []struct {
		name     string
		acks     config.Acks
		answers  []int16 // per attempt; -1 drops the request
		definite bool
		want     error
	}{
		{"not-enough-replicas", config.AcksAll, []int16{19, 19, 19}, true, kerr.NotEnoughReplicas},
		{"invalid-required-acks", config.AcksAll, []int16{21}, true, kerr.InvalidRequiredAcks},
		{"timeout-then-refused", config.AcksAll, []int16{-1, 19, 19}, false, kerr.NotEnoughReplicas},
		{"after-append", config.AcksAll, []int16{20, 20, 20}, false, kerr.NotEnoughReplicasAfterAppend},
		{"broker-timeout", config.AcksAll, []int16{7, 7, 7}, false, kerr.RequestTimedOut},
		{"not-leader-acks-all", config.AcksAll, []int16{6, 6, 6}, false, kerr.NotLeaderForPartition},
		{"not-leader-acks-1", config.AcksLeader, []int16{6, 6, 6}, true, kerr.NotLeaderForPartition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeCluster(1, map[string]int{"t": 1})
			attempt := 0
			c.hook = func(_ int32, _ storage.TopicPartition, _ storage.RecordBatch) (int16, bool, bool) {
				code := tc.answers[min(attempt, len(tc.answers)-1)]
				attempt++
				switch code {
				case -1:
					return 0, false, true
				case 20, 7:
					return code, true, false // appended, then the error
				case 6:
					return code, false, false
				}
				return code, false, false
			}
			cfg := testConfig()
			cfg.Acks = tc.acks
			cfg.Retries = len(tc.answers) - 1
			w, id, a := world(t, 1, fixedLink, c, cfg)
			run(t, w, 10*sim.Millisecond)
			send(t, w, id, a, rec(0, "m"))
			run(t, w, 3*sim.Second)
			r := a.results["m"]
			if !errors.Is(r.err, tc.want) || Definite(r.err) != tc.definite {
				t.Fatalf("result %v (definite %v), want %v with definite=%v", r.err, Definite(r.err), tc.want, tc.definite)
			}
			if attempt != len(tc.answers) {
				t.Fatalf("%d attempts, want %d", attempt, len(tc.answers))
			}
			if tc.definite && len(c.logs[tp("t", 0)]) != 0 {
				t.Fatal("a definite failure was written")
			}
		})
	}
}

// TestAcksZero: acks=0 completes each record when sent, offset -1, outcome
// unknown; nothing is awaited.
func TestAcksZero(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	cfg := testConfig()
	cfg.Acks = config.AcksNone
	w, id, a := world(t, 1, fixedLink, c, cfg)
	run(t, w, 10*sim.Millisecond)
	send(t, w, id, a, rec(0, "a"), rec(0, "b"))
	run(t, w, sim.Second)
	for _, v := range []string{"a", "b"} {
		r := a.results[v]
		if r.err != nil || r.md.Offset != -1 || Classify(r.md, r.err) != OutcomeUnknown {
			t.Fatalf("%s: %+v, want success with offset -1 (unknown)", v, r)
		}
	}
	if got := c.values(tp("t", 0)); fmt.Sprint(got) != "[a b]" {
		t.Fatalf("log %v", got)
	}
}

// TestUnknownTopicFailsAfterMaxBlock: a record whose topic never appears
// in metadata fails after max.block.ms, definitely not written.
func TestUnknownTopicFailsAfterMaxBlock(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	w, id, a := world(t, 1, fixedLink, c, testConfig())
	run(t, w, 10*sim.Millisecond)
	send(t, w, id, a, Record{Topic: "nope", Partition: AnyPartition, Value: []byte("m")})
	run(t, w, 59*sim.Second)
	if _, done := a.results["m"]; done {
		t.Fatal("failed before max.block.ms")
	}
	run(t, w, 2*sim.Second)
	r := a.results["m"]
	if !errors.Is(r.err, ErrDeliveryTimeout) || !Definite(r.err) || Classify(r.md, r.err) != OutcomeFail {
		t.Fatalf("result %+v, want a definite failure", r)
	}
}

// TestSendSyncAndClose: SendSync sends one record at a time in order;
// Close waits for the last and then refuses new records.
func TestSendSyncAndClose(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	cfg := testConfig()
	cfg.Linger = 100 * sim.Millisecond // ignored: each record is alone, and Close flushes
	w, id, a := world(t, 1, fixedLink, c, cfg)
	run(t, w, 10*sim.Millisecond)
	var got []int64
	must(t, w.Act(id, func(ctx *sim.Context) {
		recs := []Record{rec(0, "a"), rec(0, "b"), rec(0, "c")}
		must(t, a.p.SendSync(ctx, recs, func(ctx *sim.Context, i int, md RecordMetadata, err error) bool {
			if err != nil {
				t.Errorf("record %d: %v", i, err)
			}
			got = append(got, md.Offset)
			if i == 2 {
				a.p.Close(ctx)
			}
			return true
		}))
	}))
	run(t, w, 2*sim.Second)
	if fmt.Sprint(got) != "[0 1 2]" || fmt.Sprint(c.batches[tp("t", 0)]) != "[1 1 1]" {
		t.Fatalf("offsets %v, batches %v; want [0 1 2] in three requests", got, c.batches[tp("t", 0)])
	}
	if !a.p.Closed() || a.p.Pending() != 0 {
		t.Fatal("producer not closed")
	}
	must(t, w.Act(id, func(ctx *sim.Context) {
		if err := a.p.Send(ctx, rec(0, "late"), nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("Send after Close: %v, want ErrClosed", err)
		}
	}))
}

// TestMetadataMaxAge: metadata is refreshed every metadata.max.age.ms
// even when nothing goes wrong.
func TestMetadataMaxAge(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	w, id, a := world(t, 1, fixedLink, c, testConfig())
	run(t, w, 10*sim.Millisecond)
	send(t, w, id, a, rec(0, "m"))
	run(t, w, 10*sim.Minute+sim.Second)
	if n := len(traceKinds(w, "producer-metadata")); n != 3 {
		t.Fatalf("%d metadata answers in 10 minutes, want 3 (first use, then every 5 minutes)", n)
	}
}
