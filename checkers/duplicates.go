// duplicates.go: the duplicates checker.
//
// What it checks: no value appears at two offsets of a partition, counting
// the final committed log (PartitionFinal.Judge's replica below its HW) and
// every record a poll saw (a value polled at offset 3, lost, and committed
// again at offset 5 by a retry counts, as Jepsen's :duplicate does).
//
// Whether Kafka permits a duplicate: a producer without idempotence may write
// a record twice when it retries a request whose response was lost, so its
// duplicates are reported as Permitted; with enable.idempotence=true
// (KIP-98) any duplicate is a contract break. A value whose producer is not
// listed in History.Producers is judged strictly (not permitted), as is a
// value no Send in the history wrote.
//
// What it simplifies: values are compared within one partition only.

package checkers

import (
	"sort"
	"strconv"
)

// Duplicates checks that no value is at two offsets of a partition.
func Duplicates(h History, f Final) Verdict {
	offsets := make(map[tp]map[string][]int64)
	add := func(k tp, v string, off int64) {
		if offsets[k] == nil {
			offsets[k] = make(map[string][]int64)
		}
		if !containsOffset(offsets[k][v], off) {
			offsets[k][v] = append(offsets[k][v], off)
		}
	}
	for _, pf := range f.Partitions {
		if judge, ok := pf.Judge(); ok {
			for _, e := range committed(judge) {
				add(tp{pf.Topic, pf.Partition}, e.Value, e.Offset)
			}
		}
	}
	sender := make(map[string]Op)
	for _, op := range h.Ops {
		switch {
		case op.Kind == Send:
			if _, ok := sender[op.Value]; !ok {
				sender[op.Value] = op
			}
		case op.Kind == Poll && (op.Outcome == OK || op.Outcome == Info):
			for _, r := range op.Records {
				add(tp{op.Topic, op.Partition}, r.Value, r.Offset)
			}
		}
	}
	var anomalies []Anomaly
	for _, k := range sortedTPs(offsets) {
		var values []string
		for v, offs := range offsets[k] {
			if len(offs) > 1 {
				values = append(values, v)
			}
		}
		sort.Slice(values, func(i, j int) bool {
			a, b := offsets[k][values[i]], offsets[k][values[j]]
			if min64(a) != min64(b) {
				return min64(a) < min64(b)
			}
			return values[i] < values[j]
		})
		for _, v := range values {
			offs := append([]int64(nil), offsets[k][v]...)
			sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
			a := Anomaly{Kind: "duplicate", Topic: k.topic, Partition: k.partition, Value: v, Offsets: offs}
			op, ok := sender[v]
			switch p, declared := h.Producer(op.Process); {
			case !ok:
				a.Description = "no send in the history wrote " + v + "; not permitted"
			case !declared:
				a.Ops = []int{op.Index}
				a.Description = "sent by " + op.Process + " (configuration not declared); not permitted"
			case p.Idempotent:
				a.Ops = []int{op.Index}
				a.Description = "sent by " + op.Process + " with enable.idempotence=true; not permitted (KIP-98)"
			default:
				a.Ops = []int{op.Index}
				a.Permitted = true
				a.Description = "sent by " + op.Process + " without idempotence (retries=" + strconv.Itoa(p.Retries) + "); permitted: a retry may write twice"
			}
			anomalies = append(anomalies, a)
		}
	}
	return verdict(NameDuplicates, anomalies, false)
}

func min64(xs []int64) int64 {
	m := xs[0]
	for _, x := range xs[1:] {
		m = min(m, x)
	}
	return m
}
