// invariants_minisr.go: the invariants monitor's acked-below-min-isr
// check, min.insync.replicas as the producer's contract states it.
//
// What it checks: an acks=all send acknowledged without error was
// acknowledged by a leader whose ISR had at least min.insync.replicas
// members (Kafka refuses the append with NOT_ENOUGH_REPLICAS, and answers
// NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below it before
// the HW passed the record). The monitor sees every leader's ISR after
// each event, so it keeps the stretches of time in which every live
// replica leading a partition had fewer ISR members than its
// min.insync.replicas; a send invoked after such a stretch began and
// completed before it ended cannot have been acknowledged by a leader
// with enough ISR members. Kafka's contract permits no exception (faults
// make acks=all writes fail, never succeed with fewer replicas).
//
// What it simplifies: only sends whose whole life lies inside one stretch
// are judged (the leader that answered is not known to the monitor), so
// an acknowledgement sent at the very edge of a stretch is not.

package checkers

import (
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// KindAckedBelowMinISR: an acks=all send acknowledged while every leader
// of its partition had an ISR below min.insync.replicas.
const KindAckedBelowMinISR = "acked-below-min-isr"

// minISRWatch is one partition's stretches below min.insync.replicas.
type minISRWatch struct {
	below    bool     // every live leader is below its min ISR now
	since    sim.Time // when the current stretch began
	leader   string   // the leader seen when it began, for the evidence
	stretchs []minISRStretch
}

// minISRStretch is a closed stretch [from, to) below min ISR.
type minISRStretch struct {
	from, to sim.Time
	leader   string
}

// watchMinISR updates w's stretches with the replicas seen at t.
func (w *partitionWatch) watchMinISR(reps []ReplicaState, t sim.Time) {
	below, leaders := false, 0
	var desc string
	for i := range reps {
		r := &reps[i]
		if !r.Alive || r.Role != Leader {
			continue
		}
		leaders++
		if r.MinISR <= 0 || len(r.ISR) >= r.MinISR {
			below = false
			break
		}
		below = true
		if desc == "" {
			desc = r.String() + " min.insync.replicas=" + strconv.Itoa(r.MinISR)
		}
	}
	below = below && leaders > 0
	mw := &w.minISR
	switch {
	case below && !mw.below:
		mw.below, mw.since, mw.leader = true, t, desc
	case !below && mw.below:
		mw.below = false
		mw.stretchs = append(mw.stretchs, minISRStretch{from: mw.since, to: t, leader: mw.leader})
	}
}

// ackedBelowMinISR adds to v an acked-below-min-isr anomaly for every
// acks=all send of h acknowledged inside a stretch below min ISR.
func (m *Monitor) ackedBelowMinISR(v Verdict, h History) Verdict {
	var added []Anomaly
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != Send || op.Outcome != OK || op.Acks != -1 {
			continue
		}
		w := m.parts[tp{op.Topic, op.Partition}]
		if w == nil {
			continue
		}
		st, ok := w.minISR.covering(op.Invoke, op.Complete)
		if !ok {
			continue
		}
		added = append(added, Anomaly{Kind: KindAckedBelowMinISR, Topic: op.Topic, Partition: op.Partition, Value: op.Value,
			Offsets: []int64{op.Offset}, Times: []sim.Time{op.Invoke, op.Complete}, Ops: []int{op.Index},
			Description: "acknowledged (acks=-1) at offset " + strconv.FormatInt(op.Offset, 10) + " at " + op.Complete.String() +
				", sent at " + op.Invoke.String() + ", while every leader's ISR was below min.insync.replicas (from " + st.from.String() +
				untilString(st.to) + ": " + st.leader + "): Kafka answers NOT_ENOUGH_REPLICAS"})
	}
	if len(added) == 0 {
		return v
	}
	out := verdict(v.Checker, append(append([]Anomaly(nil), v.Anomalies...), added...), false, v.Notes...)
	out.Omitted += v.Omitted
	return out
}

// covering returns the stretch that began before invoke and ended after
// complete (or has not ended).
func (mw *minISRWatch) covering(invoke, complete sim.Time) (minISRStretch, bool) {
	for _, st := range mw.stretchs {
		if st.from < invoke && complete < st.to {
			return st, true
		}
	}
	if mw.below && mw.since < invoke {
		return minISRStretch{from: mw.since, to: -1, leader: mw.leader}, true
	}
	return minISRStretch{}, false
}

func untilString(t sim.Time) string {
	if t < 0 {
		return " on"
	}
	return " to " + t.String()
}
