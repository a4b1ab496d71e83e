// linearizability.go: the linearizability checker (porcupine over the
// partition-log model of package model).
//
// What it checks: that each partition's operations (sends, polls, HW reads)
// could have taken effect one at a time, each between its invocation and its
// completion, on a single committed log (model.Step says what is legal).
//
// How a history becomes porcupine operations:
//   - Send ok with acks=-1: append acknowledged at Offset, completing at
//     Complete (Kafka acknowledges acks=all once the HW passes the record).
//   - Send ok with acks=1 or 0: append at Offset with an infinite completion
//     time: the acknowledgement comes before the record is committed.
//   - Send info (or pending): if its value was seen by a poll, at exactly one
//     offset, it is resolved to an append at that offset; otherwise it is an
//     append with an unknown outcome. Both get an infinite completion time
//     (it may take effect any time after its invocation, or never).
//     An unresolved one can only matter by filling a gap: an offset below
//     the highest offset any operation names (or implies, by an HW read) that
//     no acked, resolved or read value names. At a named offset it would
//     contradict the operation naming it; past them all it constrains
//     nothing. So unresolved sends are dropped when there is no gap, and
//     otherwise marked model.Output.Unobserved with the gaps, which keeps
//     porcupine from trying each at every offset (the search would be
//     exponential in their number).
//   - Send fail: dropped (certainly not applied).
//   - Poll ok: a read of its records. Poll info with records: a read with an
//     infinite completion time (Jepsen: pollers always emit safe data).
//     Polls that saw nothing are dropped: an empty read is always legal.
//   - ReadHW ok: an HW read. Anything else is dropped.
//
// What it simplifies: partitions are checked one after the other, each with
// what is left of the wall-time budget; past it the verdict is Unknown, never
// OK. The budget is the only wall-clock input of the checkers, so only an
// Unknown verdict can differ between two runs of one seed.

package checkers

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// DefaultBudget is porcupine's wall-time budget when none is given.
const DefaultBudget = 10 * time.Second

// never is the completion time of operations that may take effect at any
// time after their invocation.
const never = math.MaxInt64

// Linearizability checks h against the partition-log model with porcupine,
// within budget of wall time (0 means DefaultBudget). A partition the strict
// model finds non-linearizable is checked again against the contract model
// (linearizability_contract.go), with the facts of f: if that one holds,
// the violation is Permitted.
func Linearizability(h History, f Final, budget time.Duration) Verdict {
	return linearizability(h, f, budget, newContract(f))
}

// linearizability is Linearizability with the run's contract given (CheckAll builds one for all).
func linearizability(h History, f Final, budget time.Duration, con *contract) Verdict {
	if budget <= 0 {
		budget = DefaultBudget
	}
	parts, keys, notes := porcupineHistory(h)
	m := model.Model()
	single := m
	single.Partition = nil
	ev := &PorcupineEvidence{Model: m}
	var anomalies []Anomaly
	unknown := false
	start := time.Now()
	for i, ops := range parts {
		left := budget - time.Since(start)
		if left <= 0 {
			unknown = true
			ev.Partitions = append(ev.Partitions, PartitionEvidence{Topic: keys[i].Topic, Partition: keys[i].Partition, Result: ResultUnknown, Ops: len(ops)})
			notes = append(notes, keys[i].String()+": not checked, budget spent")
			continue
		}
		pe := PartitionEvidence{Topic: keys[i].Topic, Partition: keys[i].Partition, Ops: len(ops), model: single, ops: ops}
		res, info := checkPartition(single, ops, left, &pe)
		switch res {
		case porcupine.Ok:
			pe.Result = ResultOK
		case porcupine.Illegal:
			a := explainIllegal(keys[i], ops, info)
			// The contract check gets a fair share of what is left, so one
			// partition cannot spend the others' budget.
			share := (budget - time.Since(start)) / time.Duration(len(parts)-i)
			switch permitted, why, decided := contractCheck(h, con, keys[i], ops, share); {
			case !decided:
				pe.Result = ResultUnknown
				unknown = true
				notes = append(notes, keys[i].String()+": the strict log model fails ("+a.Description+"), and the contract model "+why+
					": whether Kafka's contract permits it is unknown")
			default:
				pe.Result = ResultViolation
				a.Permitted = permitted
				a.Description += "; " + why
				anomalies = append(anomalies, a)
			}
		default:
			pe.Result = ResultUnknown
			unknown = true
			notes = append(notes, keys[i].String()+": porcupine ran out of its "+budget.String()+" budget")
		}
		ev.Partitions = append(ev.Partitions, pe)
	}
	ev.Elapsed = time.Since(start)
	v := verdict(NameLinearizability, anomalies, unknown, notes...)
	v.Porcupine = ev
	return v
}

