package harness

// This file turns the running cluster into what the checkers judge:
// snapshots of every replica after each event (for the invariants monitor),
// the final replica states and logs, and the fault facts that decide what
// Kafka's contract permits.

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/controller"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

func role(r server.Role) checkers.Role {
	switch r {
	case server.Leader:
		return checkers.Leader
	case server.Follower:
		return checkers.Follower
	}
	return checkers.NoRole
}

// replicaState reads one replica; p may be nil (no replica yet).
func replicaState(broker int32, alive bool, p *server.Partition, unclean bool) checkers.ReplicaState {
	st := checkers.ReplicaState{Broker: broker, Alive: alive, LeaderEpoch: -1, UncleanRestart: unclean}
	if p == nil || !alive {
		return st
	}
	st.Role = role(p.Role())
	st.LeaderEpoch = p.LeaderEpoch()
	st.LEO, st.HW = p.LogEndOffset(), p.HighWatermark()
	if p.Role() == server.Leader {
		st.ISR = p.ISR()
		st.PendingISR = p.PendingISR()
		st.MinISR = p.MinISR()
	}
	return st
}

// Observer tracks the cluster for the checkers: after every event it
// samples the replicas (Partitions, Replicas), feeds the invariants
// monitor and keeps the facts (Facts), the state changes and the
// truncations a Result reports.
type Observer struct {
	// ShareLoads are the share-partition states the brokers recovered
	// from __share_group_state, in the order observed (share_consumer.go).
	ShareLoads []checkers.ShareLoad
	c          *cluster.Cluster
	Partitions []storage.TopicPartition
	Replicas   map[storage.TopicPartition][]int32
	reps       [][]int32 // replicas of tps[i], for the per-event loops
	monitor    *checkers.Monitor
	unclean    map[int32]bool // brokers whose last restart followed a power loss
	Facts      checkers.Facts
	snaps      []checkers.PartitionSnapshot
	// prev is what each replica looked like at the last observation: the
	// monitor is only fed when something changed (most events are pings
	// and timers that change no replica).
	prev [][]replicaSeen // per tps[i]
	// refs caches each replica's *server.Partition (replicaOf), per tps[i]
	// and replica.
	refs [][]replicaRef
	// With timeline set, every change of a partition's replica states is
	// kept, for replay's per-event view.
	timeline bool
	// touched is each broker's sim.World.Touched at the last observation,
	// by broker id; stale marks the brokers whose count moved since: only
	// their replicas can have changed.
	touched []uint64
	stale   []bool
	dirty   []int // the partitions (indexes into tps) the last event changed
	// onBroker and unknownBroker index the replicas for changed
	// (indexReplicas); diffs is its scratch, per tps[i].
	onBroker      [][]replicaAt
	unknownBroker []replicaAt
	diffs         []bool
	snapBuf       [][]checkers.ReplicaState
	// leaders is, per tps[i], the last live leader's high watermark and
	// since when no live replica leads it (Status: serve's status).
	leaders []leaderSeen
	// committedBuf holds the Committed entries of tps[i]'s snapshot,
	// reused like snapBuf.
	committedBuf [][]checkers.Entry
	last         map[string]string
	Changes      []StateChange
	// With timeline set, each replica's log is followed too, so that every
	// truncation can show the log before and after it.
	logs        map[storage.TopicPartition][]replicaLog
	Truncations []Truncation
	// readTo is how far below its HW each leader's log was read for the
	// monitor's ever-committed records, per partition, broker and epoch.
	readTo map[readKey]int64
	// decoded is the batch appendEntries decodes into, reused.
	decoded storage.RecordBatch
	// values interns the record values appendEntries reads: each new
	// leader's log is read again from its start, so most values were read
	// before, and a lookup by the bytes allocates nothing.
	values map[string]string
	// passed holds, per tps[i] and base offset, the bytes of each batch
	// committedEntries passed on whole.
	passed []map[int64][]byte
	// topEpoch is the highest leader epoch a leader of tps[i] was seen in
	// (+1; 0: none): a leader of a lower epoch is stale (a zombie), and its
	// HW commits nothing (Vanlightly's inv_true_hwm is the non-stale
	// leader's).
	topEpoch []int32
	// gone are the partitions a topic created again with fewer no longer
	// has (recreate).
	gone       map[storage.TopicPartition]bool
	zkViews    []zkView                  // controller_view.go
	kraftViews []checkers.ControllerView // controller_view.go
}

