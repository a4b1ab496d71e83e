// duplicates.go: the duplicates checker.
//
// What it checks: no value appears at two offsets of a partition, counting
// the final committed log (PartitionFinal.Judge's replica below its HW) and
// every record a poll saw (a value polled at offset 3, lost, and committed
// again at offset 5 by a retry counts, as Jepsen's :duplicate does).
//
// Whether Kafka permits a duplicate (contract.go): a producer without
// idempotence may write a record twice when it retries a request whose
// response was lost, so its duplicates are Permitted. With
// enable.idempotence=true (KIP-98) a duplicate is permitted only when a copy
// that a poll saw is no longer in the final committed log and a loss fact
// permits losing the record: the producer, never told of the first append,
// wrote it again after the loss. Otherwise it is a contract break, as it is
// for a producer not listed in History.Producers or a value no Send wrote.
//
// What it simplifies: values are compared within one partition only.

package checkers

import (
	"sort"
)

// Duplicates checks that no value is at two offsets of a partition.
func Duplicates(h History, f Final) Verdict {
	return duplicates(h, f, newContract(f))
}

// duplicates is Duplicates with the run's contract given (CheckAll builds one for all).
func duplicates(h History, f Final, con *contract) Verdict {
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
	sends := 0
	for i := range h.Ops {
		if h.Ops[i].Kind == Send {
			sends++
		}
	}
	// NB: sender holds indexes into h.Ops, presized: a map of Op values
	// (too large to be held inline) allocated once per send.
	sender := make(map[string]int, sends)
	for i, op := range h.Ops {
		switch {
		case op.Kind == Send:
			if _, ok := sender[op.Value]; !ok {
				sender[op.Value] = i
			}
		case op.Kind == Poll && (op.Outcome == OK || op.Outcome == Info):
			for _, r := range op.Records {
				add(tp{op.Topic, op.Partition}, r.Value, r.Offset)
			}
		}
	}
	final := make(map[tp]Replica)
	for _, pf := range f.Partitions {
		if judge, ok := pf.Judge(); ok {
			final[tp{pf.Topic, pf.Partition}] = judge
		}
	}
	// lostCopy reports whether some offset of v is not v's in the final
	// committed log of k.
	lostCopy := func(k tp, v string, offs []int64) bool {
		judge, ok := final[k]
		if !ok {
			return false
		}
		for _, off := range offs {
			if e, found := judge.At(off); !found || e.Value != v || off >= judge.HW {
				return true
			}
		}
		return false
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
			si, ok := sender[v]
			if !ok {
				a.Description = "no send in the history wrote " + v + "; not permitted"
				anomalies = append(anomalies, a)
				continue
			}
			op := h.Ops[si]
			a.Ops = []int{op.Index}
			why, permitted := duplicateExcuse(h, op.Process)
			if !permitted && lostCopy(k, v, offs) {
				if lossWhy, lost := con.lossExcuse(op); lost {
					why, permitted = "sent by "+op.Process+"; a copy a poll saw is not in the final committed log, and "+lossWhy+": written again after the loss", true
				}
			}
			a.Permitted, a.Description = permitted, why
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
