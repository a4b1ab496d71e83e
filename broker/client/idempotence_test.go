package client

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// lossyLink drops and duplicates messages: requests and answers get lost
// (timeouts, retries) and requests arrive twice.
var lossyLink = sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: 5 * sim.Millisecond, LatencyStep: sim.Millisecond,
	DropProbability: 0.03, DuplicateProbability: 0.05}

// sweep is the outcome of one seeded run of lossyRun.
type sweep struct {
	acked, fail, unknown int
	duplicates           []string // values written more than once
	reordered            []string // values first written after a later value of the same partition
	problems             []string // broken guarantees that hold in every configuration
}

// lossyRun sends 150 records, 50 to each of 3 partitions in order, over
// link, and checks every log against the outcomes.
func lossyRun(t *testing.T, seed uint64, link sim.LinkConfig, mod func(*config.Producer)) sweep {
	t.Helper()
	s, _ := lossyRunW(t, seed, link, mod)
	return s
}

func lossyRunW(t *testing.T, seed uint64, link sim.LinkConfig, mod func(*config.Producer)) (sweep, *sim.World) {
	t.Helper()
	c := newFakeCluster(3, map[string]int{"t": 3})
	c.idempotent = true
	cfg := config.DefaultProducer()
	cfg.EnableIdempotence = false
	cfg.Retries = math.MaxInt32
	cfg.RequestTimeout = 30 * sim.Millisecond
	cfg.DeliveryTimeout = 30 * sim.Second
	cfg.RetryBackoff = 10 * sim.Millisecond
	cfg.Linger = 2 * sim.Millisecond
	mod(&cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	w, id, a := world(t, seed, link, c, cfg)
	const n = 150
	for i := 0; i < n; i++ {
		send(t, w, id, a, rec(int32(i%3), fmt.Sprintf("v%04d", i)))
		run(t, w, sim.Millisecond)
	}
	run(t, w, time60)
	var s sweep
	if len(a.results) != n {
		s.problems = append(s.problems, fmt.Sprintf("%d of %d callbacks ran", len(a.results), n))
	}
	where := map[string][]int64{}
	for p := int32(0); p < 3; p++ {
		last := -1
		for _, e := range c.logs[tp("t", p)] {
			where[e.value] = append(where[e.value], e.offset)
			var i int
			fmt.Sscanf(e.value, "v%d", &i)
			if len(where[e.value]) > 1 {
				continue
			}
			if i < last {
				s.reordered = append(s.reordered, e.value)
			}
			last = max(last, i)
		}
	}
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("v%04d", i)
		r := a.results[v]
		if len(where[v]) > 1 {
			s.duplicates = append(s.duplicates, v)
		}
		switch Classify(r.md, r.err) {
		case OutcomeOK:
			s.acked++
			if r.md.Partition != int32(i%3) || !slices.Contains(where[v], r.md.Offset) {
				s.problems = append(s.problems, fmt.Sprintf("%s acked at %d/%d, log has it at %v", v, r.md.Partition, r.md.Offset, where[v]))
			}
		case OutcomeFail:
			s.fail++
			if len(where[v]) > 0 {
				s.problems = append(s.problems, fmt.Sprintf("%s failed definitely (%v) but is in the log at %v", v, r.err, where[v]))
			}
		default:
			s.unknown++
		}
	}
	return s, w
}

const time60 = 60 * sim.Second

// TestIdempotenceNoDuplicates (KIP-98, reference §4.6): over a link that
// drops and duplicates messages, with unlimited retries and 5 requests in
// flight, the idempotent producer writes no record twice and keeps each
// partition in send order; without idempotence duplicates appear.
func TestIdempotenceNoDuplicates(t *testing.T) {
	const seeds = 20
	dupSeeds := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		on := lossyRun(t, seed, lossyLink, func(c *config.Producer) { c.EnableIdempotence = true })
		if len(on.problems) > 0 || len(on.duplicates) > 0 || len(on.reordered) > 0 {
			t.Errorf("seed %d, idempotent: duplicates %v, reordered %v, problems %v", seed, on.duplicates, on.reordered, on.problems)
		}
		if on.acked < 100 {
			t.Errorf("seed %d, idempotent: only %d acked (fail %d, unknown %d)", seed, on.acked, on.fail, on.unknown)
		}
		off := lossyRun(t, seed, lossyLink, func(c *config.Producer) {})
		if len(off.problems) > 0 {
			t.Errorf("seed %d, not idempotent: %v", seed, off.problems)
		}
		if len(off.duplicates) > 0 {
			dupSeeds++
		}
		t.Logf("seed %d: idempotent acked=%d fail=%d unknown=%d; plain acked=%d dups=%d reordered=%d",
			seed, on.acked, on.fail, on.unknown, off.acked, len(off.duplicates), len(off.reordered))
	}
	if dupSeeds == 0 {
		t.Fatalf("no duplicate in %d seeds without idempotence: the test cannot tell idempotence from luck", seeds)
	}
}

// TestOrderingWithOneInFlight: without idempotence, one request in flight
// per connection keeps each partition's first writes in send order despite
// retries; five in flight reorder in some seeds (as Kafka documents).
func TestOrderingWithOneInFlight(t *testing.T) {
	dropOnly := lossyLink
	dropOnly.DuplicateProbability = 0
	const seeds = 20
	reorderSeeds := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		one := lossyRun(t, seed, dropOnly, func(c *config.Producer) { c.MaxInFlightRequestsPerConnection = 1 })
		if len(one.problems) > 0 || len(one.reordered) > 0 {
			t.Errorf("seed %d, max.in.flight=1: reordered %v, problems %v", seed, one.reordered, one.problems)
		}
		five := lossyRun(t, seed, dropOnly, func(c *config.Producer) { c.MaxInFlightRequestsPerConnection = 5 })
		if len(five.problems) > 0 {
			t.Errorf("seed %d, max.in.flight=5: %v", seed, five.problems)
		}
		if len(five.reordered) > 0 {
			reorderSeeds++
		}
	}
	if reorderSeeds == 0 {
		t.Fatalf("no reordering in %d seeds with 5 in flight and retries", seeds)
	}
}

