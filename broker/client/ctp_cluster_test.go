package client

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ctpNode is a node holding a consumer and, for a consume-transform-
// produce application, a transactional producer; the test polls it with
// World.Act (poll false), or it polls itself every 100 ms (poll true) and
// keeps what it got.
type ctpNode struct {
	ccfg   config.Consumer
	pcfg   *config.Producer
	topics []string
	poll   bool
	c      *Consumer
	p      *Producer
	got    []ConsumerRecord
}

func (n *ctpNode) Start(ctx *sim.Context) {
	var err error
	if n.c, err = NewConsumer(n.ccfg, []int32{0, 1, 2}); err != nil {
		panic(err)
	}
	n.c.Start(ctx)
	if err := n.c.Subscribe(ctx, n.topics, RebalanceListener{}); err != nil {
		panic(err)
	}
	if n.pcfg != nil {
		n.p = New(*n.pcfg, []int32{0, 1, 2})
		n.p.Start(ctx)
	}
	if n.poll {
		ctx.SetTimer(100*sim.Millisecond, "ctp-poll")
	}
}

func (n *ctpNode) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	if n.p != nil && n.p.HandleMessage(ctx, from, m) {
		return
	}
	if !n.c.HandleMessage(ctx, from, m) {
		panic(fmt.Sprintf("ctp: unexpected message %s", m.Kind()))
	}
}

func (n *ctpNode) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	if n.p != nil && n.p.HandleTimer(ctx, id, name) {
		return
	}
	if n.c.HandleTimer(ctx, id, name) || name != "ctp-poll" {
		return
	}
	recs, err := n.c.Poll(ctx)
	if err != nil {
		panic(err)
	}
	n.got = append(n.got, recs...)
	ctx.SetTimer(100*sim.Millisecond, "ctp-poll")
}

// txnGroupCluster builds three brokers (ZooKeeper, or KRaft with three
// controllers) with __consumer_offsets, __transaction_state and topics in
// and out, and fills in with n records.
func txnGroupCluster(t *testing.T, seed uint64, kraft bool, n int) (*sim.World, *cluster.Cluster) {
	props := map[string]string{"kafkasim.transactions": "true", "transaction.state.log.num.partitions": "3",
		"offsets.topic.num.partitions": "3", "offsets.topic.replication.factor": "3", "min.insync.replicas": "2",
		"zookeeper.session.timeout.ms": "6000"}
	spec := cluster.Spec{Brokers: 3, OffsetsTopic: true,
		Topics: []cluster.Topic{{Name: "in", Partitions: 2, ReplicationFactor: 3}, {Name: "out", Partitions: 2, ReplicationFactor: 3}}}
	if kraft {
		delete(props, "zookeeper.session.timeout.ms")
		props["inter.broker.protocol.version"] = "4.0"
		spec.Controllers = 3
	}
	bcfg, err := config.Parse(props)
	must(t, err)
	spec.Config = bcfg
	w, err := sim.New(sim.Config{Seed: seed, KeepTrace: true})
	must(t, err)
	c, err := cluster.Build(w, spec)
	must(t, err)
	run(t, w, 10*sim.Second)
	cfg := config.DefaultProducer()
	cfg.Acks = config.AcksAll
	a := &app{cfg: cfg, bootstrap: []int32{0, 1, 2}, results: map[string]result{}}
	id, err := w.AddNode("source", func() sim.Node { return a }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: id}))
	for i := 0; i < n; i++ {
		send(t, w, id, a, Record{Topic: "in", Partition: int32(i % 2), Value: []byte(fmt.Sprintf("m%02d", i))})
		run(t, w, 5*sim.Millisecond)
	}
	run(t, w, 2*sim.Second)
	for v, r := range a.results {
		if r.err != nil {
			t.Fatalf("source %s: %v", v, r.err)
		}
	}
	return w, c
}