// checkPartition runs porcupine on one partition's ops within budget.
// A linearizable partition is judged on its narrowed history
// (linearizability_narrow.go), which has the same linearizations and is far
// cheaper to search; porcupine's info on the history as recorded is then
// computed when first asked for (PartitionEvidence.Info). Any other
// partition is judged, as before narrowing, by porcupine's search of the
// history as recorded, whose partial linearizations (the info returned)
// explain the violation (explainIllegal); the search runs with the
// invocations postponed (linearizability_postpone.go), which takes the same
// path with fewer failing tries, and its info is kept for drawing only when
// nothing moved.
func checkPartition(m porcupine.Model, ops []porcupine.Operation, budget time.Duration, pe *PartitionEvidence) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	start := time.Now()
	if n := narrow(ops); len(ops) > 0 && &n[0] != &ops[0] {
		if porcupine.CheckOperationsTimeout(m, n, budget) == porcupine.Ok {
			return porcupine.Ok, porcupine.LinearizationInfo{}
		}
		budget = max(budget-time.Since(start), time.Millisecond)
	}
	p := postpone(ops)
	res, info := porcupine.CheckOperationsVerbose(m, p, budget)
	if len(p) == 0 || &p[0] == &ops[0] {
		pe.info = &info
	}
	return res, info
}

// porcupineHistory turns h into one porcupine history per partition, in
// topic-partition order, with notes on what was dropped.
func porcupineHistory(h History) ([][]porcupine.Operation, []model.Key, []string) {
	clients := clientIDs(h)
	// seen maps a value to the offsets polls saw it at, per partition.
	// NB: the loops take each op by pointer and look its partition's maps
	// up once, not once per record: an Op is large, and hashing a tp
	// hashes its topic name.
	seen := make(map[tp]map[string][]int64)
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != Poll || (op.Outcome != OK && op.Outcome != Info) {
			continue
		}
		k := tp{op.Topic, op.Partition}
		sk := seen[k]
		if sk == nil {
			sk = make(map[string][]int64)
			seen[k] = sk
		}
		for _, r := range op.Records {
			if offs := sk[r.Value]; !containsOffset(offs, r.Offset) {
				sk[r.Value] = append(offs, r.Offset)
			}
		}
	}
	type pending struct {
		op  porcupine.Operation
		key tp
	}
	n := 0 // NB: ops gets room for every op it may take, at once
	for i := range h.Ops {
		if k := h.Ops[i].Kind; k == Send || k == Poll || k == ReadHW {
			n++
		}
	}
	ops := make([]porcupine.Operation, 0, n)
	var unresolved []pending
	named := make(map[tp]map[int64]bool) // offsets named by a value
	need := make(map[tp]int64)           // one past the highest offset named or implied
	// namedIn returns k's named offsets; the caller raises need[k] to one
	// past the highest offset it marks.
	namedIn := func(k tp) map[int64]bool {
		nk := named[k]
		if nk == nil {
			nk = make(map[int64]bool)
			named[k] = nk
		}
		return nk
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != Send && op.Kind != Poll && op.Kind != ReadHW {
			continue // NB: before the boxing below, which allocates
		}
		k := tp{op.Topic, op.Partition}
		key := model.Key{Topic: op.Topic, Partition: op.Partition}
		pop := porcupine.Operation{ClientId: clients[op.Process], Call: int64(op.Invoke), Return: int64(op.Complete), Metadata: op.Index}
		switch op.Kind {
		case Send:
			pop.Input = model.Input{Key: key, Kind: model.Append, Value: op.Value}
			switch op.Outcome {
			case OK:
				pop.Output = model.Output{Offset: op.Offset}
				if op.Acks != -1 {
					pop.Return = never
				}
				namedIn(k)[op.Offset] = true
				if op.Offset+1 > need[k] {
					need[k] = op.Offset + 1
				}
			case Info, Pending:
				pop.Return = never
				if offs := seen[k][op.Value]; len(offs) == 1 {
					pop.Output = model.Output{Offset: offs[0]}
				} else {
					pop.Output = model.Output{Unknown: true}
					unresolved = append(unresolved, pending{pop, k})
					continue
				}
			default:
				continue
			}
		case Poll:
			// An empty read is always legal: it constrains nothing.
			if len(op.Records) == 0 || (op.Outcome != OK && op.Outcome != Info) {
				continue
			}
			if op.Outcome != OK {
				pop.Return = never
			}
			recs := make([]model.Record, len(op.Records))
			nk, top := namedIn(k), need[k]
			for i, r := range op.Records {
				recs[i] = model.Record{Offset: r.Offset, Value: r.Value}
				nk[r.Offset] = true
				top = max(top, r.Offset+1)
			}
			if top > need[k] { // NB: as marking one at a time would: unset while no offset+1 exceeds 0
				need[k] = top
			}
			pop.Input = model.Input{Key: key, Kind: model.Read, Offset: op.FetchOffset}
			pop.Output = model.Output{Records: recs}
		case ReadHW:
			if op.Outcome != OK {
				continue
			}
			pop.Input = model.Input{Key: key, Kind: model.HighWatermark}
			pop.Output = model.Output{HighWatermark: op.HighWatermark}
			if op.HighWatermark > need[k] {
				need[k] = op.HighWatermark
			}
		default:
			continue
		}
		if pop.Return < pop.Call {
			pop.Return = pop.Call
		}
		ops = append(ops, pop)
	}
	var notes []string
	dropped := make(map[tp]int)
	gaps := make(map[tp][]int64)
	for k, n := range need {
		for off := int64(0); off < n; off++ {
			if !named[k][off] {
				gaps[k] = append(gaps[k], off)
			}
		}
	}
	for _, u := range unresolved {
		if g := gaps[u.key]; len(g) > 0 {
			u.op.Output = model.Output{Unknown: true, Unobserved: true, Gaps: g, Tail: need[u.key]}
			ops = append(ops, u.op)
		} else {
			dropped[u.key]++
		}
	}
	for _, k := range sortedTPs(dropped) {
		notes = append(notes, k.String()+": "+strconv.Itoa(dropped[k])+" unobserved sends of unknown outcome cannot fill a gap and were left out")
	}
	// Keep each partition in history order (porcupine sorts by time itself).
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Metadata.(int) < ops[j].Metadata.(int) })
	return model.Partition(ops), model.PartitionKeys(ops), notes
}

