package harness

// This file runs a scenario script on a simulated cluster: it builds the
// world from the header, executes the steps (observing the replicas after
// every event for the invariants monitor), records the clients' history,
// and judges the run with every checker.

import (
	"fmt"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/controller"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// Options configure one run.
type Options struct {
	Seed uint64
	// Set overrides configuration properties (the -set flags).
	Set map[string]string
	// Budget bounds the linearizability check (wall clock); 0 means 10s.
	Budget time.Duration
	// Chooser replaces the seeded chooser (replay of a choice list).
	Chooser sim.Chooser
	// RecordChoices keeps the run's choices (for saving and shrinking).
	RecordChoices bool
	// Timeline keeps every change of the replicas' states (Result.Changes)
	// and the whole trace.
	Timeline bool
	// KeepTrace keeps the whole trace (Result.World.Trace().Records()).
	KeepTrace bool
	// Pacer holds the world to another clock and feeds it from outside
	// (serve mode, pace.go): after the script's steps the run goes on
	// until the pacer stops it. MaxTime and MaxEvents then replace the
	// script's limit (0: Forever and no practical bound). The brokers
	// then create topics as Kafka's do for clients (auto-creation,
	// CreateTopics), since a pacer's clients are real.
	Pacer     Pacer
	MaxTime   sim.Time
	MaxEvents uint64
	// Strict makes a violation Kafka's contract permits fail the run too
	// (Result.Exit), where no expect line names its checker.
	Strict bool
	// Origins names where a key of Set came from when not from -set: a
	// -config file's "server.properties:7", or "-grid". Notes use it.
	Origins map[string]string
	// ConfigFiles are the file flags of the command line, in order
	// ("-config", "server.properties", ...): the replay command names
	// them in place of the -set of each key a file gave (Origins).
	ConfigFiles []string
	// Replay, when set, is the command that repeats the run in place of
	// the one built from the scenario, variant, seed and -set: a paced
	// run replays from its tape (serve's "kafkasim replay -tape FILE").
	Replay string
}

// awaitsTrace reports whether a step waits for a trace record.
func awaitsTrace(s *scenarios.Script) bool {
	for _, st := range s.Steps {
		if st.Op == "await" && len(st.Args) > 1 && !isClientAwait(st) {
			return true
		}
	}
	return false
}

// Stats are a run's headline numbers.
type Stats struct {
	Acked            int `json:"acked"`
	AckedLost        int `json:"acked_lost"`
	DivergentOffsets int `json:"divergent_offsets"`
	// The transactions by what their clients saw (runs with transactions:
	// their records are not sends, so Acked does not count them).
	TxnCommitted int `json:"txn_committed,omitempty"`
	TxnAborted   int `json:"txn_aborted,omitempty"`
	TxnUnknown   int `json:"txn_unknown,omitempty"`
	// What Acked counts, in a run whose clients are real (serve): AckedBy
	// by client (the operations' process) and topic; AckedAgain the
	// acknowledged sends of an idempotent producer's record (producer id,
	// epoch, sequence) acknowledged before, a retry the broker answered as
	// a duplicate at the first send's offset (part of Acked); Probes the
	// end phase's acknowledged probes (not part of Acked).
	AckedBy []AckedCount `json:"acked_by,omitempty"`
	// Sends are the workload's sends by producer and outcome (stats.go).
	Sends      []SendCount `json:"sends,omitempty"`
	AckedAgain int         `json:"acked_again,omitempty"`
	Probes     int         `json:"probes,omitempty"`
	// SetAside counts the operations on topics deleted after them
	// (DeleteTopics: deleting is not losing), which no count above
	// includes: a client suite that deletes every topic it made leaves
	// "acknowledged 0" and this.
	SetAside int `json:"set_aside,omitempty"`
}

// Result is the outcome of one run.
type Result struct {
	Scenario string
	Variant  string
	Seed     uint64
	Config   []string // the non-default configuration, key=value
	// GivenDefaults are the settings the script, variant, files or -set
	// gave whose value is the release's default anyway, key=value: the
	// config line shows them marked "(default)".
	GivenDefaults []string
	TraceHash     uint64
	Events        uint64
	SimTime       sim.Time
	Verdicts      []checkers.Verdict
	Stats         Stats
	// Mismatches lists the checkers whose verdict did not meet the
	// variant's expectation.
	Mismatches []string
	// Expect are the expect lines that judged the run (exit.go): the
	// variant's, or nil when ExpectNote says why they did not apply.
	Expect     map[string]scenarios.Expectation
	ExpectNote string
	// Strict is Options.Strict: a permitted violation fails the run too.
	Strict bool
	// Protocol is the run's inter-broker protocol and truncation rule
	// (ProtocolLabel), defaults included.
	Protocol string
	// Overridden are the -set overrides of what the variant sets
	// (Overridden); SameAs the other variants -set made identical to this
	// one, run once as this one (set by the caller).
	Overridden []string
	SameAs     []string
	// Set are the -set overrides the run ran under.
	Set map[string]string
	// NotModelled are the properties accepted but not modelled
	// (config.Config.NotModelled), key=value; ConfigNotes say where a
	// property given did not take effect as given (a script step that
	// fixes it, a client rule that turned it off).
	NotModelled []string
	ConfigNotes []string
	// Unworkable are the ConfigNotes that say Kafka cannot make progress
	// under the configuration (an internal topic below its min ISR, a
	// single voter): a run whose step then times out names them (run's
	// RUN FAILED line, suite's failure lines).
	Unworkable []string
	// ProducerNotes say where a producer's release decided its
	// idempotence otherwise than its properties read
	// (config.Producer.IdempotenceNote), one line per note with the
	// producers it applies to ("p1, p2: enable.idempotence defaulted to
	// true but acks=1 was set explicitly: ..."); nil when none.
	ProducerNotes []string
	// Profile is the swarm profile of each swarm step ("swarm: crash=0.6
	// power-loss=0 ...", "; " between steps); "" without a swarm step.
	Profile string
	// Failed is set when the run itself broke: a panic, or an await that
	// never happened.
	Failed string
	Replay string
	// ScheduleFrom is the variant whose choice file the run replayed, when
	// it ran under another variant (replay.RunChoiceFileUnder); "" otherwise.
	ScheduleFrom string
	// Schedule are the steps an exploration run took, at their virtual
	// times, and ScheduleEnd the time its settling ended (workload.WriteScheduleScript);
	// nil for a run of a script's own steps.
	Schedule    []TimedStep
	ScheduleEnd sim.Time
	World       *sim.World
	Final       checkers.Final
	History     checkers.History
	// Transactions is the transaction history of a run with transactional
	// clients or read_committed consumers (transactions.go), else nil.
	Transactions *checkers.TxnHistory
	Changes      []StateChange
	// Truncations are the replicas' logs around each shortening (with
	// Options.Timeline).
	Truncations []Truncation
	// Script is the script that ran (its steps and the variant's
	// expectations, for a run report); shared, never changed.
	Script *scenarios.Script
}

// Unknown reports whether some checker could not decide (one that does
// not apply, Verdict.NotJudged, is not undecided).
func (r *Result) Unknown() bool {
	for _, v := range r.Verdicts {
		if v.Undecided() {
			return true
		}
	}
	return false
}

// Outcome is a verdict as one word: ok, unknown, not-judged (the checker
// does not apply, Verdict.NotJudged), permitted (a violation within
// Kafka's contract) or bug.
func Outcome(v checkers.Verdict) string {
	switch {
	case v.NotJudged:
		return "not-judged"
	case v.Result == checkers.ResultViolation && v.ContractBroken():
		return "bug"
	case v.Result == checkers.ResultViolation:
		return "permitted"
	}
	return v.Result.String()
}

// ReplayCommand is the command line that repeats a run; scenario is the
// -scenario argument (Script.ReplayName).
func ReplayCommand(scenario, variant string, seed uint64, set map[string]string) string {
	cmd := fmt.Sprintf("kafkasim replay -scenario %s -variant %s -seed %d", ShellQuote(scenario), variant, seed)
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		// NB: a script variable ($crash=0.3) would be expanded by the shell.
		cmd += " -set " + ShellQuote(k+"="+set[k])
	}
	return cmd
}

