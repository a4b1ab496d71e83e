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
// How each partition is searched: a partition where two appends took one
// offset is not linearizable, decided without search
// (linearizability_conflict.go); one with an obvious linearization is
// shown to be by exhibiting it (linearizability_witness.go); any other,
// checkPartition tries porcupine on the narrowed history, then porcupine
// on the history as recorded (its events postponed where the search cannot
// take them); each step keeps porcupine's verdict, and violations are
// explained from the recorded history's search (see those files'
// headers). The first two read no clock, so they run whatever is left of
// the budget.
//
// What it simplifies: partitions are checked one after the other, each with
// what is left of the wall-time budget; past it a partition that needs a
// search is Unknown, never OK. The budget is the only wall-clock input of
// the checkers, so only an Unknown verdict can differ between two runs of
// one seed.

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
		pe := PartitionEvidence{Topic: keys[i].Topic, Partition: keys[i].Partition, Ops: len(ops), model: single, ops: ops}
		res, info := porcupine.Illegal, porcupine.LinearizationInfo{}
		// NB: the shortcuts that read no clock come before the budget, so
		// that only a search can leave a partition unknown.
		a, conflict := offsetConflict(keys[i], ops) // linearizability_conflict.go
		switch left := budget - time.Since(start); {
		case conflict:
		case witness(ops): // linearizability_witness.go
			res = porcupine.Ok
		case left <= 0:
			unknown = true
			ev.Partitions = append(ev.Partitions, PartitionEvidence{Topic: keys[i].Topic, Partition: keys[i].Partition, Result: ResultUnknown, Ops: len(ops)})
			notes = append(notes, keys[i].String()+": not checked, budget spent")
			continue
		default:
			res, info = checkPartition(single, ops, left, &pe)
		}
		switch res {
		case porcupine.Ok:
			pe.Result = ResultOK
		case porcupine.Illegal:
			if !conflict {
				a = explainIllegal(keys[i], ops, info)
			}
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

// checkPartition judges one partition's ops within budget, a partition
// the caller found neither two appends at one offset in nor a
// linearization without search (linearizability_witness.go) for, trying
// in turn:
//  1. porcupine on the narrowed history, which has the same linearizations
//     and is far cheaper to search (linearizability_narrow.go);
//  2. porcupine's search of the history as recorded, whose partial
//     linearizations (the info returned) explain a violation
//     (explainIllegal). It runs with the invocations postponed
//     (linearizability_postpone.go), which takes the same path with fewer
//     failing tries.
//
// Porcupine's info for drawing is kept only from a search of the history
// as recorded with nothing moved; otherwise PartitionEvidence.Info searches
// for it when a report first asks.
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
// topic-partition order, each in history order, with notes on what was
// dropped.
//
// NB: it reads h twice, not once with maps: first what each partition's
// values name (the offsets named, the highest implied, where polls saw
// each value of a send of unknown outcome), then the operations, each
// into its partition's slice at once, so that an unresolved send is
// decided where it stands. The partitions are found through a cache of
// the last one, offsets are marked in dense tables, and polls are indexed
// by value only for the values of sends of unknown outcome, which are all
// that look them up; a swarm history's ~6,000 sends took ~3,600
// instructions each in maps of maps and a sort by history index.
func porcupineHistory(h History) ([][]porcupine.Operation, []model.Key, []string) {
	clients := clientIDs(h)
	parts := &partitionTable{index: make(map[tp]int)}
	where := make([]int32, len(h.Ops)) // each op's partition, or -1
	retried := false                   // some value was sent twice on a partition (linearizability_retries.go)
	for i := range h.Ops {
		op := &h.Ops[i]
		where[i] = -1
		if op.Kind != Send && op.Kind != Poll && op.Kind != ReadHW {
			continue
		}
		pi := parts.of(op.Topic, op.Partition)
		where[i] = int32(pi)
		p := parts.all[pi]
		switch op.Kind {
		case Send:
			switch op.Outcome {
			case OK:
				p.name(op.Offset)
				p.need = max(p.need, op.Offset+1)
				p.n++
				retried = p.countSend(op.Value) || retried
			case Info, Pending:
				if p.seen == nil {
					p.seen = make(map[string][]int64)
				}
				p.seen[op.Value] = nil
				p.n++
				retried = p.countSend(op.Value) || retried
			}
		case Poll:
			if len(op.Records) == 0 || (op.Outcome != OK && op.Outcome != Info) {
				continue
			}
			for _, r := range op.Records {
				p.name(r.Offset)
				p.need = max(p.need, r.Offset+1)
			}
			p.polls = append(p.polls, i)
			p.n++
		case ReadHW:
			if op.Outcome == OK {
				p.need = max(p.need, op.HighWatermark)
				p.n++
			}
		}
	}
	if retried {
		collectAttempts(h, parts, where)
	}
	for _, p := range parts.all {
		// Where polls saw each value of a send of unknown outcome (and of
		// a value sent more than once).
		if p.seen != nil {
			for _, i := range p.polls {
				for _, r := range h.Ops[i].Records {
					if offs, ok := p.seen[r.Value]; ok && !containsOffset(offs, r.Offset) {
						p.seen[r.Value] = append(offs, r.Offset)
					}
				}
			}
		}
		p.extraOffsets()
		for off := int64(0); off < p.need; off++ {
			if !p.named(off) {
				p.gaps = append(p.gaps, off)
			}
		}
		p.ops = make([]porcupine.Operation, 0, p.n)
	}
	sorted := true // by Index, as history order is
	for i := range h.Ops {
		op := &h.Ops[i]
		if i > 0 && op.Index <= h.Ops[i-1].Index {
			sorted = false
		}
		if where[i] < 0 {
			continue // NB: before the boxing below, which allocates
		}
		p := parts.all[where[i]]
		key := p.key
		pop := porcupine.Operation{ClientId: clients[op.Process], Call: int64(op.Invoke), Return: int64(op.Complete), Metadata: op.Index}
		switch op.Kind {
		case Send:
			pop.Input = model.Input{Key: key, Kind: model.Append, Value: op.Value}
			if a := p.retried[op.Value]; a != nil {
				if !p.attempt(a, op, &pop) {
					continue
				}
				break
			}
			switch op.Outcome {
			case OK:
				pop.Output = model.Output{Offset: op.Offset}
				if op.Acks != -1 {
					pop.Return = never
				}
			case Info, Pending:
				pop.Return = never
				if offs := p.seen[op.Value]; len(offs) == 1 {
					pop.Output = model.Output{Offset: offs[0]}
				} else if len(p.gaps) > 0 {
					// An unresolved send can only matter by filling a gap.
					pop.Output = model.Output{Unknown: true, Unobserved: true, Gaps: p.gaps, Tail: p.need}
					p.unresolved = append(p.unresolved, len(p.ops))
				} else {
					p.dropped++
					continue
				}
			default:
				continue
			}
		case Poll:
			if len(op.Records) == 0 || (op.Outcome != OK && op.Outcome != Info) {
				continue // an empty read is always legal: it constrains nothing
			}
			if op.Outcome != OK {
				pop.Return = never
			}
			recs := make([]model.Record, len(op.Records))
			for i, r := range op.Records {
				recs[i] = model.Record{Offset: r.Offset, Value: r.Value}
			}
			pop.Input = model.Input{Key: key, Kind: model.Read, Offset: op.FetchOffset}
			pop.Output = model.Output{Records: recs}
		case ReadHW:
			if op.Outcome != OK {
				continue
			}
			pop.Input = model.Input{Key: key, Kind: model.HighWatermark}
			pop.Output = model.Output{HighWatermark: op.HighWatermark}
		}
		if pop.Return < pop.Call {
			pop.Return = pop.Call
		}
		p.ops = append(p.ops, pop)
	}
	order := make([]int, len(parts.all))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if parts.all[a].key.Less(parts.all[b].key) {
			return -1
		}
		return 1 // NB: keys are distinct
	})
	var out [][]porcupine.Operation
	var keys []model.Key
	var notes []string
	for _, pi := range order {
		p := parts.all[pi]
		if p.dropped > 0 {
			notes = append(notes, p.key.String()+": "+strconv.Itoa(p.dropped)+" unobserved sends of unknown outcome cannot fill a gap and were left out")
		}
		if n := p.mergedNote(); n != "" {
			notes = append(notes, n)
		}
		if len(p.ops) == 0 {
			continue
		}
		if !sorted {
			p.sortByIndex()
		}
		out, keys = append(out, p.ops), append(keys, p.key)
	}
	return out, keys, notes
}