type readKey struct {
	tp     int // index into tps
	broker int32
	epoch  int32
}

// replicaLog is what the observer last read of a replica's log.
type replicaLog struct {
	leo     int64
	entries []checkers.Entry
}

// Truncation is a replica's log just before and just after an event that
// shortened it (a truncation, or a restart after losing unsynced data).
type Truncation struct {
	Event         uint64
	Time          sim.Time
	Partition     string
	Broker        int32
	Before, After []checkers.Entry
}

// StateChange is a partition's replica states after the event that changed
// them.
type StateChange struct {
	Event uint64
	Time  sim.Time
	State string // "t-0: b0 leader e1 LEO=2 HW=2 ISR=[0 1] | b1 follower e1 LEO=2 HW=1"
	// Partition ("t-0") and Replicas are State's values, for the report's
	// timeline (LEO, HW, leadership, ISR per replica over time).
	Partition string
	Replicas  []checkers.ReplicaState
}

func newObserver(c *cluster.Cluster, topics []scenarios.TopicSpec, assignments map[string][][]int32) *Observer {
	o := &Observer{c: c, Replicas: map[storage.TopicPartition][]int32{}, monitor: checkers.NewMonitor(), unclean: map[int32]bool{}}
	for _, t := range topics {
		for p := 0; p < t.Partitions; p++ {
			tp := storage.TopicPartition{Topic: t.Name, Partition: int32(p)}
			o.Partitions = append(o.Partitions, tp)
			o.Replicas[tp] = assignments[t.Name][p]
			o.reps = append(o.reps, assignments[t.Name][p])
		}
	}
	return o
}

func (o *Observer) Broker(id int32) (*server.Broker, bool) {
	b := o.c.Broker(int(id))
	return b, b != nil && !b.Halted()
}

// replicaSeen is a replica's observable state, compared between events.
// leaderSeen is what Status says of a partition without a live leader.
type leaderSeen struct {
	seen    bool // a live leader was observed once
	offline bool
	hw      int64    // the last live leader's high watermark
	since   sim.Time // when the last live leader was last seen
}

type replicaSeen struct {
	alive, unclean bool
	role           server.Role
	epoch          int32
	leo, hw        int64
	isr, pending   []int32
	minISR         int
}

func (a *replicaSeen) same(alive, unclean bool, p *server.Partition) bool {
	if a.alive != alive || a.unclean != unclean || (p == nil) != (a.role == 255) {
		return false
	}
	if p == nil {
		return true
	}
	if a.role != p.Role() || a.epoch != p.LeaderEpoch() || a.leo != p.LogEndOffset() || a.hw != p.HighWatermark() || a.minISR != p.MinISR() {
		return false
	}
	return slices.Equal(a.isr, p.ISRView()) && slices.Equal(a.pending, p.PendingISRView())
}

func (a *replicaSeen) set(alive, unclean bool, p *server.Partition) {
	a.alive, a.unclean = alive, unclean
	if p == nil {
		a.role = 255
		return
	}
	a.role, a.epoch, a.leo, a.hw, a.minISR = p.Role(), p.LeaderEpoch(), p.LogEndOffset(), p.HighWatermark(), p.MinISR()
	a.isr = append(a.isr[:0], p.ISRView()...)
	a.pending = append(a.pending[:0], p.PendingISRView()...)
}

