package share

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

func testCfg() PartitionConfig {
	return PartitionConfig{LockDuration: 30 * sim.Second, DeliveryCountLimit: 5, MaxRecordLocks: 200}
}

func render(as []Acquisition) string {
	s := ""
	for _, a := range as {
		s += fmt.Sprintf("%d-%d@%d ", a.FirstOffset, a.LastOffset, a.DeliveryCount)
	}
	return s
}

func states(p *Partition, from, to int64) string {
	s := ""
	for o := from; o <= to; o++ {
		st, dc, _ := p.State(o)
		s += fmt.Sprintf("%d:%s@%d ", o, st, dc)
	}
	return s
}

// TestSharePartitionKafkaVectors runs sequences of acquisitions and
// acknowledgements and checks the states after them. The cases marked
// (Kafka) are transcribed from Kafka's SharePartitionTest (the trunk
// snapshot of October 2024 this project can reach), with the assertions
// Kafka makes; the others check the rules share/partition.go states.
func TestSharePartitionKafkaVectors(t *testing.T) {
	now := sim.Time(0)
	cases := []struct {
		name string
		run  func(p *Partition) string
		want string
	}{
		{"testAcquireSingleRecord (Kafka)", func(p *Partition) string {
			return render(p.Acquire(now, "m1", []Span{{0, 0}}, 500, false)) + states(p, 0, 0)
		}, "0-0@1 0:ACQUIRED@1 "},
		{"testAcknowledgeSingleRecordBatch (Kafka)", func(p *Partition) string {
			p.Acquire(now, "m1", []Span{{0, 0}}, 500, false)
			p.Acquire(now, "m1", []Span{{1, 1}}, 500, false)
			err := p.Acknowledge(now, "m1", []AckBatch{{1, 1, []int8{1}}})
			return fmt.Sprint(err, " ", p.FirstAvailable(), " ", p.InFlight(), " ") + states(p, 0, 1)
		}, "<nil> 2 2 0:ACQUIRED@1 1:ACKNOWLEDGED@1 "},
		{"accepting the SPSO's record moves the SPSO", func(p *Partition) string {
			p.Acquire(now, "m1", []Span{{0, 0}}, 500, false)
			err := p.Acknowledge(now, "m1", []AckBatch{{0, 0, []int8{1}}})
			return fmt.Sprint(err, " ", p.StartOffset(), " ", p.InFlight())
		}, "<nil> 1 0"},
		// Transcribed from Kafka's SharePartitionTest (trunk, 2024): two
		// fetches (5-6, then one batch 10-18 with 15-17 missing), the
		// second acknowledged release x5, gap x3, accept.
		{"testAcknowledgeMultipleRecordBatchWithGapOffsets (Kafka)", func(p *Partition) string {
			a := render(p.Acquire(now, "m1", []Span{{5, 6}}, 500, false))
			b := render(p.Acquire(now, "m1", []Span{{10, 18}}, 500, false))
			err := p.Acknowledge(now, "m1", []AckBatch{{5, 6, []int8{2}}, {10, 18, []int8{2, 2, 2, 2, 2, 0, 0, 0, 1}}})
			return a + "| " + b + "| " + fmt.Sprint(err, " ", p.FirstAvailable(), " ") + states(p, 10, 18)
		}, "5-6@1 | 10-18@1 | <nil> 5 10:AVAILABLE@1 11:AVAILABLE@1 12:AVAILABLE@1 13:AVAILABLE@1 14:AVAILABLE@1 15:ARCHIVED@1 16:ARCHIVED@1 17:ARCHIVED@1 18:ACKNOWLEDGED@1 "},
		{"testMaxDeliveryCountLimitExceededForRecordsSubset (Kafka, limit 2)", func(p *Partition) string {
			p.SetConfig(PartitionConfig{LockDuration: 30 * sim.Second, DeliveryCountLimit: 2, MaxRecordLocks: 200})
			p.Acquire(now, "m1", []Span{{10, 14}}, 500, false)
			p.Acquire(now, "m1", []Span{{15, 19}}, 500, false)
			p.Acknowledge(now, "m1", []AckBatch{{10, 12, []int8{1}}, {13, 16, []int8{2}}, {17, 19, []int8{1}}})
			a := render(p.Acquire(now, "m1", []Span{{10, 14}}, 500, false)) + render(p.Acquire(now, "m1", []Span{{15, 19}}, 500, false))
			p.Acknowledge(now, "m1", []AckBatch{{13, 16, []int8{2}}})
			return a + fmt.Sprint(p.EndOffset(), " ", p.InFlight())
		}, "13-14@2 15-16@2 20 0"},
		{"another member's acknowledgement is INVALID_RECORD_STATE, nothing applies", func(p *Partition) string {
			p.Acquire(now, "m1", []Span{{0, 4}}, 500, false)
			err := p.Acknowledge(now, "m2", []AckBatch{{0, 4, []int8{1}}})
			return fmt.Sprint(err == kerr.InvalidRecordState, " ") + states(p, 0, 0)
		}, "true 0:ACQUIRED@1 "},
		{"one invalid batch fails them all", func(p *Partition) string {
			p.Acquire(now, "m1", []Span{{0, 4}}, 500, false)
			err := p.Acknowledge(now, "m1", []AckBatch{{0, 1, []int8{1}}, {5, 6, []int8{1}}})
			return fmt.Sprint(err == kerr.InvalidRecordState, " ", p.StartOffset())
		}, "true 0"},
		{"released records are acquired again, delivery count 2", func(p *Partition) string {
			p.Acquire(now, "m1", []Span{{0, 1}}, 500, false)
			p.Acknowledge(now, "m1", []AckBatch{{0, 1, []int8{2}}})
			return states(p, 0, 1) + render(p.Acquire(now, "m2", []Span{{0, 1}}, 500, false))
		}, "0:AVAILABLE@1 1:AVAILABLE@1 0-1@2 "},
		{"delivery count limit 5: released five times, archived", func(p *Partition) string {
			for range 5 {
				p.Acquire(now, "m1", []Span{{0, 1}}, 500, false)
				p.Acknowledge(now, "m1", []AckBatch{{0, 1, []int8{2}}})
			}
			return fmt.Sprint(p.StartOffset(), " ", render(p.Acquire(now, "m1", []Span{{0, 1}}, 500, false)))
		}, "2 "},
		{"an expired lock makes the record available", func(p *Partition) string {
			p.Acquire(now, "m1", []Span{{0, 0}}, 500, false)
			exp := p.Expire(now.Add(30 * sim.Second))
			return fmt.Sprint(exp, " ") + states(p, 0, 0)
		}, "[0] 0:AVAILABLE@1 "},
		{"lock expiries up to the limit archive the record", func(p *Partition) string {
			for i := range 5 {
				at := now.Add(sim.Duration(i) * 31 * sim.Second)
				p.Acquire(at, "m1", []Span{{0, 0}}, 500, false)
				p.Expire(at.Add(30 * sim.Second))
			}
			return fmt.Sprint(p.StartOffset())
		}, "1"},
		{"reject archives", func(p *Partition) string {
			p.Acquire(now, "m1", []Span{{0, 2}}, 500, false)
			p.Acknowledge(now, "m1", []AckBatch{{1, 1, []int8{3}}})
			return states(p, 0, 2)
		}, "0:ACQUIRED@1 1:ARCHIVED@1 2:ACQUIRED@1 "},
		{"renew (KIP-1222) extends the lock", func(p *Partition) string {
			p.Acquire(now, "m1", []Span{{0, 0}}, 500, false)
			p.Acknowledge(now.Add(20*sim.Second), "m1", []AckBatch{{0, 0, []int8{4}}})
			return fmt.Sprint(p.Expire(now.Add(40*sim.Second)), p.Expire(now.Add(50*sim.Second)))
		}, "[] [0]"},
		{"group.share.partition.max.record.locks caps acquisition", func(p *Partition) string {
			return render(p.Acquire(now, "m1", []Span{{0, 299}}, 500, false))
		}, "0-199@1 "},
		{"record-limit mode (KIP-1206) stops at MaxRecords, batch mode ends a batch", func(p *Partition) string {
			return render(p.Acquire(now, "m1", []Span{{0, 9}}, 3, true)) + "| " + render(p.Acquire(now, "m2", []Span{{3, 9}}, 3, false))
		}, "0-2@1 | 3-9@1 "},
		{"a closed session releases the member's records", func(p *Partition) string {
			p.Acquire(now, "m1", []Span{{0, 1}}, 500, false)
			p.Acquire(now, "m2", []Span{{2, 2}}, 500, false)
			return fmt.Sprint(p.ReleaseMember("m1"), " ") + states(p, 0, 2)
		}, "2 0:AVAILABLE@1 1:AVAILABLE@1 2:ACQUIRED@1 "},
		{"batches out of order are INVALID_REQUEST", func(p *Partition) string {
			p.Acquire(now, "m1", []Span{{0, 4}}, 500, false)
			return fmt.Sprint(p.Acknowledge(now, "m1", []AckBatch{{3, 4, []int8{1}}, {0, 1, []int8{1}}}) == kerr.InvalidRequest)
		}, "true"},
	}
	for _, c := range cases {
		p := NewPartition("g", 0, testCfg())
		if got := c.run(p); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSharePartitionRestore: state persisted as batches comes back with
// acquired records as available and the SPSO past leading done records.
func TestSharePartitionRestore(t *testing.T) {
	p := NewPartition("g", 0, testCfg())
	p.Acquire(0, "m", []Span{{0, 5}}, 500, false)
	p.Acknowledge(0, "m", []AckBatch{{0, 0, []int8{1}}, {2, 2, []int8{1}}, {3, 3, []int8{3}}})
	q := NewPartition("g", 0, testCfg())
	q.Restore(p.StartOffset(), 1, p.Batches())
	if got, want := states(q, 0, 5), "0:ACKNOWLEDGED@0 1:AVAILABLE@1 2:ACKNOWLEDGED@1 3:ARCHIVED@1 4:AVAILABLE@1 5:AVAILABLE@1 "; got != want {
		t.Fatalf("restored %q, want %q", got, want)
	}
}

// TestSharePartitionRollback: acknowledgements whose write failed are
// taken back (Kafka's rollbackOrProcessStateUpdates): the records are
// ACQUIRED by the member again and the SPSO moves back; a record acquired
// by another member since is left alone.
func TestSharePartitionRollback(t *testing.T) {
	p := NewPartition("g", 0, testCfg())
	p.Acquire(0, "m", []Span{{0, 3}}, 500, false)
	u, err := p.AcknowledgeUndo(0, "m", []AckBatch{{0, 1, []int8{1}}, {2, 2, []int8{3}}, {3, 3, []int8{2}}})
	if err != nil || p.StartOffset() != 3 {
		t.Fatalf("ack: %v spso %d", err, p.StartOffset())
	}
	p.Acquire(0, "other", []Span{{3, 3}}, 500, false)
	if n := p.Rollback(u); n != 3 || p.StartOffset() != 0 {
		t.Fatalf("rolled back %d, spso %d", n, p.StartOffset())
	}
	if got, want := states(p, 0, 3), "0:ACQUIRED@1 1:ACQUIRED@1 2:ACQUIRED@1 3:ACQUIRED@2 "; got != want {
		t.Fatalf("after rollback %q, want %q", got, want)
	}
	if _, _, m := p.State(3); m != "other" {
		t.Fatalf("offset 3 held by %q", m)
	}
}
