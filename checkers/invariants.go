// invariants.go: the invariants checker, a Monitor fed a snapshot of every
// partition's replicas after each event of the run.
//
// What it checks, per partition, with "the leader" the live replica that
// claims leadership at the highest leader epoch, and "its followers" the
// live followers at the same epoch that are in the leader's ISR:
//   - hw-above-leo: HW <= LEO on every live replica.
//   - leader-hw-above-follower-leo: leader HW <= follower LEO for each of its
//     followers (the data below the HW is on the whole ISR: TLA+ StrongIsr;
//     KIP-101 scenario 1 breaks it when the restarted follower truncates).
//   - follower-hw-above-leader-hw and follower-leo-above-leader-leo:
//     follower HW <= leader HW and follower LEO <= leader LEO, for followers
//     that have settled in the epoch (see below).
//   - leader-hw-decreased: a leader's HW never decreases within its epoch
//     while it stays alive (a restarted broker the controller makes leader
//     of the same epoch again starts from its HW checkpoint).
//   - epoch-decreased: a replica's leader epoch never decreases while it
//     stays alive (a restart starts it over; -1, unknown, is ignored).
//   - two-leaders-in-epoch: at most one broker is ever leader of a partition
//     in a given epoch.
//   - leader-candidate-completeness (Vanlightly's
//     LeaderCandidateCompletenessProperty): a replica first seen leading an
//     epoch has LEO >= the highest HW a non-stale leader of an earlier epoch
//     reached (inv_true_hwm); checked on offsets only, at the election.
//     VerdictWith permits it by the contract's loss facts (contract.go) at
//     or before the election.
//   - replication-quorum-superset (Vanlightly's
//     ReplicationQuorumSupersetProperty): the non-stale leader — the one
//     the controller names, in the controller's leader epoch — has a
//     maximal ISR (its ISR and any ISR change in flight) that contains
//     every member of the controller's ISR, so the HW it advances is on
//     every replica the controller may elect. Checked when the snapshot
//     carries the controller's view (PartitionSnapshot.Controller).
//
// It also keeps every (offset, value) a non-stale leader held below its HW
// (PartitionSnapshot.Committed), for CommittedLoss's "committed-lost" in
// the acked-loss verdict (NoCommittedRecordLostGlobally, for every
// committed record, acknowledged or not).
//
// Settling: right after an epoch change a follower may still hold the old
// epoch's uncommitted suffix (it truncates after OffsetsForLeaderEpoch) and a
// new leader's HW may lag the true HW (reference §4.1); both are normal
// Kafka. A follower is settled in a leader's tenure — its epoch and its
// process life: a controller that starts on the restarted leader's broker
// finds it alive in ZooKeeper and gives it the same epoch again
// (PartitionStateMachine elects only offline partitions; KIP-380's broker
// epoch needs a controller that saw the bounce), and Partition.makeLeader
// starts it from its checkpointed HW — once it has been seen with
// HW <= leader HW and LEO <= leader LEO; only settled followers are held to
// those two bounds.
//
// Evidence is the step and virtual time at which a break started; a break
// that persists is reported once, and again only after it cleared. Breaks
// involving a replica with UncleanRestart are Permitted (power loss drops
// unflushed data; Kafka relies on replication, not fsync).
//
// What it simplifies: it sees only the replicas' own state, not the
// controller's ISR, and keeps O(partitions x replicas + epochs) memory.

package checkers

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// PartitionSnapshot is one partition's replicas after an event.
type PartitionSnapshot struct {
	Topic     string
	Partition int32
	Replicas  []ReplicaState
	// Committed holds records a live leader's log holds below its HW, read
	// by the caller (any subset; repeats are ignored): the monitor keeps
	// every (offset, value) ever committed, for the committed-lost check.
	Committed []Entry
	// Controller is the controller's committed state of the partition
	// (ZooKeeper's partition state znode, or the active KRaft
	// controller's image); nil when unknown. It is read only during
	// Observe: the caller may reuse it.
	Controller *ControllerView
}

