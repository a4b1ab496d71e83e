package harness

// This file puts consumer groups into scripts. 'consumer NAME group=G
// topic=T [pattern=at-least-once|at-most-once|idempotent-sink|auto] [poll=DUR]
// [process=DUR] [commit-delay=DUR] [consumer properties]' starts a node running Kafka's
// consumer (package client) in an application loop: every poll interval it
// polls and, for the pattern,
//   - at-least-once: processes the records (process=DUR), waits
//     commit-delay, then commitSync of the positions; on revocation it
//     commits before the rebalance;
//   - at-most-once: commitSync of the positions first, processes only if
//     that commit succeeded (a failed one drops the records: someone else
//     gets them);
//   - idempotent-sink: as at-least-once, but processing writes into a sink
//     shared by the group (an external store, so it outlives the members)
//     that keeps each value once, as an upsert by a unique key does: the
//     seeds' first route to exactly-once. Re-deliveries are absorbed (a
//     "sink-duplicate" trace event) and the history's Consume records what
//     the sink applied, judged as exactly-once.
//   - auto: enable.auto.commit=true, processes, and lets poll commit.
//
// 'kill-consumer NAME' crashes the node (whatever it was processing is
// never delivered), 'restart-consumer NAME' starts it again (it rejoins as
// a new member), 'close-consumer NAME' closes the consumer (commit and
// LeaveGroup), 'crash-coordinator GROUP' crashes the broker leading the
// group's __consumer_offsets partition.
//
// The history records, per partition: Consume (the records a poll gave
// the application, completed when processed), Commit with its outcome,
// Assign and Revoke from the rebalance listener. __consumer_offsets is
// created (offsets.topic.num.partitions, offsets.topic.replication.factor)
// at the first consumer step unless the script declares it as a topic.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/client"
	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// patternIdempotentSink is the pattern of exactly-once by an idempotent sink.
const patternIdempotentSink = "idempotent-sink"

// consumerSettings are a consumer node's settings; they survive restarts.
type consumerSettings struct {
	name      string
	topic     string
	pattern   string
	poll      sim.Duration
	process   sim.Duration
	delay     sim.Duration    // at-least-once: between processing and committing
	sink      map[string]bool // idempotent-sink: the group's sink, by value
	cfg       config.Consumer
	bootstrap []int32
	rec       *checkers.Recorder
	// txn is the run's transaction log (transactions.go): the
	// read_committed consumers' reads go there. consume-transform-produce
	// (ctp.go) writes to output with its producer's configuration pcfg.
	txn    *txnLog
	output string
	outN   int32
	pcfg   config.Producer
	tv     int16
	// txnOffsets: the offsets are committed in the transaction
	// (sendOffsetsToTransaction); else after it (offsets=after-commit).
	txnOffsets bool
	// stall, when armed (the swarm's consumer-stall), is how long the
	// member stalls at its next poll that returns records; pause stalls
	// it (Runner.newConsumer).
	stall   sim.Duration
	stallBy sim.Time // an armed stall not struck by then lapses
	pause   func(name string, d sim.Duration)
	// attempt numbers consume-transform-produce's outputs (ctpOutput).
	// NB: it lives here, not in the node's state, so that it survives
	// restart-consumer: an instance restarted with the same name must not
	// write the output values of the one it fenced, or the transactions
	// checker counts one committed record as two outputs of an input.
	attempt int
	// restartFenced is how long after its fencing closed it a
	// consume-transform-produce member is started again (0: never, as
	// before); restart does it.
	restartFenced sim.Duration
	restart       func(after sim.Duration)
}

// consumerNode is the application: a poll loop around one consumer.
type consumerNode struct {
	s        *consumerSettings
	c        *client.Consumer
	busy     bool
	stopped  bool            // closed after FENCED_INSTANCE_ID: the application stopped
	inflight []checkers.OpID // Consume ops of the poll being processed
	batch    [][]checkers.Record
	// ctp is the consume-transform-produce side (ctp.go), nil otherwise.
	ctp *ctpState
	// assigned and positions are poll's scratch: the assignment and each
	// partition's position before the poll, reused between polls.
	assigned  []client.TopicPartition
	positions []position
}

