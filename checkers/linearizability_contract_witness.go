// linearizability_contract_witness.go: finding a linearization of a
// partition under the contract model without porcupine's search, for the
// partitions with an obvious one.
//
// Why: a partition where a leader acknowledged acks=1 sends and was then
// deposed holds thousands of appends that never complete and reuse
// offsets, and the loss facts' truncations that may take effect at any
// instant after their fact. Porcupine may try each pending append and
// truncation at every step; in swarm's hw-unsafe variant its search ran
// out of any budget (20 s tried) in 24 of 50 seeds, leaving the verdict
// unknown, although the run's real order is a linearization.
//
// What it does: contractWitness builds one order, greedily, close to the
// run's own, and checks it. It handles appends at known offsets, reads, HW
// reads and truncations; a partition with an append of unknown outcome or
// an unobserved one it leaves to porcupine. The appends, reads and HW
// reads are taken in the order of the instant each most likely took
// effect: its completion, or for an append that never completes (acks=1:
// acknowledged before it was committed) the hint, its acknowledgement.
// An append at offset o waits while the log is shorter than o, and is
// taken, with every append waiting at the new end, once the log reaches
// o. An append at an offset the log has passed needs a truncation: of the
// loss facts not used yet and dated no later than the append's instant,
// the latest one that lets the log be cut to o is taken just before it.
// Truncations left unused go last, where they change nothing anyone
// reads.
//
// What it gives up: an order close to the run's is not always one. When a
// record acknowledged later (by a deposed leader still answering) was
// lost and one acknowledged earlier at the same offset survived, the
// later one is placed last and the read of the final log refuses the
// order; porcupine then searches (swarm hw-unsafe: 2 of 50 seeds).
//
// Why it is exact: the order is only a candidate. contractWitness then
// checks that it is a linearization: every operation appears once,
// model.ContractStep accepts each in turn from the model's initial state,
// and it respects real time (an operation completing before another's
// invocation comes first), as porcupine requires. A history with a
// linearization is linearizable, so porcupine, which searches them all,
// would say so. When the greedy order is not one, the witness says
// nothing and porcupine searches as before: a contract verdict can only
// move from unknown to permitted, by a linearization exhibited.

package checkers

import (
	"cmp"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// contractWitness reports whether it found, and checked, a linearization
// of ops, one partition's contract-model history (see the file's header).
// hint gives, for an operation that never completes, the instant it most
// likely took effect at, or 0 for none (its invocation is used).
func contractWitness(ops []porcupine.Operation, hint func(*porcupine.Operation) int64) bool {
	n := len(ops)
	ins, outs := make([]model.Input, n), make([]model.Output, n)
	var truncs, rest []int
	for i := range ops {
		in, ok1 := ops[i].Input.(model.Input)
		out, ok2 := ops[i].Output.(model.Output)
		if !ok1 || !ok2 {
			return false
		}
		ins[i], outs[i] = in, out
		switch in.Kind {
		case model.Truncate:
			truncs = append(truncs, i)
		case model.Append:
			if out.Unknown || out.Unobserved || out.Offset < 0 {
				return false
			}
			rest = append(rest, i)
		case model.Read, model.HighWatermark:
			rest = append(rest, i)
		default:
			return false
		}
	}
	at := make([]int64, n) // the instant each op is placed by
	for _, i := range rest {
		switch op := &ops[i]; {
		case op.Return != never:
			at[i] = op.Return
		case hint != nil && hint(op) > op.Call:
			at[i] = hint(op)
		default:
			at[i] = op.Call
		}
	}
	slices.SortStableFunc(rest, func(a, b int) int { return cmp.Compare(at[a], at[b]) })
	slices.SortStableFunc(truncs, func(a, b int) int { return cmp.Compare(ops[a].Call, ops[b].Call) })

	state, _ := model.ContractModel().Init().(model.ContractState)
	seq := make([]int, 0, n)
	take := func(i int) bool {
		ok, next := model.ContractStep(state, ins[i], outs[i])
		if ok {
			state = next
			seq = append(seq, i)
		}
		return ok
	}
	used := make([]bool, len(truncs))
	// truncateFor takes the latest unused truncation dated by the instant
	// by that lets the log be cut to offset o.
	truncateFor := func(o, by int64) bool {
		for k := len(truncs) - 1; k >= 0; k-- {
			j := truncs[k]
			if used[k] || ops[j].Call > by {
				continue
			}
			if ok, next := model.ContractStep(state, ins[j], outs[j]); ok && next.Floor <= o {
				used[k] = true
				state = next
				seq = append(seq, j)
				return true
			}
		}
		return false
	}
	waiting := map[int64][]int{} // appends at an offset the log has not reached, by offset
	for _, i := range rest {
		if ins[i].Kind != model.Append {
			if !take(i) {
				return false
			}
			continue
		}
		o := outs[i].Offset
		if o > state.Log.Len() {
			waiting[o] = append(waiting[o], i)
			continue
		}
		if !take(i) && !(truncateFor(o, at[i]) && take(i)) {
			return false
		}
		for {
			q := waiting[state.Log.Len()]
			if len(q) == 0 {
				break
			}
			if !take(q[0]) {
				return false
			}
			waiting[outs[q[0]].Offset] = q[1:]
		}
	}
	for k, j := range truncs {
		if !used[k] {
			seq = append(seq, j)
		}
	}
	return isContractLinearization(ops, ins, outs, seq)
}

// isContractLinearization reports whether seq, an order of every
// operation of ops, is legal for the contract model and respects real
// time.
func isContractLinearization(ops []porcupine.Operation, ins []model.Input, outs []model.Output, seq []int) bool {
	if !isOrderOfAll(ops, seq) {
		return false
	}
	state, _ := model.ContractModel().Init().(model.ContractState)
	for _, i := range seq {
		var ok bool
		if ok, state = model.ContractStep(state, ins[i], outs[i]); !ok {
			return false
		}
	}
	return respectsRealTime(ops, seq) // linearizability_witness.go
}