// ControllerView is the leader, leader epoch and ISR the controller has
// committed for a partition.
type ControllerView struct {
	Leader      int32
	LeaderEpoch int32
	ISR         []int32
}

// Monitor checks replication invariants on a stream of snapshots; it keeps
// only what the checks need, not the snapshots. The zero Monitor is not
// ready: use NewMonitor.
type Monitor struct {
	parts     map[tp]*partitionWatch
	anomalies []Anomaly
	omitted   int
	steps     uint64         // snapshots observed
	kip848    *kip848Watch   // consumer groups (invariants_kip848.go); nil until fed
	sorted    []ReplicaState // observe's scratch
	last      uint64
}

type partitionWatch struct {
	epoch    map[int32]int32     // broker -> last leader epoch seen (alive)
	leaderOf map[int32]int32     // epoch -> broker seen leading it
	hw       map[leaderKey]int64 // leader's HW within its epoch
	settled  map[int32]int32     // broker -> epoch it settled in as a follower
	active   map[breakKey]bool   // breaks currently ongoing
	// trueHW is the highest HW a leader reached (Vanlightly's
	// inv_true_hwm), set by a leader of trueEpoch at trueStep/trueAt by
	// trueBroker; a leader that breaks candidate completeness resets it to
	// its LEO.
	trueHW                int64
	trueEpoch, trueBroker int32
	trueStep              uint64
	trueAt                sim.Time
	topEpoch              int32 // highest epoch a leader was seen in
	committed             []everCommitted
	seen                  map[Entry]bool
	minISR                minISRWatch
}

// everCommitted is a record once below a leader's HW.
type everCommitted struct {
	Entry
	step uint64
	time sim.Time
}

type leaderKey struct{ broker, epoch int32 }

type breakKey struct {
	kind          string
	broker, other int32
	epoch         int32
	value         int64
}

// NewMonitor returns a Monitor that has observed nothing.
func NewMonitor() *Monitor { return &Monitor{parts: make(map[tp]*partitionWatch)} }

// Observe checks the snapshots taken after trace step step at virtual time t.
// Call it after every event, in order; snaps may hold any subset of the
// partitions (a partition not in snaps is unchanged).
func (m *Monitor) Observe(step uint64, t sim.Time, snaps []PartitionSnapshot) {
	m.steps++
	m.last = step
	for _, s := range snaps {
		k := tp{s.Topic, s.Partition}
		w := m.parts[k]
		if w == nil {
			w = &partitionWatch{epoch: map[int32]int32{}, leaderOf: map[int32]int32{},
				hw: map[leaderKey]int64{}, settled: map[int32]int32{}, active: map[breakKey]bool{},
				trueEpoch: -1, trueBroker: -1, seen: map[Entry]bool{}}
			m.parts[k] = w
		}
		m.observe(k, w, step, t, s)
	}
}

// Forget drops what the monitor keeps of a partition (its epochs, HWs,
// ever-committed records; not the anomalies found): the topic was deleted
// and created again, and the next snapshot of the partition is the new
// topic's first, which owes nothing to the deleted one's (a new leader
// at epoch 0, an HW from 0, none of its records).
func (m *Monitor) Forget(topic string, partition int32) {
	delete(m.parts, tp{topic, partition})
}

