// linearizability_witness.go: finding a linearization of a partition
// without porcupine's search, for the partitions that have an obvious one.
//
// Why: most partitions of a run are linearizable, and the simplest way
// to show that is to exhibit a linearization. Porcupine's search finds
// one too, on the narrowed history in one model step per operation
// (linearizability_narrow.go), but each of its steps also clones a bitset
// of every operation, hashes it and caches the state, and the history
// must be narrowed and sorted into events first: ~5,000 instructions per
// operation of a swarm partition, where building the order below and
// checking it takes a few hundred.
//
// What it does: witness builds one order of the operations, greedily, and
// checks it. It handles partitions of appends at known offsets (each
// offset at most once), reads and HW reads; anything else (an append of
// unknown outcome, unobserved or not, two appends at one offset) it leaves
// to porcupine. Going through the invocations in time order, it lets
// each operation wait until the model accepts it: an append at offset o
// when the log is o long, an HW read of h when it is h long, a read once
// the log reaches past its last record (its values are checked below).
// Whenever the log grows, the operations waiting for that length are
// taken, reads and HW reads first (they leave the log as it is, and an HW
// read of h can only come before the append at h).
//
// Why it is exact: the order is only a candidate; witness then checks
// that it is a linearization: every operation appears once, model.Step
// accepts each in turn from the empty log, and it respects real time (no
// operation comes after one that was invoked after it completed: each
// invocation is at most every later operation's completion, porcupine's
// order, where an operation completing at the instant another is invoked
// overlaps it). A history with a linearization is linearizable, so
// porcupine, which searches them all, would return Ok. When the greedy
// order is not one (the check fails, or an operation was never taken),
// witness says nothing, and porcupine searches as before: a verdict can
// only move from Unknown (porcupine's budget spent) to Ok, by a
// linearization found.

package checkers

import (
	"cmp"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// witness reports whether it found, and checked, a linearization of ops,
// one partition's strict-model history (see the file's header).
func witness(ops []porcupine.Operation) bool {
	n := len(ops)
	ins, outs, ok := modelIO(ops)
	if !ok {
		return false
	}
	need := make([]int64, n) // the log length at which the op may be taken
	byOffset := make([]int, n+1)
	for i := range byOffset {
		byOffset[i] = -1
	}
	for i := range ops {
		in, out := ins[i], outs[i]
		switch in.Kind {
		case model.Append:
			// NB: n appends can fill offsets 0..n-1 at most.
			if out.Unknown || out.Offset < 0 || out.Offset >= int64(n) || byOffset[out.Offset] >= 0 {
				return false
			}
			byOffset[out.Offset] = i
			need[i] = out.Offset
		case model.Read:
			for _, r := range out.Records {
				need[i] = max(need[i], r.Offset+1)
			}
		case model.HighWatermark:
			need[i] = out.HighWatermark
		default:
			return false
		}
		if need[i] < 0 || need[i] > int64(n) {
			return false // never accepted
		}
	}
	// The invocations in time order (a partition's history usually is).
	calls := make([]int, n)
	for i := range calls {
		calls[i] = i
	}
	if !slices.IsSortedFunc(calls, func(a, b int) int { return cmp.Compare(ops[a].Call, ops[b].Call) }) {
		slices.SortStableFunc(calls, func(a, b int) int { return cmp.Compare(ops[a].Call, ops[b].Call) })
	}
	// waiting[l]: the reads and HW reads waiting for a log l long; an
	// append waits in appendAt, at its offset.
	waiting := make([][]int, n+1)
	appendAt := make([]bool, n+1)
	seq := make([]int, 0, n)
	length := int64(0)
	for _, i := range calls {
		switch {
		case ins[i].Kind == model.Append:
			appendAt[need[i]] = true
		case ins[i].Kind == model.Read && need[i] <= length:
			seq = append(seq, i)
			continue
		case ins[i].Kind == model.HighWatermark && need[i] < length:
			return false // the log is already past it
		default:
			waiting[need[i]] = append(waiting[need[i]], i)
		}
		// Take what waits for the log as it is, then grow it while the
		// append at its end is waiting.
		for {
			seq = append(seq, waiting[length]...)
			waiting[length] = nil
			if length >= int64(n) || !appendAt[length] {
				break
			}
			appendAt[length] = false
			seq = append(seq, byOffset[length])
			length++
		}
	}
	return len(seq) == n && isLinearization(ops, ins, outs, seq)
}

// modelIO returns each operation's model input and output; ok is false if
// one is not a model.Input and model.Output.
func modelIO(ops []porcupine.Operation) (ins []model.Input, outs []model.Output, ok bool) {
	ins, outs = make([]model.Input, len(ops)), make([]model.Output, len(ops))
	for i := range ops {
		in, ok1 := ops[i].Input.(model.Input)
		out, ok2 := ops[i].Output.(model.Output)
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		ins[i], outs[i] = in, out
	}
	return ins, outs, true
}

// isLinearization reports whether seq, an order of every operation of
// ops, is legal for the strict model and respects real time.
func isLinearization(ops []porcupine.Operation, ins []model.Input, outs []model.Output, seq []int) bool {
	if !isOrderOfAll(ops, seq) {
		return false
	}
	state := model.Log{}
	for _, i := range seq {
		var ok bool
		if ok, state = model.Step(state, ins[i], outs[i]); !ok {
			return false
		}
	}
	return respectsRealTime(ops, seq)
}

// isOrderOfAll reports whether seq holds every operation of ops once.
func isOrderOfAll(ops []porcupine.Operation, seq []int) bool {
	if len(seq) != len(ops) {
		return false
	}
	seen := make([]bool, len(ops))
	for _, i := range seq {
		if seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}

// respectsRealTime reports whether the order seq respects real time as
// porcupine does: an operation completing before a later one's invocation
// would have to come first, so each invocation must be at most the
// earliest completion after it.
func respectsRealTime(ops []porcupine.Operation, seq []int) bool {
	earliest := int64(never)
	for k := len(seq) - 1; k >= 0; k-- {
		i := seq[k]
		if ops[i].Call > earliest {
			return false
		}
		earliest = min(earliest, ops[i].Return)
	}
	return true
}
