// cases.go: Jepsen's Kafka anomalies, one function per error type of
// jepsen.tests.kafka's analysis (reference checkers.md §2.1), each
// returning kafkasim anomalies in a deterministic order (history order,
// then key order; or key order, then index order).

package jepsen

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/checkers"
)

// newAnomaly builds an anomaly of the named kind on key k, naming the ops
// (positions in the history) in its description and Ops.
func (a *analysis) newAnomaly(kind string, k Key, value string, offsets []int64, ops []int, desc string) checkers.Anomaly {
	an := checkers.Anomaly{Kind: kind, Value: "key=" + k.String(), Offsets: offsets}
	if value != "" {
		an.Value += " value=" + value
	}
	var refs []string
	seen := map[int]bool{}
	for _, i := range ops {
		if i < 0 || seen[i] {
			continue
		}
		seen[i] = true
		op := &a.h.Ops[i]
		an.Ops = append(an.Ops, op.ID())
		refs = append(refs, op.Ref())
	}
	an.Description = desc
	if len(refs) > 0 {
		an.Description += " (ops " + strings.Join(refs, ", ") + ")"
	}
	return an
}

func (a *analysis) ref(i int) string { return a.h.Ops[i].Ref() }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func joinValues(vs []Value) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, ", ")
}

// inconsistentOffsets: one offset of a key holding two or more values.
func (a *analysis) inconsistentOffsets() []checkers.Anomaly {
	want := map[Key]map[int64]bool{}
	for _, k := range a.keys {
		o := a.orders[k]
		for _, off := range o.offsets {
			if len(o.values[off]) > 1 {
				if want[k] == nil {
					want[k] = map[int64]bool{}
				}
				want[k][off] = true
			}
		}
	}
	namers := a.opsAt(want)
	var out []checkers.Anomaly
	for _, k := range a.keys {
		o := a.orders[k]
		for i, off := range o.offsets {
			if !want[k][off] {
				continue
			}
			var ops []int
			for _, n := range namers[k][off] {
				ops = append(ops, n.op)
			}
			out = append(out, a.newAnomaly("inconsistent-offsets", k, "", []int64{off}, ops,
				"offset "+itoa(off)+" (index "+strconv.Itoa(i)+") holds values "+joinValues(o.values[off])))
		}
	}
	return out
}

// duplicate: one value at more than one offset of a key.
func (a *analysis) duplicate() []checkers.Anomaly {
	type dup struct {
		k       Key
		v       Value
		offsets []int64
	}
	var dups []dup
	want := map[Key]map[int64]bool{}
	for _, k := range a.keys {
		o := a.orders[k]
		at := map[Value][]int64{}
		var order []Value
		for _, off := range o.offsets {
			for _, v := range o.values[off] {
				if len(at[v]) == 0 {
					order = append(order, v)
				}
				at[v] = append(at[v], off)
			}
		}
		for _, v := range order { // by first offset
			if len(at[v]) > 1 {
				dups = append(dups, dup{k, v, at[v]})
				if want[k] == nil {
					want[k] = map[int64]bool{}
				}
				for _, off := range at[v] {
					want[k][off] = true
				}
			}
		}
	}
	namers := a.opsAt(want)
	var out []checkers.Anomaly
	for _, d := range dups {
		var ops []int
		for _, off := range d.offsets {
			for _, n := range namers[d.k][off] {
				if n.value == d.v {
					ops = append(ops, n.op)
				}
			}
		}
		sort.Ints(ops)
		out = append(out, a.newAnomaly("duplicate", d.k, d.v.String(), d.offsets, ops,
			"at "+strconv.Itoa(len(d.offsets))+" offsets of the key"))
	}
	return out
}

