package harness

// This file is the consume-transform-produce pattern (KIP-98, KIP-447):
// 'consumer NAME group.id=G topic=IN pattern=consume-transform-produce
// output=OUT [transactional.id=ID] [transaction.timeout.ms=MS]
// [offsets=txn|after-commit] [restart-fenced=DUR]' runs, in
// the consumer's node, a transactional producer (transactional.id default
// NAME) beside the consumer (isolation.level default read_committed).
// Each poll's records become one transaction: beginTransaction, one
// output per input (value INPUT>NAME.K, to partition P mod the output's
// partitions), sendOffsetsToTransaction with the group's generation and
// member id, commitTransaction. An abortable error aborts and seeks back
// to the poll's first offsets; a fatal one (PRODUCER_FENCED: a newer
// instance of the id) closes the consumer, as a fenced Kafka application
// must, and with restart-fenced=DUR a new instance starts DUR later (the
// application's supervisor, as Kafka Streams replaces a fenced task's
// producer). offsets=after-commit commits the positions with commitSync once
// the transaction committed, outside it (not atomic: a crash between the
// two gives a second output of the same inputs). restart-consumer starts a new instance, whose initTransactions
// fences the old one and aborts its open transaction.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/client"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// ctpState is a consume-transform-produce node's producer side.
type ctpState struct {
	p     *producerNode
	ready bool // initTransactions completed
}

// ctpProducerName is the history's process of a consumer's producer.
func ctpProducerName(consumer string) string { return consumer + ".p" }

// parseCTP reads the pattern's keys (output, transactional.id,
// transaction.timeout.ms); props are the consumer's properties, where
// isolation.level defaults to read_committed.
func (s *consumerSettings) parseCTP(st scenarios.Step, topics []scenarios.TopicSpec, run config.Config, props map[string]string) error {
	if s.pattern != scenarios.PatternCTP {
		for _, k := range []string{"output", "transactional.id", "transaction.timeout.ms", "offsets"} {
			if _, ok := st.KV[k]; ok {
				return fmt.Errorf("consumer: %s is for pattern=%s only", k, scenarios.PatternCTP)
			}
		}
		return nil
	}
	i := slices.IndexFunc(topics, func(t scenarios.TopicSpec) bool { return t.Name == s.output })
	switch {
	case s.output == "":
		return fmt.Errorf("consumer: pattern=%s needs output=TOPIC: the topic its transactions write (a topic of this scenario other than topic=%s)", scenarios.PatternCTP, s.topic)
	case i < 0 || s.output == s.topic:
		return fmt.Errorf("consumer: output=%q: want a topic of this scenario other than topic=%s", s.output, s.topic)
	}
	s.outN = int32(topics[i].Partitions)
	switch o := st.KV["offsets"]; o {
	case "", "txn":
		s.txnOffsets = true
	case "after-commit":
	default:
		return fmt.Errorf("consumer: offsets=%q: allowed txn (sendOffsetsToTransaction, the default) or after-commit (commitSync after the transaction commits: not atomic)", o)
	}
	pp := map[string]string{"transactional.id": s.name, "acks": "all"}
	for _, k := range []string{"transactional.id", "transaction.timeout.ms"} {
		if v, ok := st.KV[k]; ok {
			pp[k] = v
		}
	}
	pcfg, err := config.ParseProducerWith(run.Broker.Mechanisms(), pp) // the release's client: 0.11 keeps 1 request in flight
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	if pcfg.TransactionTimeout > run.Broker.Txn.MaxTimeout {
		return fmt.Errorf("consumer: transaction.timeout.ms=%d is above the brokers' transaction.max.timeout.ms=%d: the coordinator would answer INVALID_TRANSACTION_TIMEOUT (allowed: 1 to %d)",
			pcfg.TransactionTimeout.Milliseconds(), run.Broker.Txn.MaxTimeout.Milliseconds(), run.Broker.Txn.MaxTimeout.Milliseconds())
	}
	pcfg.Mutants = run.Broker.Mutants
	s.pcfg = pcfg
	if _, ok := props["isolation.level"]; !ok {
		props["isolation.level"] = string(config.ReadCommitted)
	}
	return nil
}

// startCTP starts the node's transactional producer and initializes it.
func (n *consumerNode) startCTP(ctx *sim.Context) {
	p := client.New(n.s.pcfg, n.s.bootstrap)
	p.TransactionVersion = n.s.tv
	n.ctp = &ctpState{p: &producerNode{name: ctpProducerName(n.s.name), p: p, rec: n.s.rec, acks: -1, txn: n.s.txn, tid: n.s.pcfg.TransactionalID, cur: -1}}
	p.Start(ctx)
	n.initCTP(ctx)
}

func (n *consumerNode) initCTP(ctx *sim.Context) {
	c := n.ctp
	err := c.p.p.InitTransactions(ctx, func(ctx *sim.Context, err error) {
		if err != nil {
			ctx.Log("ctp-init-error", sim.S("error", err.Error()))
			n.fenced(ctx)
			return
		}
		c.ready = true
	})
	if err != nil {
		ctx.Log("ctp-init-error", sim.S("error", err.Error()))
	}
}