// TestDuplicateSequenceIsSuccess: a broker answering
// DUPLICATE_SEQUENCE_NUMBER acknowledges the batch.
func TestDuplicateSequenceIsSuccess(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	c.hook = func(int32, storage.TopicPartition, storage.RecordBatch) (int16, bool, bool) {
		return kerr.DuplicateSequenceNumber.Code, false, false
	}
	cfg := testConfig()
	cfg.EnableIdempotence = true
	w, id, a := world(t, 1, fixedLink, c, cfg)
	run(t, w, 10*sim.Millisecond)
	send(t, w, id, a, rec(0, "m"))
	run(t, w, sim.Second)
	if r := a.results["m"]; r.err != nil {
		t.Fatalf("DUPLICATE_SEQUENCE_NUMBER: %v, want success", r.err)
	}
}

// TestSequencesKeptOnRetry: a batch keeps its producer id, epoch and base
// sequence across retries; the next batch continues the sequence.
func TestSequencesKeptOnRetry(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 1})
	c.idempotent = true
	type seen struct {
		pid   int64
		epoch int16
		seq   int32
		n     int
	}
	var got []seen
	attempt := 0
	c.hook = func(_ int32, _ storage.TopicPartition, rb storage.RecordBatch) (int16, bool, bool) {
		got = append(got, seen{rb.ProducerID, rb.ProducerEpoch, rb.BaseSequence, len(rb.Records)})
		attempt++
		if attempt <= 2 {
			return 0, true, true // appended, answer lost: the retry is a duplicate
		}
		return 0, false, false
	}
	cfg := testConfig()
	cfg.EnableIdempotence = true
	w, id, a := world(t, 1, fixedLink, c, cfg)
	run(t, w, 10*sim.Millisecond)
	if pid, _ := a.p.ProducerID(); pid != 1000 {
		t.Fatalf("producer id %d, want 1000 from InitProducerId", pid)
	}
	send(t, w, id, a, rec(0, "a"), rec(0, "b"))
	run(t, w, sim.Second)
	send(t, w, id, a, rec(0, "c"))
	run(t, w, sim.Second)
	want := "[{1000 0 0 2} {1000 0 0 2} {1000 0 0 2} {1000 0 2 1}]"
	if fmt.Sprint(got) != want {
		t.Fatalf("batches seen %v, want %s", got, want)
	}
	if v := c.values(tp("t", 0)); fmt.Sprint(v) != "[a b c]" {
		t.Fatalf("log %v, want [a b c]", v)
	}
	if r := a.results["b"]; r.err != nil || r.md.Offset != 1 {
		t.Fatalf("b: %+v, want offset 1", r)
	}
}

// TestOutOfOrderGapFailsPartition: OUT_OF_ORDER_SEQUENCE_NUMBER for the
// next expected batch is a real gap: the batch fails, and so do later
// records of the partition (Kafka 2.x, no KIP-360 epoch bump).
func TestOutOfOrderGapFailsPartition(t *testing.T) {
	c := newFakeCluster(1, map[string]int{"t": 2})
	c.hook = func(_ int32, tp storage.TopicPartition, _ storage.RecordBatch) (int16, bool, bool) {
		if tp.Partition == 0 {
			return kerr.OutOfOrderSequenceNumber.Code, false, false
		}
		return 0, false, false
	}
	cfg := testConfig()
	cfg.EnableIdempotence = true
	w, id, a := world(t, 1, fixedLink, c, cfg)
	run(t, w, 10*sim.Millisecond)
	send(t, w, id, a, rec(0, "a"), rec(1, "x"))
	run(t, w, sim.Second)
	send(t, w, id, a, rec(0, "b"), rec(1, "y"))
	run(t, w, sim.Second)
	if r := a.results["a"]; !errors.Is(r.err, kerr.OutOfOrderSequenceNumber) || !Definite(r.err) {
		t.Fatalf("a: %v, want a definite OUT_OF_ORDER_SEQUENCE_NUMBER", r.err)
	}
	if r := a.results["b"]; !errors.Is(r.err, ErrPartitionFailed) || !Definite(r.err) {
		t.Fatalf("b: %v, want ErrPartitionFailed", r.err)
	}
	for _, v := range []string{"x", "y"} {
		if r := a.results[v]; r.err != nil {
			t.Fatalf("%s on the healthy partition: %v", v, r.err)
		}
	}
}

// TestDeterministic: one seed, one trace — the producer's decisions (the
// sticky partitioner's draws included) depend on nothing but the seed.
func TestDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		var hashes []uint64
		for range 2 {
			_, w := lossyRunW(t, seed, lossyLink, func(c *config.Producer) {
				c.EnableIdempotence = true
				c.Partitioner = config.PartitionerUniformSticky
			})
			hashes = append(hashes, w.Trace().Hash())
		}
		if hashes[0] != hashes[1] {
			t.Fatalf("seed %d: trace hashes %x and %x differ", seed, hashes[0], hashes[1])
		}
	}
}