// lostWrite: for each key, bound is the highest of the first indexes of
// the values :ok ops read; a value whose last index is at or below bound,
// that no :ok op read, and whose writer must have committed, is lost.
func (a *analysis) lostWrite() []checkers.Anomaly {
	var out []checkers.Anomaly
	for _, k := range a.keys {
		read := a.okReads[k]
		if len(read) == 0 {
			continue
		}
		o := a.orders[k]
		if o == nil {
			continue // read values without offsets: nothing to bound
		}
		bound, boundValue := -1, Value{}
		for v := range read {
			if i, ok := o.firstIndex[v]; ok && (i > bound || i == bound && v.less(boundValue)) {
				bound, boundValue = i, v
			}
		}
		if bound < 0 {
			continue
		}
		maxReader := a.firstOKReader(k, boundValue)
		var lost []Value
		for v, last := range o.lastIndex {
			if last <= bound && !read[v] {
				lost = append(lost, v)
			}
		}
		sort.Slice(lost, func(i, j int) bool {
			if o.firstIndex[lost[i]] != o.firstIndex[lost[j]] {
				return o.firstIndex[lost[i]] < o.firstIndex[lost[j]]
			}
			return lost[i].less(lost[j])
		})
		for _, v := range lost {
			w, ok := a.writerOf[k][v]
			if !ok || !a.mustHaveCommitted(w) {
				continue // Jepsen double-checks the writer
			}
			off := o.offsets[o.firstIndex[v]]
			desc := "sent by " + a.ref(w) + " (" + a.h.Ops[w].Type.String() + ") at offset " + itoa(off) +
				" (index " + strconv.Itoa(o.firstIndex[v]) + "); "
			if maxReader >= 0 {
				desc += a.ref(maxReader) + " read value " + boundValue.String() + " at offset " + itoa(o.offsets[bound]) +
					" (index " + strconv.Itoa(bound) + ")"
			} else {
				desc += "ok polls read up to index " + strconv.Itoa(bound)
			}
			desc += ", but no ok poll or txn read it"
			out = append(out, a.newAnomaly("lost-write", k, v.String(), []int64{off}, []int{w, maxReader}, desc))
		}
	}
	return out
}

// firstOKReader returns the position of the first :ok op that read v
// from k, or -1.
func (a *analysis) firstOKReader(k Key, v Value) int {
	for i := range a.h.Ops {
		if a.h.Ops[i].Type != OK {
			continue
		}
		for _, kv := range a.reads[i] {
			if kv.key == k && containsValue(kv.values, v) {
				return i
			}
		}
	}
	return -1
}

func containsValue(vs []Value, v Value) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// g1a: an :ok poll or txn read a value whose send :fail'ed (aborted read).
func (a *analysis) g1a() []checkers.Anomaly {
	var out []checkers.Anomaly
	for i := range a.h.Ops {
		if a.h.Ops[i].Type != OK {
			continue
		}
		for _, kv := range a.reads[i] {
			for j, v := range kv.values {
				if !a.failedWrites.has(kv.key, v) {
					continue
				}
				w := a.writerOf[kv.key][v]
				var offs []int64
				if kv.pairs[j].HasOffset {
					offs = []int64{kv.pairs[j].Offset}
				}
				out = append(out, a.newAnomaly("G1a", kv.key, v.String(), offs, []int{w, i},
					a.ref(i)+" read it, but its send "+a.ref(w)+" failed (aborted read)"))
			}
		}
	}
	return out
}

// precommittedRead: an op read a value it sent itself (Kafka keeps sent
// values invisible until the producing transaction commits). As Jepsen,
// one anomaly per op: the first such value, keys in order.
func (a *analysis) precommittedRead() []checkers.Anomaly {
	var out []checkers.Anomaly
	for i := range a.h.Ops {
		if an, ok := a.precommitted(i); ok {
			out = append(out, an)
		}
	}
	return out
}

func (a *analysis) precommitted(i int) (checkers.Anomaly, bool) {
	for _, w := range a.writes[i] {
		for _, r := range a.reads[i] {
			if r.key != w.key {
				continue
			}
			for _, v := range r.values {
				if containsValue(w.values, v) {
					return a.newAnomaly("precommitted-read", r.key, v.String(), nil, []int{i},
						a.ref(i)+" read a value it sent itself"), true
				}
			}
		}
	}
	return checkers.Anomaly{}, false
}

// delta returns the index distance from v1 to v2 in k's version order,
// and 1 (no anomaly) when either has no index, as Jepsen does.
func (a *analysis) delta(k Key, v1, v2 Value) (d, i1, i2 int) {
	o := a.orders[k]
	i1, ok1 := o.index(v1)
	i2, ok2 := o.index(v2)
	if !ok1 || !ok2 {
		return 1, -1, -1
	}
	return i2 - i1, i1, i2
}

// between returns the offsets and values strictly between two indexes.
func (a *analysis) between(k Key, i1, i2 int) ([]int64, []Value) {
	o := a.orders[k]
	return append([]int64(nil), o.offsets[i1+1:i2]...), append([]Value(nil), o.byIndex[i1+1:i2]...)
}

// offsetsOf returns the offsets of two indexes.
func (a *analysis) offsetsOf(k Key, i1, i2 int) []int64 {
	o := a.orders[k]
	return []int64{o.offsets[i1], o.offsets[i2]}
}

