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
	"strings"

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
	// Acks is the sends' acks (-1: all), part of the group's key: the
	// contract permits more for acks=1; committed-lost groups have none
	// (-2).
	Acks int16
	// Values are the records' values while the group has at most
	// maxGroupValues records (nil past it): "1 record lost (m2)".
	Values []string
}

// noAcks is a committed-lost group's Acks: its records were committed,
// whatever their sends' acks.
const noAcks = -2

// maxGroupValues is how many values a group names.
const maxGroupValues = 3

// sameGroup reports whether a, of a send with acks, belongs to g.
func (g AnomalyGroup) sameGroup(a Anomaly, acks int16) bool {
	return a.Kind == g.Kind && a.Topic == g.Topic && a.Partition == g.Partition && a.Reason == g.Reason && a.Permitted == g.Permitted && acks == g.Acks
}

// String renders the group on one line: "173 records lost, offsets
// 27–199 of orders-0, acknowledged (acks=-1) 5.135s–6.110s simulated;
// permitted: ...", naming the values of a group of up to three.
func (g AnomalyGroup) String() string {
	s := strconv.Itoa(g.Count) + " record"
	if g.Count != 1 {
		s += "s"
	}
	s += " " + g.Kind
	if len(g.Values) > 0 {
		s += " (" + strings.Join(g.Values, ", ") + ")"
	}
	s += ", offset"
	if g.From != g.To {
		s += "s " + strconv.FormatInt(g.From, 10) + "–" + strconv.FormatInt(g.To, 10)
	} else {
		s += " " + strconv.FormatInt(g.From, 10)
	}
	when := "acknowledged (acks=" + strconv.Itoa(int(g.Acks)) + ")"
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

// add files one anomaly of a send with acks (listed: kept in the verdict)
// at offset with its acknowledgement at acked, and returns its group's
// Anomaly.Group.
func (gr *grouper) add(a Anomaly, acks int16, offset int64, acked sim.Time, listed bool) int {
	i := len(gr.groups) - 1
	// NB: anomalies come in partition order, so a partition's groups are
	// the last few; search back only within the partition.
	for ; i >= 0 && gr.groups[i].Topic == a.Topic && gr.groups[i].Partition == a.Partition; i-- {
		if gr.groups[i].sameGroup(a, acks) {
			break
		}
	}
	if i < 0 || !gr.groups[i].sameGroup(a, acks) {
		gr.groups = append(gr.groups, AnomalyGroup{Kind: a.Kind, Topic: a.Topic, Partition: a.Partition, From: offset, To: offset,
			AckedFrom: acked, AckedTo: acked, Reason: a.Reason, Permitted: a.Permitted, Acks: acks})
		i = len(gr.groups) - 1
	}
	g := &gr.groups[i]
	g.Count++
	switch {
	case g.Count > maxGroupValues:
		g.Values = nil
	case a.Value != "":
		g.Values = append(g.Values, a.Value)
	}
	if listed {
		g.Listed++
	}
	g.From, g.To = min(g.From, offset), max(g.To, offset)
	g.AckedFrom, g.AckedTo = min(g.AckedFrom, acked), max(g.AckedTo, acked)
	return i + 1
}