// changed reports whether any replica differs from the last observation,
// records the current state, and lists the partitions that changed in
// o.dirty (indexes into o.tps). Only the replicas of the brokers in o.stale
// are compared (all of them at the first observation).
func (o *Observer) changed() bool {
	o.dirty = o.dirty[:0]
	first := o.prev == nil
	if first {
		o.prev = make([][]replicaSeen, len(o.Partitions))
		for k := range o.Partitions {
			o.prev[k] = make([]replicaSeen, len(o.reps[k]))
			o.prev[k][0].role = 254 // never a role: the first observation differs
		}
	}
	if len(o.diffs) != len(o.Partitions) {
		o.diffs = make([]bool, len(o.Partitions))
	}
	compare := func(r replicaAt) {
		id := o.reps[r.k][r.i]
		b, alive := o.Broker(id)
		var p *server.Partition
		if alive {
			p = o.replicaOf(r.k, r.i, b)
		}
		if seen := &o.prev[r.k][r.i]; !seen.same(alive, o.unclean[id], p) {
			seen.set(alive, o.unclean[id], p)
			o.diffs[r.k] = true
		}
	}
	if first {
		for k := range o.Partitions {
			for i := range o.reps[k] {
				compare(replicaAt{k, i})
			}
		}
	} else {
		// NB: only the replicas of the brokers that ran a handler (their
		// broker's list), and those of brokers o.stale does not know yet.
		o.indexReplicas()
		for id, stale := range o.stale {
			if stale {
				for _, r := range o.onBroker[id] {
					compare(r)
				}
			}
		}
		for _, r := range o.unknownBroker {
			compare(r)
		}
	}
	for k, d := range o.diffs {
		if d {
			o.dirty = append(o.dirty, k) // in partition order, as the monitor is fed
			o.diffs[k] = false
		}
	}
	return len(o.dirty) > 0
}

// observe feeds the invariants monitor the state after an event, when it
// changed.
func (o *Observer) observe() {
	w := o.c.World
	// An event that touched no broker (a client's, ZooKeeper's) cannot
	// have changed a replica: skip the comparison. One that touched some
	// can only have changed theirs.
	if len(o.touched) < len(o.c.Brokers) {
		o.touched = append(o.touched, make([]uint64, len(o.c.Brokers)-len(o.touched))...)
		o.stale = append(o.stale, make([]bool, len(o.c.Brokers)-len(o.stale))...)
	}
	any := false
	for i, id := range o.c.Brokers {
		t := w.Touched(id)
		o.stale[i] = t != o.touched[i]
		o.touched[i] = t
		any = any || o.stale[i]
		if o.stale[i] {
			o.takeShareLoads(int32(i)) // share_consumer.go
		}
	}
	if !any && o.prev != nil {
		return
	}
	if !o.changed() {
		return
	}
	// Only the partitions that changed are snapshot (the monitor takes any
	// subset), into buffers reused between events.
	if o.snapBuf == nil {
		o.snapBuf = make([][]checkers.ReplicaState, len(o.Partitions))
		o.committedBuf = make([][]checkers.Entry, len(o.Partitions))
	}
	o.snaps = o.snaps[:0]
	src := o.controllerSource()
	for _, k := range o.dirty {
		tp := o.Partitions[k]
		snap := checkers.PartitionSnapshot{Topic: tp.Topic, Partition: tp.Partition, Replicas: o.snapBuf[k][:0], Controller: o.controllerView(src, k, tp),
			Committed: o.committedBuf[k][:0]}
		for i, id := range o.reps[k] {
			b, alive := o.Broker(id)
			var p *server.Partition
			if alive {
				p = o.replicaOf(k, i, b)
			}
			snap.Replicas = append(snap.Replicas, replicaState(id, alive, p, o.unclean[id]))
			if o.topEpoch == nil {
				o.topEpoch = make([]int32, len(o.Partitions))
			}
			if p != nil && alive && p.Role() == server.Leader && p.LeaderEpoch()+1 >= o.topEpoch[k] {
				o.topEpoch[k] = p.LeaderEpoch() + 1
				if o.readTo == nil {
					o.readTo = map[readKey]int64{}
				}
				rk := readKey{k, id, p.LeaderEpoch()}
				if hw := p.HighWatermark(); hw > o.readTo[rk] {
					snap.Committed = o.committedEntries(snap.Committed, k, p.Log(), o.readTo[rk], hw)
					o.readTo[rk] = hw
				}
			}
		}
		o.noteLeader(k, snap.Replicas, w.Now())
		o.snapBuf[k] = snap.Replicas
		o.committedBuf[k] = snap.Committed // NB: the monitor copies the entries it keeps
		o.snaps = append(o.snaps, snap)
		if o.timeline {
			o.followLogs(tp)
			var parts []string
			for _, r := range snap.Replicas {
				parts = append(parts, r.String())
			}
			line := tp.String() + ": " + strings.Join(parts, " | ")
			if o.last[tp.String()] != line {
				o.last[tp.String()] = line
				reps := make([]checkers.ReplicaState, len(snap.Replicas))
				for i, r := range snap.Replicas {
					r.ISR, r.PendingISR = slices.Clone(r.ISR), nil // NB: snapBuf is reused
					reps[i] = r
				}
				o.Changes = append(o.Changes, StateChange{Event: w.Events(), Time: w.Now(), State: line, Partition: tp.String(), Replicas: reps})
			}
		}
	}
	o.monitor.Observe(w.Events(), w.Now(), o.snaps)
}

