// linearizability_contract.go: the second half of the linearizability
// checker — is a strict violation one that Kafka's contract permits?
//
// What it checks: a partition whose history the strict log model rejects is
// checked again against model.ContractModel, with the strict operations
// plus exactly what the facts of the run permit (contract.go):
//   - one Truncate per loss fact of the partition (an unclean election, an
//     acks=1 leader failure, the whole ISR down with one member losing
//     unflushed data), invoked at the fact's time, that may remove a suffix
//     of the committed log made of the values the fact excuses (the sends
//     invoked at or before it; for a leader failure only its acks<=1 sends);
//   - for a producer that may write a record twice (retries without
//     idempotence), one more append of the value at each other offset a
//     poll saw it at or the final committed log holds it at, which may or
//     may not have happened; and, where the witness finds no linearization
//     without them, unobserved earlier copies of its value below an
//     acknowledged append, at offsets a loss fact may later free
//     (linearizability_copies.go).
//
// Strict fails and contract holds: permitted, naming the facts. Both fail:
// a protocol bug. The contract check out of budget: unknown, never either.
//
// What it simplifies: the contract history names every fact of the
// partition, not only those the linearization used.
//
// How it stays cheap: porcupine searches the contract history with each
// known-offset append's invocation moved to where the model first lets it
// take effect (narrowContract: the same linearizations, so the same
// verdict); as recorded, a swarm partition's sends invoked during an
// outage and acknowledged after it are all tried at every step, ~120 model
// steps per operation where narrowed it takes one.

package checkers

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// contractCheck runs the contract model on ops, the strict porcupine
// history of partition key. decided is false when the budget ran out; why
// is the evidence.
func contractCheck(h History, con *contract, key model.Key, ops []porcupine.Operation, left time.Duration) (permitted bool, why string, decided bool) {
	k := tp{key.Topic, key.Partition}
	extra, facts := contractOps(h, con, k)
	if len(extra) == 0 {
		return false, "not permitted: no fact of the run permits a loss, a rewrite or a duplicate on " + k.String(), true
	}
	all := append(append([]porcupine.Operation(nil), ops...), extra...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Call < all[j].Call })
	allowed := func() string {
		if len(facts) > 4 {
			return strings.Join(facts[:3], "; ") + "; … (" + strconv.Itoa(len(facts)) + " facts in all)"
		}
		return strings.Join(facts, "; ")
	}
	// An exhibited linearization first (linearizability_contract_witness.go),
	// whatever is left of the budget: it reads no clock. An acks=1 send most
	// likely took effect by its acknowledgement.
	acked := func(op *porcupine.Operation) int64 {
		if i, ok := op.Metadata.(int); ok && i >= 0 && i < len(h.Ops) {
			return int64(h.Ops[i].Complete)
		}
		return 0
	}
	if contractWitness(all, acked) {
		return true, "permitted: the contract model linearizes it when it allows " + allowed(), true
	}
	// Then with the unobserved copies a retrying producer may have left
	// where a loss later freed the offset (markCopies). They only add
	// linearizations, so they are named only when the witness above found
	// none without them.
	if n := markCopies(h, all); n > 0 {
		sends := " sends"
		if n == 1 {
			sends = " send"
		}
		facts = append(facts, "unobserved earlier copies of "+strconv.Itoa(n)+sends+" by producers that retry without idempotence, at offsets a loss fact freed")
		if contractWitness(all, acked) {
			return true, "permitted: the contract model linearizes it when it allows " + allowed(), true
		}
	}
	if left <= 0 {
		return false, "was not checked (budget spent)", false
	}
	// NB: not CheckOperationsVerbose: the verdict is all this needs, and
	// the verbose search, the same search, also copies its stack at every
	// backtrack to keep the longest partial linearizations.
	// The narrowed history has the same linearizations (narrowContract).
	res := porcupine.CheckOperationsTimeout(contractModel, narrowContract(all), left)
	switch res {
	case porcupine.Ok:
		return true, "permitted: the contract model linearizes it when it allows " + allowed(), true
	case porcupine.Illegal:
		return false, "not permitted: the contract model does not linearize it either, though it allows " + allowed(), true
	}
	return false, "ran out of its budget", false
}

