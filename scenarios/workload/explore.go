package workload

// This file is the exploration workload: the scenario's header (brokers,
// topic, configuration, variants) with the script's steps replaced by a
// bounded sequence of actions, each one picked through the chooser as a
// KindFault choice, in the style of the TLA+ models of Kafka replication
// (reference/checkers.md §1): the explorer plays the controller. At each
// step the enabled actions are, in this order:
//
//	next             run until some replica, the controller or a client changes (alternative 0)
//	produce mK       the next record, acks=all by default
//	crash bN         the process dies; the OS keeps its page cache
//	power-loss bN    the machine dies; every unsynced write is lost
//	restart bN       a down broker returns, and the controller sends it the current LeaderAndIsr
//	elect bN         the controller makes bN leader in a new epoch (from its ISR: clean;
//	                 outside it: unclean, with -faults unclean); only bN is told
//	notify bN        the controller sends bN the current LeaderAndIsr
//	cut bA->bB       (with -faults partition) every message from bA to bB is
//	                 lost until a heal: a one-way partition, and the message
//	                 drops of a lossy link; two cuts make a full partition
//	heal             restore every cut link
//
// Links have one fixed latency, so message latency is not a choice; events
// due at the same instant still are (KindOrder). After the last step every
// broker is restarted and told the controller's state, every link healed,
// the cluster runs for settleTime, and the checkers judge the run (a
// search's run, ExploreSearch.Run, stops as soon as the cluster has
// provably converged: explore_settle.go).
//
// The abstract state hashed after each step: per replica, up or down (and,
// down, its state when it went down and whether it lost power), role,
// leader epoch, leader, LEO, HW, ISR, recovery point, the log's (offset,
// epoch, value) entries and the checkpoint files; the controller's leader,
// epoch, ISR and what it told each broker; each record's client outcome.
// Messages in flight and timers are not part of it; the cut links are.

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios/harness"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// exploreLatency is every link's one latency during exploration.
const exploreLatency = sim.Millisecond

// nextBound is how long a "next" runs when nothing changes: longer than
// replica.lag.time.max.ms and the HW checkpoint interval, so that ISR
// shrinks and checkpoints are reachable states.
const nextBound = 15 * sim.Second

// restartDelay is how long a broker stays down at least.
const restartDelay = sim.Millisecond

// faultSet is ExploreParams.Faults as flags (the menu reads them at every
// step).
type faultSet struct{ crash, powerLoss, elect, unclean, partition bool }

func newFaultSet(faults []string) faultSet {
	var f faultSet
	for _, n := range faults {
		switch n {
		case "crash":
			f.crash = true
		case "power-loss":
			f.powerLoss = true
		case "elect":
			f.elect = true
		case "unclean":
			f.unclean = true
		case "partition":
			f.partition = true
		}
	}
	return f
}

// action is one entry of the menu of a step.
type action struct {
	op string // next, produce, crash, power-loss, restart, elect, unclean, notify, cut, heal
	b  int32  // broker, or the record number for produce
	to int32  // cut: the destination broker
}

func (a action) String() string {
	switch a.op {
	case "next":
		return "next"
	case "produce":
		return "produce m" + strconv.Itoa(int(a.b))
	case "unclean":
		return "elect b" + strconv.Itoa(int(a.b)) + " (unclean)"
	case "cut":
		return "cut b" + strconv.Itoa(int(a.b)) + "->b" + strconv.Itoa(int(a.to))
	case "heal":
		return "heal"
	}
	return a.op + " b" + strconv.Itoa(int(a.b))
}

// explorer is the controller and workload of one exploration run.
type explorer struct {
	r        *harness.Runner
	p        ExploreParams
	faults   faultSet
	tp       storage.TopicPartition
	replicas []int32
	leader   int32
	epoch    int32
	isr      []int32
	told     []int32  // per broker: the epoch it was last sent, -1 none
	down     []uint64 // per broker: its state's hash when it went down
	lost     []bool   // per broker: it went down losing unsynced writes
	produced int
	buf      []byte
	bbuf     []byte
	rb       storage.RecordBatch // brokerHash's decoded batch, reused
	// hashes are brokerHash's last results, computed when the broker's
	// node had been touched hashed-1 times (0: none).
	hashed, hashes []uint64
	// checkpoints are the files a restarted broker reads its HW and its
	// leader epochs from.
	checkpoints []string
	// sched are the steps the run took, at their virtual times
	// (Result.Schedule).
	sched []harness.TimedStep
	// early lets the settle end at convergence (explore_settle.go); silent
	// records that a cut or a power loss may have lost a message without
	// telling its sender, which rules it out.
	early, silent bool
	// search is ExploreSearch.Run's run: no one reads its schedule.
	search  bool
	menuBuf []action // menu's, reused
}