// noteLeader records partition k's live leader, or since when it has none.
func (o *Observer) noteLeader(k int, rs []checkers.ReplicaState, now sim.Time) {
	if len(o.leaders) < len(o.Partitions) { // client topics join as they are observed
		o.leaders = append(o.leaders, make([]leaderSeen, len(o.Partitions)-len(o.leaders))...)
	}
	l := &o.leaders[k]
	for _, r := range rs {
		if r.Alive && r.Role == checkers.Leader {
			l.seen, l.offline, l.hw, l.since = true, false, r.HW, now
			return
		}
	}
	if l.seen && !l.offline {
		l.offline, l.since = true, now
	}
}

// followLogs reads what each live replica of tp appended since the last
// observation and keeps the logs around every shortening.
func (o *Observer) followLogs(tp storage.TopicPartition) {
	if o.logs == nil {
		o.logs = map[storage.TopicPartition][]replicaLog{}
	}
	logs := o.logs[tp]
	if logs == nil {
		logs = make([]replicaLog, len(o.Replicas[tp]))
		o.logs[tp] = logs
	}
	w := o.c.World
	for i, id := range o.Replicas[tp] {
		b, alive := o.Broker(id)
		if !alive {
			continue
		}
		p, ok := b.Partition(tp)
		if !ok {
			continue
		}
		prev := &logs[i]
		leo := p.LogEndOffset()
		switch {
		case leo < prev.leo:
			after := LogEntries(p.Log())
			o.Truncations = append(o.Truncations, Truncation{Event: w.Events(), Time: w.Now(), Partition: tp.String(), Broker: id,
				Before: prev.entries, After: after})
			prev.entries = after
		case leo > prev.leo:
			prev.entries = o.appendEntries(prev.entries, p.Log(), prev.leo, math.MaxInt64)
		}
		prev.leo = leo
	}
}

// fail records a fault on a broker for the checkers' facts.
func (o *Observer) fail(broker int32, kind checkers.FailureKind, lost bool) {
	o.Facts.Failures = append(o.Facts.Failures, checkers.Failure{Broker: broker, Kind: kind, Time: o.c.World.Now(), LostUnflushed: lost,
		Controller: broker >= server.FirstControllerID})
}

// unflushed reports whether broker may hold data it has not flushed: a
// log whose end is past its recovery point (what Kafka has fsynced), or a
// node whose logs the observer cannot see (a KRaft controller, a broker
// down already), which is assumed to.
func (o *Observer) unflushed(broker int32) bool {
	if broker >= server.FirstControllerID {
		return true
	}
	b, alive := o.Broker(broker)
	if !alive {
		return true
	}
	for _, p := range b.Partitions() {
		if l := p.Log(); l == nil || l.UnflushedMessages() > 0 {
			return true
		}
	}
	return false
}

// recover closes the open failures of broker of the given kinds.
func (o *Observer) recover(broker int32, kinds ...checkers.FailureKind) {
	for i := range o.Facts.Failures {
		f := &o.Facts.Failures[i]
		if f.Broker == broker && f.End == 0 {
			for _, k := range kinds {
				if f.Kind == k {
					f.End = o.c.World.Now()
				}
			}
		}
	}
}