// contractModel is the contract model without partitioning (the checker
// partitions itself).
var contractModel = func() porcupine.Model {
	m := model.ContractModel()
	m.Partition = nil
	return m
}()

// contractOps returns what the contract adds to partition k's history, and
// the facts that permit it, in time order.
func contractOps(h History, con *contract, k tp) ([]porcupine.Operation, []string) {
	clients := clientIDs(h)
	key := model.Key{Topic: k.topic, Partition: k.partition}
	var sends []*Op                  // NB: pointers into h.Ops: an Op is large to copy
	seen := make(map[string][]int64) // value -> offsets polls saw it at
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Partition != k.partition || op.Topic != k.topic {
			continue
		}
		switch {
		case op.Kind == Send && op.Outcome != Fail:
			sends = append(sends, op)
		case op.Kind == Poll && (op.Outcome == OK || op.Outcome == Info):
			for _, r := range op.Records {
				if !containsOffset(seen[r.Value], r.Offset) {
					seen[r.Value] = append(seen[r.Value], r.Offset)
				}
			}
		}
	}
	for _, e := range con.committed[k] {
		if !containsOffset(seen[e.Value], e.Offset) {
			seen[e.Value] = append(seen[e.Value], e.Offset)
		}
	}
	var out []porcupine.Operation
	var facts []string
	for i, lf := range con.lossFacts(k) {
		excused := map[string]bool{}
		for _, op := range sends {
			if lf.excuses(*op) {
				excused[op.Value] = true
			}
		}
		if len(excused) == 0 {
			continue
		}
		facts = append(facts, strings.TrimPrefix(lf.why, "permitted: "))
		out = append(out, porcupine.Operation{ClientId: len(clients) + i, Call: int64(lf.time), Return: never,
			Input:    model.Input{Key: key, Kind: model.Truncate, Value: strings.TrimPrefix(lf.why, "permitted: "), Excused: excused},
			Output:   model.Output{},
			Metadata: "loss fact"})
	}
	dups := 0
	retries := make(map[string]bool) // by process: may it write a record twice (duplicateExcuse, asked once)
	for _, op := range sends {
		ok, asked := retries[op.Process]
		if !asked {
			_, ok = duplicateExcuse(h, op.Process)
			retries[op.Process] = ok
		}
		if !ok {
			continue
		}
		for _, off := range seen[op.Value] {
			if op.Outcome == OK && off == op.Offset {
				continue
			}
			dups++
			out = append(out, porcupine.Operation{ClientId: clients[op.Process], Call: int64(op.Invoke), Return: never,
				Input:    model.Input{Key: key, Kind: model.Append, Value: op.Value},
				Output:   model.Output{Offset: off},
				Metadata: op.Index})
		}
	}
	if dups > 0 {
		facts = append(facts, strconv.Itoa(dups)+" duplicate appends by producers that retry without idempotence")
	}
	return out, facts
}