func addCTP(t *testing.T, w *sim.World, name, group string, topics []string, pcfg *config.Producer, poll bool) (*ctpNode, sim.NodeID) {
	ccfg, err := config.ParseConsumer(map[string]string{"group.id": group, "client.id": name, "auto.offset.reset": "earliest",
		"enable.auto.commit": "false", "isolation.level": "read_committed", "session.timeout.ms": "30000", "request.timeout.ms": "5000",
		"heartbeat.interval.ms": "1000", "max.poll.interval.ms": "60000", "max.poll.records": "2"})
	must(t, err)
	n := &ctpNode{ccfg: ccfg, pcfg: pcfg, topics: topics, poll: poll}
	id, err := w.AddNode(name, func() sim.Node { return n }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: id}))
	return n, id
}

// groupCoordinator returns the group coordinator leading group's partition.
func groupCoordinator(t *testing.T, c *cluster.Cluster, group string) *coordinator.Coordinator {
	t.Helper()
	for i := range c.Brokers {
		if b := c.Broker(i); b != nil {
			co := b.Coordinator()
			if _, _, _, _, ok := co.Group(group); ok && !co.Loading(co.PartitionFor(group)) {
				return co
			}
		}
	}
	t.Fatalf("no coordinator has group %s", group)
	return nil
}

// fetchStable is OffsetFetch v7 with require_stable of in-0 and in-1.
func fetchStable(w *sim.World, co *coordinator.Coordinator, group string) [2]string {
	return fetchOffsets(w, co, group, true)
}

// fetchOffsets is OffsetFetch v7 of in-0 and in-1.
func fetchOffsets(w *sim.World, co *coordinator.Coordinator, group string, stable bool) [2]string {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group, req.RequireStable = 7, group, stable
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "in", Partitions: []int32{0, 1}}}
	resp := co.OffsetFetch(w.Now(), req)
	var out [2]string
	for i, p := range resp.Topics[0].Partitions {
		out[i] = fmt.Sprint(p.Offset)
		if p.ErrorCode != 0 {
			out[i] = kerr.ErrorForCode(p.ErrorCode).Error()
		}
	}
	return out
}

// ctpTxn is a transaction of the consume-transform-produce loop, begun.
type ctpTxn struct {
	values []string                 // the outputs sent
	start  map[TopicPartition]int64 // the consumer's positions before the poll
	sent   *string                  // the first send error
}

// ctpRound is one transaction of the consume-transform-produce loop:
// ctpBegin, then ctpEnd.
func ctpRound(t *testing.T, w *sim.World, c *cluster.Cluster, n *ctpNode, id sim.NodeID, group string, commit bool) []string {
	t.Helper()
	tx := ctpBegin(t, w, c, n, id, group)
	ctpEnd(t, w, n, id, tx, commit, 10*sim.Second)
	return tx.values
}