// internal finds int-poll-skip and int-nonmonotonic-poll (reads) or
// int-send-skip and int-nonmonotonic-send (sends): two consecutive values
// of one key inside one op whose indexes are not consecutive.
func (a *analysis) internal(sends bool) (skip, nonmonotonic []checkers.Anomaly) {
	what, verb := "poll", "read"
	if sends {
		what, verb = "send", "sent"
	}
	for i := range a.h.Ops {
		op := &a.h.Ops[i]
		kvs := a.reads[i]
		if sends {
			if op.Type == Invoke {
				continue
			}
			kvs = a.writes[i]
		}
		for _, kv := range kvs {
			if !sends && containsKey(op.Rebalanced, kv.key) {
				continue // a rebalance during the op: all bets are off
			}
			for j := 1; j < len(kv.values); j++ {
				v1, v2 := kv.values[j-1], kv.values[j]
				d, i1, i2 := a.delta(kv.key, v1, v2)
				switch {
				case d > 1:
					offs, vals := a.between(kv.key, i1, i2)
					an := a.newAnomaly("int-"+what+"-skip", kv.key, "", offs, []int{i},
						a.ref(i)+" "+verb+" value "+v1.String()+" then "+v2.String()+", skipping "+joinValues(vals)+" (delta "+strconv.Itoa(d)+")")
					if sends {
						an.Permitted = true
						an.Description += "; permitted: Kafka has no write isolation, another producer's record may land between (Jepsen always allows int-send-skip)"
					}
					skip = append(skip, an)
				case d < 1:
					nonmonotonic = append(nonmonotonic, a.newAnomaly("int-nonmonotonic-"+what, kv.key, "", a.offsetsOf(kv.key, i1, i2), []int{i},
						a.ref(i)+" "+verb+" value "+v1.String()+" then "+v2.String()+" (delta "+strconv.Itoa(d)+")"))
				}
			}
		}
	}
	return skip, nonmonotonic
}

func containsKey(ks []Key, k Key) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// external finds poll-skip and nonmonotonic-poll (reads) or
// nonmonotonic-send (sends): per process, the first value of one key in
// an op against the last value of that key in the process's previous op
// on the key, forgetting keys an :assign or :subscribe drops. As in
// Jepsen, every completed poll is compared but only an :ok one becomes the
// last read; every :ok or :info send becomes the last send.
func (a *analysis) external(sends bool) (skip, nonmonotonic []checkers.Anomaly) {
	last := map[int64]map[Key]int{} // process -> key -> op position
	for i := range a.h.Ops {
		op := &a.h.Ops[i]
		if sends && op.Type != OK && op.Type != Info {
			continue
		}
		if last[op.Process] == nil {
			last[op.Process] = map[Key]int{}
		}
		lp := last[op.Process]
		switch op.F {
		case "assign", "subscribe":
			if op.Type == OK || op.Type == Info {
				for k := range lp {
					if !containsKey(op.Keys, k) {
						delete(lp, k)
					}
				}
			}
			continue
		}
		kvs := a.reads[i]
		if sends {
			kvs = a.writes[i]
		}
		for _, kv := range kvs {
			prev, ok := lp[kv.key]
			if !ok {
				continue
			}
			pvs := a.valuesOf(prev, kv.key, sends)
			if len(pvs) == 0 || len(kv.values) == 0 {
				continue // Jepsen: an unknown index gives delta 1
			}
			v1, v2 := pvs[len(pvs)-1], kv.values[0]
			d, i1, i2 := a.delta(kv.key, v1, v2)
			what, verb := "poll", "read"
			if sends {
				what, verb = "send", "sent"
			}
			process := "process " + itoa(op.Process) + ": "
			switch {
			case d > 1 && !sends:
				offs, vals := a.between(kv.key, i1, i2)
				an := a.newAnomaly("poll-skip", kv.key, "", offs, []int{prev, i},
					process+a.ref(prev)+" read up to value "+v1.String()+", then "+a.ref(i)+" started at "+v2.String()+", skipping "+joinValues(vals)+" (delta "+strconv.Itoa(d)+")")
				a.permitRebalance(&an)
				skip = append(skip, an)
			case d < 1:
				an := a.newAnomaly("nonmonotonic-"+what, kv.key, "", a.offsetsOf(kv.key, i1, i2), []int{prev, i},
					process+a.ref(prev)+" "+verb+" up to value "+v1.String()+", then "+a.ref(i)+" started at "+v2.String()+" (delta "+strconv.Itoa(d)+")")
				if !sends {
					a.permitRebalance(&an)
				}
				nonmonotonic = append(nonmonotonic, an)
			}
		}
		if sends || op.Type == OK {
			for _, kv := range kvs {
				lp[kv.key] = i
			}
		}
	}
	return skip, nonmonotonic
}

