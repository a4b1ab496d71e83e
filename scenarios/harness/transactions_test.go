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