// replayOf is the run's replay command: ReplayCommand, with the keys the
// -config files gave left to the files themselves.
func replayOf(s *scenarios.Script, variant string, opts Options) string {
	if opts.Replay != "" {
		return opts.Replay
	}
	if len(opts.ConfigFiles) == 0 {
		return ReplayCommand(s.ReplayName(), variant, opts.Seed, opts.Set)
	}
	set := map[string]string{}
	for k, v := range opts.Set {
		if o, ok := opts.Origins[k]; !ok || o == "-grid" {
			set[k] = v
		}
	}
	cmd := ReplayCommand(s.ReplayName(), variant, opts.Seed, set)
	for _, a := range opts.ConfigFiles {
		cmd += " " + ShellQuote(a)
	}
	return cmd
}

// ShellQuote quotes s for a POSIX shell when it holds a character the
// shell would interpret (a space in a path, a $ in a script variable).
func ShellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, "$ '\"\\*?;&|<>()`!#~{}[]\t\n") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Runner is the state of one run. Its exported fields and methods are the
// view of a workload that drives the run itself (package workload): the
// world, the cluster, the observer of the replicas, the recorder of the
// clients' history and, with the manual controller, the controller's node;
// Step takes a script step, Advance and StepOne run events, Judge applies
// the checkers.
type Runner struct {
	s         *scenarios.Script
	World     *sim.World
	Cluster   *cluster.Cluster
	Observer  *Observer
	Recorder  *checkers.Recorder
	clients   map[string]*scriptClient
	producers map[string]*producerNode
	// txn is the transaction history (transactions.go).
	txn  *txnLog
	seen int // trace records already scanned by await
	// wiped are the nodes whose disk a wipe-disk step replaced, until the
	// swarm sees a wiped controller back in the voter set (mayWipe).
	wiped map[string]bool
	// The manual controller ('controller manual') and what it decided.
	Controller sim.NodeID
	ctlNode    *ManualController
	manual     map[storage.TopicPartition][2]int32 // leader, epoch
	// manualSteps are the last leader-and-isr step of each partition (the
	// end phase resends it to a broker it restarts, as the controller does
	// on a broker's startup).
	manualSteps map[storage.TopicPartition]scenarios.Step
	// vars are the script variables of the run (the swarm step reads its
	// overrides there).
	vars map[string]string
	// given is the run's configuration as given (Script.Configuration):
	// its client properties are the base of every client the script
	// declares (config.ClientProps).
	given map[string]string
	// sinks are the idempotent sinks of the groups, by group id.
	sinks map[string]map[string]bool
	// consumers are the consumer nodes' names, in creation order (the
	// swarm's consumer faults pick among them).
	consumers []string
	// w848 feeds the invariants monitor's KIP-848 checks (observe_848.go).
	w848 watch848
	// consumerSettings are the consumers' settings by name (the swarm's
	// consumer-stall arms a stall in them).
	consumerSettings map[string]*consumerSettings
	// shareConsumers are the share consumer nodes' names, in creation
	// order, and shareGroups the share groups declared to the recorder
	// (share_consumer.go).
	shareConsumers []string
	shareGroups    []checkers.ShareGroup
	// shareLoadsRecorded counts the Observer's ShareLoads given to the
	// recorder.
	shareLoadsRecorded int
	// swarmEnd is when the running swarm step ends: a consumer stall
	// armed by it strikes no later.
	swarmEnd sim.Time
	// profiles are the swarm profiles of the run's swarm steps, rendered.
	profiles []string
	// producerSet are the producer properties of the run's configuration
	// (config.ProducerSet), which the swarm's clients take over the
	// step's; producerNotes the producers' idempotence notes.
	producerSet   map[string]string
	producerNotes producerNotes
	// lossyLinks are the links a 'lossy' step changed (the end phase's
	// heal restores them).
	lossyLinks [][2]sim.NodeID
	// live is what the liveness phase observed (endphase.go); nil when no
	// end phase ran (an exploration).
	live *checkers.Liveness
	// deletions counts each topic's deletions by DeleteTopics so far, as
	// the trace up to deletedScan says (deletion.go).
	deletions   map[string]int
	deletedScan int
	// observedIncarnation is, per client topic, the identity of the
	// topic the observer follows (storedTopicIdentity, client_topics.go).
	observedIncarnation map[string]string
	// deletedAt is each topic's last deletion in the trace up to
	// forgetScan (ForgetDeleted, deletion.go).
	deletedAt  map[string]sim.Time
	forgetScan int
	// Pacer, when set, holds the world to another clock (pace.go);
	// stopped is set once it stopped the run.
	Pacer   Pacer
	stopped bool
	// clientTopics are the topics clients created that the run observes,
	// in the order observed (client_topics.go).
	clientTopics []string
}

