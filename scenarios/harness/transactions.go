package harness

// This file runs the scripts' transactions (scenarios/transactions.go) and
// records their history for the transactions checker: each transaction's
// begin, end-invoke and end times with the outcome its client saw, its
// writes (and, for consume-transform-produce, the inputs each output
// derives from), the read_committed consumers' deliveries with their
// positions, and, at the end, each partition's log with every data
// record's transaction status read from the control markers on disk.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/client"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// txnLog is the run's transaction history, shared by the producers and the
// consumers of a runner.
type txnLog struct {
	txns  []checkers.Txn
	reads []checkers.TxnRead
	// used is set once a transactional client or a read_committed
	// consumer exists: the run gets a transactions verdict.
	used bool
	// inputs are the topics consume-transform-produce consumers read.
	inputs []string
}

// begin opens a transaction of process and returns its index.
func (l *txnLog) begin(now sim.Time, process, id string) int {
	l.txns = append(l.txns, checkers.Txn{Process: process, TransactionalID: id, Begin: now})
	return len(l.txns) - 1
}

// txnOutcome is the outcome a commit or abort callback reports: what the
// client saw. A failed commit or abort is unknown (a fenced producer's
// transaction is judged by its markers).
func txnOutcome(commit bool, err error) checkers.TxnOutcome {
	switch {
	case err != nil:
		return checkers.TxnUnknown
	case commit:
		return checkers.TxnCommitted
	}
	return checkers.TxnAborted
}

// txnCall is a producer's last transactional call (init-txn, commit,
// abort), for 'await P txn ok|done'.
type txnCall struct {
	op   string
	done bool
	err  error
}

// txnStep executes init-txn, begin, commit and abort on a transactional
// producer.
func (r *Runner) txnStep(st scenarios.Step) error {
	n, ok := r.producers[st.Args[0]]
	if !ok || n.p.TransactionState() == "" {
		return fmt.Errorf("no transactional producer %q (declare it with 'producer %s transactional.id=ID')", st.Args[0], st.Args[0])
	}
	id, _ := r.World.Lookup(st.Args[0])
	var serr error
	err := r.World.Act(id, func(ctx *sim.Context) { serr = n.txnCall(ctx, st.Op) })
	if err != nil {
		return err
	}
	return serr
}

// txnCall runs one transactional call of the producer's application.
func (n *producerNode) txnCall(ctx *sim.Context, op string) error {
	call := &txnCall{op: op}
	cb := func(ctx *sim.Context, err error) {
		call.done, call.err = true, err
		if err != nil {
			ctx.Log("txn-error", sim.S("op", op), sim.S("error", err.Error()))
		}
	}
	switch op {
	case "init-txn":
		n.call = call
		return n.p.InitTransactions(ctx, cb)
	case "begin":
		if err := n.p.BeginTransaction(ctx); err != nil {
			return err
		}
		n.cur = n.txn.begin(ctx.Now(), n.name, n.tid)
		return nil
	}
	i, commit := n.cur, op == "commit"
	if i < 0 && !commit && len(n.txn.txns) > 0 {
		// An abort after a failed commit (an abortable error) ends the
		// same transaction.
		for j := len(n.txn.txns) - 1; j >= 0; j-- {
			if t := n.txn.txns[j]; t.Process == n.name {
				if t.Outcome == checkers.TxnUnknown && t.End != 0 {
					i = j
				}
				break
			}
		}
	}
	if i < 0 {
		return fmt.Errorf("%s %s: no transaction begun (a 'begin %s' step first)", op, n.name, n.name)
	}
	n.txn.txns[i].EndInvoke = ctx.Now()
	n.cur = -1
	n.call = call
	end := func(ctx *sim.Context, err error) {
		t := &n.txn.txns[i]
		t.End, t.Outcome = ctx.Now(), txnOutcome(commit, err)
		cb(ctx, err)
	}
	var err error
	if commit {
		err = n.p.CommitTransaction(ctx, end)
	} else {
		err = n.p.AbortTransaction(ctx, end)
	}
	var te *client.TxnError
	if errors.As(err, &te) {
		// The producer is in an error state already (a zombie fenced
		// while paused): the call's outcome, for 'await P txn done', not
		// a broken step.
		end(ctx, err)
		return nil
	}
	return err
}

