// divergence.go: the divergence checker (log matching and convergence).
//
// What it checks, per partition, on the final state:
//   - Log matching (Vanlightly's LogMatchingProperty; KIP-101 scenario 2):
//     for every pair of live replicas, the entries agree (value and leader
//     epoch) at every offset below the smaller of their two HWs, from the
//     larger of their log start offsets. The first offset where they differ
//     is reported ("divergent") with both values and epochs.
//   - Convergence, only when Facts.Healed (every broker alive, no network
//     partition): every live replica's log equals the judging replica's
//     (PartitionFinal.Judge, normally the leader) on every offset below the
//     judge's LEO, and ends at the same LEO. The first difference is reported
//     ("not-converged").
//
// Divergence is within Kafka's contract (Permitted) when the partition's
// recorded state shows one leader given its old leader epoch again after
// losing unflushed data (reusedAfterLoss: the two histories of that epoch
// need not overlap in the final logs); or when the two
// logs show a leader epoch used twice — at some offset both hold a record
// of the same epoch (a real one: records of the pre-0.11 formats carry
// none) with different values — and at some instant the partition's whole
// ISR was down at once with at least one member having lost unflushed
// data (contract.go's rule 4): all RF replicas, more than the n-1 failures
// Kafka guarantees to survive (KIP-101), or the last replica standing. A restarted leader with a shorter log can then be
// given its old leader epoch again by a controller that never saw it die
// (it was the controller, or no broker was left to take over) and append
// other records where its followers still hold that epoch's; leader-epoch
// truncation compares epochs, not records, so it cannot tell the two
// lineages apart, at that offset or (the follower's latest epoch matching)
// at earlier ones. ZooKeeper-mode Kafka has no fence for this; KRaft's
// KIP-966 keeps a replica that lost data in an unclean shutdown out of
// leadership. Without a reused epoch, divergence is what KIP-101/KIP-279
// truncation exists to repair and breaks the contract, even after an
// unclean election (the description mentions one when it happened).
//
// What it simplifies: dead replicas are skipped (their in-memory HW is gone;
// what their disk holds is judged when they come back), and the runner is
// expected to let the cluster quiesce before taking Final.

package checkers

import (
	"sort"
	"strconv"
)

// Divergence checks log matching and, if the cluster healed, convergence.
func Divergence(f Final) Verdict {
	return divergence(f, newContract(f))
}

// divergence is Divergence with the run's contract given (CheckAll builds one for all).
func divergence(f Final, con *contract) Verdict {
	var anomalies []Anomaly
	var notes []string
	for _, pf := range f.sortedPartitions() {
		var live []Replica
		for _, r := range sortedReplicas(pf.Replicas) {
			if r.Alive {
				live = append(live, r)
			}
		}
		extra := uncleanNote(pf, f.Facts)
		allDown, why := isrLost(con, pf)
		reused, reusedWhy := reusedAfterLoss(f.Facts, pf)
		// permitted: the rule in the file header, for replicas a and b.
		permitted := func(a, b Replica) (bool, string) {
			if reused {
				return true, "; " + reusedWhy
			}
			if !allDown {
				return false, ""
			}
			if epoch, off, ok := reusedEpoch(a, b); ok {
				return true, "; leader epoch " + strconv.Itoa(int(epoch)) + " holds different records at " +
					strconv.FormatInt(off, 10) + " (used twice); " + why
			}
			return false, ""
		}
		for i := 0; i < len(live); i++ {
			for j := i + 1; j < len(live); j++ {
				a, b := live[i], live[j]
				limit := min(a.HW, b.HW)
				from := max(logStart(a), logStart(b))
				if off, ok := firstMismatch(a, b, from, limit); ok {
					p, pwhy := permitted(a, b)
					anomalies = append(anomalies, Anomaly{Kind: "divergent", Topic: pf.Topic, Partition: pf.Partition,
						Offsets: []int64{off}, Replicas: []int32{a.Broker, b.Broker},
						Description: describeAt(a, off) + ", " + describeAt(b, off) + "; both HWs (" +
							strconv.FormatInt(a.HW, 10) + ", " + strconv.FormatInt(b.HW, 10) + ") cover it" + extra + pwhy, Permitted: p})
				}
			}
		}
		if !f.Facts.Healed {
			continue
		}
		judge, ok := pf.Judge()
		if !ok {
			notes = append(notes, tpString(pf.Topic, pf.Partition)+": healed but no replica alive")
			continue
		}
		for _, r := range live {
			if r.Broker == judge.Broker {
				continue
			}
			end := max(judge.LEO, r.LEO)
			off, ok := firstMismatch(judge, r, logStart(judge), end)
			if !ok {
				continue
			}
			p, pwhy := permitted(judge, r)
			if why := offlineWhy(f.Facts.Offline, pf.Topic, pf.Partition); why != "" {
				p, pwhy = true, "; "+why
			}
			anomalies = append(anomalies, Anomaly{Kind: "not-converged", Topic: pf.Topic, Partition: pf.Partition,
				Offsets: []int64{off}, Replicas: []int32{judge.Broker, r.Broker},
				Description: "after healing, " + describeAt(judge, off) + " (LEO " + strconv.FormatInt(judge.LEO, 10) + "), " +
					describeAt(r, off) + " (LEO " + strconv.FormatInt(r.LEO, 10) + ")" + extra + pwhy, Permitted: p})
		}
	}
	if !f.Facts.Healed {
		notes = append(notes, "the cluster did not heal: convergence not required")
	}
	return verdict(NameDivergence, anomalies, false, notes...)
}