// final reads the end state of every partition. The current leader is the
// active controller's, or, with a manual controller, the last one the
// script elected.
func (o *Observer) final(ctrl *controller.Controller, manual map[storage.TopicPartition][2]int32) checkers.Final {
	f := checkers.Final{Facts: o.Facts}
	for _, tp := range o.Partitions {
		pf := checkers.PartitionFinal{Topic: tp.Topic, Partition: tp.Partition, Leader: -1, LeaderEpoch: -1}
		if ctrl != nil {
			if st, _, ok := ctrl.PartitionState(controller.TP{Topic: tp.Topic, Partition: tp.Partition}); ok {
				pf.Leader, pf.LeaderEpoch = st.Leader, st.LeaderEpoch
			}
		}
		if m, ok := manual[tp]; ok {
			pf.Leader, pf.LeaderEpoch = m[0], m[1]
		}
		for _, id := range o.Replicas[tp] {
			b, alive := o.Broker(id)
			var p *server.Partition
			if alive {
				p, _ = b.Partition(tp)
			}
			r := checkers.Replica{ReplicaState: replicaState(id, alive, p, o.unclean[id])}
			if p != nil && alive {
				r.Log = o.appendEntries(nil, p.Log(), p.Log().LogStartOffset(), math.MaxInt64) // LogEntries, values interned
			}
			pf.Replicas = append(pf.Replicas, r)
		}
		f.Partitions = append(f.Partitions, pf)
	}
	return f
}

// LogEntries reads a whole log as (offset, epoch, value) entries, control
// batches left out.
func LogEntries(l *storage.Log) []checkers.Entry {
	var rb storage.RecordBatch
	return appendLogEntries(nil, &rb, l, l.LogStartOffset(), math.MaxInt64)
}

// appendEntries appends l's entries in [from, below) to out, decoding into
// the observer's reused batch.
func (o *Observer) appendEntries(out []checkers.Entry, l *storage.Log, from, below int64) []checkers.Entry {
	if o.values == nil {
		o.values = map[string]string{}
	}
	walkLogRecords(&o.decoded, l, from, below, func(r *storage.Record, epoch int32) {
		out = append(out, checkers.Entry{Offset: r.Offset, LeaderEpoch: epoch, Value: o.intern(r.Value), Key: o.intern(r.Key)})
	})
	return out
}

// appendLogEntries appends l's entries in [from, below) to out, decoding
// into rb.
func appendLogEntries(out []checkers.Entry, rb *storage.RecordBatch, l *storage.Log, from, below int64) []checkers.Entry {
	walkLogRecords(rb, l, from, below, func(r *storage.Record, epoch int32) {
		out = append(out, checkers.Entry{Offset: r.Offset, LeaderEpoch: epoch, Value: string(r.Value), Key: string(r.Key)})
	})
	return out
}

// EachLogEntry calls fn for each of l's entries, as LogEntries reads them,
// decoding into rb (reused: the caller keeps it between calls). The value
// aliases the read buffer: fn must copy what it keeps.
func EachLogEntry(l *storage.Log, rb *storage.RecordBatch, fn func(offset int64, epoch int32, value []byte)) {
	walkLogEntries(rb, l, l.LogStartOffset(), math.MaxInt64, fn)
}

// walkLogEntries calls fn for l's entries in [from, below), control batches
// left out. The batches are decoded as views into rb, and the walk stops
// at the first batch at or past below.
func walkLogEntries(rb *storage.RecordBatch, l *storage.Log, from, below int64, fn func(offset int64, epoch int32, value []byte)) {
	walkLogRecords(rb, l, from, below, func(r *storage.Record, epoch int32) { fn(r.Offset, epoch, r.Value) })
}

// intern returns b as a string shared with every equal one the observer
// has seen ("" for none): values and keys repeat across replicas.
func (o *Observer) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	v, ok := o.values[string(b)]
	if !ok {
		v = string(b)
		o.values[v] = v
	}
	return v
}