// Prepare validates a run's inputs and returns its configuration: errors
// here are bad input (an unknown variant or property).
func Prepare(s *scenarios.Script, variant string, set map[string]string) (scenarios.Variant, config.Config, error) {
	v, err := s.Variant(variant)
	if err != nil {
		return v, config.Config{}, err
	}
	if err := s.CheckRun(v, set); err != nil { // scenarios/validate.go: -set's and the steps' script variables
		return v, config.Config{}, err
	}
	given := s.Configuration(v, set)
	cfg, err := config.ParseGiven(given, func(k string) bool { _, ok := set[k]; return ok })
	if err != nil {
		return v, cfg, fromVariant(err, v, set)
	}
	if _, err := s.EndOptions(v, set); err != nil {
		return v, cfg, err
	}
	if !declaresConsumers(s) {
		// NB: the run's consumer properties (a -consumer-config's
		// group.id) reach only the consumers a script declares; without
		// any they configure nothing, and no group needs a coordinator.
		d := config.DefaultConsumer()
		d.TruncationDetection = cfg.Consumer.TruncationDetection
		cfg.Consumer = d
	}
	for _, t := range s.Topics {
		if err := cfg.Validate(s.Brokers, t.ReplicationFactor); err != nil {
			return v, cfg, fmt.Errorf("topic %s: %w", t.Name, err)
		}
	}
	if err := checkTopicConfigs(s, cfg.Broker.InterBrokerProtocolVersion); err != nil {
		return v, cfg, err
	}
	// Client steps' configurations are checked now: bad input, not a run
	// that breaks at its step.
	vars := scenarios.ScriptVars(v, set)
	pset := producerSet(s, v, set)
	for _, st := range s.Steps {
		var err error
		switch st.Op {
		case "consumer":
			_, err = parseConsumerStep(st.Substitute(vars), s.Topics, cfg, given)
		case "share-consumer":
			_, err = parseShareStep(st.Substitute(vars), s.Topics, cfg, given)
		case "producer":
			var pc config.Producer
			pc, _, err = producerConfig(cfg.Broker, given, st.Substitute(vars).KV)
			switch {
			case err != nil:
				err = fmt.Errorf("producer: %w", err)
			case pc.TransactionalID != "" && pc.TransactionTimeout > cfg.Broker.Txn.MaxTimeout:
				err = fmt.Errorf("producer: transaction.timeout.ms=%d is above the brokers' transaction.max.timeout.ms=%d: the coordinator would answer INVALID_TRANSACTION_TIMEOUT (allowed: 1 to %d)",
					pc.TransactionTimeout.Milliseconds(), cfg.Broker.Txn.MaxTimeout.Milliseconds(), cfg.Broker.Txn.MaxTimeout.Milliseconds())
			}
		case "swarm":
			_, err = parseSwarm(st.Substitute(vars), vars, cfg.Broker.Mechanisms(), pset)
			if err != nil {
				err = fmt.Errorf("swarm: %w", err)
			}
		}
		if err != nil {
			return v, cfg, fmt.Errorf("%s:%d: %w", s.File, st.Line, err)
		}
		if err := nodesOfMode(st.Substitute(vars), cfg); err != nil {
			return v, cfg, fmt.Errorf("%s:%d: %s: %w", s.File, st.Line, st.Op, err)
		}
	}
	// The cluster's own checks (a manual controller under KRaft, the
	// quorum) are bad input too, not a run that cannot start.
	if err := clusterSpec(s, cfg, s.Manual, false).Validate(); err != nil {
		return v, cfg, err
	}
	return v, cfg, nil
}

