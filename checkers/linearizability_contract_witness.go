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
// unknown, although the run's real order is a linearization. With both
// orders below, none of those 50 is left to porcupine.
//
// What it does: contractWitness builds up to three orders, greedily, and
// checks each. It handles appends at known offsets, reads, HW reads and
// truncations; a partition with an append of unknown outcome or an
// unobserved one it leaves to porcupine.
//
//   - The run's order: the appends, reads and HW reads in the order of the
//     instant each most likely took effect (its completion, or for an
//     append that never completes, acks=1 acknowledged before it was
//     committed, the hint: its acknowledgement). An append at offset o
//     waits while the log is shorter than o, and is taken, with every
//     append waiting at the new end, once the log reaches o. An append at
//     an offset the log has passed needs a truncation: of the loss facts
//     not used yet and dated no later than the append's instant, the
//     latest one that lets the log be cut to o is taken just before it;
//     so does an HW read below the log's end. An append still waiting
//     past its completion, when no append not placed yet that was invoked
//     before then can fill the offsets below it, goes in over unobserved
//     copies of its value if it may (model.Output.Copies: a retry's
//     earlier attempts, at offsets a loss later freed), and the appends
//     waiting above it follow.
//   - The survivors' order, tried when the first is not a linearization
//     (a deposed leader that still answered acknowledged records after the
//     ones that survived at their offsets were written elsewhere): the log
//     the last read found is the surviving one; every other append was
//     lost. The lost appends are chained into branches of consecutive
//     offsets, in the order of their instants; branch by branch, in offset
//     order, the surviving log is laid up to the branch's first offset,
//     the branch on it, and the earliest loss fact that cuts it away
//     before the survivors go on. Reads and HW reads go last.
//   - The merged survivors' order, tried when some append may pad with
//     copies: the survivors' order with a chain going on over the copies
//     an append may pad with, and a branch that began at an earlier
//     instant where another now ends going on it (appends acknowledged
//     out of offset order), so that one epoch's lost appends are one
//     branch, cut away by one loss fact; an append there pads with its
//     copies where it stands.
//
// In all, truncations left unused go last, where they change nothing
// anyone reads, and appends still waiting at the end go in as in the
// run's order.
//
// Why it is exact: the order is only a candidate. contractWitness then
// checks that it is a linearization: every operation appears once,
// model.ContractStep accepts each in turn from the model's initial state,
// and it respects real time (an operation completing before another's
// invocation comes first), as porcupine requires. A history with a
// linearization is linearizable, so porcupine, which searches them all,
// would say so. When neither order is one, the witness says nothing and
// porcupine searches as before: a contract verdict can only
// move from unknown to permitted, by a linearization exhibited.

package checkers