// position is a consumer's position in a partition, if it has one.
type position struct {
	offset int64
	ok     bool
}

const (
	timerAppPoll    = "app-poll"
	timerAppProcess = "app-process"
	timerAppCommit  = "app-commit"
)

func (n *consumerNode) Start(ctx *sim.Context) {
	c, err := client.NewConsumer(n.s.cfg, n.s.bootstrap)
	if err != nil {
		panic(err) // NB: the settings were validated by the step
	}
	n.c = c
	// The group's committed offsets it resumes from: a lost acknowledged
	// commit shows in them (checkers/group.go's lost-commit).
	c.OnCommittedFetched(func(ctx *sim.Context, sent sim.Time, tp client.TopicPartition, offset int64) {
		gen, member := c.Generation()
		n.s.rec.FetchedCommitted(sent, ctx.Now(), n.s.name, n.s.cfg.GroupID, member, gen, tp.Topic, tp.Partition, offset)
	})
	c.Start(ctx)
	if n.s.pattern == scenarios.PatternCTP {
		n.startCTP(ctx)
	}
	l := client.RebalanceListener{
		OnAssigned: func(ctx *sim.Context, tps []client.TopicPartition) {
			gen, member := c.Generation()
			for _, tp := range tps {
				n.s.rec.Assign(ctx.Now(), n.s.name, n.s.cfg.GroupID, member, gen, tp.Topic, tp.Partition)
			}
		},
		OnRevoked: func(ctx *sim.Context, tps []client.TopicPartition) {
			n.revoked(ctx, tps, "revoked")
			if n.s.commitsAfter() {
				n.commit(ctx, nil) // commit what was processed before the rebalance
			}
		},
		OnLost: func(ctx *sim.Context, tps []client.TopicPartition) { n.revoked(ctx, tps, "lost") },
	}
	if err := c.Subscribe(ctx, []string{n.s.topic}, l); err != nil {
		panic(err)
	}
	ctx.SetTimer(n.s.poll, timerAppPoll)
}

func (n *consumerNode) revoked(ctx *sim.Context, tps []client.TopicPartition, why string) {
	gen, member := n.c.Generation()
	for _, tp := range tps {
		n.s.rec.Revoke(ctx.Now(), n.s.name, n.s.cfg.GroupID, member, gen, tp.Topic, tp.Partition, why)
	}
}

func (n *consumerNode) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	if n.ctp != nil && n.ctp.p.p.HandleMessage(ctx, from, m) {
		return
	}
	n.c.HandleMessage(ctx, from, m)
}

// Disconnected implements sim.Disconnectable: the consumer learns of a
// reset connection as Kafka's client does.
func (n *consumerNode) Disconnected(ctx *sim.Context, peer sim.NodeID) {
	if n.ctp != nil {
		n.ctp.p.p.HandleDisconnect(ctx, peer)
	}
	n.c.HandleDisconnect(ctx, peer)
}

func (n *consumerNode) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	if n.c.HandleTimer(ctx, id, name) || (n.ctp != nil && n.ctp.p.p.HandleTimer(ctx, id, name)) {
		return
	}
	switch name {
	case timerAppPoll:
		if !n.busy {
			n.poll(ctx)
		}
		if !n.stopped {
			ctx.SetTimer(n.s.poll, timerAppPoll)
		}
	case timerAppProcess:
		n.processed(ctx)
	case timerAppCommit:
		n.commit(ctx, func(*sim.Context, bool) { n.busy = false })
	}
}

