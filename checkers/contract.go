// contract.go: Kafka's contract, decided once from the facts of a run, for
// every checker.
//
// What it decides: whether an anomaly is within what Kafka promises under
// the run's configuration and faults ("permitted") or a protocol bug. Every
// checker asks the same questions here, so one fact of the run permits the
// same thing everywhere, and the evidence names that fact:
//
//   - May the record of a send be lost (and its offset reused)? The loss
//     facts of its partition, each excusing the sends invoked at or before
//     it (lossFacts):
//     1. acks=0: always (an acks=0 send is never really acknowledged).
//     2. An unclean election of the partition.
//     3. acks=1 and the broker that acknowledged it (Op.Leader; when
//     unknown, any replica) failed: crash, power loss, isolation or pause;
//     or was deposed (another leader elected in a later epoch, the broker
//     fenced or its session expired without a fault of its own). The
//     leader may lose its leadership before its followers copy the record.
//     4. Every member of the partition's ISR (Facts.ISRChanges; all
//     replicas when none is recorded) was down at once, at least one having
//     lost unflushed data. With all replicas in the ISR this is "more
//     replicas failed than RF-1", all Kafka guarantees to survive (KIP-101:
//     "Kafka guarantees durability for n-1 replicas"); with the ISR shrunk
//     to one member it is KIP-966's "last replica standing": the last ISR
//     member loses power, comes back as the only eligible leader with a
//     shorter log, and the others truncate to it. Kafka before eligible
//     leader replicas (KIP-966, 4.x) has no fence for it.
//     5. A replica lost unflushed data, came back still in the ISR (nobody
//     removed it while it was down) and was later elected leader: it may
//     lead with a shorter log than it acknowledged, and the others truncate
//     to it. KIP-966 names it: nothing keeps a replica that shut down
//     uncleanly out of the ISR or out of leadership before it catches up.
//     It excuses the sends invoked before the data was lost.
//     6. A voter of a static KRaft quorum (controller.quorum.voters,
//     kraft.version 0) lost its disk (wipe-disk) and came back blank:
//     KAFKA-14077, the static quorum's documented hazard. It may vote a
//     leader that lacks committed metadata into office (raft.go), and the
//     metadata it forgets (an ISR shrink, a fencing) may elect a replica
//     that lacks acknowledged records: from the wipe on, Kafka promises
//     nothing of any partition, so it excuses every send of the run. With
//     KIP-853's directory ids (kraft.version 1) it excuses nothing.
//     Rule 5, and rule 4 with an ISR smaller than the replication factor
//     (the last replica standing), hold only before eligible leader
//     replicas: with Facts.EligibleLeaderReplicas (KRaft,
//     eligible.leader.replicas.version=1) the strict min ISR rule, the ELR
//     election and the unclean-shutdown fence protect those records, so
//     neither excuses their loss. Every replica down at once still does.
//   - May a record be written twice? Only by a producer without
//     idempotence that retries (KIP-98 sequence numbers deduplicate).
//   - May a producer's records land out of send order? With retries, more
//     than one request in flight and no idempotence; or when the earlier
//     record was lost under a loss fact and its offset was reused.
//
// What it simplifies: the ISR is what ZooKeeper recorded, not each
// broker's view of it; a fact excuses every send invoked at or before it,
// not only the sends whose records the failed replicas held.

package checkers

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// lossKind is the rule of the file header a loss fact comes from.
type lossKind uint8

const (
	lossUnclean          lossKind = iota + 1 // rule 2
	lossLeaderFailure                        // rule 3: excuses acks<=1 sends only
	lossISRDown                              // rule 4
	lossUncleanShutdown                      // rule 5
	lossStaticVoterWiped                     // rule 6
)

// lossFact is one fact of a run that permits losing the records of sends
// invoked at or before Time.
type lossFact struct {
	kind lossKind
	time sim.Time
	// before bounds the sends excused (invoked at or before it): time,
	// except for lossUncleanShutdown (when the data was lost).
	before sim.Time
	// broker is the failed broker (lossLeaderFailure, lossUncleanShutdown).
	broker int32
	// why is the evidence: "permitted: ...".
	why string
}

