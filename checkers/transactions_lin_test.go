package checkers

import (
	"testing"
	"time"
)

// TestLinearizabilityOutsideTransactions: a partition holding transactions
// is left to the transactions checker. When that is every partition the
// history touches, the verdict is Unknown and NotJudged (not undecided: it
// says nothing about the run); when a plain partition is left, it is
// judged, and a violation there is found.
func TestLinearizabilityOutsideTransactions(t *testing.T) {
	h := History{Ops: []Op{send(0, "p1", "m0", -1, 1*ms, 2*ms, OK, 0), send(1, "p1", "m1", -1, 3*ms, 4*ms, OK, 1)}}
	f := final1(0, 0, Facts{}, replica(0, Leader, 0, 2, "m0", "m1"))
	txn := TxnHistory{Final: []TxnFinalPartition{{Topic: "t", Partition: 0, Transactional: true}}}

	v := LinearizabilityOutsideTransactions(h, f, txn, time.Second)
	if v.Result != ResultUnknown || !v.NotJudged || v.Undecided() || v.Mark() != "not judged" {
		t.Fatalf("every partition transactional: got result %s, NotJudged %v, Undecided %v, mark %q; want unknown, not judged\n%s",
			v.Result, v.NotJudged, v.Undecided(), v.Mark(), v)
	}

	// A second, plain partition t-1 where two appends took offset 0: it is
	// judged, and the violation is not hidden behind t-0's transactions.
	bad := h
	for i, val := range []string{"x0", "x1"} {
		op := send(2+i, "p2", val, -1, 5*ms, 6*ms, OK, 0)
		op.Partition = 1
		bad.Ops = append(bad.Ops, op)
	}
	fb := f
	fb.Partitions = append(fb.Partitions, PartitionFinal{Topic: "t", Partition: 1, Leader: 0, Replicas: []Replica{replica(0, Leader, 0, 1, "x1")}})
	v = LinearizabilityOutsideTransactions(bad, fb, txn, time.Second)
	if v.Result != ResultViolation || v.NotJudged {
		t.Fatalf("plain partition with a reused offset: got result %s, NotJudged %v; want a judged violation\n%s", v.Result, v.NotJudged, v)
	}
}
