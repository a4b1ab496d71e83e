package client

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/sim"
)

// TestTransactionsAgainstRealCluster: kafkasim.transactions creates
// __transaction_state (compacted, replicated, min ISR
// transaction.state.log.min.isr); a transactional producer finds its
// coordinator (FindCoordinator key_type 1) among three brokers with
// ZooKeeper, initialises, and runs an empty transaction (no partition
// reaches the coordinator, so no EndTxn); a second producer with the same
// id bumps the epoch; the coordinator's log replicates. (Markers need the
// brokers' WriteTxnMarkers handler: the data plane's.)
func TestTransactionsAgainstRealCluster(t *testing.T) {
	bcfg, err := config.Parse(map[string]string{"kafkasim.transactions": "true", "transaction.state.log.num.partitions": "5"})
	must(t, err)
	w, err := sim.New(sim.Config{Seed: 3, KeepTrace: true})
	must(t, err)
	c, err := cluster.Build(w, cluster.Spec{Brokers: 3, Topics: []cluster.Topic{{Name: "t", Partitions: 1, ReplicationFactor: 3}}, Config: bcfg})
	must(t, err)
	run(t, w, 10*sim.Second)
	if a := c.Assignments[txn.StateTopic]; len(a) != 5 || len(a[0]) != 3 {
		t.Fatalf("%s assignment %v", txn.StateTopic, a)
	}
	apps := make([]*app, 2)
	ids := make([]sim.NodeID, 2)
	inits := make([]string, 2)
	for i := range apps {
		apps[i] = &app{cfg: txnProducerConfig("app"), bootstrap: []int32{0, 1, 2}, results: map[string]result{}}
		a := apps[i]
		ids[i], err = w.AddNode([]string{"producer", "producer2"}[i], func() sim.Node { return a }, sim.NodeOptions{})
		must(t, err)
		must(t, w.Inject(sim.Start{Node: ids[i]}))
		act(t, w, ids[i], func(ctx *sim.Context) error { return a.p.InitTransactions(ctx, outcome(&inits[i])) })
		run(t, w, 2*sim.Second)
		if inits[i] != "ok" {
			t.Fatalf("producer %d InitTransactions: %q", i, inits[i])
		}
	}
	pid0, e0 := apps[0].p.ProducerID()
	pid1, e1 := apps[1].p.ProducerID()
	if pid0 != pid1 || e1 != e0+1 {
		t.Fatalf("second producer got %d/%d, first %d/%d", pid1, e1, pid0, e0)
	}
	var commit string
	act(t, w, ids[1], func(ctx *sim.Context) error {
		if err := apps[1].p.BeginTransaction(ctx); err != nil {
			return err
		}
		return apps[1].p.CommitTransaction(ctx, outcome(&commit))
	})
	run(t, w, sim.Second)
	if commit != "ok" || apps[1].p.TransactionState() != "READY" {
		t.Fatalf("empty commit %q, state %s", commit, apps[1].p.TransactionState())
	}
	// The coordinator's records are on every replica.
	p := txn.PartitionFor("app", 5)
	coord := -1
	for i := range c.Brokers {
		if b := c.Broker(i); b != nil && b.TxnCoordinator().Leads(p) {
			coord = i
		}
	}
	if coord < 0 {
		t.Fatal("no broker leads the id's partition")
	}
	m, ok := c.Broker(coord).TxnCoordinator().Transaction("app")
	if !ok || m.ProducerEpoch != e1 || m.State != txn.Empty {
		t.Fatalf("coordinator: %v %s", ok, m.String())
	}

	// The coordinator's broker crashes: a new leader of the partition loads
	// the id from its replica, and a third producer gets the next epoch.
	must(t, w.Inject(sim.Crash{Node: c.Brokers[coord]}))
	run(t, w, 30*sim.Second)
	third := &app{cfg: txnProducerConfig("app"), bootstrap: []int32{0, 1, 2}, results: map[string]result{}}
	tid, err := w.AddNode("producer3", func() sim.Node { return third }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: tid}))
	var init3 string
	act(t, w, tid, func(ctx *sim.Context) error { return third.p.InitTransactions(ctx, outcome(&init3)) })
	run(t, w, 10*sim.Second)
	if pid3, e3 := third.p.ProducerID(); init3 != "ok" || pid3 != pid0 || e3 != e1+1 {
		t.Fatalf("after the coordinator's crash: init %q, %d/%d, want %d/%d", init3, pid3, e3, pid0, e1+1)
	}
	newCoord := -1
	for i := range c.Brokers {
		if b := c.Broker(i); b != nil && b.TxnCoordinator().Leads(p) {
			newCoord = i
		}
	}
	if newCoord < 0 || newCoord == coord {
		t.Fatalf("coordinator moved from %d to %d", coord, newCoord)
	}
}