// excuses reports whether the fact permits losing op's record.
func (lf lossFact) excuses(op Op) bool {
	if op.Acks == 0 {
		return true
	}
	if op.Invoke > lf.before {
		return false
	}
	if lf.kind == lossLeaderFailure {
		return op.Acks == 1 && (op.Leader < 0 || op.Leader == lf.broker)
	}
	return true
}

// contract answers the checkers' questions about one run.
type contract struct {
	facts    Facts
	replicas map[tp][]int32
	cache    map[tp][]lossFact
	// committed is each partition's final committed log (Judge's, below
	// its HW).
	committed map[tp][]Entry
	// staticWipe is the first wipe of a static quorum's voter (rule 6).
	staticWipe *RaftEvent
}

// newContract builds the contract of a run from its final state (for the
// partitions' replicas) and facts.
func newContract(f Final) *contract {
	c := &contract{facts: f.Facts, replicas: map[tp][]int32{}, cache: map[tp][]lossFact{}, committed: map[tp][]Entry{}}
	c.staticWipe = staticVoterWiped(f)
	for _, pf := range f.Partitions {
		if judge, ok := pf.Judge(); ok {
			c.committed[tp{pf.Topic, pf.Partition}] = committed(judge)
		}
		var ids []int32
		if len(pf.Replicas) > 0 {
			ids = make([]int32, 0, len(pf.Replicas))
		}
		for _, r := range pf.Replicas {
			ids = append(ids, r.Broker)
		}
		slices.Sort(ids)
		c.replicas[tp{pf.Topic, pf.Partition}] = ids
	}
	return c
}

// staticVoterWiped returns the first wipe of a static quorum's voter in
// the run (rule 6), or nil.
func staticVoterWiped(f Final) *RaftEvent {
	if f.Raft == nil || f.Raft.KRaftVersion != 0 {
		return nil
	}
	for i, ev := range f.Raft.Events {
		if ev.Kind == RaftDiskWiped && ev.Voter {
			return &f.Raft.Events[i]
		}
	}
	return nil
}

// lossExcuse returns the first fact that permits losing op's record, as the
// evidence sentence, or false when none does.
func (c *contract) lossExcuse(op Op) (string, bool) { return c.lossExcuseUntil(op, -1) }

// lossExcuseUntil is lossExcuse with only the facts at or before until
// (none if until < 0).
func (c *contract) lossExcuseUntil(op Op, until sim.Time) (string, bool) {
	if op.Acks == 0 {
		return "permitted: acks=0 promises nothing", true
	}
	for _, lf := range c.lossFacts(tp{op.Topic, op.Partition}) {
		if until >= 0 && lf.time > until {
			break
		}
		if lf.excuses(op) {
			return lf.why, true
		}
	}
	return "not permitted: no unclean election, no acks=1 leader failure, the ISR never all down at once with one member losing unflushed data, and no replica elected after losing unflushed data while in the ISR", false
}

// lossFacts returns the loss facts of a partition in time order (unclean
// elections, then leader failures, then ISR losses at equal times).
func (c *contract) lossFacts(k tp) []lossFact {
	if lf, ok := c.cache[k]; ok {
		return lf
	}
	var out []lossFact
	for _, u := range c.facts.UncleanElections {
		if u.Topic == k.topic && u.Partition == k.partition {
			out = append(out, lossFact{kind: lossUnclean, time: u.Time, broker: u.Broker,
				why: "permitted: unclean election of b" + strconv.Itoa(int(u.Broker)) + " at epoch " + strconv.Itoa(int(u.Epoch)) + " at " + u.Time.String()})
		}
	}
	reps := c.replicas[k]
	failures := sortedFailures(c.facts.Failures)
	for _, fl := range failures {
		if !fl.Controller && (len(reps) == 0 || containsBroker(reps, fl.Broker)) {
			lf := lossFact{kind: lossLeaderFailure, time: fl.Time, broker: fl.Broker,
				why: "permitted: acks=1 and the leader b" + strconv.Itoa(int(fl.Broker)) + " failed (" + fl.Kind.String() + ") at " + fl.Time.String()}
			if fl.Kind == Isolated {
				// NB: an isolated leader keeps acknowledging (a zombie: the
				// rest of the cluster elected another leader), so the records
				// it acknowledged while cut off are excused too.
				lf.before = sim.Time(math.MaxInt64)
				if fl.End > 0 {
					lf.before = fl.End
				}
			}
			out = append(out, lf)
		}
	}
	out = append(out, c.deposed(k)...)
	out = append(out, c.isrDown(k, failures)...)
	if w := c.staticWipe; w != nil {
		out = append(out, lossFact{kind: lossStaticVoterWiped, time: w.Time, before: sim.Time(math.MaxInt64),
			why: "permitted: KAFKA-14077: " + w.Node + ", a voter of a static KRaft quorum (controller.quorum.voters), lost its disk at " + w.Time.String() +
				" and came back blank: the quorum may lose committed metadata, and the partitions what it protected"})
	}
	if !c.facts.EligibleLeaderReplicas {
		// NB: with ELR on, KIP-966 fences this: a loss under it is a
		// contract break, not a permitted one.
		out = append(out, c.uncleanShutdowns(k, failures)...)
	}
	for i := range out {
		if out[i].kind != lossUncleanShutdown && out[i].before == 0 {
			out[i].before = out[i].time
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].time != out[j].time {
			return out[i].time < out[j].time
		}
		return out[i].kind < out[j].kind
	})
	c.cache[k] = out
	return out
}

