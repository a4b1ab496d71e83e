// linearizability_conflict.go: a partition where two appends took one
// offset, decided without a search.
//
// Why it is exact. model.Step accepts an append of known offset o (an
// acknowledged send, or one of unknown outcome that a poll saw at exactly
// one offset) only on a log of length o, and no step shortens a log: every
// append lengthens it by one, reads and HW reads leave it as it is. So of
// two such appends at one offset, whichever takes effect second finds the
// log longer than its offset: no order of the operations is legal, and
// porcupine's verdict could only be Illegal. The check looks at nothing
// else (not times, reads or the other appends), so it can never call a
// linearizable partition non-linearizable.
//
// Why it is here. Porcupine's search of such a history can be exponential:
// in swarm's hw-unsafe variant, acks=1 sends overwritten after an unclean
// election left partitions whose search spent the whole 2 s budget in 38
// of 50 seeds, reported unknown. Decided here, those partitions go on to
// the contract check like any other violation.
//
// What it gives up: the explanation names the conflicting pair, not
// porcupine's longest partial linearization: the lowest offset taken by two
// appends, the first two there in history order (the first is the
// anomaly's value), and what the first read of that offset found; how many
// offsets are so taken is counted.

package checkers

import (
	"strconv"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// offsetConflict reports whether two appends of ops took one offset, and
// if so explains it as an anomaly of partition k.
func offsetConflict(k model.Key, ops []porcupine.Operation) (Anomaly, bool) {
	first := make(map[int64]int, len(ops)) // offset -> index in ops of its first append; -1 once taken twice
	a, b := -1, -1                         // the explained pair, indexes in ops
	offsets := 0                           // offsets taken by two appends or more
	for i, op := range ops {
		in, out := op.Input.(model.Input), op.Output.(model.Output)
		if in.Kind != model.Append || out.Unknown || out.Unobserved {
			continue
		}
		j, taken := first[out.Offset]
		switch {
		case !taken:
			first[out.Offset] = i
		case j >= 0: // the offset's second append
			offsets++
			if a < 0 || out.Offset < ops[a].Output.(model.Output).Offset {
				a, b = j, i
			}
			first[out.Offset] = -1
		}
	}
	if a < 0 {
		return Anomaly{}, false
	}
	// NB: ops are in history order, so a precedes b there.
	ia, ib := ops[a].Input.(model.Input), ops[b].Input.(model.Input)
	off := ops[a].Output.(model.Output).Offset
	id := func(i int) int { return ops[i].Metadata.(int) }
	an := Anomaly{Kind: "nonlinearizable", Topic: k.Topic, Partition: k.Partition, Value: ia.Value,
		Offsets: []int64{off}, Ops: []int{id(a), id(b)}}
	an.Description = model.DescribeOperation(ia, ops[a].Output.(model.Output)) + " (#" + strconv.Itoa(id(a)) + ") and " +
		model.DescribeOperation(ib, ops[b].Output.(model.Output)) + " (#" + strconv.Itoa(id(b)) + ") both took offset " +
		strconv.FormatInt(off, 10) + ": a log holds one record at each offset, so no order of the operations is legal"
	if offsets > 1 {
		an.Description += " (" + strconv.Itoa(offsets) + " offsets are each taken by two appends or more)"
	}
	// Say what the reads found there: the value the first read of that
	// offset saw (the anomaly's value stays the earlier append's: in a
	// KIP-101 loss, the acknowledged record a later one overwrote).
	for _, op := range ops {
		in, out := op.Input.(model.Input), op.Output.(model.Output)
		if in.Kind != model.Read {
			continue
		}
		for _, r := range out.Records {
			if r.Offset == off {
				an.Description += "; " + r.Value + " is what a read found there (#" + strconv.Itoa(op.Metadata.(int)) + ")"
				return an, true
			}
		}
	}
	return an, true
}