// poll polls and starts processing what it got.
func (n *consumerNode) poll(ctx *sim.Context) {
	if n.ctp != nil && !n.ctp.ready {
		return
	}
	invoke := ctx.Now()
	// NB: the positions before the poll go to a reused slice; most polls
	// return nothing, and only one that returns records needs them as a map.
	n.assigned = n.c.AppendAssignment(n.assigned[:0])
	n.positions = n.positions[:0]
	for _, tp := range n.assigned {
		p, ok := n.c.Position(tp)
		n.positions = append(n.positions, position{p, ok})
	}
	recs, err := n.c.Poll(ctx)
	if err != nil {
		ctx.Log("app-poll-error", sim.S("error", err.Error()))
		if errors.Is(err, kerr.FencedInstanceID) {
			// A zombie static member (KIP-345): FencedInstanceIdException
			// is fatal, and the application closes the consumer.
			n.c.Close(ctx)
			n.stopped = true
			if n.s.restart != nil {
				n.s.restart(n.s.restartFenced) // restart-fenced=DUR: its supervisor starts a new one
			}
			return
		}
	}
	if len(recs) == 0 {
		return
	}
	before := map[client.TopicPartition]int64{}
	for i, tp := range n.assigned {
		if pos := n.positions[i]; pos.ok {
			before[tp] = pos.offset
		}
	}
	gen, member := n.c.Generation()
	var order []client.TopicPartition
	byTP := map[client.TopicPartition][]checkers.Record{}
	for _, r := range recs {
		tp := client.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if _, ok := byTP[tp]; !ok {
			order = append(order, tp)
		}
		byTP[tp] = append(byTP[tp], fetchedRecord(r, n.s.cfg.IsolationLevel == config.ReadCommitted))
	}
	if n.s.cfg.IsolationLevel == config.ReadCommitted {
		n.s.txn.recordReads(ctx.Now(), n.s.name, n.c, before, order, byTP, invoke)
	}
	n.inflight, n.batch = nil, nil
	for _, tp := range order {
		from, ok := before[tp]
		if !ok {
			from = byTP[tp][0].Offset
		}
		n.inflight = append(n.inflight, n.s.rec.Consume(ctx.Now(), n.s.name, n.s.cfg.GroupID, member, gen, tp.Topic, tp.Partition, from))
		n.batch = append(n.batch, byTP[tp])
	}
	n.busy = true
	if d := n.s.stall; d > 0 {
		n.s.stall = 0
		if ctx.Now() < n.s.stallBy {
			n.s.pause(n.s.name, d)
		}
	}
	if n.ctp != nil {
		n.transform(ctx, before, order, byTP)
		return
	}
	if n.s.commitsFirst() {
		// NB: mutant.CommitBeforeProcess commits as at-most-once does,
		// then processes whatever the commit's outcome.
		n.commit(ctx, func(ctx *sim.Context, ok bool) { ctx.SetTimer(n.s.process, timerAppProcess) })
		return
	}
	if n.s.pattern == checkers.AtMostOnce {
		n.commit(ctx, func(ctx *sim.Context, ok bool) {
			if !ok {
				n.inflight, n.batch, n.busy = nil, nil, false // not processed: dropped
				return
			}
			ctx.SetTimer(n.s.process, timerAppProcess)
		})
		return
	}
	ctx.SetTimer(n.s.process, timerAppProcess)
}

// fetchedRecord is what the history keeps of a record a consumer
// fetched: its offset, value and batch leader epoch, and the HW (with
// read_committed, also the LSO) of the fetch response that carried it.
func fetchedRecord(r client.ConsumerRecord, readCommitted bool) checkers.Record {
	rec := checkers.Record{Offset: r.Offset, Value: string(r.Value), LeaderEpoch: r.LeaderEpoch, HighWatermark: r.HighWatermark}
	if r.CurrentLeaderEpoch >= 0 {
		rec.CurrentLeaderEpoch = r.CurrentLeaderEpoch
	}
	if readCommitted {
		rec.LastStableOffset = r.LastStableOffset
	}
	return rec
}

// processed completes the deliveries and, at-least-once, commits.
func (n *consumerNode) processed(ctx *sim.Context) {
	for i, id := range n.inflight {
		n.s.rec.Consumed(id, ctx.Now(), n.s.apply(ctx, n.batch[i]))
	}
	n.inflight, n.batch = nil, nil
	if n.s.commitsAfter() && !n.s.commitsFirst() {
		ctx.SetTimer(n.s.delay, timerAppCommit)
		return
	}
	n.busy = false
}

// commitsAfter reports whether the pattern commits after processing.
func (s *consumerSettings) commitsAfter() bool {
	return s.pattern == checkers.AtLeastOnce || s.pattern == patternIdempotentSink
}

