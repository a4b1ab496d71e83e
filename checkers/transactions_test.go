package checkers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// txnClean: T0 writes a1 (t-0) and b1 (t-1) and commits; T1 writes a2 and
// aborts; T2 consumes a1 and writes its output o1 to u-0 and commits. A
// read_committed consumer reads t-0 and t-1 after the commits.
func txnClean() TxnHistory {
	return TxnHistory{
		Txns: []Txn{
			{Process: "p1", TransactionalID: "tx", Begin: 1 * ms, EndInvoke: 5 * ms, End: 6 * ms, Outcome: TxnCommitted,
				Writes: []TxnWrite{{Topic: "t", Partition: 0, Value: "a1"}, {Topic: "t", Partition: 1, Value: "b1"}}},
			{Process: "p1", TransactionalID: "tx", Begin: 7 * ms, EndInvoke: 9 * ms, End: 10 * ms, Outcome: TxnAborted,
				Writes: []TxnWrite{{Topic: "t", Partition: 0, Value: "a2"}}},
			{Process: "c1", TransactionalID: "ctp", Begin: 11 * ms, EndInvoke: 13 * ms, End: 14 * ms, Outcome: TxnCommitted, Inputs: []string{"a1"},
				Writes: []TxnWrite{{Topic: "u", Partition: 0, Value: "o1", Input: "a1"}}},
		},
		Reads: []TxnRead{
			{Process: "r", Topic: "t", Partition: 0, ReadCommitted: true, FetchOffset: 0, Next: 4, Records: []Record{{Offset: 0, Value: "a1"}}, Invoke: 20 * ms, Complete: 21 * ms},
			{Process: "r", Topic: "t", Partition: 1, ReadCommitted: true, FetchOffset: 0, Next: 2, Records: []Record{{Offset: 0, Value: "b1"}}, Invoke: 20 * ms, Complete: 21 * ms},
		},
		Final: []TxnFinalPartition{
			// offsets 1 and 3 are the COMMIT and ABORT markers
			{Topic: "t", Partition: 0, Records: []TxnFinalRecord{{0, "a1", TxnCommitted}, {2, "a2", TxnAborted}}},
			{Topic: "t", Partition: 1, Records: []TxnFinalRecord{{0, "b1", TxnCommitted}}},
			{Topic: "u", Partition: 0, Records: []TxnFinalRecord{{0, "o1", TxnCommitted}}},
		},
	}
}

func onlyKind(t *testing.T, v Verdict, kind string, permitted bool) Anomaly {
	t.Helper()
	if v.Result != ResultViolation || len(v.Anomalies) != 1 {
		t.Fatalf("verdict %s with %d anomalies, want one %s:\n%v", v.Result, len(v.Anomalies), kind, v.Anomalies)
	}
	a := v.Anomalies[0]
	if a.Kind != kind || a.Permitted != permitted {
		t.Fatalf("anomaly %s, want %s permitted=%v", a, kind, permitted)
	}
	return a
}

func TestTransactionsClean(t *testing.T) {
	v := CheckTransactions(txnClean(), Final{})
	if v.Result != ResultOK {
		t.Fatalf("clean history: %s %v", v.Result, v.Anomalies)
	}
	if v := CheckTransactions(TxnHistory{}, Final{}); !v.NotJudged {
		t.Fatalf("no transactions: %s, want not judged", v.Mark())
	}
	// Issue 28: read_committed consumers with no transactional producer are
	// nothing to judge (not judged, so the run exits 0, not 3); a
	// transaction whose partitions no final log shows is still undecided.
	h := txnClean()
	h.Txns = nil
	if v := CheckTransactions(h, Final{}); !v.NotJudged || v.Undecided() || !strings.Contains(v.Notes[0], "no transaction in the run") {
		t.Fatalf("read_committed reads without transactions: %s %v, want not judged", v.Mark(), v.Notes)
	}
	h = txnClean()
	h.Final = nil
	if v := CheckTransactions(h, Final{}); !v.Undecided() {
		t.Fatalf("transactions with no final log: %s, want unknown", v.Mark())
	}
}

func TestTransactionsLostCommittedWrite(t *testing.T) {
	h := txnClean()
	h.Final[1].Records = nil // b1 gone
	a := onlyKind(t, CheckTransactions(h, Final{}), KindLostCommittedWrite, false)
	if a.Value != "b1" || !strings.Contains(a.Description, "T0") {
		t.Fatalf("anomaly %s", a)
	}
	// Under an ABORT marker: Jepsen's Bufstream finding (a delayed abort
	// of one transaction ending the next).
	h = txnClean()
	h.Final[1].Records[0].Status = TxnAborted
	a = onlyKind(t, CheckTransactions(h, Final{}), KindLostCommittedWrite, false)
	if a.Offsets[0] != 0 || !strings.Contains(a.Description, "aborted in the final log") {
		t.Fatalf("anomaly %s", a)
	}
	// An unclean election of t-1 permits the loss.
	h.Final[1].Records = nil
	f := Final{Facts: Facts{UncleanElectionEnabled: true, UncleanElections: []UncleanElection{{Topic: "t", Partition: 1, Broker: 1, Epoch: 1, Time: 30 * ms}}}}
	onlyKind(t, CheckTransactions(h, f), KindLostCommittedWrite, true)
}

