// linearizability_copies.go: where the contract model lets an append sit
// above unobserved earlier copies of its own value.
//
// Why: a producer that retries without idempotence may have written a
// record at every attempt (contract.go: it may write a record twice), and
// a copy nobody read leaves no trace in the history. Where a loss fact
// later frees its offset and another record takes it, the offset is named
// by that record alone, so neither a gap nor an append of unknown outcome
// can explain what the log held there before the loss. In swarm (seed 5,
// kip279-safe, inter.broker.protocol.version=2.7) sends rejected with
// NOT_ENOUGH_REPLICAS_AFTER_APPEND or timed out left their first copies
// in the log and were acknowledged at their retries' offsets; every ISR
// member then went down at once, b1 came back with a log cut below them
// and was elected, and the offsets were written again. The contract model
// could not place the acknowledged sends above the copies, and called the
// run "contract broken" although every loss in it was permitted.
//
// What it marks (model.Output.Copies): an append X at offset o, by a
// producer that may write a record twice, whose value some loss fact's
// truncation excuses (the earliest at time T), may take effect on a log
// as short as o-c, over c copies of its value, c as large as no offset in
// [o-c, o) is blocked. An offset k is blocked when an operation naming a
// value v there (an append at k, a read of k) completes before T, and no
// truncation excusing v is invoked by X's completion. Why no blocked
// offset can hold a copy in any linearization: a copy at k sits below X,
// so it leaves the log only by a cut below X, after a truncation that
// excuses X, which comes after T; an operation naming k either comes
// after that (so completes at or after T) or before X, and then v was cut
// away before X padded over k, by a truncation excusing v that X does not
// precede (invoked by X's completion). So marking only the offsets not
// blocked loses no linearization (property-tested against copies allowed
// at every offset), and the search stays where it was outside the offsets
// a loss reuses.
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
	// Each value an operation names at an offset: when it completes, and
	// the earliest truncation that may cut it away.
	type naming struct{ off, ret, freed int64 }
	var names []naming
	for i := range ops {
		switch in, out := ops[i].Input.(model.Input), ops[i].Output.(model.Output); in.Kind {
		case model.Append:
			if !out.Unknown && !out.Unobserved && ops[i].Return != never {
				names = append(names, naming{out.Offset, ops[i].Return, freed(in.Value)})
			}
		case model.Read:
			if ops[i].Return != never {
				for _, r := range out.Records {
					names = append(names, naming{r.Offset, ops[i].Return, freed(r.Value)})
				}
			}
		}
	}
	// blocked[{T, R}]: the offsets, sorted, blocked for an append excused
	// from T on whose completion follows exactly the truncations invoked
	// by R (the latest of them, or MinInt64).
	type key struct{ t, r int64 }
	blocked := map[key][]int64{}
	blockedFor := func(k key) []int64 {
		if b, ok := blocked[k]; ok {
			return b
		}
		var b []int64
		for _, n := range names {
			if n.ret < k.t && n.freed > k.r {
				b = append(b, n.off)
			}
		}
		slices.Sort(b)
		b = slices.Compact(b)
		blocked[k] = b
		return b
	}
	var marked []int
	for i := range ops {
		in, out := ops[i].Input.(model.Input), ops[i].Output.(model.Output)
		if in.Kind != model.Append || out.Unknown || out.Unobserved || out.Offset <= 0 {
			continue
		}
		t := freed(in.Value)
		if t == math.MaxInt64 || !may(i) {
			continue
		}
		r := int64(math.MinInt64)
		if x := sort.Search(len(truncs), func(x int) bool { return truncs[x] > ops[i].Return }); x > 0 {
			r = truncs[x-1]
		}
		b := blockedFor(key{t, r})
		from := int64(0) // one past the highest blocked offset below X's
		if x := sort.Search(len(b), func(x int) bool { return b[x] >= out.Offset }); x > 0 {
			from = b[x-1] + 1
		}
		if from < out.Offset {
			out.Copies = out.Offset - from
			ops[i].Output = out
			marked = append(marked, i)
		}
	}
	return marked
}
