package workload

// This file is the exploration workload on a KRaft cluster (KIP-500,
// KIP-595): the scenario's header (brokers, controllers, topic,
// configuration) with the script's steps replaced by a bounded sequence of
// actions, each one picked through the chooser as a KindFault choice. Unlike
// the ZooKeeper-era workload (explore.go) the explorer does not play the
// controller: the real QuorumController runs on the quorum, elects
// partition leaders and fences brokers, and the explorer only injects
// faults and produces. At each step the enabled actions are, in this order:
//
//	next             run until a quorum member's role, epoch or leader, a
//	                 replica's role, leader or ISR, or a client outcome
//	                 changes, or for nextBound (alternative 0)
//	produce mK       the next record, acks=all by default
//	remove-controller X, add-controller X
//	                 (with -faults reconfig, on a dynamic quorum) KIP-853's
//	                 voter changes, two per run: a removal and adding the
//	                 controller back, or two removals (explore_reconfig.go)
//	crash X          a controller cN or a broker bN dies; the OS keeps its page cache
//	power-loss X     the machine dies; every unsynced write is lost
//	restart X        a down node returns
//	cut X->Y         (with -faults partition) every message from voter X to
//	                 voter Y is lost until a heal
//	heal             restore every cut link
//
// The nodes are the dedicated controllers c0..cN-1 and then the brokers
// (in combined mode, process.roles=broker,controller, the brokers are the
// voters). After the last step every link is healed, every node restarted,
// the cluster runs for kraftSettleTime, and the checkers judge the run,
// the raft checker (Election Safety, Leader Completeness, State Machine
// Safety, Log Matching) among them.
//
// The abstract state hashed after each step: per node, up or down (and,
// down, its state when it went down and whether it lost power); up, its
// raft state (role, epoch, leader, voted-for, the metadata log's batches
// as (offset, last offset, epoch, CRC), HW) and, for a broker, its replica
// of the partition as the ZooKeeper workload hashes it (role, leader
// epoch, leader, LEO, HW, recovery point, ISR, log entries, checkpoint
// files); the cut links; each record's client outcome. Messages in flight
// and timers are not part of it.

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kafkasim/kafkasim/scenarios/harness"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// KRaftDefaultFaults are the faults explored on a KRaft cluster when none
// are given: crashes and one-way cuts between voters (the ingredients of a
// quorum leader that appends while isolated).
var KRaftDefaultFaults = []string{"crash", "partition"}

// kraftSettleTime is how long the healed, restarted cluster runs before
// the checkers judge: elections (controller.quorum.election.timeout.ms
// and the fetch timeout), broker re-registration, a session timeout, and
// (in combined mode, where a cut between voters also cuts the brokers'
// replication) a replica fetch lost in a cut timing out and being retried,
// as settleTime allows for.
const kraftSettleTime = settleTime

// kraftSetupLimit bounds the setup: the quorum elects a leader, the
// brokers register and the topic's partition gets its full ISR.
const kraftSetupLimit = 60 * sim.Second

// ValidateKRaft checks the parameters for a KRaft cluster and fills the
// defaults: the controller elects partition leaders itself, so elect and
// unclean are not actions there; reconfig (KIP-853's voter changes) needs
// a dynamic quorum (dynamic: kafkasim.kraft.version=1).
func (p *ExploreParams) ValidateKRaft(dynamic bool) error {
	if len(p.Faults) == 0 {
		p.Faults = KRaftDefaultFaults
	}
	p.kraft = true
	err := p.Validate()
	p.kraft = false
	if err != nil {
		return err
	}
	for _, f := range p.Faults {
		if f == "elect" || f == "unclean" {
			return fmt.Errorf("fault %q: on a KRaft cluster the quorum controller elects partition leaders itself; allowed crash, power-loss, partition, reconfig", f)
		}
		if f == "reconfig" && !dynamic {
			return fmt.Errorf("fault %q: a static quorum (kafkasim.kraft.version=0) cannot change its voters; set kafkasim.kraft.version=1 (KIP-853) or leave reconfig out", f)
		}
	}
	return nil
}

