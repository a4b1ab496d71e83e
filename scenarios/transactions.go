package scenarios

// This file is the scripts' transactions (KIP-98): a producer declared with
// transactional.id (producer p1 transactional.id=tx1) runs the steps
// 'init-txn p1', 'begin p1', 'produce p1 t/0 v' (a record of the open
// transaction), 'commit p1' and 'abort p1', awaited with 'await p1 txn ok'
// (the last init-txn, commit or abort succeeded) or 'await p1 txn done';
// a consumer with pattern=consume-transform-produce output=TOPIC reads its
// topic in its group and writes each input's output and its offsets in one
// transaction. A script with any transactional client runs with
// kafkasim.transactions=true (txnDefaults).

import (
	"fmt"
	"strconv"
)

// PatternCTP is the consumer pattern that reads, transforms and writes in
// one transaction per poll.
const PatternCTP = "consume-transform-produce"

// Transactional reports whether the script declares a transactional client:
// a producer with transactional.id or a consume-transform-produce consumer.
func (s *Script) Transactional() bool {
	for _, st := range s.Steps {
		switch {
		case st.Op == "producer" && st.KV["transactional.id"] != "":
			return true
		case st.Op == "consumer" && st.KV["pattern"] == PatternCTP:
			return true
		}
	}
	return false
}

// txnDefaults are the properties a transactional script runs with below
// its own: kafkasim.transactions=true and a __transaction_state the
// cluster's brokers can host (replication factor min(3, brokers), min ISR
// min(2, that)).
func (s *Script) txnDefaults() map[string]string {
	if !s.Transactional() {
		return nil
	}
	rf := min(3, max(s.Brokers, 1))
	return map[string]string{"kafkasim.transactions": "true",
		"transaction.state.log.replication.factor": strconv.Itoa(rf),
		"transaction.state.log.min.isr":            strconv.Itoa(min(2, rf))}
}

// txnStep checks a transactional step (init-txn, begin, commit, abort,
// and 'produce' or 'await ... txn' on a Kafka producer): its producer must
// be declared with a transactional.id.
func (c *checker) txnStep(name, what string) error {
	if isVar(name) {
		return nil
	}
	d, ok := c.clients[name]
	switch {
	case !ok:
		return fmt.Errorf("no producer %q before this line (declare it with 'producer %s transactional.id=ID' for %s)", name, name, what)
	case d.kind != kindProducer:
		return fmt.Errorf("%q is %s (the %s at line %d), not a transactional producer (%s needs one): declare one with 'producer NAME transactional.id=ID'", name, d.kind, d.how, d.line, what)
	case !d.transactional:
		return fmt.Errorf("producer %q (the %s at line %d) has no transactional.id; %s needs 'producer %s transactional.id=ID'", name, d.how, d.line, what, name)
	}
	return nil
}
