// linearizability_narrow.go: narrowing the intervals of a partition's
// appends before porcupine searches them.
//
// What it does: every append whose offset is known (an acknowledged send,
// or one of unknown outcome resolved by a poll) can only take effect when
// the log's length equals its offset (model.Step), so in every
// linearization the known-offset appends take effect in offset order.
// An append at offset o therefore takes effect no earlier than the latest
// invocation of an append at an offset at or below o, and no later than
// the earliest completion of an append at an offset at or above o. narrow
// moves each such append's Call and Return there.
//
// Why it is exact: a linearization of the history as recorded places each
// operation inside its narrowed interval (the argument above), and every
// real-time order the narrowed intervals add (A ends before B begins) is
// one that offset order and the recorded real-time order already imply. So
// the narrowed history has exactly the linearizations of the recorded one,
// and porcupine's verdict on it is the verdict on the recorded history.
//
// Why it pays: porcupine tries, at every step of its search, each
// operation invoked and not yet placed, in invocation order. A send that
// was invoked early and retried through a fault gets a late offset; it sits
// at the head of that list, failing model.Step at every step until its
// turn. A swarm run had hundreds of them per partition (about 200 failing
// steps per append); narrowed, its invocation moves to where its turn
// comes, and with the times renamed so that appends invoked at one time
// are tried in offset order (reorder), porcupine places every append of
// such a partition at its first try.
//
// Where it is used: the linearizability checker judges each partition on
// the narrowed history; porcupine's linearization info, which a report
// draws and a violation is explained from, is always of the history as
// recorded (linearizability.go).
//
// What it leaves as recorded: histories where two known-offset appends
// name one offset, or where the narrowed interval of some append would be
// empty (its offset order contradicts real time): neither has a
// linearization, and porcupine finds that on the recorded history. Reads,
// high-watermark reads and appends of unknown offset keep their intervals.

package checkers

import (
	"cmp"
	"math"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// narrow returns a copy of ops with the known-offset appends' intervals
// narrowed and the times renamed (reorder), or ops itself for a history it
// leaves as recorded (see the file's header).
func narrow(ops []porcupine.Operation) []porcupine.Operation {
	type fixed struct {
		off int64
		i   int
	}
	var fx []fixed
	for i := range ops {
		in, ok := ops[i].Input.(model.Input)
		if !ok || in.Kind != model.Append {
			continue
		}
		if out, ok := ops[i].Output.(model.Output); ok && !out.Unknown {
			fx = append(fx, fixed{out.Offset, i})
		}
	}
	if len(fx) < 2 {
		return ops
	}
	slices.SortFunc(fx, func(a, b fixed) int { return cmp.Or(cmp.Compare(a.off, b.off), cmp.Compare(a.i, b.i)) })
	calls := make([]int64, len(fx))
	latest := int64(math.MinInt64)
	for k, f := range fx {
		if k > 0 && f.off == fx[k-1].off {
			return ops // two appends at one offset: no linearization either way
		}
		latest = max(latest, ops[f.i].Call)
		calls[k] = latest
	}
	rets := make([]int64, len(fx))
	earliest := int64(math.MaxInt64)
	for k := len(fx) - 1; k >= 0; k-- {
		earliest = min(earliest, ops[fx[k].i].Return)
		rets[k] = earliest
		if calls[k] > rets[k] {
			return ops // offset order contradicts real time
		}
	}
	out := slices.Clone(ops)
	key := make([]int64, len(ops)) // each known-offset append's offset; the others first
	for i := range key {
		key[i] = -1
	}
	for k, f := range fx {
		out[f.i].Call, out[f.i].Return = calls[k], rets[k]
		key[f.i] = f.off
	}
	reorder(out, key)
	return out
}

// reorder renames the times of ops, in place, to ones that keep every order
// porcupine reads from them, and spreads the invocations of one time in
// the order of key.
//
// Porcupine reads time only as the order of its invocation and completion
// events: A precedes B when A completes before B is invoked, and at one
// time invocations sort before completions (so two operations touching at
// an instant overlap). The new times keep exactly those orders: the
// distinct times are ranked, a completion at rank r becomes r*m + m-1 and
// an invocation r*m + j, where j < m-1 is its place among the invocations
// of its time by key. Only the order among invocations of one time
// changes, which porcupine leaves to its unstable sort and which no
// precedence depends on. Narrowing makes many appends share an invocation
// time (the latest one below them); in offset order porcupine places each
// at its first try, in any other it tries them all at every step.
func reorder(ops []porcupine.Operation, key []int64) {
	times := make([]int64, 0, 2*len(ops))
	for _, op := range ops {
		times = append(times, op.Call, op.Return)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	m := int64(len(ops)) + 1 // above every place among invocations of one time
	at := func(t int64) int64 {
		r, _ := slices.BinarySearch(times, t)
		return int64(r) * m
	}
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(ops[a].Call, ops[b].Call), cmp.Compare(key[a], key[b]))
	})
	calls := make([]int64, len(ops))
	var j int64
	for n, i := range order {
		if n > 0 && ops[order[n-1]].Call == ops[i].Call {
			j++
		} else {
			j = 0
		}
		calls[i] = at(ops[i].Call) + j
	}
	for i := range ops {
		ops[i].Call, ops[i].Return = calls[i], at(ops[i].Return)+m-1
	}
}