// nodesOfMode refuses a step naming a node the run's metadata mode does
// not have: zk under KRaft, a dedicated controller under ZooKeeper (the
// script checks names against every variant; -set can change the mode).
func nodesOfMode(st scenarios.Step, cfg config.Config) error {
	if st.Op == "consumer" || st.Op == "producer" {
		return nil // declarations: their names are checked as clients'
	}
	kraft := cfg.Broker.KRaftMode()
	for _, a := range st.Args {
		for _, n := range strings.Split(a, ",") {
			switch {
			case n == "zk" && kraft:
				return fmt.Errorf("zk: this run is in KRaft mode (%s), which has no ZooKeeper (in a partition's groups, %s names the metadata store in either mode)", scenarios.ProtocolLabel(cfg), scenarios.MetadataNodes)
			case scenarios.ControllerName.MatchString(n) && !kraft:
				return fmt.Errorf("%s: this run is in ZooKeeper mode (%s), which has no KRaft controllers (in a partition's groups, %s names the metadata store in either mode)", n, scenarios.ProtocolLabel(cfg), scenarios.MetadataNodes)
			}
		}
	}
	return nil
}

// Run runs the script under one variant. The error is for bad input only;
// a run that breaks is reported in Result.Failed.
func Run(s *scenarios.Script, variant string, opts Options) (*Result, error) {
	v, cfg, err := Prepare(s, variant, opts.Set)
	if err != nil {
		return nil, err
	}
	// The whole trace is kept only when a step awaits a transition or the
	// caller wants the timeline; the unclean elections are always kept.
	keep := opts.Timeline || opts.KeepTrace || awaitsTrace(s)
	end, _ := s.EndOptions(v, opts.Set) // checked by Prepare
	var link sim.LinkConfig             // the zero value is sim.DefaultLink
	if end.LinkLatency > 0 {
		link = sim.LinkConfig{MinLatency: end.LinkLatency, MaxLatency: end.LinkLatency}
	}
	maxTime, maxEvents := sim.Time(s.Limit), uint64(0)
	if opts.Pacer != nil {
		maxTime, maxEvents = opts.MaxTime, opts.MaxEvents
		if maxTime == 0 {
			maxTime = Forever
		}
		if maxEvents == 0 {
			maxEvents = math.MaxUint64
		}
	}
	w, err := sim.New(sim.Config{Seed: opts.Seed, Chooser: opts.Chooser, RecordChoices: opts.RecordChoices, KeepTrace: keep,
		KeepKinds: KeepKinds(map[string]bool{"controller-unclean-election": true, "controller-partition-state": true, "isr": true, "become-leader": true, "log-cleaned": true, coordinator.KindGenerationsRestart: true,
			deletionKinds[0]: true, deletionKinds[1]: true, deletionKinds[2]: true}, cfg.Broker.KRaftMode()), MaxTime: maxTime, MaxEvents: maxEvents, Link: link})
	if err != nil {
		return nil, err
	}
	r, err := newRunner(s, w, cfg, s.Manual, scenarios.ScriptVars(v, opts.Set), opts.Timeline, opts.Pacer != nil)
	if err != nil {
		return nil, err
	}
	r.given = s.Configuration(v, opts.Set)
	r.producerSet = producerSet(s, v, opts.Set)
	res := &Result{Scenario: s.Name, Variant: v.Name, Seed: opts.Seed, Config: append(cfg.NonDefaultPairs(), topicLineConfigs(s)...), World: w,
		Replay: replayOf(s, v.Name, opts), Protocol: scenarios.ProtocolLabel(cfg), Overridden: scenarios.Overridden(v, opts.Set), Set: opts.Set, Script: s, Strict: opts.Strict,
		NotModelled: slices.Concat(cfg.NotModelled, topicsNotModelled(s), clientsNotModelled(s, r.vars, r.given, cfg.Broker.InterBrokerProtocolVersion)),
		ConfigNotes: slices.Concat(stepOverrides(s, opts.Set, opts.Origins, r.vars), ignoredNotes(cfg), unusedConsumerNotes(s, r.given), unworkableNotes(s, cfg.Broker)),
		Unworkable:  unworkableNotes(s, cfg.Broker)}
	var clientSet []string
	res.GivenDefaults, clientSet = givenDefaults(r.given, res.Config, res.NotModelled)
	res.Config = append(res.Config, clientSet...) // the clients' given settings that are no default
	r.Pacer = opts.Pacer
	for _, st := range s.Steps {
		st = st.Substitute(r.vars)
		if err := Guard(func() error { return r.Step(st) }); err != nil && !r.stopped {
			res.Failed = fmt.Sprintf("%s:%d: %s: %v", s.File, st.Line, st.Op, err)
			break
		}
		if r.stopped {
			break
		}
	}
	if res.Failed == "" && r.Pacer != nil && !r.stopped {
		// Serve mode: the steps are done; serve until the pacer's stop.
		if err := Guard(func() error { return r.Advance(Forever) }); err != nil && !r.stopped {
			res.Failed = "serving: " + err.Error()
		}
	}
	r.Pacer = nil           // the end phase runs on the world's own clock
	r.ObserveClientTopics() // every topic clients created, mentioned or not
	if res.Failed == "" {
		// Let operations still in flight finish (or time out).
		if err := r.Advance(w.Now().Add(sim.Second)); err != nil {
			res.Failed = err.Error()
		}
	}
	res.Profile = strings.Join(r.profiles, "; ")
	res.ProducerNotes = r.producerNotes.lines()
	r.endPhase(res, endOptions{EndOptions: end, replay: res.Replay})
	r.Judge(res, v, opts.Budget)
	res.Changes, res.Truncations = r.Observer.Changes, r.Observer.Truncations
	return res, nil
}

