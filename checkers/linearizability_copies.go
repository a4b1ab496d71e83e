// linearizability_copies.go: where the contract model lets an append sit
// above unobserved earlier copies of its own value.
//
// Why: a producer that retries without idempotence may have written a
// record at every attempt (contract.go: it may write a record twice), and
// a copy nobody read leaves no trace in the history. Where a loss fact
// later frees its offset and another record takes it, the offset is named
// by that record alone, so neither a gap nor an append of unknown outcome
// can explain what the log held there before the loss. In swarm (seed 5,
// kip279-safe, inter.broker.protocol.version=2.7) sends whose first
// attempts were appended and then answered with an error
// (NOT_LEADER_FOR_PARTITION after a leader change,
// NOT_ENOUGH_REPLICAS_AFTER_APPEND after an ISR shrink) left those copies
// in the log and were acknowledged at their retries' offsets; every ISR
// member then went down at once, b1 came back with a log cut below them
// and was elected, and the offsets were written again. The contract model
// could not place the acknowledged sends above the copies, and called the
// run "contract broken" although every loss in it was permitted.
//
// What it marks (model.Output.Copies): an append X of value x at offset
// o, by a producer that may write a record twice, whose value some loss
// fact's truncation excuses (the earliest invoked at T), may take effect
// on a log as short as o-c, over c copies of x, c as large as no offset
// in [o-c, o) is blocked. A copy at k sits below X, so it leaves the log
// only with X, by a cut after a truncation that excuses X (invoked at or
// after T); an operation naming a value v at k (an append at k, a read of
// k) comes either before X, and then v was cut away before X padded over
// k, or after that cut. So k is blocked by an operation naming v there
// that can do neither:
//   - it cannot come before X with v cut away first: it is invoked after
//     X completes, or no truncation excusing v is invoked by then;
//   - and it cannot come after the cut: it completes before T, or it is a
//     read and every append that may put v at k again (at k, or of
//     unknown outcome) completes before T.
//
// And a read invoked after X completes that finds x at o, where no other
// append may put x, finds X still there, so the copies too: every offset
// it names below o is blocked (a final read's, every one). Marking only
// the offsets not blocked loses no linearization (property-tested against
// copies allowed at every offset), and the search stays where it was
// outside the offsets a loss reuses.
//
// What it simplifies: an append whose value no truncation excuses gets no
// copies (they could only sit where nothing is ever read: a final read
// sees every committed offset).

package checkers