// firstMismatch returns the first offset in [from, limit) where a and b
// hold different entries (value or epoch, or one holds none).
func firstMismatch(a, b Replica, from, limit int64) (int64, bool) {
	ca, cb := newLogCursor(a, from), newLogCursor(b, from)
	for off := from; off < limit; off++ {
		ea, oka := ca.at(off)
		eb, okb := cb.at(off)
		if oka != okb || ea.Value != eb.Value || ea.LeaderEpoch != eb.LeaderEpoch {
			return off, true
		}
	}
	return 0, false
}

// logCursor reads a replica's log at increasing offsets: at(off) is
// r.At(off) for a non-decreasing off, without a binary search each time
// (the walks above visit every offset of the logs).
type logCursor struct {
	log []Entry
	i   int
}

// newLogCursor returns a cursor on r's log for offsets from from on.
func newLogCursor(r Replica, from int64) logCursor {
	return logCursor{log: r.Log, i: sort.Search(len(r.Log), func(i int) bool { return r.Log[i].Offset >= from })}
}

func (c *logCursor) at(off int64) (Entry, bool) {
	for c.i < len(c.log) && c.log[c.i].Offset < off {
		c.i++
	}
	if c.i < len(c.log) && c.log[c.i].Offset == off {
		return c.log[c.i], true
	}
	return Entry{}, false
}

// logStart returns the first offset of r's log (0 for an empty log).
func logStart(r Replica) int64 {
	if len(r.Log) == 0 {
		return 0
	}
	return r.Log[0].Offset
}

// describeAt renders "b0 has m2 (epoch 0)" or "b1 has nothing".
func describeAt(r Replica, off int64) string {
	s := "b" + strconv.Itoa(int(r.Broker))
	e, ok := r.At(off)
	if !ok {
		return s + " has nothing at " + strconv.FormatInt(off, 10)
	}
	return s + " has " + e.Value + " (epoch " + strconv.Itoa(int(e.LeaderEpoch)) + ") at " + strconv.FormatInt(off, 10)
}

// reusedEpoch finds the first offset where a and b hold records of the
// same leader epoch (>= 0) with different values.
func reusedEpoch(a, b Replica) (int32, int64, bool) {
	from := max(logStart(a), logStart(b))
	ca, cb := newLogCursor(a, from), newLogCursor(b, from)
	for off := from; off < min(a.LEO, b.LEO); off++ {
		ea, oka := ca.at(off)
		eb, okb := cb.at(off)
		if oka && okb && ea.LeaderEpoch >= 0 && ea.LeaderEpoch == eb.LeaderEpoch && ea.Value != eb.Value {
			return ea.LeaderEpoch, off, true
		}
	}
	return 0, 0, false
}

// reusedAfterLoss reports whether the partition's state recorded one
// (leader, leader epoch) twice with that leader losing unflushed data in
// between: the restarted leader took its old epoch again with a shorter log
// (swarm kip279-safe seed 199 under the scripted clients), so leader-epoch
// truncation cannot tell its new records from the old ones of that epoch.
func reusedAfterLoss(facts Facts, pf PartitionFinal) (bool, string) {
	var chs []ISRChange
	for _, ch := range facts.ISRChanges {
		if ch.Topic == pf.Topic && ch.Partition == pf.Partition && ch.Leader >= 0 && ch.LeaderEpoch >= 0 {
			chs = append(chs, ch)
		}
	}
	for j, later := range chs {
		for _, earlier := range chs[:j] {
			if earlier.Leader != later.Leader || earlier.LeaderEpoch != later.LeaderEpoch {
				continue
			}
			for _, fl := range sortedFailures(facts.Failures) {
				if fl.Broker == later.Leader && fl.LostUnflushed && fl.Time >= earlier.Time && fl.Time < later.Time {
					b := "b" + strconv.Itoa(int(later.Leader))
					return true, "permitted: " + b + " led epoch " + strconv.Itoa(int(later.LeaderEpoch)) + " from " + earlier.Time.String() +
						", lost unflushed data at " + fl.Time.String() + " (" + fl.Kind.String() + ") and was given epoch " +
						strconv.Itoa(int(later.LeaderEpoch)) + " again at " + later.Time.String() +
						": one epoch, two histories, which leader-epoch truncation compares by end offset only (no fence in ZooKeeper mode; KIP-966 keeps such a replica out)"
				}
			}
		}
	}
	return false, ""
}

// isrLost reports whether pf's whole ISR was down at once, one member
// having lost unflushed data (contract.go's rule 4), and says when.
func isrLost(con *contract, pf PartitionFinal) (bool, string) {
	for _, lf := range con.lossFacts(tp{pf.Topic, pf.Partition}) {
		if lf.kind == lossISRDown {
			return true, lf.why
		}
	}
	return false, ""
}

func uncleanNote(pf PartitionFinal, facts Facts) string {
	for _, u := range facts.UncleanElections {
		if u.Topic == pf.Topic && u.Partition == pf.Partition {
			return " (after an unclean election of b" + strconv.Itoa(int(u.Broker)) + " at " + u.Time.String() + ")"
		}
	}
	return ""
}