// IsKRaft reports whether the variant's configuration (under set) runs
// KRaft: a controllers header, process.roles, or a release of 4.0 or later.
func IsKRaft(s *scenarios.Script, variant string, set map[string]string) (bool, error) {
	_, cfg, err := harness.Prepare(s, variant, set)
	if err != nil {
		return false, err
	}
	return cfg.Broker.KRaftMode(), nil
}

// kraftExplorer is the workload of one KRaft exploration run.
type kraftExplorer struct {
	r      *harness.Runner
	p      ExploreParams
	faults map[string]bool
	tp     storage.TopicPartition
	nodes  []sim.NodeID        // the dedicated controllers, then the brokers
	broker []int32             // per node: its broker index, -1 for a dedicated controller
	rb     storage.RecordBatch // nodeHash's decoded batch, reused
	voters []int               // the indexes in nodes of the quorum's voters
	down   []uint64            // per node: its state's hash when it went down
	lost   []bool              // per node: it went down losing unsynced writes
	// produced is how many records the workload produced.
	produced    int
	checkpoints []string
	// act is the explorer's own node, which logs the actions.
	act   sim.NodeID
	sched []harness.TimedStep
	buf   []byte
	nbuf  []byte
	// removed has bit i set while the reconfig actions have removed the
	// controller nodes[i] (and not added it back); changes counts the
	// voter changes asked for (explore_reconfig.go).
	removed uint64
	changes int
}

// exploreKRaft is ExploreRun on a KRaft cluster; a search's run gives the
// cluster's plan (harness.ClusterPlan of OnePartition(s) and cfg), a
// single run nil.
func exploreKRaft(s *scenarios.Script, v scenarios.Variant, cfg config.Config, p ExploreParams, opts harness.Options, mark func(uint64), plan *cluster.Plan) (*harness.Result, error) {
	if err := p.ValidateKRaft(cfg.Broker.KRaft.KRaftVersion >= 1); err != nil {
		return nil, err
	}
	if err := CheckExplorable(s, true); err != nil {
		return nil, err
	}
	s = OnePartition(s)
	keep := opts.Timeline || opts.KeepTrace
	w, err := sim.New(sim.Config{Seed: opts.Seed, Chooser: opts.Chooser, RecordChoices: opts.RecordChoices, KeepTrace: keep,
		KeepKinds: harness.KeepKinds(map[string]bool{"isr": true, "become-leader": true, "explore-action": true}, true), MaxTime: sim.Time(sim.Hour) * 24,
		Link: sim.LinkConfig{MinLatency: exploreLatency, MaxLatency: exploreLatency}})
	if err != nil {
		return nil, err
	}
	var r *harness.Runner
	if plan != nil {
		r, err = harness.NewRunnerFrom(s, w, cfg, plan, nil, opts.Timeline)
	} else {
		r, err = harness.NewRunner(s, w, cfg, false, nil, opts.Timeline)
	}
	if err != nil {
		return nil, err
	}
	res := &harness.Result{Scenario: s.Name, Variant: v.Name, Seed: opts.Seed, Config: cfg.NonDefaultPairs(), World: w}
	e := &kraftExplorer{r: r, p: p, faults: map[string]bool{}, tp: r.Observer.Partitions[0]}
	for _, f := range p.Faults {
		e.faults[f] = true
	}
	for _, dir := range cfg.Broker.LogDirs {
		e.checkpoints = append(e.checkpoints, dir+"/replication-offset-checkpoint", dir+"/"+e.tp.String()+"/leader-epoch-checkpoint")
	}
	combined := cfg.Broker.KRaft.ProcessRoles.Controller()
	for _, id := range r.Cluster.Controllers {
		e.voters = append(e.voters, len(e.nodes))
		e.nodes, e.broker = append(e.nodes, id), append(e.broker, -1)
	}
	for i, id := range r.Cluster.Brokers {
		if combined {
			e.voters = append(e.voters, len(e.nodes))
		}
		e.nodes, e.broker = append(e.nodes, id), append(e.broker, int32(i))
	}
	e.down, e.lost = make([]uint64, len(e.nodes)), make([]bool, len(e.nodes))
	if e.act, err = w.AddNode("explorer", func() sim.Node { return &harness.ManualController{} }, sim.NodeOptions{}); err != nil {
		return nil, err
	}
	if err := w.Inject(sim.Start{Node: e.act}); err != nil {
		return nil, err
	}
	if err := harness.Guard(func() error { return e.run(mark) }); err != nil {
		res.Failed = err.Error()
	}
	if res.Failed == "" {
		if err := harness.Guard(e.settle); err != nil {
			res.Failed = err.Error()
		}
	}
	budget := opts.Budget
	if budget == 0 {
		budget = 2 * time.Second
	}
	res.Schedule, res.ScheduleEnd = e.sched, w.Now()
	r.Judge(res, v, budget)
	if !slices.ContainsFunc(res.Verdicts, func(vd checkers.Verdict) bool { return vd.Checker == checkers.NameRaft }) {
		res.Verdicts = append(res.Verdicts, checkers.Raft(harness.RaftRun(w, r.Cluster)))
	}
	res.Changes, res.Truncations = r.Observer.Changes, r.Observer.Truncations
	return res, nil
}