func (m *Monitor) observe(k tp, w *partitionWatch, step uint64, t sim.Time, s PartitionSnapshot) {
	byBroker := func(a, b ReplicaState) int { return cmp.Compare(a.Broker, b.Broker) }
	reps := s.Replicas // read only; sorted by broker (a copy when it is not)
	if !slices.IsSortedFunc(reps, byBroker) {
		// NB: the copy is the monitor's scratch, reused: nothing keeps
		// reps past this call.
		m.sorted = append(m.sorted[:0], reps...)
		reps = m.sorted
		slices.SortStableFunc(reps, byBroker)
	}
	var now map[breakKey]bool
	// report records a break; desc is built only for a new one (the
	// monitor runs after every event that changed a replica).
	report := func(bk breakKey, permitted bool, brokers []int32, desc func() string) {
		if now == nil {
			now = make(map[breakKey]bool)
		}
		now[bk] = true
		if w.active[bk] {
			return
		}
		m.add(Anomaly{Kind: bk.kind, Topic: k.topic, Partition: k.partition, Replicas: brokers,
			Steps: []uint64{step}, Times: []sim.Time{t}, Permitted: permitted, Description: desc()})
	}
	for _, e := range s.Committed {
		if !w.seen[e] {
			w.seen[e] = true
			w.committed = append(w.committed, everCommitted{Entry: e, step: step, time: t})
		}
	}
	var leader *ReplicaState
	for i := range reps {
		r := &reps[i]
		if !r.Alive {
			delete(w.epoch, r.Broker)
			delete(w.settled, r.Broker)
			// A leader's tenure ends with its process: restarted and given
			// its epoch again, it leads from its HW checkpoint, and its
			// followers settle again (swarm kip279-safe seeds 113, 196, 299).
			for b, e := range w.settled {
				if w.leaderOf[e] == r.Broker {
					delete(w.settled, b)
				}
			}
			// Its HW is in memory only (checkpointed every
			// replica.high.watermark.checkpoint.interval.ms): restarted and
			// given its epoch again, it starts from the checkpoint.
			for lk := range w.hw {
				if lk.broker == r.Broker {
					delete(w.hw, lk)
				}
			}
			continue
		}
		if r.HW > r.LEO {
			report(breakKey{kind: "hw-above-leo", broker: r.Broker}, r.UncleanRestart, []int32{r.Broker}, r.String)
		}
		if r.LeaderEpoch >= 0 {
			if last, ok := w.epoch[r.Broker]; ok && r.LeaderEpoch < last {
				report(breakKey{kind: "epoch-decreased", broker: r.Broker, epoch: r.LeaderEpoch}, r.UncleanRestart, []int32{r.Broker}, func() string {
					return "b" + strconv.Itoa(int(r.Broker)) + " went from epoch " + strconv.Itoa(int(last)) + " to " + strconv.Itoa(int(r.LeaderEpoch))
				})
			}
			w.epoch[r.Broker] = r.LeaderEpoch
		}
		if r.Role != Leader || r.LeaderEpoch < 0 {
			continue
		}
		if other, ok := w.leaderOf[r.LeaderEpoch]; ok && other != r.Broker {
			report(breakKey{kind: "two-leaders-in-epoch", broker: other, other: r.Broker, epoch: r.LeaderEpoch}, false, []int32{other, r.Broker}, func() string {
				return "b" + strconv.Itoa(int(other)) + " and b" + strconv.Itoa(int(r.Broker)) + " both led epoch " + strconv.Itoa(int(r.LeaderEpoch))
			})
		} else if !ok {
			w.leaderOf[r.LeaderEpoch] = r.Broker
			w.topEpoch = max(w.topEpoch, r.LeaderEpoch)
			// Leader Candidate Completeness: a new leader holds everything
			// an earlier epoch's leader committed.
			if r.LeaderEpoch > w.trueEpoch && r.LEO < w.trueHW {
				hw, oldB, oldE, oldStep, oldAt := w.trueHW, w.trueBroker, w.trueEpoch, w.trueStep, w.trueAt
				m.add(Anomaly{Kind: KindLeaderCandidateCompleteness, Topic: k.topic, Partition: k.partition,
					Replicas: []int32{r.Broker, oldB}, Offsets: []int64{r.LEO, hw},
					Steps: []uint64{step, oldStep}, Times: []sim.Time{t, oldAt}, Permitted: r.UncleanRestart,
					Description: "b" + strconv.Itoa(int(r.Broker)) + " became leader of epoch " + strconv.Itoa(int(r.LeaderEpoch)) +
						" with LEO=" + strconv.FormatInt(r.LEO, 10) + " but b" + strconv.Itoa(int(oldB)) + " had committed up to HW=" +
						strconv.FormatInt(hw, 10) + " in epoch " + strconv.Itoa(int(oldE)) + " at " + oldAt.String() + ": offsets [" +
						strconv.FormatInt(r.LEO, 10) + ", " + strconv.FormatInt(hw, 10) + ") missing; " + r.String()})
				w.trueHW = r.LEO
			}
		}
		// (an HW above the LEO, hw-above-leo, commits nothing past the LEO;
		// a stale leader, below the highest epoch led, commits nothing)
		if hw := min(r.HW, r.LEO); hw > w.trueHW && r.LeaderEpoch >= w.topEpoch {
			w.trueHW, w.trueBroker, w.trueStep, w.trueAt = hw, r.Broker, step, t
		}
		if min(r.HW, r.LEO) >= w.trueHW && r.LeaderEpoch > w.trueEpoch && r.LeaderEpoch >= w.topEpoch {
			w.trueEpoch = r.LeaderEpoch
		}
		lk := leaderKey{r.Broker, r.LeaderEpoch}
		if prev, ok := w.hw[lk]; ok && r.HW < prev {
			report(breakKey{kind: "leader-hw-decreased", broker: r.Broker, epoch: r.LeaderEpoch, value: r.HW}, r.UncleanRestart, []int32{r.Broker}, func() string {
				return "leader b" + strconv.Itoa(int(r.Broker)) + " HW went from " + strconv.FormatInt(prev, 10) + " to " + strconv.FormatInt(r.HW, 10) + " in epoch " + strconv.Itoa(int(r.LeaderEpoch))
			})
		}
		if prev, ok := w.hw[lk]; !ok || r.HW > prev {
			w.hw[lk] = r.HW
		}
		if leader == nil || r.LeaderEpoch > leader.LeaderEpoch {
			leader = r
		}
	}
	if c := s.Controller; leader != nil && c != nil && c.Leader == leader.Broker && c.LeaderEpoch == leader.LeaderEpoch {
		for _, b := range c.ISR {
			if containsBroker(leader.ISR, b) || containsBroker(leader.PendingISR, b) {
				continue
			}
			report(breakKey{kind: KindReplicationQuorumSuperset, broker: leader.Broker, other: b, epoch: leader.LeaderEpoch}, leader.UncleanRestart,
				[]int32{leader.Broker, b}, func() string {
					return "the controller's ISR " + brokerList(c.ISR) + " of epoch " + strconv.Itoa(int(c.LeaderEpoch)) + " holds b" + strconv.Itoa(int(b)) +
						", outside leader b" + strconv.Itoa(int(leader.Broker)) + "'s maximal ISR " + brokerList(union(leader.ISR, leader.PendingISR)) + "; " + leader.String()
				})
		}
	}
	if leader != nil {
		for i := range reps {
			f := &reps[i]
			if !f.Alive || f.Role != Follower || f.LeaderEpoch != leader.LeaderEpoch || f.Broker == leader.Broker {
				continue
			}
			if !containsBroker(leader.ISR, f.Broker) {
				// A follower joining the ISR (an expansion in flight, KIP-497's
				// maximal ISR) joined at an LEO the HW has not passed, and
				// the HW counts it from then on.
				if containsBroker(leader.PendingISR, f.Broker) && leader.HW > f.LEO {
					report(breakKey{kind: "leader-hw-above-follower-leo", broker: leader.Broker, other: f.Broker, epoch: leader.LeaderEpoch},
						f.UncleanRestart || leader.UncleanRestart, []int32{leader.Broker, f.Broker}, func() string { return leader.String() + "; " + f.String() + " (joining the ISR)" })
				}
				continue
			}
			permitted := f.UncleanRestart || leader.UncleanRestart
			pair := []int32{leader.Broker, f.Broker}
			state := func() string { return leader.String() + "; " + f.String() }
			if leader.HW > f.LEO {
				report(breakKey{kind: "leader-hw-above-follower-leo", broker: leader.Broker, other: f.Broker, epoch: leader.LeaderEpoch}, permitted, pair, state)
			}
			if f.HW <= leader.HW && f.LEO <= leader.LEO {
				w.settled[f.Broker] = leader.LeaderEpoch
			}
			if e, ok := w.settled[f.Broker]; !ok || e != leader.LeaderEpoch {
				continue
			}
			if f.HW > leader.HW {
				report(breakKey{kind: "follower-hw-above-leader-hw", broker: leader.Broker, other: f.Broker, epoch: leader.LeaderEpoch}, permitted, pair, state)
			}
			if f.LEO > leader.LEO {
				report(breakKey{kind: "follower-leo-above-leader-leo", broker: leader.Broker, other: f.Broker, epoch: leader.LeaderEpoch}, permitted, pair, state)
			}
		}
	}
	w.active = now
	w.watchMinISR(reps, t)
}