// awaitTxn is 'await P txn ok|done': the producer's last init-txn, commit
// or abort completed (ok: without an error).
func (r *Runner) awaitTxn(st scenarios.Step) error {
	n, ok := r.producers[st.Args[0]]
	if !ok || n.call == nil {
		return fmt.Errorf("%s has no init-txn, commit or abort to await", st.Args[0])
	}
	call := n.call
	deadline := r.World.Now().Add(st.Dur)
	for !call.done {
		next, ok := r.World.NextEventTime()
		if !ok || next > deadline {
			if done, err := r.idleUntil(deadline); err != nil {
				return err
			} else if !done {
				continue
			}
			return fmt.Errorf("%s's %s not completed within %v", st.Args[0], call.op, st.Dur)
		}
		if err := r.StepOne(); err != nil {
			return err
		}
	}
	if st.Args[2] == "ok" && call.err != nil {
		return fmt.Errorf("%s's %s failed: %v (use 'await %s txn done' to accept any outcome)", st.Args[0], call.op, call.err, st.Args[0])
	}
	return nil
}

// produceTxn is 'produce P TOPIC/P VALUE' on a transactional producer: a
// record of its open transaction.
func (r *Runner) produceTxn(n *producerNode, topic string, part int32, value string) error {
	id, _ := r.World.Lookup(n.name)
	return r.World.Act(id, func(ctx *sim.Context) { n.sendValue(ctx, topic, part, value, "") })
}

// pauseProducer is 'pause P DUR' on a producer: its node stops (a GC
// pause, a zombie) and resumes with what it had.
func (r *Runner) pauseProducer(name string, d sim.Duration) error {
	id, _ := r.World.Lookup(name)
	return r.World.Inject(sim.Pause{Node: id, For: d})
}

// pauseConsumer is 'pause C DUR' on a consumer (the swarm's
// consumer-pause): its node stops with its requests and transaction in
// flight and resumes with what it had — a consume-transform-produce member
// paused past its transaction.timeout.ms comes back a zombie, whose
// producer epoch the coordinator's abort bumped. A consumer that is down
// stays down.
func (r *Runner) pauseConsumer(name string, d sim.Duration) error {
	id, _ := r.World.Lookup(name)
	if !r.World.Up(id) {
		return nil
	}
	r.Recorder.ConsumerPaused(r.World.Now(), r.World.Now().Add(d), name)
	return r.World.Inject(sim.Pause{Node: id, For: d})
}

// txnHistory returns the run's history for the transactions checker, with
// the final logs of the scenario's topics.
func (r *Runner) txnHistory() checkers.TxnHistory {
	h := checkers.TxnHistory{Txns: r.txn.txns, Reads: r.txn.reads, InputTopics: r.txn.inputs}
	for _, tp := range r.Observer.Partitions {
		if strings.HasPrefix(tp.Topic, "__") {
			continue
		}
		if p, ok := r.txnFinal(tp); ok {
			h.Final = append(h.Final, p)
		}
	}
	return h
}

// stuckLSO returns the partitions whose final log holds a transaction with
// no marker (its LSO stuck there) after an unclean election of the
// partition: the election lost the marker (KAFKA-20716), and the liveness
// checker permits a read_committed group lagging behind it. Simplified:
// any unclean election of the partition excuses any open transaction
// there, as the contract's loss facts excuse what they may have caused,
// without proving that this election lost this marker.
func stuckLSO(h checkers.TxnHistory, unclean []checkers.UncleanElection) []checkers.OfflinePartition {
	var out []checkers.OfflinePartition
	for _, p := range h.Final {
		i := slices.IndexFunc(p.Records, func(r checkers.TxnFinalRecord) bool { return r.Status == checkers.TxnUnknown })
		if i < 0 {
			continue
		}
		for _, u := range unclean {
			if u.Topic == p.Topic && u.Partition == p.Partition {
				out = append(out, checkers.OfflinePartition{Topic: p.Topic, Partition: p.Partition,
					Why: "permitted: the unclean election of b" + strconv.Itoa(int(u.Broker)) + " at epoch " + strconv.Itoa(int(u.Epoch)) + " at " + u.Time.String() +
						" left the transaction of " + p.Records[i].Value + " (offset " + strconv.FormatInt(p.Records[i].Offset, 10) + ") without its marker: the LSO is stuck there (KAFKA-20716)"})
				break
			}
		}
	}
	return out
}