// run is the setup and the Depth actions.
func (e *kraftExplorer) run(mark func(uint64)) error {
	r := e.r
	for !e.ready() {
		if r.World.Now() > sim.Time(kraftSetupLimit) {
			return fmt.Errorf("the KRaft cluster was not ready (a quorum leader, every replica of %s in the ISR) after %v", e.tp, kraftSetupLimit)
		}
		if err := r.Advance(r.World.Now().Add(100 * sim.Millisecond)); err != nil {
			return err
		}
	}
	if mark != nil {
		mark(e.hash())
	}
	for step := 0; step < e.p.Depth; step++ {
		menu := e.menu()
		a := menu[r.World.Choose(sim.KindFault, len(menu))]
		if a.op != "next" {
			desc := e.describe(a)
			if err := r.World.Act(e.act, func(ctx *sim.Context) { ctx.Log("explore-action", sim.S("action", desc)) }); err != nil {
				return err
			}
		}
		if err := e.do(a); err != nil {
			return fmt.Errorf("step %d (%s): %w", step+1, e.describe(a), err)
		}
		if mark != nil {
			mark(e.hash())
		}
	}
	return nil
}

// ready reports whether the quorum has a leader that committed in its
// epoch and the partition has a leader with every replica in its ISR.
func (e *kraftExplorer) ready() bool {
	leader := false
	for _, i := range e.voters {
		if rc := e.raft(i); rc != nil && rc.IsLeader() && rc.HighWatermark() > 0 {
			leader = true
		}
	}
	if !leader {
		return false
	}
	rf := len(e.r.Observer.Replicas[e.tp])
	for _, b := range e.r.Observer.Replicas[e.tp] {
		if p := e.partition(b); p != nil && p.Role() == server.Leader && len(p.ISRView()) == rf {
			return true
		}
	}
	return false
}

// raft returns node i's quorum client, nil while it is down.
func (e *kraftExplorer) raft(i int) *raft.Client {
	if !e.r.World.Up(e.nodes[i]) {
		return nil
	}
	b, _ := e.r.World.Node(e.nodes[i]).(*server.Broker)
	if b == nil {
		return nil
	}
	return b.Raft()
}

// partition returns broker b's replica of the partition, nil while b is
// down or has none.
func (e *kraftExplorer) partition(b int32) *server.Partition {
	id := e.r.Cluster.Brokers[b]
	if !e.r.World.Up(id) {
		return nil
	}
	br, _ := e.r.World.Node(id).(*server.Broker)
	if br == nil {
		return nil
	}
	p, _ := br.Partition(e.tp)
	return p
}

// name is node i's name (c0, b1, ...).
func (e *kraftExplorer) name(i int32) string { return e.r.World.Name(e.nodes[i]) }

// describe renders an action with the nodes' names; a.b and a.to index
// e.nodes (the record number for produce).
func (e *kraftExplorer) describe(a action) string {
	switch a.op {
	case "next", "heal":
		return a.op
	case "produce":
		return "produce m" + strconv.Itoa(int(a.b))
	case "cut":
		return "cut " + e.name(a.b) + "->" + e.name(a.to)
	}
	return a.op + " " + e.name(a.b)
}

