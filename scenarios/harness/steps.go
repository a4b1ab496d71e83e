package harness

import (
	"fmt"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// Step executes one script step.
func (r *Runner) Step(st scenarios.Step) error {
	w := r.World
	switch st.Op {
	case "run":
		return r.Advance(w.Now().Add(st.Dur))
	case "init-txn", "begin", "commit", "abort":
		return r.txnStep(st)
	case "produce":
		if n, ok := r.producers[st.Args[0]]; ok {
			topic, ps, _ := strings.Cut(st.Args[1], "/")
			p, err := strconv.Atoi(ps)
			if err != nil || p < 0 || !r.hasPartition(topic, int32(p)) {
				return fmt.Errorf("%q is not a partition of this scenario", st.Args[1])
			}
			return r.produceTxn(n, topic, int32(p), st.Args[2])
		}
		_, c, err := r.client(st.Args[0])
		if err != nil {
			return err
		}
		topic, ps, _ := strings.Cut(st.Args[1], "/")
		p, err := strconv.Atoi(ps)
		if err != nil || p < 0 || !r.hasPartition(topic, int32(p)) {
			return fmt.Errorf("%q is not a partition of this scenario", st.Args[1])
		}
		timeout := 30 * sim.Second
		if t, ok := st.KV["timeout"]; ok {
			if timeout, err = scenarios.ParseDuration(t); err != nil {
				return err
			}
		}
		var key *string
		if k, ok := st.KV["key"]; ok {
			key = &k
		}
		id, _ := w.Lookup(st.Args[0])
		return w.Act(id, func(ctx *sim.Context) {
			c.produce(ctx, topic, int32(p), st.Args[2], key, parseAcks(st.KV["acks"]), timeout)
		})
	case "await":
		return r.await(st)
	case "crash", "power-loss":
		id, b, err := r.broker(st.Args[0])
		if err != nil {
			return err
		}
		lose := st.Op == "power-loss"
		// What the power loss may take is what the broker has not flushed:
		// with every log flushed (log.flush.interval.messages=1) it loses
		// nothing Kafka's contract lets it lose, and a loss is not excused.
		lostData := lose && r.Observer.unflushed(b)
		crash := sim.Crash{Node: id, LoseUnsynced: lose}
		switch st.KV["keep"] {
		case "", "some":
		case "none":
			crash.LoseAll = true
		case "all":
			crash.LoseUnsynced = false // the OS happened to write everything out
		default:
			return fmt.Errorf("keep=%q: allowed none, some (the chooser decides), all", st.KV["keep"])
		}
		if err := w.Inject(crash); err != nil {
			return err
		}
		kind := checkers.Crash
		if lose {
			kind = checkers.PowerLoss
			r.Observer.unclean[b] = true
		}
		r.Observer.fail(b, kind, lostData)
	case "shutdown":
		id, b, err := r.broker(st.Args[0])
		if err != nil {
			return err
		}
		if err := w.Inject(sim.Shutdown{Node: id}); err != nil {
			return err
		}
		r.Observer.fail(b, checkers.Crash, false)
	case "restart":
		id, b, err := r.broker(st.Args[0])
		if err != nil {
			return err
		}
		if err := w.Inject(sim.Restart{Node: id}); err != nil {
			return err
		}
		r.Observer.recover(b, checkers.Crash, checkers.PowerLoss, checkers.DiskWiped)
	case "wipe-disk":
		// The node is down (sim.WipeDisk refuses a running one); its
		// crash or power loss ends here and the wipe is a failure of its
		// own, which lost everything, until the node restarts.
		id, b, err := r.broker(st.Args[0])
		if err != nil {
			return err
		}
		if err := w.Inject(sim.WipeDisk{Node: id}); err != nil {
			return err
		}
		r.Observer.recover(b, checkers.Crash, checkers.PowerLoss)
		r.Observer.fail(b, checkers.DiskWiped, true)
		r.Observer.unclean[b] = true
		if r.wiped == nil {
			r.wiped = map[string]bool{}
		}
		r.wiped[st.Args[0]] = true // swarm.go: one controller out at a time
	case "restart-all":
		for i, id := range r.Cluster.Brokers {
			if !w.Up(id) {
				if err := w.Inject(sim.Restart{Node: id}); err != nil {
					return err
				}
				r.Observer.recover(int32(i), checkers.Crash, checkers.PowerLoss, checkers.DiskWiped)
			}
		}
		if err := r.restartControllers(); err != nil { // KRaft: kraft.go
			return err
		}
		for _, name := range r.allConsumers() { // and the crashed consumers
			id, _ := w.Lookup(name)
			if n, ok := w.Node(id).(*consumerNode); ok && w.Up(id) && n.fencedCTP() {
				// A fenced consume-transform-produce application closed
				// itself, as it must; its operator starts a new instance.
				if err := w.Inject(sim.Crash{Node: id}); err != nil {
					return err
				}
			}
			if !w.Up(id) {
				if err := w.Inject(sim.Restart{Node: id}); err != nil {
					return err
				}
			}
		}
	case "pause":
		if _, ok := r.producers[st.Args[0]]; ok {
			return r.pauseProducer(st.Args[0], st.Dur)
		}
		if slices.Contains(r.allConsumers(), st.Args[0]) {
			return r.pauseConsumer(st.Args[0], st.Dur)
		}
		id, b, err := r.broker(st.Args[0])
		if err != nil {
			return err
		}
		if err := w.Inject(sim.Pause{Node: id, For: st.Dur}); err != nil {
			return err
		}
		r.Observer.Facts.Failures = append(r.Observer.Facts.Failures, checkers.Failure{Broker: b, Kind: checkers.Paused, Time: w.Now(), End: w.Now().Add(st.Dur)})
	case "cut":
		from, err := r.node(st.Args[0])
		if err != nil {
			return err
		}
		to, err := r.node(st.Args[2])
		if err != nil {
			return err
		}
		if from == to && (st.Args[0] == "controller" || st.Args[2] == "controller") {
			// 'cut controller <-> ctl1' on the controller ctl1 itself: the
			// indirection resolved to the other end, and a node's link to
			// itself carries nothing. So a script can cut the active
			// controller from every other voter without knowing which
			// one it is.
			break
		}
		if err := w.Inject(sim.Cut{From: from, To: to, BothWays: st.Args[1] == "<->"}); err != nil {
			return err
		}
		r.isolated(st.Args[0], st.Args[2])
	case "partition":
		var groups [][]sim.NodeID
		var names [][]string
		cur := []string{}
		for _, a := range append(st.Args, "|") {
			if a == "|" {
				if len(cur) == 0 {
					return fmt.Errorf("empty group: want 'partition A,B | C,D' (%s names no node with the brokers holding the metadata: KRaft's combined mode, a manual controller)", scenarios.MetadataNodes)
				}
				var g []sim.NodeID
				for _, n := range cur {
					id, err := r.node(n)
					if err != nil {
						return err
					}
					g = append(g, id)
				}
				groups, names = append(groups, g), append(names, cur)
				cur = []string{}
				continue
			}
			for _, n := range strings.Split(a, ",") {
				switch {
				case n == scenarios.MetadataNodes:
					cur = append(cur, r.metadataNodes()...)
				case n != "":
					cur = append(cur, n)
				}
			}
		}
		if err := w.Inject(sim.Partition{Groups: groups}); err != nil {
			return err
		}
		// Every broker not in the largest group counts as isolated.
		largest := 0
		for i, g := range names {
			if len(g) > len(names[largest]) {
				largest = i
			}
		}
		for i, g := range names {
			if i != largest {
				r.isolated(g...)
			}
		}
	case "leader-and-isr":
		return r.LeaderAndISR(st)
	case "consumer", "kill-consumer", "restart-consumer", "close-consumer", "crash-coordinator":
		return r.consumerStep(st)
	case "share-consumer":
		return r.newShareConsumer(st)
	case "swarm":
		return r.swarm(st)
	case "producer":
		return r.newProducer(st)
	case "send":
		return r.sendRecords(st)
	case "add-controller", "remove-controller":
		return r.voterChange(st) // kraft.go
	case "alter-config":
		return r.alterConfig(st)
	case "lossy":
		return r.lossy(st)
	case "delay":
		return r.delay(st)
	case "heal":
		if err := w.Inject(sim.Heal{}); err != nil {
			return err
		}
		for b := range r.Cluster.Brokers {
			r.Observer.recover(int32(b), checkers.Isolated)
		}
		for i := range r.Cluster.Controllers {
			r.Observer.recover(server.FirstControllerID+int32(i), checkers.Isolated)
		}
	}
	return nil
}

// isolated records brokers among names as cut off.
func (r *Runner) isolated(names ...string) {
	for _, n := range names {
		if _, b, err := r.broker(n); err == nil {
			r.Observer.fail(b, checkers.Isolated, false)
		}
	}
}

func (r *Runner) hasPartition(topic string, p int32) bool {
	for _, t := range r.s.Topics {
		if t.Name == topic && int(p) < t.Partitions {
			return true
		}
	}
	return false
}

// await runs until the awaited thing happens, or fails after st.Dur. An
// ack await also fails when the record's produce ended otherwise (refused,
// or unknown), naming the record and the error.
func (r *Runner) await(st scenarios.Step) error {
	deadline := r.World.Now().Add(st.Dur)
	var cond func() bool
	var c *scriptClient
	if len(st.Args) == 3 && st.Args[1] == "txn" {
		return r.awaitTxn(st)
	}
	if isClientAwait(st) {
		var ok bool
		if c, ok = r.clients[st.Args[0]]; !ok {
			return fmt.Errorf("unknown client %q (a client exists once it produced)", st.Args[0])
		}
		value := st.Args[2]
		cond = func() bool { return c.done[value] }
	} else {
		node, kind := st.Args[0], st.Args[1]
		if _, err := r.node(node); err != nil {
			return err
		}
		r.seen = len(r.World.Trace().Records())
		cond = func() bool {
			recs := r.World.Trace().Records()
			for ; r.seen < len(recs); r.seen++ {
				if rec := recs[r.seen]; rec.Name == node && rec.Kind == kind && fieldsMatch(rec, st.KV) {
					r.seen++
					return true
				}
			}
			return false
		}
	}
	for !cond() {
		next, ok := r.World.NextEventTime()
		if !ok || next > deadline {
			if done, err := r.idleUntil(deadline); err != nil {
				return err
			} else if !done {
				continue
			}
			return fmt.Errorf("not satisfied within %v", st.Dur)
		}
		if err := r.StepOne(); err != nil {
			return err
		}
	}
	// 'await C ack V' is an expectation: the record was acknowledged.
	// 'await C done V' accepts any outcome.
	if c != nil && st.Args[1] == "ack" {
		if o := c.outcomes[st.Args[2]]; o.outcome != checkers.OK {
			return fmt.Errorf("%s's record %s was not acknowledged: %s (use 'await %s done %s' to accept any outcome)", st.Args[0], st.Args[2], o, st.Args[0], st.Args[2])
		}
	}
	return nil
}

// isClientAwait reports whether an await step waits for a scripted
// client's record (ack or done) rather than for a trace record.
func isClientAwait(st scenarios.Step) bool {
	return len(st.Args) == 3 && (st.Args[1] == "ack" || st.Args[1] == "done" || st.Args[1] == "txn")
}

func fieldsMatch(rec sim.Record, want map[string]string) bool {
	for k, v := range want {
		got, ok := rec.Get(k)
		if !ok || got != v {
			return false
		}
	}
	return true
}

// Judge runs the checkers and compares them with the expectations.
func (r *Runner) Judge(res *Result, v scenarios.Variant, budget time.Duration) {
	if budget == 0 {
		budget = 10 * time.Second
	}
	w := r.World
	recs := w.Trace().Records()
	r.Observer.Facts.UncleanElections = uncleanElections(recs)
	if r.Cluster.Spec.KRaft() { // kraft.go: the controller's partition-change records
		r.Observer.Facts.UncleanElections = append(r.Observer.Facts.UncleanElections, kraftUncleanElections(recs)...)
		r.Observer.Facts.ISRChanges = append(r.Observer.Facts.ISRChanges, kraftISRChanges(recs)...)
	}
	r.Observer.Facts.ISRChanges = isrChanges(r.Observer.Facts.ISRChanges, recs)
	r.Observer.Facts.Healed = healed(w, r.Cluster)
	var ctrl = r.activeController()
	final := r.Observer.final(ctrl, r.manual)
	markCompacted(&final, recs)
	markDeleted(&final, recs) // deletion.go
	if r.Cluster.Spec.KRaft() {
		r.kraftFinalLeaders(&final)
		final.Raft = RaftRun(w, r.Cluster)
	}
	final.Liveness = r.live
	final.Facts.Unwritable = r.unwritableParts() // unwritable.go
	if off := r.kraftOffline(); len(off) > 0 {
		final.Facts.Offline = off
		if r.live != nil {
			r.live.Offline = off
		}
	}
	for _, rec := range w.Trace().Records() {
		if rec.Kind == coordinator.KindGenerationsRestart {
			g, _ := rec.Get("group")
			r.Recorder.GroupGenerationsRestarted(rec.Time, g)
		}
	}
	for ; r.shareLoadsRecorded < len(r.Observer.ShareLoads); r.shareLoadsRecorded++ {
		r.Recorder.ShareLoad(r.Observer.ShareLoads[r.shareLoadsRecorded]) // share_consumer.go
	}
	// deletion.go: deleting is not losing (a served run forgot some of
	// what it sets aside as it went: ForgetDeleted)
	whole := r.Recorder.Finish(w.Now())
	hist, aside := checkers.SetAsideDeletedAfter(whole, final, r.Recorder.Forgotten())
	res.Stats.SetAside = len(whole.Ops) - len(hist.Ops) + r.Recorder.Forgotten()
	res.Final, res.History = final, hist
	if r.txn.used {
		th := r.txnHistory()
		res.Transactions = &th
		if final.Liveness != nil {
			final.Liveness.StuckLSO = stuckLSO(th, final.Facts.UncleanElections)
		}
	}
	res.Verdicts = checkers.CheckAll(hist, final, r.Observer.monitor, checkers.Options{LinearizabilityBudget: budget, SkipLinearizability: r.txn.used, Transactions: res.Transactions})
	if th := res.Transactions; th != nil {
		// transactions_lin.go: the partitions holding transactions are the
		// transactions checker's.
		res.Verdicts[0] = checkers.LinearizabilityOutsideTransactions(hist, final, *th, budget)
		res.Verdicts = append(res.Verdicts, checkers.CheckTransactions(*th, final))
	}
	if r.RealClients() {
		for i, vd := range res.Verdicts {
			if vd.Checker == checkers.NameConsumer {
				res.Verdicts[i] = checkers.NotJudgedVerdict(vd.Checker, "the clients are real (serve): the brokers see what a group's members fetched and committed, not what their applications processed, nor whether a lower commit was a seek; the group checker judges the groups' assignments")
			}
		}
	}
	if aside != "" {
		for i, vd := range res.Verdicts {
			if vd.Checker == checkers.NameAckedLoss || vd.Checker == checkers.NameLinearizability {
				res.Verdicts[i].Notes = append(res.Verdicts[i].Notes, aside)
			}
		}
	}
	if res.Failed != "" {
		// A run cut short is judged only on what it did: the checkers of
		// the end phase it never reached would judge a half-run.
		for i, vd := range res.Verdicts {
			if checkers.NeedsEndPhase(vd.Checker) {
				res.Verdicts[i] = checkers.NotJudgedVerdict(vd.Checker, "the run ended at "+failedAt(res.Failed)+", before the end phase this checker judges (healing, final reads, liveness)")
			}
		}
	}
	res.TraceHash, res.Events, res.SimTime = w.Trace().Hash(), w.Events(), w.Now()
	res.Stats.count(hist, r.RealClients())
	res.Stats.countSends(hist, r.scheduledSends())
	if th := res.Transactions; th != nil {
		for _, t := range th.Txns {
			switch t.Outcome {
			case checkers.TxnCommitted:
				res.Stats.TxnCommitted++
			case checkers.TxnAborted:
				res.Stats.TxnAborted++
			default:
				res.Stats.TxnUnknown++
			}
		}
	}
	for _, vd := range res.Verdicts {
		switch vd.Checker {
		case "acked-loss":
			// Acknowledged records only: committed-lost anomalies (records
			// below a leader's HW, acknowledged or not) are not counted.
			res.Stats.AckedLost = vd.Omitted
			for _, a := range vd.Anomalies {
				if a.Kind != checkers.KindCommittedLost {
					res.Stats.AckedLost++
				}
			}
		case "divergence":
			for _, a := range vd.Anomalies {
				res.Stats.DivergentOffsets += max(1, len(a.Offsets))
			}
		}
	}
	if !expectationsApply(r.s, v, res.Set) {
		res.ExpectNote = "the script's expect lines were not applied: -set (or a -config file, or a grid) changed the variant's configuration, so the contract alone judges the run"
		return
	}
	res.Expect = v.Expect
	for _, vd := range res.Verdicts {
		if e, ok := v.Expect[vd.Checker]; ok && !meets(vd, e) {
			res.Mismatches = append(res.Mismatches, fmt.Sprintf("%s: expected %s, got %s", vd.Checker, e, Outcome(vd)))
		}
	}
}

// expectationsApply reports whether the variant's expect lines judge a run
// under set: only when set leaves its configuration and script variables
// as the variant writes them (exit.go).
func expectationsApply(s *scenarios.Script, v scenarios.Variant, set map[string]string) bool {
	if len(v.Expect) == 0 || len(set) == 0 {
		return true
	}
	return maps.Equal(s.Configuration(v, set), s.Configuration(v, nil)) &&
		maps.Equal(scenarios.ScriptVars(v, set), scenarios.ScriptVars(v, nil))
}

// failedAt is where a failed run ended: the "file:line" of Result.Failed,
// or the whole reason when it names no step.
func failedAt(failed string) string {
	file, rest, ok := strings.Cut(failed, ":")
	if line, _, ok2 := strings.Cut(rest, ":"); ok && ok2 {
		if _, err := strconv.Atoi(line); err == nil {
			return file + ":" + line
		}
	}
	return failed
}

// meets reports whether a verdict satisfies an expectation.
func meets(v checkers.Verdict, e scenarios.Expectation) bool {
	switch e {
	case scenarios.ExpectOK:
		return v.Result == checkers.ResultOK
	case scenarios.ExpectBug:
		return v.Result == checkers.ResultViolation && v.ContractBroken()
	case scenarios.ExpectPermitted:
		return v.Result != checkers.ResultUnknown && !v.ContractBroken()
	case scenarios.ExpectViolation:
		return v.Result == checkers.ResultViolation
	}
	return true
}