// Guard runs f, turning a panic outside the world's events (a swarm step
// drawing its profile, an exploration picking its action: a replayed
// choice that does not fit panics there) into an error, so that the run
// fails instead of the program.
func Guard(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return f()
}

// NewRunner builds the scenario's cluster in w (with the manual controller
// when manual), and the runner with its recorder and observer.
func NewRunner(s *scenarios.Script, w *sim.World, cfg config.Config, manual bool, vars map[string]string, timeline bool) (*Runner, error) {
	return newRunner(s, w, cfg, manual, vars, timeline, false)
}

// ClusterPlan is the plan of the scenario's cluster under cfg (with the
// manual controller when manual), for NewRunnerFrom: a caller that runs
// the same cluster in many worlds (an exploration) checks it once.
func ClusterPlan(s *scenarios.Script, cfg config.Config, manual bool) (*cluster.Plan, error) {
	return cluster.NewPlan(clusterSpec(s, cfg, manual, false))
}

// NewRunnerFrom is NewRunner with the cluster's plan made by ClusterPlan
// (from the same s, cfg and manual).
func NewRunnerFrom(s *scenarios.Script, w *sim.World, cfg config.Config, plan *cluster.Plan, vars map[string]string, timeline bool) (*Runner, error) {
	return newRunnerFrom(s, w, cfg, plan, vars, timeline)
}