// menu lists the actions enabled now, "next" first.
func (e *kraftExplorer) menu() []action {
	w := e.r.World
	menu := []action{{op: "next"}}
	if e.produced < e.p.Records {
		menu = append(menu, action{op: "produce", b: int32(e.produced + 1)})
	}
	if e.faults["reconfig"] {
		// NB: before the crashes and cuts, so that a breadth-first search
		// within a run budget meets the voter changes early.
		menu = e.reconfigMenu(menu) // explore_reconfig.go
	}
	for i, id := range e.nodes {
		if w.Up(id) {
			if e.faults["crash"] {
				menu = append(menu, action{op: "crash", b: int32(i)})
			}
			if e.faults["power-loss"] {
				menu = append(menu, action{op: "power-loss", b: int32(i)})
			}
		} else {
			menu = append(menu, action{op: "restart", b: int32(i)})
		}
	}
	if e.faults["partition"] {
		anyCut := false
		for _, i := range e.voters {
			for _, j := range e.voters {
				if i == j {
					continue
				}
				if w.Cut(e.nodes[i], e.nodes[j]) {
					anyCut = true
				} else {
					menu = append(menu, action{op: "cut", b: int32(i), to: int32(j)})
				}
			}
		}
		if anyCut {
			menu = append(menu, action{op: "heal"})
		}
	}
	return menu
}

// do performs one action.
func (e *kraftExplorer) do(a action) error {
	r := e.r
	switch a.op {
	case "next":
		return e.next()
	case "produce":
		e.produced++
		return e.exec(scenarios.Step{Op: "produce", Args: []string{"p1", e.tp.Topic + "/" + strconv.Itoa(int(e.tp.Partition)), "m" + strconv.Itoa(int(a.b))},
			KV: map[string]string{"acks": e.p.Acks, "timeout": "10s"}})
	case "crash", "power-loss":
		e.down[a.b] = e.nodeHash(int(a.b))
		e.lost[a.b] = a.op == "power-loss"
		st := scenarios.Step{Op: a.op, Args: []string{e.name(a.b)}, KV: map[string]string{}}
		if a.op == "power-loss" {
			st.KV["keep"] = "none"
		}
		if e.broker[a.b] >= 0 {
			return e.exec(st)
		}
		// A dedicated controller is not a broker the script's steps name:
		// the fault is injected directly (and still scheduled).
		e.sched = append(e.sched, harness.TimedStep{At: r.World.Now(), Step: st})
		return r.World.Inject(sim.Crash{Node: e.nodes[a.b], LoseUnsynced: a.op == "power-loss", LoseAll: a.op == "power-loss"})
	case "restart":
		// A restart takes a moment (see explorer.do).
		if err := r.Advance(r.World.Now().Add(restartDelay)); err != nil {
			return err
		}
		st := scenarios.Step{Op: "restart", Args: []string{e.name(a.b)}}
		if e.broker[a.b] >= 0 {
			return e.exec(st)
		}
		e.sched = append(e.sched, harness.TimedStep{At: r.World.Now(), Step: st})
		return r.World.Inject(sim.Restart{Node: e.nodes[a.b]})
	case "cut":
		return e.exec(scenarios.Step{Op: "cut", Args: []string{e.name(a.b), "->", e.name(a.to)}})
	case "heal":
		return e.exec(scenarios.Step{Op: "heal"})
	case "remove-controller", "add-controller":
		return e.reconfig(a) // explore_reconfig.go
	}
	return nil
}

// exec runs a script step and schedules it.
func (e *kraftExplorer) exec(st scenarios.Step) error {
	e.sched = append(e.sched, harness.TimedStep{At: e.r.World.Now(), Step: st})
	return e.r.Step(st)
}

// next runs events until the coarse state (milestone) changes, or for
// nextBound.
func (e *kraftExplorer) next() error { return runUntilChange(e.r, e.milestone) }