// partitionTable finds the partitions of porcupineHistory by topic and
// partition, the last one found first (a history's operations come in
// runs on one partition).
type partitionTable struct {
	index map[tp]int
	all   []*partitionOps
	last  int
}

func (t *partitionTable) of(topic string, partition int32) int {
	if len(t.all) > 0 {
		if p := t.all[t.last]; p.key.Partition == partition && p.key.Topic == topic {
			return t.last
		}
	}
	k := tp{topic, partition}
	i, ok := t.index[k]
	if !ok {
		i = len(t.all)
		t.index[k] = i
		t.all = append(t.all, &partitionOps{key: model.Key{Topic: topic, Partition: partition}})
	}
	t.last = i
	return i
}

// partitionOps is what porcupineHistory knows of one partition.
type partitionOps struct {
	key model.Key
	// marked[o] is set for each offset o a value names (an acknowledged
	// send or a poll's record); far holds those outside it.
	marked []bool
	far    map[int64]bool
	need   int64              // one past the highest offset named or implied
	seen   map[string][]int64 // each value of a send of unknown outcome: the offsets polls saw it at
	polls  []int              // the polls with records, by history index
	gaps   []int64            // the offsets below need no value names
	n      int                // how many operations it may take
	ops    []porcupine.Operation
	// unresolved are the positions in ops of the unobserved sends;
	// dropped counts those left out (no gap to fill).
	unresolved []int
	dropped    int
	// sends counts the sends of each value, retried are the values sent
	// more than once, and merged counts the acknowledgements merged into
	// an earlier one at their offset (linearizability_retries.go).
	sends   map[string]int32
	retried map[string]*attempts
	merged  int
}

