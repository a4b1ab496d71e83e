// analysis.go: what every check derives from a history, as
// jepsen.tests.kafka's analysis does: reads and writes per op, the ops'
// reads and writes by type, the writer of each value, and the version
// order of each key.
//
// The version order of a key is built from the [offset value] pairs of
// sends in ops that must have committed (:ok, or :info with a send some
// :ok op read) and of every poll, whatever its op's type ("pollers are
// always supposed to emit safe data"). Offsets may be sparse (transaction
// markers take offsets no poll returns); an index is a dense offset: the
// position among the offsets that hold a value.
//
// What it simplifies: where several values share an offset, the value at
// that index is the smallest (Jepsen takes an arbitrary one).

package jepsen

import (
	"sort"
)

// keyValues are the values an op read from, or sent to, one key, in order.
type keyValues struct {
	key    Key
	values []Value
	pairs  []Pair
}

// opReads returns what a poll or txn read, per key in key order (a key
// polled with no records is listed, empty, as in Jepsen's op-reads).
func opReads(op *Op) []keyValues {
	if op.F != "poll" && op.F != "txn" {
		return nil
	}
	var out []keyValues
	for _, m := range op.Mops {
		for _, r := range m.Reads {
			kv := find(&out, r.Key)
			for _, p := range r.Pairs {
				kv.values, kv.pairs = append(kv.values, p.Value), append(kv.pairs, p)
			}
		}
	}
	sortKV(out)
	return out
}

// opWrites returns what a send or txn sent, per key in key order.
func opWrites(op *Op) []keyValues {
	if op.F != "send" && op.F != "txn" {
		return nil
	}
	var out []keyValues
	for _, m := range op.Mops {
		if m.Send {
			kv := find(&out, m.Key)
			kv.values, kv.pairs = append(kv.values, m.Pair.Value), append(kv.pairs, m.Pair)
		}
	}
	sortKV(out)
	return out
}

func find(kvs *[]keyValues, k Key) *keyValues {
	for i := range *kvs {
		if (*kvs)[i].key == k {
			return &(*kvs)[i]
		}
	}
	*kvs = append(*kvs, keyValues{key: k})
	return &(*kvs)[len(*kvs)-1]
}

func sortKV(kvs []keyValues) {
	sort.SliceStable(kvs, func(i, j int) bool { return kvs[i].key.less(kvs[j].key) })
}

// valueSet is a set of values per key.
type valueSet map[Key]map[Value]bool

func (s valueSet) add(k Key, v Value) {
	if s[k] == nil {
		s[k] = map[Value]bool{}
	}
	s[k][v] = true
}

func (s valueSet) has(k Key, v Value) bool { return s[k][v] }

// order is the version order of one key.
type order struct {
	// offsets are the offsets holding at least one value, ascending: the
	// offset of index i is offsets[i].
	offsets []int64
	// values maps an offset to its distinct values, ascending.
	values map[int64][]Value
	// byIndex is the value at each index (the smallest, if several).
	byIndex []Value
	// byValue is the index of a value of byIndex (the last, if several:
	// Jepsen's index-seq).
	byValue map[Value]int
	// firstIndex and lastIndex are the first and last index at which a
	// value appears, counting every value of an offset.
	firstIndex, lastIndex map[Value]int
}

// index returns a value's index in byValue, and false if it has none.
func (o *order) index(v Value) (int, bool) {
	if o == nil {
		return 0, false
	}
	i, ok := o.byValue[v]
	return i, ok
}

// analysis is what the checks share.
type analysis struct {
	h *History
	// reads and writes are opReads and opWrites of each op.
	reads, writes [][]keyValues
	okReads       valueSet
	failedWrites  valueSet
	// writerOf is the position in h.Ops of the last completion that sent
	// each value (Jepsen's writer-of).
	writerOf map[Key]map[Value]int
	orders   map[Key]*order
	keys     []Key // of orders, sorted
	// subscribes is true when the history has :subscribe ops: Jepsen then
	// allows poll-skip and nonmonotonic-poll (rebalances are expected).
	subscribes bool
	// wwDeps is Jepsen's :ww-deps option (cycles.go).
	wwDeps bool
}