// clusterSpec is the cluster of s under cfg; with clientTopics the brokers
// create topics as Kafka lets clients have them (auto-creation,
// CreateTopics): serve mode, whose clients are real. A script's own
// clients never need that: the script creates every topic they use.
func clusterSpec(s *scenarios.Script, cfg config.Config, manual, clientTopics bool) cluster.Spec {
	spec := cluster.Spec{Brokers: s.Brokers, Controllers: s.Controllers, Racks: s.Racks, Config: cfg, ManualController: manual, ScriptedTopics: !clientTopics}
	for _, t := range s.Topics {
		spec.Topics = append(spec.Topics, cluster.Topic{Name: t.Name, Partitions: t.Partitions, ReplicationFactor: t.ReplicationFactor, Assignment: t.Assignment, Config: t.Config})
	}
	return spec
}

// newRunner is NewRunner, with clientTopics as clusterSpec takes it.
func newRunner(s *scenarios.Script, w *sim.World, cfg config.Config, manual bool, vars map[string]string, timeline, clientTopics bool) (*Runner, error) {
	plan, err := cluster.NewPlan(clusterSpec(s, cfg, manual, clientTopics))
	if err != nil {
		return nil, err
	}
	return newRunnerFrom(s, w, cfg, plan, vars, timeline)
}