// fencedCTP reports whether the node is a consume-transform-produce
// member that its producer's fencing closed.
func (n *consumerNode) fencedCTP() bool {
	return n.ctp != nil && !n.ctp.ready && n.c != nil && n.c.Closed()
}

// fenced closes the consumer of a producer that can only be closed.
func (n *consumerNode) fenced(ctx *sim.Context) {
	ctx.Log("ctp-fenced", sim.S("transactional.id", n.s.pcfg.TransactionalID))
	n.ctp.ready = false
	n.c.Close(ctx)
	if n.s.restart != nil {
		n.s.restart(n.s.restartFenced)
	}
}

// restartFenced starts a new instance of member name after
// (restart-fenced=DUR: the application's supervisor), if it is still the
// fenced one then: a crash and a restart. A consume-transform-produce
// member's initTransactions fences nothing left, a static member's
// JoinGroup with no member id takes its instance over (KIP-345), and
// either resumes from the group's committed offsets.
func (r *Runner) restartFenced(name string, after sim.Duration) {
	r.World.At(r.World.Now().Add(after), "restart-fenced", func(w *sim.World) {
		id, _ := w.Lookup(name)
		if n, ok := w.Node(id).(*consumerNode); !ok || !w.Up(id) || !n.fencedCTP() && !n.stopped {
			return
		}
		if err := w.Inject(sim.Crash{Node: id}); err != nil {
			panic(err)
		}
		if err := w.Inject(sim.Restart{Node: id}); err != nil {
			panic(err)
		}
	})
}

// transform runs one poll's records as one transaction.
func (n *consumerNode) transform(ctx *sim.Context, before map[client.TopicPartition]int64, order []client.TopicPartition, byTP map[client.TopicPartition][]checkers.Record) {
	c := n.ctp
	pn := c.p
	ops, batch := n.inflight, n.batch
	done := func(ctx *sim.Context, committed bool) {
		for i, id := range ops {
			if committed {
				n.s.rec.Consumed(id, ctx.Now(), batch[i])
			} else {
				n.s.rec.Consumed(id, ctx.Now(), nil)
			}
		}
		n.inflight, n.batch, n.busy = nil, nil, false
	}
	rewind := func() {
		for _, tp := range order {
			from, ok := before[tp]
			if !ok {
				from = byTP[tp][0].Offset
			}
			_ = n.c.Seek(tp, from) // NB: a partition revoked meanwhile is no longer ours
		}
	}
	if err := pn.p.BeginTransaction(ctx); err != nil {
		ctx.Log("ctp-begin-error", sim.S("error", err.Error()))
		rewind()
		done(ctx, false)
		if fatalTxn(err) {
			n.fenced(ctx)
		}
		return
	}
	i := n.s.txn.begin(ctx.Now(), pn.name, pn.tid)
	pn.cur = i
	var offsets []client.TxnOffset
	for _, tp := range order {
		for _, r := range byTP[tp] {
			n.s.txn.txns[i].Inputs = append(n.s.txn.txns[i].Inputs, r.Value)
			pn.sendValue(ctx, n.s.output, tp.Partition%n.s.outN, ctpOutput(r.Value, n.s.name, n.s.attempt), r.Value)
			n.s.attempt++
		}
		if p, ok := n.c.Position(tp); ok {
			offsets = append(offsets, client.TxnOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: p, LeaderEpoch: -1})
		}
	}
	gen, member := n.c.Generation()
	end := func(ctx *sim.Context, commit bool, err error) {
		t := &n.s.txn.txns[i]
		t.End, t.Outcome = ctx.Now(), txnOutcome(commit, err)
	}
	abort := func(ctx *sim.Context, cause error) {
		ctx.Log("ctp-abort", sim.S("error", cause.Error()))
		if fatalTxn(cause) {
			rewind()
			done(ctx, false)
			n.fenced(ctx)
			return
		}
		n.s.txn.txns[i].EndInvoke = ctx.Now()
		err := pn.p.AbortTransaction(ctx, func(ctx *sim.Context, err error) {
			end(ctx, false, err)
			rewind()
			done(ctx, false)
			if err != nil && fatalTxn(err) {
				n.fenced(ctx)
			}
		})
		if err != nil {
			rewind()
			done(ctx, false)
			n.fenced(ctx)
		}
	}
	pn.cur = -1
	commit := func(ctx *sim.Context) {
		n.s.txn.txns[i].EndInvoke = ctx.Now()
		if err := pn.p.CommitTransaction(ctx, func(ctx *sim.Context, err error) {
			if err != nil {
				abort(ctx, err)
				return
			}
			end(ctx, true, nil)
			if n.s.txnOffsets {
				done(ctx, true)
				return
			}
			// offsets=after-commit: the positions are committed after the
			// transaction, outside it (not atomic).
			n.commit(ctx, func(ctx *sim.Context, _ bool) { done(ctx, true) })
		}); err != nil {
			abort(ctx, err)
		}
	}
	if !n.s.txnOffsets {
		commit(ctx)
		return
	}
	err := pn.p.SendOffsetsToTransaction(ctx, offsets, client.GroupMetadata{GroupID: n.s.cfg.GroupID, Generation: gen, MemberID: member}, func(ctx *sim.Context, err error) {
		if err != nil {
			abort(ctx, err)
			return
		}
		commit(ctx)
	})
	if err != nil {
		abort(ctx, err)
	}
}
