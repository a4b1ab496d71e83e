// groups.go: anomalies grouped by the reason they happened.
//
// What it does: a run that loses 1,000 records to one power loss has one
// story, not 1,000. The acked-loss checker files every record it finds
// missing (also those past MaxAnomalies, which it only counts) under one
// AnomalyGroup per (kind, partition, contract sentence): how many, the
// offsets and acknowledgement times they span, and the one sentence that
// says why they are permitted or not. Reports show the groups and keep
// the per-record list behind them.
//
// What it simplifies: a group spans offsets From..To, which need not be
// contiguous (Count says how many records).

package checkers

import (
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// AnomalyGroup is the anomalies of one kind on one partition with one
// Reason.
type AnomalyGroup struct {
	Kind      string
	Topic     string
	Partition int32
	// Count is the number of anomalies in the group, Listed how many of
	// them are in Verdict.Anomalies (the rest were only counted, Omitted).
	Count, Listed int
	// From and To are the least and greatest offset.
	From, To int64
	// AckedFrom and AckedTo are the earliest and latest acknowledgement
	// (for KindCommittedLost, the time each record was committed).
	AckedFrom, AckedTo sim.Time
	// Reason is the contract's sentence, shared by every anomaly of the
	// group (Anomaly.Reason): "permitted: ..." or "not permitted: ...".
	Reason    string
	Permitted bool
}

// Contains reports whether a belongs to g.
func (g AnomalyGroup) Contains(a Anomaly) bool {
	return a.Kind == g.Kind && a.Topic == g.Topic && a.Partition == g.Partition && a.Reason == g.Reason && a.Permitted == g.Permitted
}

// String renders the group on one line: "173 records lost, offsets
// 27–199 of orders-0, acknowledged 5.135s–6.110s simulated; permitted: ...".
func (g AnomalyGroup) String() string {
	s := strconv.Itoa(g.Count) + " record"
	if g.Count != 1 {
		s += "s"
	}
	s += " " + g.Kind + ", offset"
	if g.From != g.To {
		s += "s " + strconv.FormatInt(g.From, 10) + "–" + strconv.FormatInt(g.To, 10)
	} else {
		s += " " + strconv.FormatInt(g.From, 10)
	}
	when := "acknowledged"
	if g.Kind == KindCommittedLost {
		when = "committed"
	}
	s += " of " + tpString(g.Topic, g.Partition) + ", " + when + " " + g.AckedFrom.String()
	if g.AckedTo != g.AckedFrom {
		s += "–" + g.AckedTo.String()
	}
	return s + " simulated; " + g.Reason
}

// grouper collects groups in the order their first anomaly came.
type grouper struct {
	groups []AnomalyGroup
}

// add files one anomaly (listed: kept in the verdict) at offset with its
// acknowledgement at acked.
func (gr *grouper) add(a Anomaly, offset int64, acked sim.Time, listed bool) {
	i := len(gr.groups) - 1
	// NB: anomalies come in partition order, so a partition's groups are
	// the last few; search back only within the partition.
	for ; i >= 0 && gr.groups[i].Topic == a.Topic && gr.groups[i].Partition == a.Partition; i-- {
		if gr.groups[i].Contains(a) {
			break
		}
	}
	if i < 0 || !gr.groups[i].Contains(a) {
		gr.groups = append(gr.groups, AnomalyGroup{Kind: a.Kind, Topic: a.Topic, Partition: a.Partition, From: offset, To: offset,
			AckedFrom: acked, AckedTo: acked, Reason: a.Reason, Permitted: a.Permitted})
		i = len(gr.groups) - 1
	}
	g := &gr.groups[i]
	g.Count++
	if listed {
		g.Listed++
	}
	g.From, g.To = min(g.From, offset), max(g.To, offset)
	g.AckedFrom, g.AckedTo = min(g.AckedFrom, acked), max(g.AckedTo, acked)
}