// txnFinal reads a partition's final log from its leader (else the longest
// live replica): its data records, each with its transaction's status from
// the control markers (committed for a record outside a transaction,
// unknown for a transaction with no marker yet).
func (r *Runner) txnFinal(tp storage.TopicPartition) (checkers.TxnFinalPartition, bool) {
	var best *storage.Log
	leader := false
	for _, id := range r.Observer.Replicas[tp] {
		b, alive := r.Observer.Broker(id)
		if !alive {
			continue
		}
		p, ok := b.Partition(tp)
		if !ok {
			continue
		}
		l := p.Log()
		isLeader := p.Role() == server.Leader
		if best == nil || (isLeader && !leader) || (isLeader == leader && l.LogEndOffset() > best.LogEndOffset()) {
			best, leader = l, isLeader
		}
	}
	if best == nil {
		return checkers.TxnFinalPartition{}, false
	}
	out := checkers.TxnFinalPartition{Topic: tp.Topic, Partition: tp.Partition}
	open := map[int64][]int{} // producer id -> indexes of its open transaction's records
	off := best.LogStartOffset()
	for off < best.LogEndOffset() {
		data, err := best.Read(off, 1<<20, best.LogEndOffset())
		if err != nil || len(data) == 0 {
			break
		}
		for len(data) > 0 {
			b, n, err := storage.DecodeBatch(data)
			if err != nil {
				return out, true
			}
			info, _ := storage.ParseBatchInfo(data)
			out.Transactional = out.Transactional || info.IsTransactional() || info.IsControl()
			switch {
			case info.IsControl():
				m, ok, _ := storage.ReadEndTxnMarker(data[:n])
				if ok {
					st := checkers.TxnAborted
					if m.Commit() {
						st = checkers.TxnCommitted
					}
					for _, i := range open[info.ProducerID] {
						out.Records[i].Status = st
					}
				}
				delete(open, info.ProducerID)
			default:
				for _, rec := range b.Records {
					st := checkers.TxnCommitted
					if info.IsTransactional() {
						st = checkers.TxnUnknown
						open[info.ProducerID] = append(open[info.ProducerID], len(out.Records))
					}
					out.Records = append(out.Records, checkers.TxnFinalRecord{Offset: rec.Offset, Value: string(rec.Value), Status: st})
				}
			}
			data = data[n:]
			off = b.NextOffset()
		}
	}
	return out, true
}

// recordReads records a read_committed consumer's poll as TxnReads, one
// per partition: the position before, the records, the position after.
func (l *txnLog) recordReads(now sim.Time, process string, c *client.Consumer, before map[client.TopicPartition]int64, order []client.TopicPartition, byTP map[client.TopicPartition][]checkers.Record, invoke sim.Time) {
	for _, tp := range order {
		recs := byTP[tp]
		from, ok := before[tp]
		if !ok {
			from = recs[0].Offset
		}
		next, ok := c.Position(tp)
		if !ok {
			next = recs[len(recs)-1].Offset + 1
		}
		l.reads = append(l.reads, checkers.TxnRead{Process: process, Topic: tp.Topic, Partition: tp.Partition, ReadCommitted: true,
			FetchOffset: from, Next: next, Records: recs, Invoke: invoke, Complete: now})
	}
}

// fatalTxn reports whether err is a fatal transactional error (the
// producer must be closed: fenced).
func fatalTxn(err error) bool {
	var te *client.TxnError
	return errors.As(err, &te) && te.Fatal
}

// ctpOutput is the output value consume-transform-produce derives from an
// input: unique per attempt, so that every output is traced to its input.
func ctpOutput(input, process string, attempt int) string {
	return input + ">" + process + "." + strconv.Itoa(attempt)
}