// commitsFirst reports whether an at-least-once loop commits a poll's
// positions before processing its records: mutant.CommitBeforeProcess.
func (s *consumerSettings) commitsFirst() bool {
	return s.pattern == checkers.AtLeastOnce && s.cfg.Mutants.On(mutant.CommitBeforeProcess)
}

// apply processes records: all of them, or, into an idempotent sink, the
// values it does not hold yet.
func (s *consumerSettings) apply(ctx *sim.Context, recs []checkers.Record) []checkers.Record {
	if s.sink == nil {
		return recs
	}
	var applied []checkers.Record
	for _, r := range recs {
		if s.sink[r.Value] {
			ctx.Log("sink-duplicate", sim.S("value", r.Value), sim.I("offset", r.Offset))
			continue
		}
		s.sink[r.Value] = true
		applied = append(applied, r)
	}
	return applied
}

// commit commits the current positions synchronously, recording one
// Commit per partition; done (may be nil) runs with the outcome.
func (n *consumerNode) commit(ctx *sim.Context, done func(*sim.Context, bool)) {
	var offs []client.TopicPartitionOffset
	for _, tp := range n.c.Assignment() {
		if p, ok := n.c.Position(tp); ok {
			offs = append(offs, client.TopicPartitionOffset{TopicPartition: tp, Offset: p})
		}
	}
	if len(offs) == 0 {
		if done != nil {
			done(ctx, true)
		}
		return
	}
	gen, member := n.c.Generation()
	ids := make([]checkers.OpID, len(offs))
	for i, o := range offs {
		ids[i] = n.s.rec.Commit(ctx.Now(), n.s.name, n.s.cfg.GroupID, member, gen, o.Topic, o.Partition, o.Offset)
	}
	err := n.c.CommitSync(ctx, offs, func(ctx *sim.Context, _ []client.TopicPartitionOffset, err error) {
		for _, id := range ids {
			switch {
			case err == nil:
				n.s.rec.Committed(id, ctx.Now())
			case errorsIsDefinite(err):
				n.s.rec.Fail(id, ctx.Now(), err.Error())
			default:
				n.s.rec.Info(id, ctx.Now(), err.Error())
			}
		}
		if done != nil {
			done(ctx, err == nil)
		}
	})
	if err != nil {
		for _, id := range ids {
			n.s.rec.Fail(id, ctx.Now(), err.Error())
		}
		if done != nil {
			done(ctx, false)
		}
	}
}

// errorsIsDefinite reports whether a commit error means the offsets were
// certainly not stored: a rejection before any append.
func errorsIsDefinite(err error) bool {
	return errorsIs(err, client.ErrCommitFailed)
}