func (m *Monitor) add(a Anomaly) {
	if len(m.anomalies) >= MaxAnomalies {
		m.omitted++
		return
	}
	m.anomalies = append(m.anomalies, a)
}

// Verdict returns the invariants verdict over everything observed so far:
// Unknown if nothing was observed, Violation if any invariant broke.
// Anomalies are in the order they were found (step order).
func (m *Monitor) Verdict() Verdict {
	v := verdict(NameInvariants, append([]Anomaly(nil), m.anomalies...), m.steps == 0,
		strconv.FormatUint(m.steps, 10)+" snapshots observed over "+strconv.Itoa(len(m.parts))+" partitions")
	v.Omitted += m.omitted
	if m.omitted > 0 && v.Result == ResultOK {
		v.Result = ResultViolation
	}
	return v
}

// Anomaly kinds named after Vanlightly's invariants (reference §1).
const (
	// KindLeaderCandidateCompleteness: LeaderCandidateCompletenessProperty,
	// a new leader lacks offsets an earlier epoch's leader had below its HW.
	KindLeaderCandidateCompleteness = "leader-candidate-completeness"
	// KindCommittedLost: NoCommittedRecordLostGlobally for every record ever
	// below a leader's HW, acknowledged or not (in the acked-loss verdict).
	KindCommittedLost = "committed-lost"
	// KindReplicationQuorumSuperset: ReplicationQuorumSupersetProperty, the
	// controller's ISR has a member outside the leader's maximal ISR.
	KindReplicationQuorumSuperset = "replication-quorum-superset"
)