// walkLogRecords is walkLogEntries with the whole record (its key too).
func walkLogRecords(rb *storage.RecordBatch, l *storage.Log, from, below int64, fn func(r *storage.Record, epoch int32)) {
	off := max(from, l.LogStartOffset())
	for off < l.LogEndOffset() {
		data, err := l.Read(off, 1<<20, l.LogEndOffset())
		if err != nil || len(data) == 0 {
			return
		}
		for len(data) > 0 {
			n, err := storage.DecodeBatchView(data, rb)
			if err != nil || rb.BaseOffset >= below {
				return
			}
			for i, r := range rb.Records {
				// NB: a control batch's marker (KIP-98) is no record of the
				// application's: the checkers see data records only.
				if r.Offset >= from && r.Offset < below && rb.Attributes&storage.ControlFlagMask == 0 {
					fn(&rb.Records[i], rb.PartitionLeaderEpoch)
				}
			}
			data = data[n:]
			off = rb.NextOffset()
		}
	}
}

// healed reports whether every broker is up and no link among the
// cluster's nodes is cut.
func healed(w *sim.World, c *cluster.Cluster) bool {
	nodes := append(slices.Clone(c.Brokers), c.Controllers...)
	if c.ZK >= 0 {
		nodes = append([]sim.NodeID{c.ZK}, nodes...)
	}
	for _, a := range nodes {
		if !w.Up(a) {
			return false
		}
		for _, b := range nodes {
			if a != b && w.Cut(a, b) {
				return false
			}
		}
	}
	for i := range c.Brokers {
		if b := c.Broker(i); b == nil || b.Halted() {
			return false
		}
	}
	return true
}

// uncleanElections reads the controllers' unclean elections off the trace.
func uncleanElections(recs []sim.Record) []checkers.UncleanElection {
	var out []checkers.UncleanElection
	for _, r := range recs {
		if r.Kind != "controller-unclean-election" {
			continue
		}
		part, _ := r.Get("partition")
		tp, ok := storage.ParseTopicPartition(part)
		if !ok {
			continue
		}
		var leader, epoch int64
		for _, f := range r.Fields {
			switch f.Key {
			case "leader":
				leader = f.Int
			case "leader-epoch":
				epoch = f.Int
			}
		}
		out = append(out, checkers.UncleanElection{Topic: tp.Topic, Partition: tp.Partition, Broker: int32(leader), Epoch: int32(epoch), Time: r.Time})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

// isrChanges adds to manual (the manual controller's decisions) every ISR
// written to a partition's state — by a leader ("isr") or by the controller
// ("controller-partition-state") — and every leadership a broker took
// ("become-leader", with the epoch and ISR it was given), in time order.
func isrChanges(manual []checkers.ISRChange, recs []sim.Record) []checkers.ISRChange {
	out := append([]checkers.ISRChange(nil), manual...)
	for _, r := range recs {
		if r.Kind != "isr" && r.Kind != "controller-partition-state" && r.Kind != "become-leader" {
			continue
		}
		part, _ := r.Get("partition")
		tp, ok := storage.ParseTopicPartition(part)
		isr, _ := r.Get("isr")
		if !ok || !strings.HasPrefix(isr, "[") || !strings.HasSuffix(isr, "]") {
			continue
		}
		ch := checkers.ISRChange{Topic: tp.Topic, Partition: tp.Partition, Time: r.Time, Leader: -1, LeaderEpoch: -1}
		if l, ok := r.Get("leader"); ok && r.Kind == "controller-partition-state" {
			if id, err := strconv.Atoi(l); err == nil {
				ch.Leader = int32(id)
			}
			if e, ok := r.Get("leader-epoch"); ok {
				if n, err := strconv.Atoi(e); err == nil {
					ch.LeaderEpoch = int32(n)
				}
			}
		} else if (r.Kind == "isr" || r.Kind == "become-leader") && scenarios.BrokerName.MatchString(r.Name) {
			id, _ := strconv.Atoi(r.Name[1:])
			ch.Leader = int32(id) // the leader writes its own ISR changes
			if e, ok := r.Get("epoch"); ok && r.Kind == "become-leader" {
				if n, err := strconv.Atoi(e); err == nil {
					ch.LeaderEpoch = int32(n)
				}
			}
		}
		for _, f := range strings.Split(strings.Trim(isr, "[]"), ",") {
			if id, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				ch.ISR = append(ch.ISR, int32(id))
			}
		}
		out = append(out, ch)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}