// consumerStep executes the consumer steps.
func (r *Runner) consumerStep(st scenarios.Step) error {
	switch st.Op {
	case "consumer":
		return r.newConsumer(st)
	case "crash-coordinator":
		b, err := r.coordinatorOf(st.Args[0])
		if err != nil {
			return err
		}
		return r.Step(scenarios.Step{Line: st.Line, Op: "crash", Args: []string{server.NodeName(b)}, KV: map[string]string{}})
	}
	id, ok := r.World.Lookup(st.Args[0])
	_, isConsumer := r.World.Node(id).(*consumerNode)
	share, isShare := r.World.Node(id).(*shareConsumerNode)
	if !ok || (!isConsumer && !isShare && r.World.Up(id)) {
		return fmt.Errorf("%q is not a consumer (create it with a 'consumer' or 'share-consumer' step)", st.Args[0])
	}
	if isShare || slices.Contains(r.shareConsumers, st.Args[0]) {
		switch st.Op {
		case "kill-consumer":
			return r.World.Inject(sim.Crash{Node: id})
		case "restart-consumer":
			return r.World.Inject(sim.Restart{Node: id})
		default: // close-consumer
			if !isShare {
				return fmt.Errorf("share consumer %q is down", st.Args[0])
			}
			return r.World.Act(id, func(ctx *sim.Context) { share.close(ctx) })
		}
	}
	switch st.Op {
	case "kill-consumer":
		// close=true: the process shuts down cleanly (Close: the commit,
		// the revocation, the leave, which for a static member under
		// group.protocol=consumer is KIP-848's epoch -2) and then dies,
		// as an orchestrator's rolling restart does.
		switch v := st.KV["close"]; v {
		case "", "false":
		case "true":
			if n, up := r.World.Node(id).(*consumerNode); up {
				if err := r.World.Act(id, func(ctx *sim.Context) { n.c.Close(ctx) }); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("kill-consumer %s: close=%s: allowed: close=true or close=false", st.Args[0], v)
		}
		if r.World.Up(id) {
			r.Recorder.ConsumerCrashed(r.World.Now(), st.Args[0])
		}
		return r.World.Inject(sim.Crash{Node: id})
	case "restart-consumer":
		if p, ok := st.KV["group.protocol"]; ok {
			// The new process runs another group protocol (KIP-848's
			// rolling upgrade or downgrade). NB: the history keeps the
			// consumer's first declaration, so the group checker judges
			// the process by its first protocol (a classic start: by
			// generations, without the epoch checks).
			if r.World.Up(id) {
				return fmt.Errorf("restart-consumer %s group.protocol=%s: the consumer is running; kill or close it first", st.Args[0], p)
			}
			s := r.consumerSettings[st.Args[0]]
			cfg := s.cfg
			switch config.GroupProtocol(p) {
			case config.GroupProtocolClassic, config.GroupProtocolConsumer:
				cfg.GroupProtocol = config.GroupProtocol(p)
			default:
				return fmt.Errorf("restart-consumer %s: group.protocol=%s: allowed: classic, consumer", st.Args[0], p)
			}
			if err := config.CheckGroupProtocol(cfg, r.Cluster.Spec.Config.Broker); err != nil {
				return fmt.Errorf("restart-consumer %s: %w", st.Args[0], err)
			}
			s.cfg = cfg
		}
		if !r.World.Up(id) {
			r.Recorder.ConsumerRestarted(r.World.Now(), st.Args[0])
		}
		return r.World.Inject(sim.Restart{Node: id})
	default: // close-consumer
		n, up := r.World.Node(id).(*consumerNode)
		if !up {
			return fmt.Errorf("consumer %q is down", st.Args[0])
		}
		return r.World.Act(id, func(ctx *sim.Context) { n.c.Close(ctx) })
	}
}

// coordinatorOf returns the broker leading group's __consumer_offsets
// partition now.
func (r *Runner) coordinatorOf(group string) (int32, error) {
	a, ok := r.Cluster.Assignments[coordinator.OffsetsTopic]
	if !ok {
		return -1, fmt.Errorf("no %s topic yet (a consumer step creates it)", coordinator.OffsetsTopic)
	}
	tp := storage.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: int32(coordinator.CoordinatorPartition(group, len(a)))}
	for i := range r.Cluster.Brokers {
		if b := r.Cluster.Broker(i); b != nil && r.World.Up(r.Cluster.Brokers[i]) {
			if p, ok := b.Partition(tp); ok && p.Role() == server.Leader {
				return int32(i), nil
			}
		}
	}
	return -1, fmt.Errorf("no live broker leads %s", tp)
}

// parseConsumerStep reads a 'consumer' step (its variables substituted):
// the application's settings and the consumer's configuration, checked
// against the scenario's topics and the run's broker configuration.
// Prepare calls it on every consumer step, so that bad input is
// refused before a run starts.
// consumerStepKeys are the consumer step's own arguments, not consumer
// properties (parseConsumerStep).
var consumerStepKeys = map[string]bool{"topic": true, "pattern": true, "output": true, "transactional.id": true,
	"transaction.timeout.ms": true, "offsets": true, "restart-fenced": true, "poll": true, "process": true, "commit-delay": true}