func TestTransactionsAbortedRead(t *testing.T) {
	h := txnClean()
	h.Reads[0].Records = append(h.Reads[0].Records, Record{Offset: 2, Value: "a2"})
	a := onlyKind(t, CheckTransactions(h, Final{}), KindG1a, false)
	if a.Value != "a2" || !strings.Contains(a.Description, "T1") {
		t.Fatalf("anomaly %s", a)
	}
	// read_uncommitted may read it.
	h.Reads[0].ReadCommitted = false
	h.Reads = h.Reads[:1]
	if v := CheckTransactions(h, Final{}); v.Result != ResultOK {
		t.Fatalf("read_uncommitted judged: %v", v.Anomalies)
	}
}

func TestTransactionsIntermediateRead(t *testing.T) {
	h := txnClean()
	h.Reads[0].Complete, h.Reads[1].Complete = 3*ms, 22*ms // a1 read before T0 asked to commit
	a := onlyKind(t, CheckTransactions(h, Final{}), KindG1b, false)
	if a.Value != "a1" {
		t.Fatalf("anomaly %s", a)
	}
}

func TestTransactionsTorn(t *testing.T) {
	h := txnClean()
	h.Reads[1].Records = nil // read t-1 past b1 without delivering it
	a := onlyKind(t, CheckTransactions(h, Final{}), KindTornTransaction, false)
	if a.Value != "b1" || a.Topic != "t" || a.Partition != 1 {
		t.Fatalf("anomaly %s", a)
	}
	// Not having read that far is not torn.
	h.Reads[1].Next = 0
	if v := CheckTransactions(h, Final{}); v.Result != ResultOK {
		t.Fatalf("unread partition judged torn: %v", v.Anomalies)
	}
}

func TestTransactionsDuplicateOutput(t *testing.T) {
	h := txnClean()
	h.Txns = append(h.Txns, Txn{Process: "c2", TransactionalID: "ctp", Begin: 15 * ms, EndInvoke: 16 * ms, End: 17 * ms, Outcome: TxnCommitted,
		Inputs: []string{"a1"}, Writes: []TxnWrite{{Topic: "u", Partition: 0, Value: "o1'", Input: "a1"}}})
	h.Final[2].Records = append(h.Final[2].Records, TxnFinalRecord{2, "o1'", TxnCommitted})
	a := onlyKind(t, CheckTransactions(h, Final{}), KindDuplicateOutput, false)
	if a.Value != "a1" || len(a.Offsets) != 2 {
		t.Fatalf("anomaly %s", a)
	}
}

func TestTransactionsCycles(t *testing.T) {
	// G0: T0 before T1 in t-0, T1 before T0 in t-1: permitted.
	h := TxnHistory{
		Txns: []Txn{
			{Process: "p1", EndInvoke: 5 * ms, End: 6 * ms, Outcome: TxnCommitted, Writes: []TxnWrite{{"t", 0, "x0", ""}, {"t", 1, "x1", ""}}},
			{Process: "p2", EndInvoke: 5 * ms, End: 6 * ms, Outcome: TxnCommitted, Writes: []TxnWrite{{"t", 0, "y0", ""}, {"t", 1, "y1", ""}}},
		},
		Final: []TxnFinalPartition{
			{Topic: "t", Partition: 0, Records: []TxnFinalRecord{{0, "x0", TxnCommitted}, {1, "y0", TxnCommitted}}},
			{Topic: "t", Partition: 1, Records: []TxnFinalRecord{{0, "y1", TxnCommitted}, {1, "x1", TxnCommitted}}},
		},
	}
	onlyKind(t, CheckTransactions(h, Final{}), KindG0, true)

	// G1c by write-read alone: T0 consumed T1's output and T1 T0's.
	h = TxnHistory{
		Txns: []Txn{
			{Process: "c1", EndInvoke: 5 * ms, End: 6 * ms, Outcome: TxnCommitted, Inputs: []string{"y"}, Writes: []TxnWrite{{"t", 0, "x", "y"}}},
			{Process: "c2", EndInvoke: 5 * ms, End: 6 * ms, Outcome: TxnCommitted, Inputs: []string{"x"}, Writes: []TxnWrite{{"t", 1, "y", "x"}}},
		},
		Final: []TxnFinalPartition{
			{Topic: "t", Partition: 0, Records: []TxnFinalRecord{{0, "x", TxnCommitted}}},
			{Topic: "t", Partition: 1, Records: []TxnFinalRecord{{0, "y", TxnCommitted}}},
		},
	}
	a := onlyKind(t, CheckTransactions(h, Final{}), KindG1c, false)
	if !strings.Contains(a.Description, "T0") || !strings.Contains(a.Description, "T1") {
		t.Fatalf("anomaly %s", a)
	}
}