// valuesOf returns what op i read from (or sent to) k.
func (a *analysis) valuesOf(i int, k Key, sends bool) []Value {
	kvs := a.reads[i]
	if sends {
		kvs = a.writes[i]
	}
	for _, kv := range kvs {
		if kv.key == k {
			return kv.values
		}
	}
	return nil
}

// permitRebalance marks a poll-skip or nonmonotonic-poll Permitted when
// the history subscribes, as Jepsen's allowed-error-types does.
func (a *analysis) permitRebalance(an *checkers.Anomaly) {
	if a.subscribes {
		an.Permitted = true
		an.Description += "; permitted: the history subscribes, and a rebalance may move a consumer (Jepsen allows it with :sub-via :subscribe)"
	}
}

// unrecordedPolls returns the references of the ok ops with a poll
// micro-op written without its result, in history order.
func (a *analysis) unrecordedPolls() []string {
	var refs []string
	for i := range a.h.Ops {
		op := &a.h.Ops[i]
		if op.Type != OK {
			continue
		}
		for _, m := range op.Mops {
			if !m.Send && m.Unrecorded {
				refs = append(refs, a.ref(i))
				break
			}
		}
	}
	return refs
}

// unseen returns Jepsen's final :unseen, as one anomaly: per key, the
// values :ok sends acknowledged that no :ok poll or txn read (before or
// after), with their count; n is the number of such values.
func (a *analysis) unseen() (an checkers.Anomaly, n int) {
	type sent struct {
		op   int
		pair Pair
	}
	acked := map[Key]map[Value]sent{}
	for i := range a.h.Ops {
		if a.h.Ops[i].Type != OK {
			continue
		}
		for _, kv := range a.writes[i] {
			if acked[kv.key] == nil {
				acked[kv.key] = map[Value]sent{}
			}
			for j, v := range kv.values {
				acked[kv.key][v] = sent{i, kv.pairs[j]}
			}
		}
	}
	keys := make([]Key, 0, len(acked))
	for k := range acked {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	// NB: the values of the first maxKeys keys are listed, with their ops;
	// every key's count is in Value, as in Jepsen's :unseen.
	const maxListed, maxKeys = 8, 8
	var counts, parts []string
	var ops []int
	for _, k := range keys {
		var vs []Value
		for v := range acked[k] {
			if !a.okReads.has(k, v) {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			continue
		}
		sortValues(vs)
		n += len(vs)
		counts = append(counts, k.String()+" "+strconv.Itoa(len(vs)))
		if len(counts) > maxKeys {
			continue
		}
		var ps []string
		for i, v := range vs {
			if i == maxListed {
				ps = append(ps, "... "+strconv.Itoa(len(vs)-maxListed)+" more")
				break
			}
			s := acked[k][v]
			ops = append(ops, s.op)
			p := v.String() + " ("
			if s.pair.HasOffset {
				p += "offset " + itoa(s.pair.Offset) + ", "
				if len(keys) == 1 {
					an.Offsets = append(an.Offsets, s.pair.Offset)
				}
			}
			ps = append(ps, p+"sent by "+a.ref(s.op)+")")
		}
		parts = append(parts, "key "+k.String()+": "+strings.Join(ps, ", "))
	}
	if n == 0 {
		return an, 0
	}
	sort.Ints(ops)
	seen := map[int]bool{}
	for _, i := range ops {
		if id := a.h.Ops[i].ID(); !seen[id] {
			seen[id] = true
			an.Ops = append(an.Ops, id)
		}
	}
	if len(counts) > maxKeys {
		parts = append(parts, "... "+plural(len(counts)-maxKeys, "more key"))
	}
	an.Kind = NameUnseen
	an.Value = "unseen={" + strings.Join(counts, ", ") + "}"
	refs := make([]string, 0, len(an.Ops))
	for _, i := range ops {
		if r := a.ref(i); len(refs) == 0 || refs[len(refs)-1] != r {
			refs = append(refs, r)
		}
	}
	an.Description = plural(n, "acknowledged value") + " on " + plural(len(counts), "key") + " never read by an ok poll or txn: " + strings.Join(parts, "; ") +
		"; lost, or late (sent after the last polls caught up) (ops " + strings.Join(refs, ", ") + ")"
	return an, n
}