func parseConsumerStep(st scenarios.Step, topics []scenarios.TopicSpec, run config.Config, given map[string]string) (*consumerSettings, error) {
	name := st.Args[0]
	// The run's consumer properties (-set, -consumer-config), then the
	// step's own.
	props := config.ClientProps(given, config.ConsumerPrefix)
	s := &consumerSettings{name: name, pattern: checkers.AtLeastOnce, poll: 100 * sim.Millisecond, process: 20 * sim.Millisecond}
	keys := make([]string, 0, len(st.KV))
	for k := range st.KV {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := st.KV[k]
		var err error
		switch k {
		case "topic":
			s.topic = v
		case "pattern":
			s.pattern = v
			if v != checkers.AtLeastOnce && v != checkers.AtMostOnce && v != patternIdempotentSink && v != "auto" && v != scenarios.PatternCTP {
				return nil, fmt.Errorf("pattern=%q: allowed at-least-once, at-most-once, idempotent-sink, auto, %s", v, scenarios.PatternCTP)
			}
		case "output":
			s.output = v
		case "transactional.id", "transaction.timeout.ms", "offsets":
			// the transactional producer's (parseCTP)
		case "restart-fenced":
			// A consume-transform-produce member fenced by its producer's
			// epoch, or a static member by FENCED_INSTANCE_ID (KIP-345):
			// its application closes it, and a supervisor starts a new
			// instance DUR later.
			if s.restartFenced, err = scenarios.ParseDuration(v); err == nil && s.restartFenced <= 0 {
				err = fmt.Errorf("want a positive duration")
			}
			if err != nil {
				return nil, fmt.Errorf("restart-fenced=%q: want a positive duration (how long after it was fenced the application starts a new instance)", v)
			}
		case "poll":
			s.poll, err = scenarios.ParseDuration(v)
		case "process":
			s.process, err = scenarios.ParseDuration(v)
		case "commit-delay":
			s.delay, err = scenarios.ParseDuration(v)
		default:
			props[k] = v
		}
		if err != nil {
			return nil, err
		}
	}
	if s.topic == "" || !slices.ContainsFunc(topics, func(t scenarios.TopicSpec) bool { return t.Name == s.topic }) {
		return nil, fmt.Errorf("consumer: topic=%q: want a topic of this scenario", s.topic)
	}
	if err := s.parseCTP(st, topics, run, props); err != nil {
		return nil, err
	}
	if s.poll <= 0 {
		return nil, fmt.Errorf("consumer: poll=%v: must be > 0", s.poll)
	}
	if _, ok := props["auto.offset.reset"]; !ok {
		props["auto.offset.reset"] = "earliest"
	}
	props["enable.auto.commit"] = strconv.FormatBool(s.pattern == "auto")
	if props["client.id"] == "" {
		props["client.id"] = name
	}
	modelled, _, err := config.SplitClient(config.ConsumerPrefix, run.Broker.InterBrokerProtocolVersion, props)
	if err != nil {
		return nil, err
	}
	cfg, err := config.ParseConsumer(modelled)
	if err != nil {
		return nil, err
	}
	if _, set := props[config.PropTruncationDetection]; !set {
		// The client is as old as the brokers (config.Parse's default,
		// or the scenario's consumer.kafkasim.truncation.detection).
		cfg.TruncationDetection = run.Consumer.TruncationDetection
	}
	if cfg.GroupID == "" {
		return nil, fmt.Errorf("consumer: a group.id is required (group.id=NAME)")
	}
	if cfg.OffsetsStorage == config.OffsetsZookeeper && run.Broker.KRaftMode() {
		return nil, fmt.Errorf("consumer: offsets.storage=zookeeper keeps offsets in ZooKeeper, and this run is in KRaft mode (%s): no ZooKeeper to keep them (allowed: offsets.storage=kafka, or a ZooKeeper release: inter.broker.protocol.version 3.9 or older without process.roles)", scenarios.ProtocolLabel(run))
	}
	if v := run.Broker.InterBrokerProtocolVersion; cfg.Static() && v.Valid() && v < config.V2_3 {
		return nil, fmt.Errorf("consumer: group.instance.id=%s makes a static member (KIP-345), which needs JoinGroup v5 from brokers of 2.3 or later, and this run's brokers are %s (%s): allowed: no group.instance.id, or inter.broker.protocol.version 2.3 or later",
			cfg.GroupInstanceID, v, scenarios.ProtocolLabel(run))
	}
	cfg.Mutants = run.Broker.Mutants
	s.cfg = cfg
	if err := config.CheckGroupProtocol(cfg, run.Broker); err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	if b := run.Broker; cfg.GroupProtocol != config.GroupProtocolConsumer && (cfg.SessionTimeout < b.GroupMinSessionTimeout || cfg.SessionTimeout > b.GroupMaxSessionTimeout) {
		return nil, fmt.Errorf("consumer: session.timeout.ms=%d outside the brokers' group.min.session.timeout.ms..group.max.session.timeout.ms [%d, %d]: the coordinator would answer INVALID_SESSION_TIMEOUT",
			cfg.SessionTimeout.Milliseconds(), b.GroupMinSessionTimeout.Milliseconds(), b.GroupMaxSessionTimeout.Milliseconds())
	}
	if _, err := client.NewConsumer(cfg, []int32{0}); err != nil {
		return nil, err
	}
	return s, nil
}