// deposed finds rule 3's other leader failures: leadership taken from a
// leader that did not fail itself, as a KRaft controller fences a broker
// whose heartbeats stopped reaching it, or a ZooKeeper controller whose
// session with the broker expired. The cluster elects another leader while
// the deposed one still holds acks=1 records its followers never copied,
// and it keeps acknowledging until it learns of the change (a zombie):
// the acks=1 records it acknowledged until it next became leader are
// excused.
func (c *contract) deposed(k tp) []lossFact {
	var out []lossFact
	leader, epoch := int32(-1), int32(-1)
	for _, ch := range c.facts.ISRChanges {
		if ch.Topic != k.topic || ch.Partition != k.partition || ch.LeaderEpoch < 0 || ch.LeaderEpoch <= epoch {
			continue
		}
		if leader >= 0 && ch.Leader != leader {
			lf := lossFact{kind: lossLeaderFailure, time: ch.Time, broker: leader, before: sim.Time(math.MaxInt64),
				why: "permitted: acks=1 and the leader b" + strconv.Itoa(int(leader)) + " was deposed (leader epoch " +
					strconv.Itoa(int(ch.LeaderEpoch)) + " at " + ch.Time.String() + " has leader " + strconv.Itoa(int(ch.Leader)) + ")"}
			for _, later := range c.facts.ISRChanges {
				if later.Topic == k.topic && later.Partition == k.partition && later.Time > ch.Time && later.Leader == leader && later.LeaderEpoch > ch.LeaderEpoch {
					lf.before = later.Time
					break
				}
			}
			out = append(out, lf)
		}
		leader, epoch = ch.Leader, ch.LeaderEpoch
	}
	return out
}