// settle heals every link, restarts every node and lets the cluster
// converge before the checkers judge it.
func (e *kraftExplorer) settle() error {
	r := e.r
	if err := e.exec(scenarios.Step{Op: "heal"}); err != nil {
		return err
	}
	for i, id := range e.nodes {
		if !r.World.Up(id) {
			if err := e.do(action{op: "restart", b: int32(i)}); err != nil {
				return err
			}
		}
	}
	return r.Advance(r.World.Now().Add(kraftSettleTime))
}

// milestone is the coarse state a "next" runs until it changes: per node
// up or down, its raft role, epoch and leader; per broker its replica's
// role, leader epoch, leader and ISR; the clients' outcomes. Log appends
// and HW advances alone do not end a "next".
func (e *kraftExplorer) milestone() uint64 {
	b := e.nbuf[:0]
	for i := range e.nodes {
		rc := e.raft(i)
		if rc == nil {
			b = append(b, 'd')
			continue
		}
		le := rc.Leader()
		b = append(b, rc.State()...)
		b = binary.AppendVarint(b, int64(le.Epoch))
		b = binary.AppendVarint(b, int64(le.Leader))
		if e.broker[i] >= 0 {
			if p := e.partition(e.broker[i]); p != nil {
				b = append(b, 'p', byte(p.Role()))
				b = binary.AppendVarint(b, int64(p.LeaderEpoch()))
				b = binary.AppendVarint(b, int64(p.Leader()))
				for _, x := range p.ISRView() {
					b = binary.AppendVarint(b, int64(x))
				}
			}
		}
		if e.faults["reconfig"] {
			b = append(b, rc.Voters()...) // a voter change counts as it is appended
		}
		b = append(b, '|')
	}
	for _, op := range e.r.Recorder.History().Ops {
		b = append(b, byte(op.Outcome))
	}
	e.nbuf = b
	return fnv64(b)
}

// hash is the abstract state (see the file comment).
func (e *kraftExplorer) hash() uint64 {
	b := e.buf[:0]
	for i := range e.nodes {
		b = binary.LittleEndian.AppendUint64(b, e.nodeHash(i))
	}
	b = binary.AppendVarint(b, int64(e.produced))
	b = binary.AppendUvarint(b, e.removed)
	b = binary.AppendVarint(b, int64(e.changes))
	for i, x := range e.nodes {
		for j, y := range e.nodes {
			if i != j && e.r.World.Cut(x, y) {
				b = append(b, 'x', byte(i), byte(j))
			}
		}
	}
	for _, op := range e.r.Recorder.History().Ops {
		b = append(b, byte(op.Outcome))
		b = binary.AppendVarint(b, op.Offset)
	}
	e.buf = b
	return fnv64(b)
}

// nodeHash is node i's part of the abstract state.
func (e *kraftExplorer) nodeHash(i int) uint64 {
	w := e.r.World
	var b []byte
	if !w.Up(e.nodes[i]) {
		b = append(b, 'd')
		if e.lost[i] {
			b = append(b, 'l')
		}
		b = binary.LittleEndian.AppendUint64(b, e.down[i])
		return fnv64(b)
	}
	if rc := e.raft(i); rc != nil {
		le := rc.Leader()
		b = append(b, rc.State()...)
		for _, x := range []int64{int64(le.Epoch), int64(le.Leader), int64(rc.VotedFor()), rc.HighWatermark()} {
			b = binary.AppendVarint(b, x)
		}
		for _, en := range rc.Entries() {
			b = binary.AppendVarint(b, en.BaseOffset)
			b = binary.AppendVarint(b, en.LastOffset)
			b = binary.AppendVarint(b, int64(en.Epoch))
			b = binary.LittleEndian.AppendUint32(b, en.CRC)
		}
	}
	if bi := e.broker[i]; bi >= 0 {
		b = append(b, '#')
		b = appendPartitionState(b, &e.rb, e.partition(bi))
		disk := w.Disk(e.nodes[i])
		for _, f := range e.checkpoints {
			b, _ = disk.AppendFile(b, f)
			b = append(b, 0)
		}
	}
	return fnv64(b)
}
