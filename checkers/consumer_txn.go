// consumer_txn.go: the consumer checker on transactional topics. A
// read_committed consumer (KIP-98) never delivers the records of an
// aborted transaction, nor those of one still open, and its position
// moves past them: the offsets they hold in the final log are no skipped
// offsets of its polls.

package checkers

// withoutUncommittedTxns removes from cf.known the offsets of the final
// logs' records (th.Final) whose transaction aborted or never ended and
// that no consumer delivered: known offsets are what a poll may not jump
// over, and a read_committed consumer rightly jumps over these. An offset
// some consumer delivered stays known (the transactions checker judges
// that delivery: G1a).
func (cf *consumerFacts) withoutUncommittedTxns(th *TxnHistory) {
	if th == nil {
		return
	}
	for _, p := range th.Final {
		if !p.Transactional {
			continue
		}
		k := tp{p.Topic, p.Partition}
		drop := map[int64]bool{}
		for _, r := range p.Records {
			if r.Status != TxnCommitted {
				drop[r.Offset] = true
			}
		}
		if len(drop) == 0 || len(cf.known[k]) == 0 {
			continue
		}
		for _, op := range cf.h.Ops {
			if op.Kind == Consume && op.Outcome == OK && op.Topic == p.Topic && op.Partition == p.Partition {
				for _, r := range op.Records {
					delete(drop, r.Offset)
				}
			}
		}
		kept := cf.known[k][:0]
		for _, off := range cf.known[k] {
			if !drop[off] {
				kept = append(kept, off)
			}
		}
		cf.known[k] = kept
	}
}