// ctpBegin polls the inputs the consumer has, begins a transaction, sends
// one output per input and the consumer's positions with
// SendOffsetsToTransaction; the offsets are then pending: OffsetFetch
// answers the previous ones, UNSTABLE_OFFSET_COMMIT with require_stable.
func ctpBegin(t *testing.T, w *sim.World, c *cluster.Cluster, n *ctpNode, id sim.NodeID, group string) *ctpTxn {
	t.Helper()
	var recs []ConsumerRecord
	tx := &ctpTxn{start: map[TopicPartition]int64{}, sent: new(string)}
	for i := 0; i < 100 && len(recs) == 0; i++ {
		act(t, w, id, func(ctx *sim.Context) error {
			for _, tp := range n.c.Assignment() {
				if pos, ok := n.c.Position(tp); ok {
					tx.start[tp] = pos
				}
			}
			var err error
			recs, err = n.c.Poll(ctx)
			return err
		})
		if len(recs) == 0 {
			run(t, w, 100*sim.Millisecond)
		}
	}
	if len(recs) == 0 {
		t.Fatal("the consumer polled nothing")
	}
	before := fetchOffsets(w, groupCoordinator(t, c, group), group, false)
	var offs string
	act(t, w, id, func(ctx *sim.Context) error {
		if err := n.p.BeginTransaction(ctx); err != nil {
			return err
		}
		next := map[TopicPartition]int64{}
		for _, r := range recs {
			v := "out-" + string(r.Value)
			tx.values = append(tx.values, v)
			if err := n.p.Send(ctx, Record{Topic: "out", Partition: r.Partition, Value: []byte(v)}, func(_ *sim.Context, _ RecordMetadata, err error) {
				if err != nil && *tx.sent == "" {
					*tx.sent = err.Error()
				}
			}); err != nil {
				return err
			}
			next[TopicPartition{Topic: r.Topic, Partition: r.Partition}] = r.Offset + 1
		}
		var to []TxnOffset
		for _, tp := range slices.SortedFunc(maps.Keys(next), func(a, b TopicPartition) int { return int(a.Partition - b.Partition) }) {
			to = append(to, TxnOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: next[tp], LeaderEpoch: -1})
		}
		gen, member := n.c.Generation()
		return n.p.SendOffsetsToTransaction(ctx, to, GroupMetadata{GroupID: group, Generation: gen, MemberID: member}, outcome(&offs))
	})
	for i := 0; i < 100 && offs == ""; i++ {
		run(t, w, 50*sim.Millisecond)
	}
	if offs != "ok" {
		t.Fatalf("SendOffsetsToTransaction: %q", offs)
	}
	co := groupCoordinator(t, c, group)
	pid, _ := n.p.ProducerID()
	st, plain := fetchStable(w, co, group), fetchOffsets(w, co, group, false)
	if pendingIn(co, group, pid) == 0 || !slices.Contains(st[:], kerr.UnstableOffsetCommit.Error()) || plain != before {
		t.Fatalf("after SendOffsetsToTransaction: %d pending, require_stable fetch %v, fetch %v (before %v)", pendingIn(co, group, pid), st, plain, before)
	}
	return tx
}

// pendingIn counts the pending transactional offsets of in-0 and in-1.
func pendingIn(co *coordinator.Coordinator, group string, pid int64) int {
	pending := 0
	for p := int32(0); p < 2; p++ {
		if _, ok := co.PendingTxnOffset(group, pid, "in", p); ok {
			pending++
		}
	}
	return pending
}

// ctpEnd commits or aborts the transaction and waits up to wait for the
// outcome; after an abort the consumer seeks back to where the poll began.
func ctpEnd(t *testing.T, w *sim.World, n *ctpNode, id sim.NodeID, tx *ctpTxn, commit bool, wait sim.Duration) {
	t.Helper()
	var end string
	act(t, w, id, func(ctx *sim.Context) error {
		if commit {
			return n.p.CommitTransaction(ctx, outcome(&end))
		}
		return n.p.AbortTransaction(ctx, outcome(&end))
	})
	for waited := sim.Duration(0); waited < wait && end == ""; waited += 50 * sim.Millisecond {
		run(t, w, 50*sim.Millisecond)
	}
	if end != "ok" || (commit && *tx.sent != "") {
		t.Fatalf("end of transaction (commit %v): %q, sends %q", commit, end, *tx.sent)
	}
	if !commit {
		for _, tp := range slices.SortedFunc(maps.Keys(tx.start), func(a, b TopicPartition) int { return int(a.Partition - b.Partition) }) {
			must(t, n.c.Seek(tp, tx.start[tp]))
		}
	}
}

// committedIn returns the group's committed offsets of in-0 and in-1
// (-1: none), as OffsetFetch with require_stable answers them.
func committedIn(t *testing.T, w *sim.World, c *cluster.Cluster, group string) [2]string {
	return fetchStable(w, groupCoordinator(t, c, group), group)
}