func analyze(h *History) *analysis {
	a := &analysis{h: h, okReads: valueSet{}, failedWrites: valueSet{}, writerOf: map[Key]map[Value]int{},
		orders: map[Key]*order{}}
	a.reads, a.writes = make([][]keyValues, len(h.Ops)), make([][]keyValues, len(h.Ops))
	for i := range h.Ops {
		op := &h.Ops[i]
		a.reads[i], a.writes[i] = opReads(op), opWrites(op)
		if op.F == "subscribe" {
			a.subscribes = true
		}
		if op.Type == Invoke {
			continue
		}
		if op.Type == OK {
			for _, kv := range a.reads[i] {
				for _, v := range kv.values {
					a.okReads.add(kv.key, v)
				}
			}
		}
		for _, kv := range a.writes[i] {
			if a.writerOf[kv.key] == nil {
				a.writerOf[kv.key] = map[Value]int{}
			}
			for _, v := range kv.values {
				a.writerOf[kv.key][v] = i
				if op.Type == Fail {
					a.failedWrites.add(kv.key, v)
				}
			}
		}
	}
	a.buildOrders()
	return a
}

// mustHaveCommitted is Jepsen's must-have-committed?: the op is :ok, or
// :info with a send that some :ok op read.
func (a *analysis) mustHaveCommitted(i int) bool {
	switch a.h.Ops[i].Type {
	case OK:
		return true
	case Info:
		for _, kv := range a.writes[i] {
			for _, v := range kv.values {
				if a.okReads.has(kv.key, v) {
					return true
				}
			}
		}
	}
	return false
}

// eachPair calls fn for every [offset value] pair that goes into the
// version orders, with the position of its op.
func (a *analysis) eachPair(fn func(k Key, p Pair, op int)) {
	for i := range a.h.Ops {
		op := &a.h.Ops[i]
		if op.F != "send" && op.F != "poll" && op.F != "txn" {
			continue
		}
		sends := a.mustHaveCommitted(i)
		for _, m := range op.Mops {
			switch {
			case m.Send && sends && m.Pair.HasOffset:
				fn(m.Key, m.Pair, i)
			case !m.Send:
				for _, r := range m.Reads {
					for _, p := range r.Pairs {
						if p.HasOffset {
							fn(r.Key, p, i)
						}
					}
				}
			}
		}
	}
}

func (a *analysis) buildOrders() {
	raw := map[Key]map[int64]map[Value]bool{}
	a.eachPair(func(k Key, p Pair, _ int) {
		if raw[k] == nil {
			raw[k] = map[int64]map[Value]bool{}
		}
		if raw[k][p.Offset] == nil {
			raw[k][p.Offset] = map[Value]bool{}
		}
		raw[k][p.Offset][p.Value] = true
	})
	for k, offs := range raw {
		o := &order{values: map[int64][]Value{}, byValue: map[Value]int{}, firstIndex: map[Value]int{}, lastIndex: map[Value]int{}}
		for off, vs := range offs {
			o.offsets = append(o.offsets, off)
			for v := range vs {
				o.values[off] = append(o.values[off], v)
			}
			sortValues(o.values[off])
		}
		sortInts(o.offsets)
		for i, off := range o.offsets {
			vs := o.values[off]
			o.byIndex = append(o.byIndex, vs[0])
			o.byValue[vs[0]] = i
			for _, v := range vs {
				if _, ok := o.firstIndex[v]; !ok {
					o.firstIndex[v] = i
				}
				o.lastIndex[v] = i
			}
		}
		a.orders[k] = o
		a.keys = append(a.keys, k)
	}
	sort.Slice(a.keys, func(i, j int) bool { return a.keys[i].less(a.keys[j]) })
}

// naming is an op that put a value at an offset into a version order.
type naming struct {
	op    int
	value Value
}

// opsAt returns, for each wanted offset of each key, the ops that put a
// value there, in history order (one pass over the history, however many
// offsets are wanted).
func (a *analysis) opsAt(want map[Key]map[int64]bool) map[Key]map[int64][]naming {
	out := map[Key]map[int64][]naming{}
	a.eachPair(func(k Key, p Pair, op int) {
		if !want[k][p.Offset] {
			return
		}
		if out[k] == nil {
			out[k] = map[int64][]naming{}
		}
		out[k][p.Offset] = append(out[k][p.Offset], naming{op, p.Value})
	})
	return out
}

func sortInts(xs []int64) { sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] }) }

func sortValues(vs []Value) { sort.Slice(vs, func(i, j int) bool { return vs[i].less(vs[j]) }) }
