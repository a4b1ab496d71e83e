package checkers

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

func TestDuplicates(t *testing.T) {
	h := History{
		Ops: []Op{
			send(0, "p1", "m1", -1, 0, 1*ms, OK, 0),
			send(1, "p1", "m2", -1, 0, 5*ms, OK, 1),
			poll(2, "c1", 6*ms, 7*ms, 0, Record{Offset: 0, Value: "m1"}, Record{Offset: 1, Value: "m2"}),
		},
		Producers: []Producer{{Process: "p1", MaxInFlight: 5, Retries: 3}},
	}
	clean := final1(0, 0, Facts{}, replica(0, Leader, 0, 2, "m1", "m2"))
	mustResult(t, Duplicates(h, clean), ResultOK)

	// A retry wrote m2 twice.
	dup := final1(0, 0, Facts{}, replica(0, Leader, 0, 3, "m1", "m2", "m2"))
	a := onlyAnomaly(t, Duplicates(h, dup))
	if a.Kind != "duplicate" || a.Value != "m2" || len(a.Offsets) != 2 || a.Offsets[1] != 2 || !a.Permitted {
		t.Fatalf("anomaly = %s", a)
	}
	// With idempotence any duplicate breaks the contract.
	h.Producers[0].Idempotent = true
	if a := onlyAnomaly(t, Duplicates(h, dup)); a.Permitted {
		t.Fatalf("idempotent duplicate permitted: %s", a)
	}
	// A duplicate seen only by polls counts too, and an undeclared producer is strict.
	h.Producers = nil
	h.Ops = append(h.Ops, poll(3, "c2", 8*ms, 9*ms, 5, Record{Offset: 5, Value: "m1"}))
	if a := onlyAnomaly(t, Duplicates(h, clean)); a.Value != "m1" || a.Permitted || a.Offsets[1] != 5 {
		t.Fatalf("anomaly = %s", a)
	}
}

func TestOrdering(t *testing.T) {
	h := History{
		Ops: []Op{
			send(0, "p1", "m1", -1, 0, 9*ms, OK, 2), // retried, landed after m2
			send(1, "p1", "m2", -1, 1*ms, 3*ms, OK, 1),
			send(2, "p1", "m3", -1, 2*ms, 4*ms, OK, 3),
			send(3, "p2", "n1", -1, 0, 1*ms, OK, 0),
		},
		Producers: []Producer{{Process: "p1", MaxInFlight: 5, Retries: 3}, {Process: "p2", MaxInFlight: 1, Retries: 3}},
	}
	v := Ordering(h, Final{})
	a := onlyAnomaly(t, v)
	if a.Kind != "reordered" || a.Value != "m2" || !a.Permitted || a.Offsets[0] != 2 || a.Offsets[1] != 1 {
		t.Fatalf("anomaly = %s", a)
	}
	if v.ContractBroken() {
		t.Fatal("permitted reordering counted as a break")
	}
	// The evidence quotes the producer's properties by Kafka's names.
	if want := "(max.in.flight.requests.per.connection=5 retries=3 enable.idempotence=false)"; !strings.Contains(a.Description, want) {
		t.Fatalf("evidence %q does not quote %s", a.Description, want)
	}
	h.Producers[0].Acks = "1"
	if a := onlyAnomaly(t, Ordering(h, Final{})); !strings.Contains(a.Description, "(acks=1 max.in.flight.requests.per.connection=5 ") {
		t.Fatalf("evidence %q does not quote acks", a.Description)
	}
	for _, p := range []Producer{
		{Process: "p1", MaxInFlight: 1, Retries: 3},
		{Process: "p1", MaxInFlight: 5, Retries: 3, Idempotent: true},
		{Process: "p1", MaxInFlight: 5, Retries: 0},
	} {
		h.Producers[0] = p
		if a := onlyAnomaly(t, Ordering(h, Final{})); a.Permitted {
			t.Fatalf("reordering permitted for %+v: %s", p, a)
		}
	}
	// In order: nothing to report.
	h.Ops[0].Offset = 0
	mustResult(t, Ordering(h, Final{}), ResultOK)
	// Two sends acknowledged at one offset.
	h.Ops[2].Offset = 1
	if a := onlyAnomaly(t, Ordering(h, Final{})); a.Kind != "same-offset" || a.Permitted {
		t.Fatalf("anomaly = %s", a)
	}
}