// TestConsumeTransformProduceExactlyOnce (KIP-98, KIP-447): a
// read_committed consumer in group ctp reads in, a transactional producer
// writes one output per input to out and sends the consumer's positions
// with SendOffsetsToTransaction; the second of three transactions aborts
// (the consumer seeks back and the inputs are processed again). The
// offsets reach OffsetFetch only once their transaction commits (pending:
// UNSTABLE_OFFSET_COMMIT with require_stable), an aborted transaction's
// never; a fresh read_committed consumer of out sees every committed
// output once and no aborted one. ZooKeeper mode at transaction.version 1,
// KRaft (4.0) at transaction.version 2.
func TestConsumeTransformProduceExactlyOnce(t *testing.T) {
	for _, kraft := range []bool{false, true} {
		t.Run(map[bool]string{false: "zk-tv1", true: "kraft-tv2"}[kraft], func(t *testing.T) {
			const inputs = 6
			w, c := txnGroupCluster(t, 7, kraft, inputs)
			pcfg := txnProducerConfig("ctp-app")
			n, id := addCTP(t, w, "ctp", "ctp", []string{"in"}, &pcfg, false)
			var init string
			act(t, w, id, func(ctx *sim.Context) error { return n.p.InitTransactions(ctx, outcome(&init)) })
			run(t, w, 8*sim.Second) // the group forms, the producer initialises
			if init != "ok" {
				t.Fatalf("InitTransactions: %q", init)
			}
			var committed []string
			committed = append(committed, ctpRound(t, w, c, n, id, "ctp", true)...)
			after1 := committedIn(t, w, c, "ctp")
			if after1 == [2]string{"-1", "-1"} {
				t.Fatalf("offsets after the first commit: %v", after1)
			}
			aborted := ctpRound(t, w, c, n, id, "ctp", false)
			run(t, w, sim.Second)
			if got := committedIn(t, w, c, "ctp"); got != after1 {
				t.Fatalf("offsets after the abort: %v, want %v", got, after1)
			}
			for total := len(committed); total < inputs; total = len(committed) {
				committed = append(committed, ctpRound(t, w, c, n, id, "ctp", true)...)
			}
			if got := committedIn(t, w, c, "ctp"); got != [2]string{"3", "3"} {
				t.Fatalf("offsets after the last commit: %v, want [3 3]", got)
			}
			// The group's __consumer_offsets partition holds the offsets in
			// transactional batches completed by markers: its LSO is its HW.
			otp := storage.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: groupCoordinator(t, c, "ctp").PartitionFor("ctp")}
			for i := range c.Brokers {
				if p, ok := c.Broker(i).Partition(otp); ok && p.Role() == server.Leader {
					if p.LastStableOffset() != p.HighWatermark() || len(traceKinds(w, "append-txn-offsets")) != 4 || len(traceKinds(w, "txn-offsets-completed")) != 4 {
						t.Fatalf("%s: LSO %d, HW %d; %d transactional appends, %d completed", otp, p.LastStableOffset(), p.HighWatermark(),
							len(traceKinds(w, "append-txn-offsets")), len(traceKinds(w, "txn-offsets-completed")))
					}
				}
			}

			reader, _ := addCTP(t, w, "reader", "readers", []string{"out"}, nil, true)
			run(t, w, 15*sim.Second)
			seen := map[string]int{}
			for _, r := range reader.got {
				seen[string(r.Value)]++
			}
			for i := 0; i < inputs; i++ {
				if v := fmt.Sprintf("out-m%02d", i); seen[v] != 1 {
					t.Errorf("%s read %d times, want once", v, seen[v])
				}
			}
			if len(reader.got) != inputs {
				t.Errorf("reader got %d records, want %d: %v", len(reader.got), inputs, seen)
			}
			// The aborted outputs are in out's logs, and skipped.
			total := 0
			for p := int32(0); p < 2; p++ {
				total += len(leaderLog(t, c, storage.TopicPartition{Topic: "out", Partition: p}))
			}
			if total < inputs+len(aborted) {
				t.Errorf("out holds %d records, want at least %d", total, inputs+len(aborted))
			}
		})
	}
}