// clientIDs numbers the processes of h from 0, in name order.
func clientIDs(h History) map[string]int {
	var names []string
	ids := make(map[string]int)
	for _, op := range h.Ops {
		if _, ok := ids[op.Process]; !ok {
			ids[op.Process] = 0
			names = append(names, op.Process)
		}
	}
	sort.Strings(names)
	for i, n := range names {
		ids[n] = i
	}
	return ids
}

func containsOffset(offs []int64, o int64) bool {
	for _, x := range offs {
		if x == o {
			return true
		}
	}
	return false
}

// explainIllegal turns porcupine's partial linearizations of a
// non-linearizable partition into an anomaly: the longest linearizable
// prefix (the smallest one in id order among the longest, so the evidence
// is deterministic), the state it reaches, and the operations that could not
// follow it, earliest completion first.
func explainIllegal(k model.Key, ops []porcupine.Operation, info porcupine.LinearizationInfo) Anomaly {
	var best []int
	if parts := info.PartialLinearizations(); len(parts) > 0 {
		for _, p := range parts[0] {
			if len(p) > len(best) || (len(p) == len(best) && lessInts(p, best)) {
				best = p
			}
		}
	}
	state := model.Log{}
	in := make([]bool, len(ops))
	for _, id := range best {
		in[id] = true
		_, state = model.Step(state, ops[id].Input.(model.Input), ops[id].Output.(model.Output))
	}
	var rest []int
	for id := range ops {
		if !in[id] {
			rest = append(rest, id)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool {
		a, b := ops[rest[i]], ops[rest[j]]
		if a.Return != b.Return {
			return a.Return < b.Return
		}
		return a.Metadata.(int) < b.Metadata.(int)
	})
	a := Anomaly{Kind: "nonlinearizable", Topic: k.Topic, Partition: k.Partition}
	var stuck []string
	for i, id := range rest {
		if i == 3 {
			stuck = append(stuck, "…")
			break
		}
		op := ops[id]
		in, out := op.Input.(model.Input), op.Output.(model.Output)
		stuck = append(stuck, model.DescribeOperation(in, out)+" (#"+strconv.Itoa(op.Metadata.(int))+")")
		a.Ops = append(a.Ops, op.Metadata.(int))
		if in.Kind == model.Append && a.Value == "" {
			a.Value = in.Value
			if !out.Unknown {
				a.Offsets = append(a.Offsets, out.Offset)
			}
		}
	}
	a.Description = strconv.Itoa(len(best)) + " of " + strconv.Itoa(len(ops)) +
		" operations linearize, reaching log " + state.String() +
		"; none of the others can come next: " + strings.Join(stuck, ", ")
	// Name the committed record the stuck operations contradict: the one
	// an append or a read finds another value in place of (KIP-101's m2).
	for _, id := range rest {
		in, out := ops[id].Input.(model.Input), ops[id].Output.(model.Output)
		off, other := int64(-1), ""
		switch {
		case in.Kind == model.Append && !out.Unknown && out.Offset < state.Len():
			off, other = out.Offset, in.Value
		case in.Kind == model.Read:
			for _, r := range out.Records {
				if v, ok := state.At(r.Offset); ok && v != r.Value {
					off, other = r.Offset, r.Value
					break
				}
			}
		}
		if v, ok := state.At(off); ok && v != model.Hidden {
			a.Value, a.Offsets = v, []int64{off}
			a.Description += "; " + v + " was committed at offset " + strconv.FormatInt(off, 10) + ", where " + other + " is found later"
			break
		}
	}
	return a
}

func lessInts(a, b []int) bool {
	for i := range a {
		if i >= len(b) {
			return false
		}
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}