// isrDown finds rule 4's instants: the first instant of each stretch of
// time in which every ISR member of k was down, one having lost unflushed
// data. The candidates are the failures' starts and the ISR changes.
func (c *contract) isrDown(k tp, failures []Failure) []lossFact {
	reps := c.replicas[k]
	var times []sim.Time
	for _, fl := range failures {
		if containsBroker(reps, fl.Broker) {
			times = append(times, fl.Time)
		}
	}
	for _, ch := range c.facts.ISRChanges {
		if ch.Topic == k.topic && ch.Partition == k.partition {
			times = append(times, ch.Time)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	var out []lossFact
	in := false // inside a stretch already reported
	for i, t := range times {
		if i > 0 && t == times[i-1] {
			continue
		}
		isr, recorded := c.isrAt(k, t)
		down, lost := c.downAt(isr, failures, t)
		if len(isr) == 0 || len(down) < len(isr) || len(lost) == 0 {
			in = false
			continue
		}
		if in {
			continue
		}
		in = true
		var why string
		rf := len(reps)
		if c.facts.ReplicationFactor > 0 {
			rf = c.facts.ReplicationFactor
		}
		lastStanding := recorded && len(isr) < rf
		if lastStanding && c.facts.EligibleLeaderReplicas {
			// KIP-966's strict min ISR and ELR election: the replicas out
			// of the ISR hold what was committed, so this excuses nothing.
			in = false
			continue
		}
		if !lastStanding {
			why = "permitted: " + strconv.Itoa(len(down)) + " replicas " + brokerList(down) + " were down at once at " + t.String() +
				", " + brokerList(lost) + " having lost unflushed data (RF=" + strconv.Itoa(rf) + " covers " + strconv.Itoa(rf-1) + ")"
		} else {
			why = "permitted: the ISR " + brokerList(isr) + " was all down at " + t.String() + ", " + brokerList(lost) +
				" having lost unflushed data: the last replica standing (no eligible leader replicas before KIP-966)"
		}
		out = append(out, lossFact{kind: lossISRDown, time: t, broker: -1, why: why})
	}
	return out
}

// uncleanShutdowns finds rule 5's facts: a replica of k that lost
// unflushed data, was still in the ISR when it came back, and was elected
// leader afterwards (the first such election).
func (c *contract) uncleanShutdowns(k tp, failures []Failure) []lossFact {
	var out []lossFact
	for _, fl := range failures {
		if !fl.LostUnflushed || fl.End == 0 || !containsBroker(c.replicas[k], fl.Broker) {
			continue
		}
		isr, _ := c.isrAt(k, fl.End)
		if !containsBroker(isr, fl.Broker) {
			continue
		}
		for _, ch := range c.facts.ISRChanges {
			if ch.Topic != k.topic || ch.Partition != k.partition || ch.Time < fl.End || ch.Leader != fl.Broker {
				continue
			}
			b := "b" + strconv.Itoa(int(fl.Broker))
			out = append(out, lossFact{kind: lossUncleanShutdown, time: ch.Time, before: fl.Time, broker: fl.Broker,
				why: "permitted: " + b + " lost unflushed data at " + fl.Time.String() + " (" + fl.Kind.String() + "), came back at " + fl.End.String() +
					" still in the ISR " + brokerList(isr) + " and was elected leader at " + ch.Time.String() +
					": nothing keeps a replica that shut down uncleanly out of leadership before it catches up (no fence before KIP-966)"})
			break
		}
	}
	return out
}

// isrAt returns k's ISR at t (the last change at or before t), and whether
// one was recorded; without one, every replica.
func (c *contract) isrAt(k tp, t sim.Time) ([]int32, bool) {
	var isr []int32
	found := false
	for _, ch := range c.facts.ISRChanges {
		if ch.Topic == k.topic && ch.Partition == k.partition && ch.Time <= t {
			isr, found = ch.ISR, true
		}
	}
	if !found {
		return c.replicas[k], false
	}
	return isr, true
}

// downAt returns the brokers of ids down at t, and those of them whose
// failure lost unflushed data, in id order.
func (c *contract) downAt(ids []int32, failures []Failure, t sim.Time) (down, lost []int32) {
	for _, fl := range failures {
		if !fl.down(t) || !containsBroker(ids, fl.Broker) {
			continue
		}
		if !containsBroker(down, fl.Broker) {
			down = append(down, fl.Broker)
		}
		if fl.LostUnflushed && !containsBroker(lost, fl.Broker) {
			lost = append(lost, fl.Broker)
		}
	}
	sort.Slice(down, func(i, j int) bool { return down[i] < down[j] })
	sort.Slice(lost, func(i, j int) bool { return lost[i] < lost[j] })
	return down, lost
}

// duplicateExcuse says whether process may write a record twice.
func duplicateExcuse(h History, process string) (string, bool) {
	p, declared := h.Producer(process)
	switch {
	case !declared:
		return "sent by " + process + " (configuration not declared); not permitted", false
	case p.Idempotent:
		return "sent by " + process + " (" + p.Properties() + "); not permitted (KIP-98)", false
	case p.Independent:
		return "sent by " + process + " (" + p.Properties() + "); not permitted: it never retries", false
	case p.Retries == 0:
		return "sent by " + process + " (" + p.Properties() + "); not permitted: retries=0", false
	}
	return "sent by " + process + " without idempotence (" + p.Properties() + "); permitted: a retry may write twice", true
}

// reorderExcuse says whether process's records may land out of send order
// by retrying (the other excuse, a lost record, is the caller's).
func reorderExcuse(h History, process string) (string, bool) {
	p, declared := h.Producer(process)
	if !declared {
		return "producer configuration not declared", false
	}
	return p.Properties(), p.Independent || (!p.Idempotent && p.MaxInFlight > 1 && p.Retries > 0)
}