// newConsumer executes a 'consumer' step.
func (r *Runner) newConsumer(st scenarios.Step) error {
	name := st.Args[0]
	if _, ok := r.World.Lookup(name); ok {
		return fmt.Errorf("%q already names a node", name)
	}
	s, err := parseConsumerStep(st, r.s.Topics, r.Cluster.Spec.Config, r.given)
	if err != nil {
		return err
	}
	s.rec, s.txn = r.Recorder, r.txn
	s.pause = func(name string, d sim.Duration) {
		// NB: a world action at this instant, after the node's handler.
		r.World.At(r.World.Now(), "consumer-stall", func(*sim.World) {
			r.Step(scenarios.Step{Op: "pause", Args: []string{name}, Dur: d})
		})
	}
	if r.consumerSettings == nil {
		r.consumerSettings = map[string]*consumerSettings{}
	}
	r.consumerSettings[name] = s
	if s.restartFenced > 0 {
		s.restart = func(after sim.Duration) { r.restartFenced(name, after) }
	}
	cfg := s.cfg
	if cfg.IsolationLevel == config.ReadCommitted || s.pattern == scenarios.PatternCTP {
		r.txn.used = true
	}
	if s.pattern == scenarios.PatternCTP {
		if !slices.Contains(r.txn.inputs, s.topic) {
			r.txn.inputs = append(r.txn.inputs, s.topic)
		}
		s.tv = int16(r.Cluster.Spec.Config.Broker.Txn.Version)
		r.Recorder.Producer(checkers.Producer{Process: ctpProducerName(name), Acks: s.pcfg.Acks.String(), Idempotent: true,
			MaxInFlight: s.pcfg.MaxInFlightRequestsPerConnection, Retries: s.pcfg.Retries})
	}
	for i := range r.Cluster.Brokers {
		s.bootstrap = append(s.bootstrap, int32(i))
	}
	if _, ok := r.Cluster.Assignments[coordinator.OffsetsTopic]; !ok {
		b := r.Cluster.Spec.Config.Broker
		if err := r.Cluster.CreateTopics(cluster.Topic{Name: coordinator.OffsetsTopic, Partitions: b.OffsetsTopicNumPartitions, ReplicationFactor: b.OffsetsTopicReplicationFactor}); err != nil {
			return err
		}
	}
	sem := s.pattern
	switch sem {
	case "auto", scenarios.PatternCTP:
		sem = checkers.AtLeastOnce
	case patternIdempotentSink:
		sem = checkers.ExactlyOnce
		if r.sinks == nil {
			r.sinks = map[string]map[string]bool{}
		}
		if r.sinks[cfg.GroupID] == nil {
			r.sinks[cfg.GroupID] = map[string]bool{}
		}
		s.sink = r.sinks[cfg.GroupID]
	}
	r.Recorder.Consumer(checkers.Consumer{Process: name, Group: cfg.GroupID, Semantics: sem, UnfencedCommits: cfg.OffsetsStorage == config.OffsetsZookeeper,
		TruncationDetection: cfg.TruncationDetection, AutoOffsetReset: string(cfg.AutoOffsetReset),
		GroupInstanceID: cfg.GroupInstanceID, SessionTimeout: cfg.SessionTimeout, HeartbeatInterval: cfg.HeartbeatInterval,
		GroupProtocol: groupProtocolLabel(cfg.GroupProtocol)})
	id, err := r.World.AddNode(name, func() sim.Node { return &consumerNode{s: s} }, sim.NodeOptions{})
	if err != nil {
		return err
	}
	r.consumers = append(r.consumers, name)
	return r.World.Inject(sim.Start{Node: id})
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