// newRunnerFrom builds plan's cluster in w and the runner around it.
func newRunnerFrom(s *scenarios.Script, w *sim.World, cfg config.Config, plan *cluster.Plan, vars map[string]string, timeline bool) (*Runner, error) {
	c, err := plan.Build(w)
	if err != nil {
		return nil, err
	}
	manual := plan.Spec().ManualController
	script := s
	if manual && !s.Manual {
		m := *s
		m.Manual = true
		script = &m
	}
	r := &Runner{s: script, World: w, Cluster: c, Recorder: checkers.NewRecorder(), clients: map[string]*scriptClient{}, producers: map[string]*producerNode{}, txn: &txnLog{},
		manual: map[storage.TopicPartition][2]int32{}, vars: vars}
	if manual {
		r.ctlNode = &ManualController{}
		if r.Controller, err = w.AddNode("controller", func() sim.Node { return r.ctlNode }, sim.NodeOptions{}); err != nil {
			return nil, err
		}
		if err := w.Inject(sim.Start{Node: r.Controller}); err != nil {
			return nil, err
		}
	}
	r.Observer = newObserver(c, s.Topics, c.Assignments)
	r.Observer.timeline, r.Observer.last = timeline, map[string]string{}
	r.Observer.Facts.ReplicationFactor = s.Topics[0].ReplicationFactor
	r.Observer.Facts.MinInsyncReplicas = cfg.Topic.MinInsyncReplicas
	r.Observer.Facts.UncleanElectionEnabled = cfg.Topic.UncleanLeaderElectionEnable
	for i, t := range s.Topics { // a topic line's own configs (cluster.Topic.Config)
		if tc, err := c.TopicConfig(t.Name); err == nil {
			if i == 0 {
				r.Observer.Facts.MinInsyncReplicas = tc.MinInsyncReplicas
			}
			r.Observer.Facts.UncleanElectionEnabled = r.Observer.Facts.UncleanElectionEnabled || tc.UncleanLeaderElectionEnable
		}
	}
	r.Observer.Facts.EligibleLeaderReplicas = cfg.Broker.ELR.Enabled()
	return r, nil
}

// Advance runs every event up to until, observing after each.
func (r *Runner) Advance(until sim.Time) error {
	for {
		next, ok := r.World.NextEventTime()
		if !ok || next > until {
			done, err := r.idleUntil(until)
			if err != nil || done {
				return err
			}
			continue
		}
		if err := r.StepOne(); err != nil {
			return err
		}
	}
}