// TestConsumeTransformProduceCoordinatorCrash (KIP-98 fail-over): the
// broker that is both the transaction coordinator of the application's
// transactional.id and the group coordinator of its group crashes after
// SendOffsetsToTransaction; the new leader of the group's
// __consumer_offsets partition rebuilds the pending offsets from the
// transactional batch in its replica, the new transaction coordinator
// loads the ongoing transaction, and CommitTransaction (or
// AbortTransaction) completes there: the markers reach out and
// __consumer_offsets, the offsets are committed (or dropped), and a
// read_committed reader of out sees each committed output exactly once.
// ZooKeeper (tv1) with commit and abort, KRaft (4.0, tv2) with commit.
func TestConsumeTransformProduceCoordinatorCrash(t *testing.T) {
	for _, tc := range []struct {
		name          string
		kraft, commit bool
	}{{"zk-commit", false, true}, {"zk-abort", false, false}, {"kraft-commit", true, true}} {
		commit := tc.commit
		t.Run(tc.name, func(t *testing.T) {
			const inputs = 6
			w, c := txnGroupCluster(t, 11, tc.kraft, inputs)
			pcfg := txnProducerConfig("ctp-app")
			n, id := addCTP(t, w, "ctp", "ctp", []string{"in"}, &pcfg, false)
			var init string
			act(t, w, id, func(ctx *sim.Context) error { return n.p.InitTransactions(ctx, outcome(&init)) })
			run(t, w, 2*sim.Second)
			if init != "ok" {
				t.Fatalf("InitTransactions: %q", init)
			}
			done := len(ctpRound(t, w, c, n, id, "ctp", true))
			after1 := committedIn(t, w, c, "ctp")

			tx := ctpBegin(t, w, c, n, id, "ctp")
			tp := txn.PartitionFor("ctp-app", 3)
			coord := -1
			for i := range c.Brokers {
				if b := c.Broker(i); b != nil && b.TxnCoordinator().Leads(tp) {
					coord = i
				}
			}
			if coord < 0 {
				t.Fatal("no transaction coordinator")
			}
			oldGroup := groupCoordinator(t, c, "ctp")
			must(t, w.Inject(sim.Crash{Node: c.Brokers[coord]}))
			run(t, w, 20*sim.Second)
			pid, _ := n.p.ProducerID()
			if co := groupCoordinator(t, c, "ctp"); co != oldGroup && pendingIn(co, "ctp", pid) == 0 {
				t.Fatal("the new group coordinator lost the pending offsets")
			}
			if len(traceKinds(w, "group-loaded-pending-txn-offsets")) == 0 {
				t.Fatal("no coordinator loaded pending transactional offsets")
			}
			ctpEnd(t, w, n, id, tx, commit, 60*sim.Second)
			run(t, w, sim.Second)
			marker := map[bool]string{true: "marker=COMMIT", false: "marker=ABORT"}[commit]
			if done := traceKinds(w, "txn-offsets-completed"); len(done) == 0 || !strings.Contains(done[len(done)-1], marker) ||
				strings.Contains(done[len(done)-1], fmt.Sprintf(" b%d ", coord)) {
				t.Fatalf("offsets completed: %v, want the last by a new coordinator with %s", done, marker)
			}
			got := committedIn(t, w, c, "ctp")
			if commit {
				done += len(tx.values)
				if got == after1 {
					t.Fatalf("offsets after the commit: %v, as before it", got)
				}
			} else if got != after1 {
				t.Fatalf("offsets after the abort: %v, want %v", got, after1)
			}
			for done < inputs {
				done += len(ctpRound(t, w, c, n, id, "ctp", true))
			}
			if got := committedIn(t, w, c, "ctp"); got != [2]string{"3", "3"} {
				t.Fatalf("offsets at the end: %v, want [3 3]", got)
			}
			reader, _ := addCTP(t, w, "reader", "readers", []string{"out"}, nil, true)
			run(t, w, 15*sim.Second)
			seen := map[string]int{}
			for _, r := range reader.got {
				seen[string(r.Value)]++
			}
			for i := 0; i < inputs; i++ {
				if v := fmt.Sprintf("out-m%02d", i); seen[v] != 1 {
					t.Errorf("%s read %d times, want once", v, seen[v])
				}
			}
			if len(reader.got) != inputs {
				t.Errorf("reader got %d records, want %d: %v", len(reader.got), inputs, seen)
			}
		})
	}
}