// TestDuplicatesByIdentityNotValue: issue 28. Two producer sessions (kcat
// run twice) write the same values, "1" at offsets 0 and 20: two records,
// no duplicate. A value at more offsets than records sent it is one: the
// same (producer id, epoch, sequence) at two offsets breaks KIP-98, and a
// serve-mode retry (a second send of that identity, acknowledged at the
// first offset) is one record. A send that certainly failed sent nothing.
func TestDuplicatesByIdentityNotValue(t *testing.T) {
	idem := func(i int, process string, pid int64, seq int32, offset int64, outcome Outcome) Op {
		op := send(i, process, "1", -1, sim.Time(i)*ms, sim.Time(i)*ms+ms, outcome, offset)
		op.ProducerID, op.ProducerEpoch, op.Sequence = pid, 0, seq
		return op
	}
	producers := []Producer{{Process: "rdkafka/pid0", Idempotent: true, MaxInFlight: 5}, {Process: "rdkafka/pid1", Idempotent: true, MaxInFlight: 5},
		{Process: "app", MaxInFlight: 5, Retries: 3}}
	log := make([]string, 21)
	for i := range log {
		log[i] = "x" + strconv.Itoa(i)
	}
	log[0], log[20] = "1", "1"
	f := final1(0, 0, Facts{}, replica(0, Leader, 0, 21, log...))
	for _, c := range []struct {
		name   string
		ops    []Op
		broken bool // want a contract-broken duplicate (else ok)
	}{
		{"two sessions, same value", []Op{idem(0, "rdkafka/pid0", 0, 0, 0, OK), idem(1, "rdkafka/pid1", 1, 0, 20, OK)}, false},
		{"a retry of one record", []Op{idem(0, "rdkafka/pid0", 0, 0, 0, Info), idem(1, "rdkafka/pid0", 0, 0, 0, OK), idem(2, "rdkafka/pid1", 1, 0, 20, OK)}, false},
		{"one identity at two offsets", []Op{idem(0, "rdkafka/pid0", 0, 0, 0, OK), idem(1, "rdkafka/pid0", 0, 0, 20, OK)}, true},
		{"the second send failed", []Op{idem(0, "rdkafka/pid0", 0, 0, 0, OK), idem(1, "rdkafka/pid1", 1, 0, 20, Fail)}, true},
		{"two sends without idempotence", []Op{send(0, "app", "1", -1, 0, ms, OK, 0), send(1, "app", "1", -1, 2*ms, 3*ms, OK, 20)}, false},
	} {
		v := Duplicates(History{Ops: c.ops, Producers: producers}, f)
		if got := v.Result == ResultViolation && v.ContractBroken(); got != c.broken || (!c.broken && v.Result != ResultOK) {
			t.Errorf("%s: %s", c.name, v)
		}
	}
}

// TestOrderingServedRetry: a served idempotent producer's batch (sequence
// 10) times out; the next batch (20) is acknowledged at offset 100; the
// client retries 10, acknowledged at the offset its first attempt took
// (50). The retry is invoked after 20 but is the earlier record: no
// reordering (kgo under serve -faults). Records acknowledged against
// their sequence order are a contract break.
func TestOrderingServedRetry(t *testing.T) {
	idem := func(i int, seq int32, invoke sim.Time, out Outcome, offset int64) Op {
		op := send(i, "kgo/pid7", "v", -1, invoke, invoke+ms, out, offset)
		op.ProducerID, op.Sequence = 7, seq
		return op
	}
	h := History{
		Ops: []Op{
			idem(0, 10, 0, Info, 0),
			idem(1, 20, 5*ms, OK, 100),
			idem(2, 10, 6*ms, OK, 50),
			idem(3, 20, 7*ms, OK, 100), // a second retry of 20: the same record
		},
		Producers: []Producer{{Process: "kgo/pid7", Idempotent: true, MaxInFlight: 5, Retries: 3}},
	}
	mustResult(t, Ordering(h, Final{}), ResultOK)
	h.Ops[1].Offset, h.Ops[3].Offset = 40, 40 // 20 below 10
	if a := onlyAnomaly(t, Ordering(h, Final{})); a.Kind != "reordered" || a.Permitted {
		t.Fatalf("anomaly = %s", a)
	}
}

// TestDuplicatesTransactionalUnsent: a served run's transactional records
// are not sends of its history, and a transaction may write a value twice
// (an aborted write and its committed retry). A value at two offsets that
// no send wrote is a contract break in a partition without transactions,
// and left to the transactions checker (with a note) in one that holds
// them; a value a send or a known transaction wrote is still judged there.
func TestDuplicatesTransactionalUnsent(t *testing.T) {
	h := History{Ops: []Op{send(0, "p1", "m1", -1, 0, 1*ms, OK, 0)}, Producers: []Producer{{Process: "p1", Idempotent: true}}}
	f := final1(0, 0, Facts{}, replica(0, Leader, 0, 3, "m1", "x", "x"))
	if a := onlyAnomaly(t, duplicates(h, f, newContract(f), nil)); a.Value != "x" || a.Permitted {
		t.Fatalf("without transactions: %s", a)
	}
	th := &TxnHistory{Final: []TxnFinalPartition{{Topic: "t", Partition: 0, Transactional: true}}}
	v := duplicates(h, f, newContract(f), th)
	mustResult(t, v, ResultOK)
	if !strings.Contains(strings.Join(v.Notes, "\n"), "1 values at two offsets of partitions holding transactions") {
		t.Fatalf("notes %q: want the value left to the transactions checker", v.Notes)
	}
	// A scripted transaction's value is known: written twice, judged.
	th.Txns = []Txn{{Process: "tx", Writes: []TxnWrite{{Topic: "t", Partition: 0, Value: "x"}}}}
	if a := onlyAnomaly(t, duplicates(h, f, newContract(f), th)); a.Value != "x" || a.Permitted {
		t.Fatalf("a transaction's known value written twice: %s", a)
	}
	f2 := final1(0, 0, Facts{}, replica(0, Leader, 0, 2, "m1", "m1"))
	if a := onlyAnomaly(t, duplicates(h, f2, newContract(f2), th)); a.Value != "m1" || a.Permitted {
		t.Fatalf("a sent value written twice in a transactional partition: %s", a)
	}
}