// ExploreActions lists the exploration workload's actions of a run (other
// than next), in order.
func ExploreActions(res *harness.Result) []string {
	var out []string
	for _, r := range res.World.Trace().Records() {
		if r.Kind == "explore-action" {
			a, _ := r.Get("action")
			out = append(out, a)
		}
	}
	return out
}

// ExploreRun runs one exploration run of the variant under chooser c (on
// a KRaft configuration, the KRaft workload of explore_kraft.go):
// mark, when not nil, is called with the state hash after the setup and
// after each action. The error is bad input only.
func ExploreRun(s *scenarios.Script, variant string, p ExploreParams, opts harness.Options, mark func(uint64)) (*harness.Result, error) {
	v, cfg, err := harness.Prepare(s, variant, opts.Set)
	if err != nil {
		return nil, err
	}
	if cfg.Broker.KRaftMode() {
		return exploreKRaft(s, v, cfg, p, opts, mark, nil) // explore_kraft.go
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := CheckExplorable(s, false); err != nil {
		return nil, err
	}
	return exploreZK(OnePartition(s), v, cfg, p, opts, mark, nil)
}

// exploreZK is ExploreRun in ZooKeeper mode, p validated; a search's run
// (ExploreSearch.Run) gives the cluster's plan (harness.ClusterPlan of s
// and cfg with the manual controller), ExploreRun nil.
func exploreZK(s *scenarios.Script, v scenarios.Variant, cfg config.Config, p ExploreParams, opts harness.Options, mark func(uint64), plan *cluster.Plan) (*harness.Result, error) {
	search := plan != nil
	keep := opts.Timeline || opts.KeepTrace
	w, err := sim.New(sim.Config{Seed: opts.Seed, Chooser: opts.Chooser, RecordChoices: opts.RecordChoices, KeepTrace: keep,
		KeepKinds: map[string]bool{"controller-unclean-election": true, "controller-partition-state": true, "isr": true, "become-leader": true, "explore-action": true}, MaxTime: sim.Time(sim.Hour) * 24,
		Link: sim.LinkConfig{MinLatency: exploreLatency, MaxLatency: exploreLatency}})
	if err != nil {
		return nil, err
	}
	var r *harness.Runner
	if plan != nil {
		r, err = harness.NewRunnerFrom(s, w, cfg, plan, nil, opts.Timeline)
	} else {
		r, err = harness.NewRunner(s, w, cfg, true, nil, opts.Timeline)
	}
	if err != nil {
		return nil, err
	}
	r.Observer.Facts.UncleanElectionEnabled = r.Observer.Facts.UncleanElectionEnabled || slices.Contains(p.Faults, "unclean")
	res := &harness.Result{Scenario: s.Name, Variant: v.Name, Seed: opts.Seed, World: w}
	if !search {
		res.Config = cfg.NonDefaultPairs()
	}
	e := &explorer{r: r, p: p, faults: newFaultSet(p.Faults), early: search && !keep, search: search}
	e.tp = r.Observer.Partitions[0]
	for _, dir := range cfg.Broker.LogDirs {
		e.checkpoints = append(e.checkpoints, dir+"/replication-offset-checkpoint", dir+"/"+e.tp.String()+"/leader-epoch-checkpoint")
	}
	e.replicas = r.Observer.Replicas[e.tp]
	n := len(r.Cluster.Brokers)
	e.told, e.down, e.lost = make([]int32, n), make([]uint64, n), make([]bool, n)
	e.hashed, e.hashes = make([]uint64, n), make([]uint64, n)
	for i := range e.told {
		e.told[i] = -1
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
	res.Changes, res.Truncations = r.Observer.Changes, r.Observer.Truncations
	return res, nil
}

// run is the setup and the Depth actions.
func (e *explorer) run(mark func(uint64)) error {
	r := e.r
	e.leader, e.epoch, e.isr = e.replicas[0], 0, slices.Clone(e.replicas)
	slices.Sort(e.isr)
	for _, b := range e.replicas {
		if err := e.notify(b); err != nil {
			return err
		}
	}
	if err := r.Advance(r.World.Now().Add(100 * sim.Millisecond)); err != nil {
		return err
	}
	if mark != nil {
		mark(e.hash())
	}
	for step := 0; step < e.p.Depth; step++ {
		menu := e.menu()
		a := menu[r.World.Choose(sim.KindFault, len(menu))]
		if a.op != "next" {
			r.World.Act(r.Controller, func(ctx *sim.Context) { ctx.Log("explore-action", sim.S("action", a.String())) })
		}
		if err := e.do(a); err != nil {
			return fmt.Errorf("step %d (%s): %w", step+1, a, err)
		}
		if mark != nil {
			mark(e.hash())
		}
	}
	return nil
}

// menu lists the actions enabled now, "next" first.
func (e *explorer) menu() []action {
	w := e.r.World
	e.readISR()
	menu := append(e.menuBuf[:0], action{op: "next"})
	if e.produced < e.p.Records {
		menu = append(menu, action{op: "produce", b: int32(e.produced + 1)})
	}
	for i, id := range e.r.Cluster.Brokers {
		b := int32(i)
		if w.Up(id) {
			if e.faults.crash {
				menu = append(menu, action{op: "crash", b: b})
			}
			if e.faults.powerLoss {
				menu = append(menu, action{op: "power-loss", b: b})
			}
		} else {
			menu = append(menu, action{op: "restart", b: b})
		}
	}
	if e.faults.elect || e.faults.unclean {
		for _, b := range e.replicas {
			if b == e.leader || !w.Up(e.r.Cluster.Brokers[b]) {
				continue
			}
			if slices.Contains(e.isr, b) {
				if e.faults.elect {
					menu = append(menu, action{op: "elect", b: b})
				}
			} else if e.faults.unclean {
				menu = append(menu, action{op: "unclean", b: b})
			}
		}
		for _, b := range e.replicas {
			if w.Up(e.r.Cluster.Brokers[b]) && e.told[b] < e.epoch {
				menu = append(menu, action{op: "notify", b: b})
			}
		}
	}
	if e.faults.partition {
		anyCut := false
		for i, a := range e.r.Cluster.Brokers {
			for j, b := range e.r.Cluster.Brokers {
				if i == j {
					continue
				}
				if w.Cut(a, b) {
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
	e.menuBuf = menu // the caller copies the action it picks
	return menu
}

// readISR takes the ISR the current leader wrote (in ZooKeeper mode the
// leader writes ISR changes to the partition's state znode, which the
// controller reads).
func (e *explorer) readISR() {
	if p := e.partition(e.leader); p != nil && p.Role() == server.Leader && p.LeaderEpoch() == e.epoch {
		e.isr = append(e.isr[:0], p.ISRView()...) // no one keeps e.isr (bump makes a new one)
		slices.Sort(e.isr)
	}
}

func (e *explorer) partition(b int32) *server.Partition {
	br, alive := e.r.Observer.Broker(b)
	if !alive || !e.r.World.Up(e.r.Cluster.Brokers[b]) {
		return nil
	}
	p, _ := br.Partition(e.tp)
	return p
}

func bname(b int32) string { return "b" + strconv.Itoa(int(b)) }

// do performs one action.
func (e *explorer) do(a action) error {
	r := e.r
	switch a.op {
	case "next":
		return e.next()
	case "produce":
		e.produced++
		acks := e.p.Acks
		return e.exec(scenarios.Step{Op: "produce", Args: []string{"p1", e.tp.Topic + "/" + strconv.Itoa(int(e.tp.Partition)), "m" + strconv.Itoa(int(a.b))},
			KV: map[string]string{"acks": acks, "timeout": "10s"}})
	case "crash", "power-loss":
		e.down[a.b] = e.brokerHash(a.b)
		e.lost[a.b] = a.op == "power-loss"
		e.silent = e.silent || e.lost[a.b]
		kv := map[string]string{}
		if a.op == "power-loss" {
			kv["keep"] = "none"
		}
		if err := e.exec(scenarios.Step{Op: a.op, Args: []string{bname(a.b)}, KV: kv}); err != nil {
			return err
		}
		if a.b == e.leader {
			// Kafka's controller sees the leader's session end and elects
			// the first live member of the ISR at once; with none, the
			// partition stays offline until the leader returns.
			for _, b := range e.isr {
				if b != a.b && r.World.Up(r.Cluster.Brokers[b]) {
					e.bump(b)
					return e.notify(b)
				}
			}
		}
	case "restart":
		// A restart takes a moment: the checkers judge outages as
		// intervals, and one of no length would hide that every replica
		// was down at once.
		if err := r.Advance(r.World.Now().Add(restartDelay)); err != nil {
			return err
		}
		if err := e.exec(scenarios.Step{Op: "restart", Args: []string{bname(a.b)}}); err != nil {
			return err
		}
		e.told[a.b] = -1
		if a.b == e.leader {
			// The leader came back: like Kafka's controller bringing an
			// offline partition online, it leads a new epoch.
			e.bump(a.b)
		}
		if slices.Contains(e.replicas, a.b) {
			return e.notify(a.b)
		}
	case "elect", "unclean":
		e.bump(a.b)
		if a.op == "unclean" {
			if !e.search {
				e.sched = append(e.sched, harness.TimedStep{At: r.World.Now(), Step: scenarios.Step{Op: opUnclean, Args: []string{bname(a.b)}}})
			}
			tp := e.tp.String()
			r.World.Act(r.Controller, func(ctx *sim.Context) {
				ctx.Log("controller-unclean-election", sim.S("partition", tp), sim.I("leader", int64(a.b)), sim.I("leader-epoch", int64(e.epoch)))
			})
		}
		return e.notify(a.b)
	case "notify":
		return e.notify(a.b)
	case "cut":
		e.silent = true
		return e.exec(scenarios.Step{Op: "cut", Args: []string{bname(a.b), "->", bname(a.to)}})
	case "heal":
		return e.exec(scenarios.Step{Op: "heal"})
	}
	return nil
}

// bump makes b the leader of a new epoch, with the live members of the
// ISR.
func (e *explorer) bump(b int32) {
	e.epoch++
	e.leader = b
	isr := []int32{b}
	for _, id := range e.isr {
		if id != b && e.r.World.Up(e.r.Cluster.Brokers[id]) {
			isr = append(isr, id)
		}
	}
	slices.Sort(isr)
	e.isr = isr
}

// notify sends broker b the controller's current LeaderAndIsr (and every
// broker the UpdateMetadata).
func (e *explorer) notify(b int32) error {
	isr := make([]string, len(e.isr))
	for i, id := range e.isr {
		isr[i] = bname(id)
	}
	e.told[b] = e.epoch
	return e.exec(scenarios.Step{Op: "leader-and-isr", Args: []string{e.tp.Topic + "/" + strconv.Itoa(int(e.tp.Partition))},
		KV: map[string]string{"leader": bname(e.leader), "epoch": strconv.Itoa(int(e.epoch)), "isr": strings.Join(isr, ","), "to": bname(b)}})
}

// next runs events until the abstract state changes, or for nextBound.
func (e *explorer) next() error { return runUntilChange(e.r, e.hash) }

// runUntilChange runs events until state() differs from its value now, or
// for nextBound: the explorers' "next" action.
func runUntilChange(r *harness.Runner, state func() uint64) error {
	before := state()
	deadline := r.World.Now().Add(nextBound)
	for {
		at, ok := r.World.NextEventTime()
		if !ok || at > deadline {
			r.World.RunUntil(deadline)
			return nil
		}
		if err := r.StepOne(); err != nil {
			return err
		}
		if state() != before {
			return nil
		}
	}
}

// settle restarts every broker, tells each the controller's state, and lets
// the cluster converge before the checkers judge it.
func (e *explorer) settle() error {
	r := e.r
	if err := e.exec(scenarios.Step{Op: "heal"}); err != nil {
		return err
	}
	for i, id := range r.Cluster.Brokers {
		if !r.World.Up(id) {
			if err := e.do(action{op: "restart", b: int32(i)}); err != nil {
				return err
			}
		}
	}
	for _, b := range e.replicas {
		if e.told[b] < e.epoch {
			if err := e.notify(b); err != nil {
				return err
			}
		}
	}
	// Long enough for a fetch lost in a cut to time out and be retried
	// (replica.socket.timeout.ms plus replica.fetch.wait.max.ms).
	deadline := r.World.Now().Add(settleTime)
	if !e.early || e.silent {
		return r.Advance(deadline)
	}
	return e.settleUntilConverged(deadline) // explore_settle.go
}

// settleTime is how long the healed cluster runs before the checkers judge.
const settleTime = 40 * sim.Second

// hash is the abstract state (see the file comment).
func (e *explorer) hash() uint64 {
	b := e.buf[:0]
	for _, id := range e.replicas {
		b = binary.LittleEndian.AppendUint64(b, e.brokerHash(id))
	}
	b = binary.AppendVarint(b, int64(e.leader))
	b = binary.AppendVarint(b, int64(e.epoch))
	for _, id := range e.isr {
		b = binary.AppendVarint(b, int64(id))
	}
	b = append(b, '|')
	for _, t := range e.told {
		b = binary.AppendVarint(b, int64(t))
	}
	b = binary.AppendVarint(b, int64(e.produced))
	for _, a := range e.r.Cluster.Brokers {
		if !e.faults.partition {
			break // only a cut action cuts a link
		}
		for _, c := range e.r.Cluster.Brokers {
			if a != c && e.r.World.Cut(a, c) {
				b = append(b, 'x', byte(a), byte(c))
			}
		}
	}
	e.r.Recorder.EachOp(func(op *checkers.Op) {
		b = append(b, byte(op.Outcome))
		b = binary.AppendVarint(b, op.Offset)
	})
	e.buf = b
	return fnv64(b)
}

// brokerHash is one broker's part of the abstract state. It is kept
// until the broker's node is touched again (sim.World.Touched: a handler
// run, a crash or a start), the only ways its memory, its disk or its
// being up change; e.down and e.lost change only at a crash. (Reading the
// checkpoint files counts disk reads, which nothing judges; the clusters'
// disks have no read latency, so the reads never delay a broker.)
func (e *explorer) brokerHash(id int32) uint64 {
	w := e.r.World
	touched := w.Touched(e.r.Cluster.Brokers[id]) + 1 // 0: nothing kept
	if e.hashed[id] == touched {
		return e.hashes[id]
	}
	h := e.computeBrokerHash(id)
	e.hashed[id], e.hashes[id] = touched, h
	return h
}

// computeBrokerHash is brokerHash, computed.
func (e *explorer) computeBrokerHash(id int32) uint64 {
	w := e.r.World
	b := e.bbuf[:0]
	if !w.Up(e.r.Cluster.Brokers[id]) {
		b = append(b, 'd')
		if e.lost[id] {
			b = append(b, 'l')
		}
		b = binary.LittleEndian.AppendUint64(b, e.down[id])
		e.bbuf = b
		return fnv64(b)
	}
	b = appendPartitionState(b, &e.rb, e.partition(id))
	disk := w.Disk(e.r.Cluster.Brokers[id])
	for _, f := range e.checkpoints {
		b, _ = disk.AppendFile(b, f)
		b = append(b, 0)
	}
	e.bbuf = b
	return fnv64(b)
}

// appendPartitionState appends a live replica's part of the abstract
// state: role, leader epoch, leader, LEO, HW, recovery point, ISR and the
// log's (offset, epoch, value) entries; p nil (no replica) is 'n'. The
// log's batches are decoded into rb.
func appendPartitionState(b []byte, rb *storage.RecordBatch, p *server.Partition) []byte {
	if p == nil {
		return append(b, 'n')
	}
	b = append(b, 'p', byte(p.Role()))
	for _, x := range []int64{int64(p.LeaderEpoch()), int64(p.Leader()), p.LogEndOffset(), p.HighWatermark(), p.Log().RecoveryPoint()} {
		b = binary.AppendVarint(b, x)
	}
	for _, x := range p.ISRView() {
		b = binary.AppendVarint(b, int64(x))
	}
	b = append(b, ';')
	harness.EachLogEntry(p.Log(), rb, func(offset int64, epoch int32, value []byte) {
		b = binary.AppendVarint(b, offset)
		b = binary.AppendVarint(b, int64(epoch))
		b = append(b, value...)
		b = append(b, 0)
	})
	return b
}

// fnv64 is FNV-1a over b: a hash that is the same in every process (unlike
// hash/maphash), so that saved searches resume.
func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