// union returns a's brokers then b's not in a.
func union(a, b []int32) []int32 {
	out := slices.Clone(a)
	for _, x := range b {
		if !containsBroker(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// VerdictWith is Verdict with the anomalies Vanlightly's invariants report
// judged by Kafka's contract (contract.go) on the run's history and facts:
// a candidate lacking committed offsets is permitted by a loss fact of the
// partition at or before its election that excuses the sends of those
// offsets. After a static KRaft voter's disk was wiped (contract.go, rule
// 6: KAFKA-14077) the controller may have forgotten committed metadata,
// so every invariant broken from then on is permitted.
func (m *Monitor) VerdictWith(h History, f Final) Verdict {
	v := m.Verdict()
	var c *contract
	w := staticVoterWiped(f)
	for i := range v.Anomalies {
		a := &v.Anomalies[i]
		if w != nil && !a.Permitted && len(a.Times) > 0 && slices.Max(a.Times) >= w.Time {
			a.Permitted = true
			a.Description += "; permitted: KAFKA-14077: " + w.Node + ", a voter of a static KRaft quorum (controller.quorum.voters), lost its disk at " +
				w.Time.String() + ": the controller may have forgotten committed metadata"
			continue
		}
		if a.Kind != KindLeaderCandidateCompleteness || a.Permitted {
			continue
		}
		if c == nil {
			c = newContract(f)
		}
		op := Op{Kind: Send, Topic: a.Topic, Partition: a.Partition, Acks: sendsAcks(h, a.Topic, a.Partition, a.Offsets[0], a.Offsets[1]),
			Invoke: a.Times[1], Leader: -1}
		why, ok := c.lossExcuseUntil(op, a.Times[0])
		a.Permitted = ok
		a.Description += "; " + why
	}
	return m.ackedBelowMinISR(v, h)
}

// sendsAcks returns the lowest acks of the sends acknowledged at offsets
// [lo, hi) of a partition, -1 (all) when there is none.
func sendsAcks(h History, topic string, partition int32, lo, hi int64) int16 {
	acks := int16(-1)
	for _, op := range h.Ops {
		if op.Kind == Send && op.Outcome == OK && op.Topic == topic && op.Partition == partition && op.Offset >= lo && op.Offset < hi &&
			op.Acks >= 0 && (acks < 0 || op.Acks < acks) {
			acks = op.Acks
		}
	}
	return acks
}

// CommittedLoss adds to the acked-loss verdict v a "committed-lost" anomaly
// for every record the monitor saw below a leader's HW that is not at its
// offset in the final committed log (Vanlightly's
// NoCommittedRecordLostGlobally, for every committed record, not only the
// acknowledged ones; those acked-loss reports already are left out).
// Permitted like acked-loss, by the contract's loss facts for the send of
// the value (when the history has none, a send invoked when the record was
// committed, acks=all). Only partitions the history sends to are checked:
// an internal topic's records (__consumer_offsets, whose unclean election
// group-unclean-election stages) are the consumer checkers' to judge.
func (m *Monitor) CommittedLoss(v Verdict, h History, f Final) Verdict {
	return m.committedLoss(v, h, f, newContract(f))
}

// committedLoss is CommittedLoss with the run's contract given (CheckAll builds one for all).
func (m *Monitor) committedLoss(v Verdict, h History, f Final, c *contract) Verdict {
	if m == nil {
		return v
	}
	reported := map[tp]map[string]bool{}
	for _, a := range v.Anomalies {
		k := tp{a.Topic, a.Partition}
		if reported[k] == nil {
			reported[k] = map[string]bool{}
		}
		reported[k][a.Value] = true
	}
	perTP := map[tp]int{}
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == Send {
			perTP[tp{op.Topic, op.Partition}]++
		}
	}
	// sends maps a partition's values to their first send, by index into
	// h.Ops. NB: built for the first lost record, if any (most runs have
	// none), presized: a map of Op values (too large to be held inline)
	// allocated once per send.
	var sends map[tp]map[string]int
	sendsOf := func(k tp) map[string]int {
		if sends == nil {
			sends = make(map[tp]map[string]int, len(perTP))
			for i := range h.Ops {
				op := &h.Ops[i]
				if op.Kind != Send {
					continue
				}
				k := tp{op.Topic, op.Partition}
				if sends[k] == nil {
					sends[k] = make(map[string]int, perTP[k])
				}
				if _, dup := sends[k][op.Value]; !dup {
					sends[k][op.Value] = i
				}
			}
		}
		return sends[k]
	}
	// NB: past room a lost record is only counted: the verdict keeps none.
	room := max(MaxAnomalies-len(v.Anomalies), 0)
	checked, lost, unlisted := 0, 0, 0
	var added []Anomaly
	groups := grouper{groups: slices.Clone(v.Groups)} // the acknowledged losses' groups, then these
	for _, k := range sortedTPs(m.parts) {
		if perTP[k] == 0 {
			// Only the workload's partitions: an internal topic's records
			// (__consumer_offsets) are the consumer checkers' to judge.
			continue
		}
		w := m.parts[k]
		pf, ok := f.Partition(k.topic, k.partition)
		if !ok {
			continue
		}
		judge, ok := pf.Judge()
		if !ok {
			continue
		}
		keys := compactionIndex{pf: pf, judge: judge}
		for _, ec := range w.committed {
			checked++
			e, found := judge.At(ec.Offset)
			if found && e.Value == ec.Value && e.Offset < judge.HW {
				continue
			}
			if !found && deletedByRequest(pf, ec.Offset, ec.time) {
				continue // deleted by request (deletion.go)
			}
			if keys.superseded(ec.Key, ec.Offset, found && e.Offset == ec.Offset) {
				continue // removed by the log cleaner (ackedloss.go)
			}
			if reported[k][ec.Value] {
				continue
			}
			lost++
			var op Op
			si, known := sendsOf(k)[ec.Value]
			if known {
				op = h.Ops[si]
			} else {
				op = Op{Kind: Send, Topic: k.topic, Partition: k.partition, Value: ec.Value, Acks: -1, Invoke: ec.time, Leader: -1}
			}
			why, permitted := c.lossExcuse(op)
			if off := offlineWhy(f.Facts.Offline, k.topic, k.partition); found && e.Value == ec.Value && off != "" && !permitted {
				why, permitted = off, true
			}
			// NB: grouped before the cap, so the groups count every record;
			// but an acknowledged send missing at its offset is in an
			// acked-loss group already (also when past the cap, so not in
			// reported), and is not counted twice.
			listed := len(added) < room
			group := 0
			if !known || op.Outcome != OK || op.Offset != ec.Offset {
				group = groups.add(Anomaly{Kind: KindCommittedLost, Topic: k.topic, Partition: k.partition, Value: ec.Value, Reason: why, Permitted: permitted}, noAcks, ec.Offset, ec.time, listed)
			}
			if !listed {
				unlisted++
				continue
			}
			a := Anomaly{Kind: KindCommittedLost, Topic: k.topic, Partition: k.partition, Value: ec.Value,
				Offsets: []int64{ec.Offset}, Steps: []uint64{ec.step}, Times: []sim.Time{ec.time}, Replicas: holders(pf, ec.Value)}
			if known {
				a.Ops = []int{op.Index}
			}
			desc := "committed at offset " + strconv.FormatInt(ec.Offset, 10) + " (epoch " + strconv.Itoa(int(ec.LeaderEpoch)) + ") by " +
				ec.time.String() + "; judged on " + judge.ReplicaState.String()
			switch {
			case found && e.Value == ec.Value:
				desc += ": present but not below the HW"
			case found:
				desc += ": offset " + strconv.FormatInt(ec.Offset, 10) + " holds " + e.Value + " (epoch " + strconv.Itoa(int(e.LeaderEpoch)) + ")"
			default:
				desc += ": the committed log ends at " + strconv.FormatInt(judge.HW, 10)
			}
			a.Permitted, a.Reason, a.Group = permitted, why, group
			a.Description = desc + "; " + why
			added = append(added, a)
		}
	}
	notes := append(append([]string(nil), v.Notes...), strconv.Itoa(checked)+" ever-committed records checked, "+strconv.Itoa(lost)+" not in the final committed log")
	// NB: Omitted keeps counting acknowledged records only (run statistics
	// add it to the listed acked losses): committed-lost anomalies past
	// the cap are counted in a note instead.
	if unlisted > 0 {
		notes = append(notes, strconv.Itoa(unlisted)+" more committed-lost records not listed")
	}
	anomalies := append(append([]Anomaly(nil), v.Anomalies...), added...)
	out := verdict(v.Checker, anomalies, v.Result == ResultUnknown, notes...)
	out.Omitted += v.Omitted
	out.Groups = groups.groups
	return out
}
