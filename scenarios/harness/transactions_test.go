package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// TestTransactionalBadInput: each transactional mistake is refused before
// the run, at its line, naming the property and what is allowed.
func TestTransactionalBadInput(t *testing.T) {
	head := "describe x\nsource y\nbrokers 3\ntopic t partitions=1 rf=3\ntopic o partitions=1 rf=3\nrun 1s\n"
	for _, c := range []struct{ step, want string }{
		{"producer p1 transactional.id=a enable.idempotence=false", "enable.idempotence"},
		{"consumer c1 group.id=g topic=t isolation.level=serializable", "read_committed, read_uncommitted"},
		{"producer p1 transactional.id=a transaction.timeout.ms=1000000", "transaction.max.timeout.ms=900000"},
		{"consumer c1 group.id=g topic=t pattern=consume-transform-produce", "output=TOPIC"},
		{"producer p1\nbegin p1", "has no transactional.id"},
		{"producer p1\nproduce p1 t/0 v", "produce is for scripted clients"},
		{"begin p9", "no producer \"p9\""},
	} {
		s, err := scenarios.Parse("bad.txt", "bad", strings.NewReader(head+c.step+"\n"))
		if err == nil {
			_, _, err = Prepare(s, "", nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.txt:") {
			t.Errorf("%q: got %v, want bad.txt:LINE and %q", c.step, err, c.want)
		}
	}
}

// TestTransactionalScriptEnablesTransactions: a transactional client turns
// kafkasim.transactions on for the cluster.
func TestTransactionalScriptEnablesTransactions(t *testing.T) {
	s, err := scenarios.Parse("x.txt", "x", strings.NewReader("describe x\nsource y\nbrokers 3\ntopic t partitions=1 rf=3\nproducer p1 transactional.id=a\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, cfg, err := Prepare(s, "", nil)
	if err != nil || !cfg.Broker.Txn.Enabled {
		t.Fatalf("transactions enabled %v, err %v", cfg.Broker.Txn.Enabled, err)
	}
}

// TestRestartedPipelineWritesNewOutputValues: a consume-transform-produce
// member killed while its first transaction is open, and restarted under
// the same name, processes those inputs again: its outputs must carry
// values its fenced predecessor never wrote. The transactions checker
// traces each output to its input by value; when the restarted instance
// numbered its attempts from 0 again, its committed record matched the
// old instance's unfinished write too and was reported as a
// duplicate-output bug: a false alarm at 7 of 100 seeds of
// examples/scenarios/ledger-transactions.txt under 4.x (seeds 37 and 42
// among them), which this test runs.
func TestRestartedPipelineWritesNewOutputValues(t *testing.T) {
	s, err := scenarios.Load("../../examples/scenarios/ledger-transactions.txt")
	if err != nil {
		t.Fatal(err)
	}
	reprocessed := 0
	for seed := uint64(30); seed <= 45; seed++ {
		res, err := Run(s, "kraft-4.1", Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if res.Transactions == nil {
			t.Fatal("no transaction history: the test checks nothing")
		}
		// output value -> the transaction that wrote it; input -> the
		// transactions that consumed it.
		writer := map[string]int{}
		readers := map[string][]int{}
		for i, txn := range res.Transactions.Txns {
			for _, in := range txn.Inputs {
				readers[in] = append(readers[in], i)
			}
			for _, w := range txn.Writes {
				if j, ok := writer[w.Value]; ok && j != i {
					t.Errorf("seed %d: output %s written by transaction %d (%v) and by transaction %d (%v)", seed, w.Value,
						j, res.Transactions.Txns[j].Outcome, i, txn.Outcome)
				}
				writer[w.Value] = i
			}
		}
		for _, ts := range readers {
			if len(ts) > 1 {
				reprocessed++
			}
		}
		for _, v := range res.Verdicts {
			if v.Checker == "transactions" && v.ContractBroken() {
				t.Errorf("seed %d: %s", seed, v)
			}
		}
	}
	if reprocessed == 0 {
		t.Fatal("no input was consumed by two transactions in these seeds: the test checks nothing")
	}
}