// maxMarked bounds the dense table of named offsets; offsets past it (a
// hand-written history) are kept in a map.
const maxMarked = 1 << 20

func (p *partitionOps) name(off int64) {
	if off < 0 || off >= maxMarked {
		if p.far == nil {
			p.far = make(map[int64]bool)
		}
		p.far[off] = true
		return
	}
	for int64(len(p.marked)) <= off {
		p.marked = append(p.marked, false)
	}
	p.marked[off] = true
}

func (p *partitionOps) named(off int64) bool {
	if off >= 0 && off < int64(len(p.marked)) {
		return p.marked[off]
	}
	return p.far[off]
}

// sortByIndex puts p.ops in history-index order, as a stable sort of the
// resolved operations followed by the unresolved ones did before (for
// histories whose indexes are not their positions).
func (p *partitionOps) sortByIndex() {
	late := make([]bool, len(p.ops))
	for _, i := range p.unresolved {
		late[i] = true
	}
	type keyed struct {
		op   porcupine.Operation
		late bool
	}
	ks := make([]keyed, len(p.ops))
	for i := range p.ops {
		ks[i] = keyed{p.ops[i], late[i]}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(a.op.Metadata.(int), b.op.Metadata.(int)); c != 0 {
			return c
		}
		switch {
		case a.late == b.late:
			return 0
		case b.late:
			return -1
		}
		return 1
	})
	for i := range ks {
		p.ops[i] = ks[i].op
	}
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