// narrowContract returns a copy of ops, a contract-model history, with
// each known-offset append invoked no earlier than the model lets it take
// effect, and the times renamed so that appends invoked at one time are
// tried in offset order (reorder); or ops itself when no invocation moves.
//
// Why it is exact: an append at offset o with c copies (Output.Copies)
// takes effect on a log at least o-c long (ContractStep: floor <= o and
// o-c <= Len), whose entry at each offset k < o-c was put there by an
// append that took effect at k, earlier in the linearization: one at
// offset k, one whose copies cover k, one of unknown outcome, or an
// unobserved one with k a gap or past its tail. So it takes effect no
// earlier than L(o-c), the latest over k < o-c of the earliest invocation
// of such an append, and it moves there (never past its completion). The
// real-time orders this adds (an operation completing before L(o-c) now
// precedes the append) already follow: that operation precedes every
// append that can fill the offset of L(o-c), which precedes the append. A
// truncation makes offsets reusable but changes none of this; completions
// do not move, as an append at a higher offset may take effect first and
// be truncated away. So the narrowed history has exactly the
// linearizations of the original, and porcupine's verdict on it is the
// verdict on the original.
func narrowContract(ops []porcupine.Operation) []porcupine.Operation {
	top := int64(-1)
	for i := range ops {
		if in := ops[i].Input.(model.Input); in.Kind == model.Append {
			if out := ops[i].Output.(model.Output); !out.Unknown {
				if out.Offset < 0 {
					return ops
				}
				top = max(top, out.Offset)
			}
		}
	}
	if top < 1 || top > int64(4*len(ops)+64) {
		return ops // nothing to move, or offsets too sparse for dense tables
	}
	// first[k]: the earliest invocation of an append that can take effect
	// at offset k; tailFirst[t], of the unobserved ones with Tail t (and
	// unknown ones, at 0), which can take effect at any k >= t.
	const none = int64(math.MaxInt64)
	first, tailFirst := make([]int64, top+1), make([]int64, top+2)
	for k := range tailFirst {
		tailFirst[k] = none
	}
	copy(first, tailFirst)
	paintCopies(ops, first)
	for i := range ops {
		if in := ops[i].Input.(model.Input); in.Kind != model.Append {
			continue
		}
		c := ops[i].Call
		switch out := ops[i].Output.(model.Output); {
		case out.Unobserved:
			for _, g := range out.Gaps {
				if g >= 0 && g <= top {
					first[g] = min(first[g], c)
				}
			}
			t := min(max(out.Tail, 0), top+1)
			tailFirst[t] = min(tailFirst[t], c)
		case out.Unknown:
			tailFirst[0] = min(tailFirst[0], c)
		default:
			first[out.Offset] = min(first[out.Offset], c)
		}
	}
	tail := none
	for k := range first {
		tail = min(tail, tailFirst[k])
		first[k] = min(first[k], tail)
	}
	// bound[o] = L(o), the latest first[k] for k < o.
	bound := make([]int64, top+1)
	bound[0] = math.MinInt64
	for o := 1; o <= int(top); o++ {
		bound[o] = max(bound[o-1], first[o-1])
	}
	var out []porcupine.Operation
	key := make([]int64, len(ops)) // each known-offset append's offset; the others first
	for i := range ops {
		key[i] = -1
		in, o := ops[i].Input.(model.Input), ops[i].Output.(model.Output)
		if in.Kind != model.Append || o.Unknown {
			continue
		}
		key[i] = o.Offset
		if c := min(bound[max(o.Offset-o.Copies, 0)], ops[i].Return); c > ops[i].Call {
			if out == nil {
				out = slices.Clone(ops)
			}
			out[i].Call = c
		}
	}
	if out == nil {
		return ops
	}
	reorder(out, key)
	return out
}

// paintCopies lowers first[k], for each offset k below an append's offset
// that its copies may fill (Output.Copies), to the earliest invocation of
// such an append. Each offset is painted once, by the earliest append
// covering it (the appends taken in invocation order, the painted offsets
// skipped through next).
func paintCopies(ops []porcupine.Operation, first []int64) {
	type span struct{ lo, hi, call int64 }
	var spans []span
	for i := range ops {
		if in := ops[i].Input.(model.Input); in.Kind != model.Append {
			continue
		}
		if out := ops[i].Output.(model.Output); !out.Unknown && !out.Unobserved && out.Copies > 0 {
			spans = append(spans, span{max(out.Offset-out.Copies, 0), out.Offset - 1, ops[i].Call})
		}
	}
	if len(spans) == 0 {
		return
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.call, b.call) })
	next := make([]int64, len(first)+1) // next[k]: the lowest offset >= k not painted yet (once compressed)
	for k := range next {
		next[k] = int64(k)
	}
	find := func(k int64) int64 {
		r := k
		for next[r] != r {
			r = next[r]
		}
		for next[k] != r {
			next[k], k = r, next[k]
		}
		return r
	}
	for _, sp := range spans {
		for k := find(sp.lo); k <= sp.hi; k = find(k) {
			first[k] = min(first[k], sp.call)
			next[k] = k + 1
		}
	}
}
