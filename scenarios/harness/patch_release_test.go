package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// kafka19522Script empties a partition's ISR and ELR with ELR on: the
// leader b0, alone in the ISR at min.insync.replicas=1, loses power and is
// fenced (ISR empty, ELR and LastKnownELR [0]); it comes back without a
// clean-shutdown file, so its registration takes it out of the ELR while it
// is still fenced. Only the last-known-leader election can then elect.
const kafka19522Script = `brokers 2
topic t partitions=1 rf=2 assignment=0,1
set inter.broker.protocol.version=4.0 min.insync.replicas=1 replica.lag.time.max.ms=2000 broker.session.timeout.ms=6000 eligible.leader.replicas.version=1
variant v
run 5s
produce p1 t/0 m0 acks=all
await p1 ack m0
cut b1 <-> b0
run 5s
produce p1 t/0 m1 acks=all
await p1 ack m1
power-loss b0 keep=none
heal
run 15s
restart b0
run 20s
`

// TestKAFKA19522FencedLastKnownLeader: Kafka 4.0.0 elects the last known
// leader while it is still fenced (KAFKA-19522); 4.0.1, and 4.0 alone
// (its newest patch), elect it only once the controller unfenced it.
func TestKAFKA19522FencedLastKnownLeader(t *testing.T) {
	for _, c := range []struct {
		release string
		fenced  bool
	}{{"4.0.0", true}, {"4.0.1", false}, {"4.0", false}} {
		s, err := scenarios.Parse("kafka19522.txt", "kafka19522", strings.NewReader(kafka19522Script))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(s, "v", Options{Seed: 1, KeepTrace: true, Set: map[string]string{"inter.broker.protocol.version": c.release}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != "" {
			t.Fatalf("%s: %s", c.release, res.Failed)
		}
		// After the controller sees b0's unclean shutdown (its
		// registration, b0 still fenced), the change that makes it leader:
		// on 4.0.0 that registration itself, once fixed the heartbeat that
		// unfences it (reason=unfence).
		seen, reason := false, ""
		for _, r := range res.World.Trace().Records() {
			if b, _ := r.Get("broker"); r.Kind == "broker-unclean-shutdown" && b == "0" {
				seen = true
			}
			if l, _ := r.Get("leader"); seen && reason == "" && r.Kind == "partition-change" && l == "0" {
				reason, _ = r.Get("reason")
			}
		}
		if reason == "" {
			t.Fatalf("%s: b0 never elected after its unclean shutdown (seen %v)", c.release, seen)
		}
		if got := reason != "unfence"; got != c.fenced {
			t.Errorf("%s: b0 elected by %q; want elected while fenced = %v", c.release, reason, c.fenced)
		}
	}
}

// TestKAFKA19367FenceBumpsTwice: on txn-zombie-fencing's transaction
// version 2, a new producer's InitProducerId over the paused one's ongoing
// transaction fences and aborts it; Kafka 4.0.0 writes the abort markers
// two epochs on (KAFKA-19367), 4.0.1 and 4.0 alone one, and the run's
// verdicts are the script's expectations on each.
func TestKAFKA19367FenceBumpsTwice(t *testing.T) {
	s, err := scenarios.Load("txn-zombie-fencing")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		release string
		bump    int
	}{{"4.0.0", 2}, {"4.0.1", 1}, {"4.0", 1}} {
		res, err := Run(s, "tv2", Options{Seed: 1, KeepTrace: true, Set: map[string]string{"inter.broker.protocol.version": c.release}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != "" || len(res.Mismatches) > 0 {
			t.Fatalf("%s: failed %q, not as expected: %v", c.release, res.Failed, res.Mismatches)
		}
		fences := 0
		for _, r := range res.World.Trace().Records() {
			if r.Kind != "txn-fence" {
				continue
			}
			fences++
			// txn=<id> pid=<p> epoch=<before> ... epoch=<after>: the first
			// epoch field is the transaction's, the last the fence's.
			line := r.String()
			before, after := epochField(line, false), epochField(line, true)
			if before < 0 || after-before != c.bump {
				t.Errorf("%s: %s: epoch %d -> %d, want a bump of %d", c.release, line, before, after, c.bump)
			}
		}
		if fences == 0 {
			t.Fatalf("%s: no fence-and-abort in the run", c.release)
		}
	}
}

// epochField returns the first (or, last set, the last) epoch=N of a
// trace line, -1 if none.
func epochField(line string, last bool) int {
	out := -1
	for _, w := range strings.Fields(line) {
		if n, ok := strings.CutPrefix(w, "epoch="); ok {
			v := 0
			for _, d := range n {
				if d < '0' || d > '9' {
					v = -1
					break
				}
				v = v*10 + int(d-'0')
			}
			if out < 0 || last {
				out = v
			}
		}
	}
	return out
}