// TestTransactionsTenThousand: a 10,000-transaction clean chain of
// consume-transform-produce steps stays OK (and runs in linear time).
func TestTransactionsTenThousand(t *testing.T) {
	h := bigTxnHistory(10000)
	if v := CheckTransactions(h, Final{}); v.Result != ResultOK {
		t.Fatalf("%s: %v", v.Result, v.Anomalies[:min(3, len(v.Anomalies))])
	}
}

func bigTxnHistory(n int) TxnHistory {
	var h TxnHistory
	p := TxnFinalPartition{Topic: "t", Partition: 0}
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("v%d", i)
		tx := Txn{Process: "p", TransactionalID: "tx", Begin: sim.Time(i) * ms, EndInvoke: sim.Time(i)*ms + 1, End: sim.Time(i)*ms + 2, Outcome: TxnCommitted,
			Writes: []TxnWrite{{Topic: "t", Partition: 0, Value: v}}}
		if i > 0 {
			prev := fmt.Sprintf("v%d", i-1)
			tx.Inputs = []string{prev}
			tx.Writes[0].Input = prev
		}
		h.Txns = append(h.Txns, tx)
		p.Records = append(p.Records, TxnFinalRecord{Offset: int64(2 * i), Value: v, Status: TxnCommitted})
	}
	h.Final = []TxnFinalPartition{p}
	h.Reads = []TxnRead{{Process: "r", Topic: "t", Partition: 0, ReadCommitted: true, FetchOffset: 0, Next: int64(2 * n), Records: records(p), Complete: sim.Time(n+1) * ms}}
	return h
}

func records(p TxnFinalPartition) []Record {
	out := make([]Record, len(p.Records))
	for i, r := range p.Records {
		out[i] = Record{Offset: r.Offset, Value: r.Value}
	}
	return out
}

func BenchmarkTransactions10k(b *testing.B) {
	h := bigTxnHistory(10000)
	b.ReportAllocs()
	for b.Loop() {
		CheckTransactions(h, Final{})
	}
}

// TestTransactionsMissingOutput: b1, a committed record of the
// consume-transform-produce input topic t, has no committed output.
func TestTransactionsMissingOutput(t *testing.T) {
	h := txnClean()
	h.InputTopics = []string{"t"}
	a := onlyKind(t, CheckTransactions(h, Final{}), KindMissingOutput, false)
	if a.Value != "b1" || a.Offsets[0] != 0 {
		t.Fatalf("anomaly %+v, want b1 at offset 0", a)
	}
	// A partition that can never take an acks=all write (the coordinator's
	// log with fewer replicas than its min ISR) permits it, naming why.
	unwritable := Final{Facts: Facts{Unwritable: []OfflinePartition{{Topic: "__transaction_state", Partition: 0,
		Why: "permitted: __transaction_state-0 has 1 replica(s) and min.insync.replicas=2"}}}}
	if a := onlyKind(t, CheckTransactions(h, unwritable), KindMissingOutput, true); !strings.Contains(a.Description, "__transaction_state-0 has 1 replica(s)") {
		t.Errorf("permitted without naming the partition: %s", a.Description)
	}
	h.Txns[2].Writes = append(h.Txns[2].Writes, TxnWrite{Topic: "u", Partition: 0, Value: "o2", Input: "b1"})
	h.Final[2].Records = append(h.Final[2].Records, TxnFinalRecord{1, "o2", TxnCommitted})
	if v := CheckTransactions(h, Final{}); v.Result != ResultOK {
		t.Fatalf("with b1's output: %s %v", v.Result, v.Anomalies)
	}
}

// TestTransactionsReadSkip: r2 (read_committed) polled t-1 from 0 to 2
// and delivered nothing: it read past the committed b1.
func TestTransactionsReadSkip(t *testing.T) {
	h := txnClean()
	h.Reads = append(h.Reads, TxnRead{Process: "r2", Topic: "t", Partition: 1, ReadCommitted: true, FetchOffset: 0, Next: 2, Invoke: 20 * ms, Complete: 21 * ms})
	a := onlyKind(t, CheckTransactions(h, Final{}), KindReadSkip, false)
	if a.Value != "b1" || !strings.Contains(a.Description, "r2") {
		t.Fatalf("anomaly %+v, want r2 skipping b1", a)
	}
}
