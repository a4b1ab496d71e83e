// transactions_lin.go: linearizability of a run with transactions.
//
// A partition holding transactional or control batches has offsets no
// client reads (the COMMIT and ABORT markers) and records read_committed
// never returns (the aborted ones): the log model of Linearizability has
// no place for either. Such partitions are left to the transactions
// checker; the others (a consume-transform-produce input topic, a plain
// producer's partition) are judged as usual.

package checkers

import (
	"slices"
	"strings"
	"time"
)

// LinearizabilityOutsideTransactions judges the partitions of h that hold
// no transaction (TxnFinalPartition.Transactional in th); Unknown and
// NotJudged when every partition the history touches holds one.
func LinearizabilityOutsideTransactions(h History, f Final, th TxnHistory, budget time.Duration) Verdict {
	txn := map[tp]bool{}
	var skipped []string
	for _, p := range th.Final {
		if p.Transactional {
			txn[tp{p.Topic, p.Partition}] = true
			skipped = append(skipped, tp{p.Topic, p.Partition}.String())
		}
	}
	slices.Sort(skipped)
	fh := h
	fh.Ops = nil
	judged := 0
	for _, op := range h.Ops {
		if !txn[tp{op.Topic, op.Partition}] {
			fh.Ops = append(fh.Ops, op)
			judged++
		}
	}
	list := strings.Join(skipped, ", ")
	if judged == 0 {
		v := verdict(NameLinearizability, nil, true, "every partition the history touches holds transactions ("+list+"), which the log model cannot represent (markers, aborted records); the transactions checker judges them")
		v.NotJudged = true
		return v
	}
	note := "partitions holding transactions, judged by the transactions checker only: " + list
	v := Linearizability(fh, f, budget)
	if len(skipped) > 0 {
		v.Notes = append(v.Notes, note)
	}
	return v
}