import (
	"math"
	"slices"
	"sort"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// markCopies sets model.Output.Copies on the appends of ops, partition
// k's contract history, by producers that may write a record twice
// (duplicateExcuse), and returns how many sends it marked.
func markCopies(h History, ops []porcupine.Operation) int {
	retries := make(map[string]bool) // by process: may it write a record twice
	sendOf := func(i int) (int, bool) {
		j, ok := ops[i].Metadata.(int)
		if !ok || j < 0 || j >= len(h.Ops) {
			return 0, false
		}
		p := h.Ops[j].Process
		may, asked := retries[p]
		if !asked {
			_, may = duplicateExcuse(h, p)
			retries[p] = may
		}
		return j, may
	}
	marked := map[int]bool{} // the sends marked, by history index
	for _, i := range copiesBelow(ops, func(i int) bool { _, may := sendOf(i); return may }) {
		j, _ := sendOf(i)
		marked[j] = true
	}
	return len(marked)
}

// copiesBelow sets model.Output.Copies on the known-offset appends i of
// ops, a contract-model history, for which may(i) holds (see the file's
// header), and returns their positions.
func copiesBelow(ops []porcupine.Operation, may func(i int) bool) []int {
	// The truncations, by invocation; freedAt[v]: the earliest that
	// excuses value v.
	var truncs []int64
	freedAt := map[string]int64{}
	for i := range ops {
		in := ops[i].Input.(model.Input)
		if in.Kind != model.Truncate {
			continue
		}
		truncs = append(truncs, ops[i].Call)
		for v := range in.Excused {
			if t, ok := freedAt[v]; !ok || ops[i].Call < t {
				freedAt[v] = ops[i].Call
			}
		}
	}
	if len(truncs) == 0 {
		return nil
	}
	slices.Sort(truncs)
	freed := func(v string) int64 {
		if t, ok := freedAt[v]; ok {
			return t
		}
		return math.MaxInt64
	}
	// What each offset k is named by (NB: by offset, so that a record
	// costs one map lookup by number and a few string comparisons).
	type naming struct {
		call int64 // when the operation is invoked
		// after: the latest it may come after a truncation (its completion;
		// for a read, no later than an append may put the value there again)
		after int64
		freed int64 // the earliest truncation that may cut the value away
	}
	type appended struct {
		v      string
		ret    int64 // the latest completion of an append of v at k
		n      int   // how many
		cand   bool  // a candidate's value
		readBy []int // the reads that found v at k (a candidate's only)
	}
	type offset struct {
		names    []naming
		appended []appended
	}
	at := map[int64]*offset{}
	off := func(k int64) *offset {
		o := at[k]
		if o == nil {
			o = &offset{}
			at[k] = o
		}
		return o
	}
	find := func(o *offset, v string) *appended {
		for j := range o.appended {
			if o.appended[j].v == v {
				return &o.appended[j]
			}
		}
		return nil
	}
	anyOffset := map[string]int64{} // the latest completion of an append of v of unknown outcome
	var cands []int                 // known-offset appends above 0 that may have copies, their value excused
	for i := range ops {
		in, out := ops[i].Input.(model.Input), ops[i].Output.(model.Output)
		switch {
		case in.Kind != model.Append || out.Unobserved:
		case out.Unknown:
			anyOffset[in.Value] = max(anyOffset[in.Value], ops[i].Return)
		default:
			o := off(out.Offset)
			a := find(o, in.Value)
			if a == nil {
				o.appended = append(o.appended, appended{v: in.Value, ret: ops[i].Return})
				a = &o.appended[len(o.appended)-1]
			}
			a.ret, a.n = max(a.ret, ops[i].Return), a.n+1
			o.names = append(o.names, naming{ops[i].Call, ops[i].Return, freed(in.Value)})
			if out.Offset > 0 && freed(in.Value) != math.MaxInt64 && may(i) {
				a.cand = true
				cands = append(cands, i)
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	// readOffsets[i]: the offsets read i found, sorted (for the reads that
	// found a candidate's value at its offset).
	readOffsets := map[int][]int64{}
	for i := range ops {
		if in := ops[i].Input.(model.Input); in.Kind != model.Read {
			continue
		}
		recs := ops[i].Output.(model.Output).Records
		for _, r := range recs {
			o := off(r.Offset)
			again := int64(math.MinInt64)
			a := find(o, r.Value)
			if a != nil {
				again = a.ret
			}
			if u, unknown := anyOffset[r.Value]; unknown {
				again = max(again, u)
			}
			o.names = append(o.names, naming{ops[i].Call, min(ops[i].Return, again), freed(r.Value)})
			if a != nil && a.cand {
				a.readBy = append(a.readBy, i)
				if readOffsets[i] == nil {
					offs := make([]int64, len(recs))
					for j, r := range recs {
						offs[j] = r.Offset
					}
					slices.Sort(offs)
					readOffsets[i] = offs
				}
			}
		}
	}
	named := make([]int64, 0, len(at))
	for k := range at {
		named = append(named, k)
	}
	slices.Sort(named)
	var marked []int
	for _, i := range cands {
		in, out := ops[i].Input.(model.Input), ops[i].Output.(model.Output)
		t := freed(in.Value)
		// r: the latest truncation X may follow (invoked by its completion).
		r := int64(math.MinInt64)
		if x := sort.Search(len(truncs), func(x int) bool { return truncs[x] > ops[i].Return }); x > 0 {
			r = truncs[x-1]
		}
		// An operation naming v at k blocks a copy there unless it may come
		// before X, with v cut away before X pads over k, or after the cut
		// that removes the copy.
		blocks := func(n naming) bool {
			return !(n.call <= ops[i].Return && n.freed <= r) && n.after < t
		}
		from := int64(0) // one past the highest blocked offset below X's
		// A read that comes after X and finds X's record, which no other
		// append can put there, finds the copies below it too: every
		// offset it names below X's is blocked (a final read's, all).
		if _, unknown := anyOffset[in.Value]; !unknown {
			if a := find(at[out.Offset], in.Value); a.n == 1 {
				for _, j := range a.readBy {
					if ops[j].Call <= ops[i].Return {
						continue
					}
					offs := readOffsets[j]
					if x := sort.Search(len(offs), func(x int) bool { return offs[x] >= out.Offset }); x > 0 {
						from = max(from, offs[x-1]+1)
					}
				}
			}
		}
		for x := sort.Search(len(named), func(x int) bool { return named[x] >= out.Offset }) - 1; x >= 0 && named[x] >= from; x-- {
			if slices.ContainsFunc(at[named[x]].names, blocks) {
				from = named[x] + 1
				break
			}
		}
		if from < out.Offset {
			out.Copies = out.Offset - from
			ops[i].Output = out
			marked = append(marked, i)
		}
	}
	return marked
}