// StepOne runs the next event and observes the replicas after it; a
// panic in the event, or the world's time or event limit, is an error.
func (r *Runner) StepOne() error {
	if err := stoppedAt(r.World.Events()); err != nil {
		return err
	}
	for {
		next, ok := r.World.NextEventTime()
		if !ok {
			break
		}
		acted, err := r.pace(next)
		if err != nil {
			return err
		}
		if !acted {
			break
		}
	}
	res, ok := r.World.Step()
	if !ok {
		switch res.Reason {
		case sim.Panicked:
			return fmt.Errorf("%v", res.Panic)
		case sim.TimeLimit, sim.EventLimit:
			return fmt.Errorf("run stopped: %v at %v", res.Reason, res.Now)
		}
		return nil
	}
	r.Observer.observe()
	r.observeGroups()
	return nil
}

func (r *Runner) broker(name string) (sim.NodeID, int32, error) {
	if name == "controller" && r.Cluster.Spec.KRaft() {
		return r.quorumController()
	}
	if name == "controller" && !r.s.Manual {
		i := r.Cluster.ActiveController()
		if i < 0 {
			return 0, 0, fmt.Errorf("no broker is the controller now")
		}
		return r.Cluster.Brokers[i], int32(i), nil
	}
	if len(r.Cluster.Controllers) > 0 && scenarios.ControllerName.MatchString(name) {
		return r.controllerNode(name)
	}
	if !strings.HasPrefix(name, "b") {
		return 0, 0, fmt.Errorf("%q is not a broker (brokers are b0..b%d%s)", name, len(r.Cluster.Brokers)-1, r.controllerRange())
	}
	n, err := strconv.Atoi(name[1:])
	if err != nil || n < 0 || n >= len(r.Cluster.Brokers) {
		return 0, 0, fmt.Errorf("%q is not a broker (brokers are b0..b%d%s)", name, len(r.Cluster.Brokers)-1, r.controllerRange())
	}
	return r.Cluster.Brokers[n], int32(n), nil
}

// node resolves any node name of the world (brokers, zk, clients).
// A name not yet known that is not a broker's is a client, created on
// first mention (so a partition can place a client before it produces).
func (r *Runner) node(name string) (sim.NodeID, error) {
	if name == "controller" && r.Cluster.Spec.KRaft() {
		id, _, err := r.quorumController()
		return id, err
	}
	if id, ok := r.World.Lookup(name); ok {
		return id, nil
	}
	if scenarios.BrokerName.MatchString(name) || name == "zk" || name == "controller" || name == "admin" {
		return 0, fmt.Errorf("unknown node %q (brokers are b0..b%d)", name, len(r.Cluster.Brokers)-1)
	}
	id, _, err := r.client(name)
	return id, err
}

func (r *Runner) client(name string) (sim.NodeID, *scriptClient, error) {
	if c, ok := r.clients[name]; ok {
		id, _ := r.World.Lookup(name)
		return id, c, nil
	}
	if _, ok := r.World.Lookup(name); ok {
		return 0, nil, fmt.Errorf("%q names a broker or ZooKeeper, not a client", name)
	}
	c := newScriptClient(name, len(r.Cluster.Brokers), r.Recorder)
	c.shareMetadata = name == CheckerClient
	id, err := r.World.AddNode(name, func() sim.Node { return c }, sim.NodeOptions{})
	if err != nil {
		return 0, nil, err
	}
	r.clients[name] = c
	return id, c, r.World.Inject(sim.Start{Node: id})
}

func parseAcks(s string) int16 {
	switch s {
	case "", "all", "-1":
		return -1
	case "0":
		return 0
	}
	return 1
}

// activeController returns the controller with the highest epoch among
// the live brokers, or nil.
func (r *Runner) activeController() *controller.Controller {
	if i := r.Cluster.ActiveController(); i >= 0 {
		return r.Cluster.Broker(i).Controller()
	}
	return nil
}

// TimedStep is a step an exploration run took, at the virtual time it
// took it.
type TimedStep struct {
	At   sim.Time
	Step scenarios.Step
}