import (
	"cmp"
	"math"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// contractWitness reports whether it found, and checked, a linearization
// of ops, one partition's contract-model history (see the file's header).
// hint gives, for an operation that never completes, the instant it most
// likely took effect at, or 0 for none (its invocation is used).
func contractWitness(ops []porcupine.Operation, hint func(*porcupine.Operation) int64) bool {
	ins, outs, ok := modelIO(ops) // linearizability_witness.go
	if !ok {
		return false
	}
	var truncs, rest []int
	copies := false // some append may pad with copies (model.Output.Copies)
	for i := range ops {
		in, out := ins[i], outs[i]
		switch in.Kind {
		case model.Truncate:
			truncs = append(truncs, i)
		case model.Append:
			if out.Unknown || out.Unobserved || out.Offset < 0 {
				return false
			}
			copies = copies || out.Copies > 0
			rest = append(rest, i)
		case model.Read, model.HighWatermark:
			rest = append(rest, i)
		default:
			return false
		}
	}
	at := make([]int64, len(ops)) // the instant each op is placed by
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
	slices.SortStableFunc(truncs, func(a, b int) int { return cmp.Compare(ops[a].Call, ops[b].Call) })
	w := contractOrder{ops: ops, ins: ins, outs: outs, truncs: truncs, copies: copies}
	if w.try(rest, at, false) || w.try(w.branches(rest, at, false), at, true) {
		return true
	}
	return w.copies && w.try(w.branches(rest, at, true), at, true)
}

// contractOrder is one partition's operations, as contractWitness builds
// candidate orders of them; truncs are the truncations, by fact time.
type contractOrder struct {
	ops    []porcupine.Operation
	ins    []model.Input
	outs   []model.Output
	truncs []int
	copies bool // some append may pad with copies (model.Output.Copies)
}

// branches builds the second candidate order, from the log the last read
// found (the survivors: each offset's append of the value read there; the
// other appends were lost). The lost appends are chained into branches by
// consecutive offsets, in the order of their instants; each branch is laid
// on the surviving log at its first offset and cut away before the
// survivors go on, branch by branch in offset order. Reads and HW reads go
// last, in the order of their instants. With merge (the third order), a
// chain also goes on over the copies an append may pad with
// (model.Output.Copies), and a branch that began at an earlier instant
// where another now ends goes on it: one epoch's lost appends, acknowledged
// out of offset order or above unobserved copies, are one branch, cut
// away by one loss fact.
func (w *contractOrder) branches(rest []int, at []int64, merge bool) []int {
	sorted := slices.Clone(rest)
	slices.SortStableFunc(sorted, func(a, b int) int { return cmp.Compare(at[a], at[b]) })
	final := map[int64]string{} // offset -> the value the last read there saw
	top := int64(-1)
	for _, i := range sorted {
		if w.ins[i].Kind == model.Read {
			for _, r := range w.outs[i].Records {
				final[r.Offset] = r.Value
				top = max(top, r.Offset)
			}
		}
	}
	survivor := map[int64]int{}
	var lost, reads []int
	for _, i := range sorted {
		if w.ins[i].Kind != model.Append {
			reads = append(reads, i)
			continue
		}
		o := w.outs[i].Offset
		if _, taken := survivor[o]; !taken && w.ins[i].Value == final[o] && o <= top {
			survivor[o] = i
		} else {
			lost = append(lost, i)
		}
	}
	type branch struct {
		base, next int64 // the first offset, and one past the last
		ops        []int
		merged     bool // into another branch
	}
	var bs []*branch
	open := map[int64]*branch{}   // the next offset of a branch -> the branch
	starts := map[int64]*branch{} // the first offset of a branch not merged -> the branch
	var most int64                // the most copies an append may pad with
	for _, i := range lost {
		most = max(most, w.outs[i].Copies)
	}
	// follows reports whether branch c may go on where a branch ends at
	// next: at its first offset, or below copies its first append may pad
	// with.
	follows := func(c *branch, next int64) bool {
		return c.base >= next && c.base-w.outs[c.ops[0]].Copies <= next
	}
	for _, i := range lost {
		o := w.outs[i].Offset
		from, b := o, open[o]
		// Merging: a branch ending below the copies o may pad with goes on
		// with it too.
		for j := o - 1; merge && b == nil && j >= max(o-w.outs[i].Copies, 0); j-- {
			from, b = j, open[j]
		}
		if b == nil {
			b = &branch{base: o}
			bs = append(bs, b)
			starts[o] = b
		} else {
			delete(open, from)
		}
		b.ops = append(b.ops, i)
		b.next = o + 1
		open[b.next] = b
		// Merging: a branch that began, at an earlier instant, where b now
		// ends (or above it, over copies) goes on b.
		for j := b.next; merge && j <= b.next+most; j++ {
			c := starts[j]
			if c == nil || c == b || !follows(c, b.next) {
				continue
			}
			delete(open, b.next)
			delete(starts, j)
			b.ops = append(b.ops, c.ops...)
			b.next, c.merged = c.next, true
			open[b.next] = b
			j = b.next - 1
		}
	}
	bs = slices.DeleteFunc(bs, func(b *branch) bool { return b.merged })
	slices.SortStableFunc(bs, func(a, b *branch) int { return cmp.Compare(a.base, b.base) })
	seq := make([]int, 0, len(rest))
	next := int64(0) // the next survivor's offset
	lay := func(to int64) {
		for ; next < to; next++ {
			if i, ok := survivor[next]; ok {
				seq = append(seq, i)
			}
		}
	}
	for _, b := range bs {
		lay(b.base)
		seq = append(seq, b.ops...)
	}
	lay(top + 1)
	return append(seq, reads...)
}

// try builds the greedy order of the file's header with the operations of
// rest placed by the instants at (or, given, in the order of rest), and
// reports whether it is a linearization.
func (w *contractOrder) try(rest []int, at []int64, given bool) bool {
	ops, ins, outs, truncs := w.ops, w.ins, w.outs, w.truncs
	if !given {
		rest = slices.Clone(rest)
		slices.SortStableFunc(rest, func(a, b int) int { return cmp.Compare(at[a], at[b]) })
	}
	state, _ := model.ContractModel().Init().(model.ContractState)
	seq := make([]int, 0, len(ops))
	placed := make([]bool, len(ops))
	byOffset := map[int64][]int{} // the appends of rest, by offset (for settle)
	for _, i := range rest {
		if w.copies && ins[i].Kind == model.Append {
			byOffset[outs[i].Offset] = append(byOffset[outs[i].Offset], i)
		}
	}
	take := func(i int) bool {
		ok, next := model.ContractStep(state, ins[i], outs[i])
		if ok {
			state = next
			seq = append(seq, i)
			placed[i] = true
		}
		return ok
	}
	used := make([]bool, len(truncs))
	// truncateFor takes the latest unused truncation dated by the instant
	// by that lets the log be cut to offset o; in a given order, which
	// says nothing of instants, the earliest one of any date.
	truncateFor := func(o, by int64) bool {
		for n := range truncs {
			k := len(truncs) - 1 - n
			if given {
				k = n
			}
			j := truncs[k]
			if used[k] || !given && ops[j].Call > by {
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
	nwaiting := 0
	// flush takes the appends waiting at the log's new end, in turn.
	flush := func() bool {
		for {
			q := waiting[state.Log.Len()]
			if len(q) == 0 {
				return true
			}
			if !take(q[0]) {
				return false
			}
			waiting[outs[q[0]].Offset] = q[1:]
			nwaiting--
		}
	}
	// deadline is when a waiting append must have taken effect: its
	// completion, or for one that never completes, the end.
	deadline := func(j int) int64 {
		if ops[j].Return == never {
			return math.MaxInt64 - 1
		}
		return at[j]
	}
	// filler reports whether an append not placed yet, invoked before
	// due, may still fill an offset in [from, to).
	filler := func(from, to, due int64) bool {
		fill := func(k int64) bool {
			for _, j := range byOffset[k] {
				if !placed[j] && ops[j].Call < due {
					return true
				}
			}
			return false
		}
		if to-from > int64(len(byOffset)) {
			for k := range byOffset {
				if k >= from && k < to && fill(k) {
					return true
				}
			}
			return false
		}
		for k := from; k < to; k++ {
			if fill(k) {
				return true
			}
		}
		return false
	}
	// settle places waiting appends while one is past its deadline (before
	// by) and no append not placed yet can fill the offsets below the
	// lowest waiting one in time: that one goes next, over copies of its
	// value nobody observed (model.Output.Copies) if it may, and the
	// appends waiting above it follow. An append it cannot place stays
	// waiting, as it would without it. It reports false when an append
	// waiting at the new end cannot be taken.
	settle := func(by int64) bool {
		for nwaiting > 0 {
			low, due := int64(math.MaxInt64), int64(math.MaxInt64)
			for o, q := range waiting {
				if len(q) == 0 {
					continue
				}
				low = min(low, o)
				for _, j := range q {
					due = min(due, deadline(j))
				}
			}
			if due >= by || filler(state.Log.Len(), low, due) || !take(waiting[low][0]) {
				return true
			}
			waiting[low] = waiting[low][1:]
			nwaiting--
			if !flush() {
				return false
			}
		}
		return true
	}
	for _, i := range rest {
		if w.copies && !given && !settle(at[i]) {
			return false
		}
		switch ins[i].Kind {
		case model.Read:
			if !take(i) {
				return false
			}
			continue
		case model.HighWatermark: // a log longer than the HW read must be cut to it first
			if !take(i) && !(truncateFor(outs[i].HighWatermark, at[i]) && take(i)) {
				return false
			}
			continue
		}
		o := outs[i].Offset
		// In a given order, an append that may pad with copies up to its
		// offset takes effect where it stands.
		if o > state.Log.Len() && !(given && o-outs[i].Copies <= state.Log.Len()) {
			waiting[o] = append(waiting[o], i)
			nwaiting++
			continue
		}
		if !take(i) && !(truncateFor(o, at[i]) && take(i)) {
			return false
		}
		if !flush() {
			return false
		}
	}
	if w.copies && !settle(math.MaxInt64) {
		return false
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
