// linearizability_postpone.go: moving the events of a partition's appends
// (invocations later, completions earlier) so that porcupine's search of
// a history it does not linearize takes the same path, with fewer tries
// that fail.
//
// Why: a violation is explained from porcupine's partial linearizations
// (explainIllegal), which depend on the exact path its depth-first search
// takes, so the search must run on the history as recorded, not the
// narrowed one (linearizability_narrow.go). On a swarm partition nearly
// all of that search's model steps fail: a send invoked early and
// acknowledged late, at a late offset, is tried at every step until its
// turn (and again at every step of the unwinding that proves no
// linearization exists), where ~1,500 steps succeed in ~680,000.
//
// How porcupine searches (v1.3.1, checkSingle): it keeps the invocation
// and completion events in one list, sorted by time, invocations first
// at equal times. In a state S (the operations linearized so far and the
// model state they reach) it scans the list from its head: each
// invocation of an operation not yet linearized is tried; the first that
// the model accepts and that leads to a state not seen before is
// linearized (its two events leave the list) and the scan starts again
// from the head; the scan stops at the first completion left in the list
// (the barrier: that operation must come first), where the search backs
// up to the previous state and goes on scanning after the operation it
// had taken there. A try the model refuses (or one reaching a state
// already seen) changes nothing but the time spent. So the path — every state, every backtrack, and therefore the
// partial linearizations — is fixed by, for each state S, which
// operations the model accepts in S before the barrier and in what order.
// Any change of event order that keeps those sets and orders leaves the
// search's path, and its info, exactly as they were.
//
// What postpone changes: the events of appends at a known offset o
// (acknowledged, or resolved by a poll), in two passes, each of which
// keeps the search's path. Such an append X is accepted only in a state
// whose log is o long.
//
// First, X's invocation moves later. Let m(k) be the first list position
// among the invocations of the appends that can be accepted at offset k
// (at offset k, of unknown outcome, or unobserved with k a gap or past the
// tail), and L(o) the largest m(k), k < o. Every state with a log o long
// holds an append accepted at offset k* (the k < o of m(k*) = L(o)),
// whose invocation lies at or after L(o); when it was tried, every
// completion still in the list lay after it. So in every state where X
// may be accepted, the barrier lies after position L(o), and so does the
// completion of every operation not yet linearized: X moved to just after
// position L(o) is still tried in every such state (and in no state where
// it was not tried before, as it only moves later). X must keep its place
// before every other operation that the model may accept in one of those
// states (another append at o, an append of unknown outcome or unobserved
// at o, a read of offsets below o, an HW read of o), since the order of
// the accepted ones is the search's path; those not yet linearized there
// complete after L(o). So X moves to just after L(o), or just before the
// first invocation after its own of such an operation completing after
// L(o), whichever is earlier. If L(o) lies at or after X's own
// completion, no state has a log o long with X not linearized, X is never
// accepted, and it moves to just before its completion.
//
// Then, if X is the only operation that can be accepted at offset o, X's
// completion moves earlier. A completion is a barrier in the states
// where its operation is not linearized; in those, the log is at most o
// long (a longer one holds an append accepted at o, which can only be X).
// An operation that needs a longer log (an append at a higher offset, a
// read of an offset at or past o, an HW read above o) is refused in all
// of them. So X's completion may move back past every invocation of such
// an operation: the scans it now stops sooner would only have tried
// operations the model refuses. It moves to just after the last
// invocation before it of an operation that may be accepted at a log at
// most o long (at least X's own). This is what removes the unwinding's
// tries: when a swarm's sends all complete together after an outage, a
// search that backs up through them tried, at each one, every later one.
//
// How the order is kept exactly: porcupine sorts the events with
// sort.Sort, which is not stable; postpone sorts the same events the same
// way to learn porcupine's order, then gives every event a distinct time
// in the new order, so porcupine's sort can only reproduce it. Operations
// keep their place in the slice (their ids in the partial
// linearizations), and only times change, so the info's partial
// linearizations are those of the history as recorded; its drawing (event
// times) is not, so it is not kept (PartitionEvidence.Info recomputes it).
// Offsets far above the history's length (a hand-written file) are left
// as recorded, rather than indexed densely.
//
// TestPostponeKeepsSearch holds this against porcupine's search of the
// recorded history on random histories, accepted and refused.

package checkers

import (
	"math"
	"slices"
	"sort"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// event is one of porcupine's list events, as its makeEntries builds them.
type event struct {
	time int64
	ret  bool // a completion
	id   int  // the operation's index in the partition's history
}

// byTime orders events exactly as porcupine's byTime does (v1.3.1): by
// time, an invocation before a completion at equal times.
type byTime []event

func (a byTime) Len() int      { return len(a) }
func (a byTime) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a byTime) Less(i, j int) bool {
	if a[i].time != a[j].time {
		return a[i].time < a[j].time
	}
	return !a[i].ret && a[j].ret
}

// postpone returns a copy of ops with the known-offset appends'
// invocations moved later and their completions earlier, every time
// renamed (see the file's header), or ops itself when nothing moves or
// the offsets are too sparse to index densely.
func postpone(ops []porcupine.Operation) []porcupine.Operation {
	n := len(ops)
	if n < 2 {
		return ops
	}
	// What each operation may be accepted at: lo and hi bound the log
	// lengths (offsets for an append) at which the strict model may accept
	// it; off is a known-offset append's offset, or -1.
	const inf = math.MaxInt64
	lo, hi, off := make([]int64, n), make([]int64, n), make([]int64, n)
	top := int64(-1)
	for i := range ops {
		in, out := ops[i].Input.(model.Input), ops[i].Output.(model.Output)
		lo[i], hi[i], off[i] = 0, inf, -1
		switch in.Kind {
		case model.Append:
			switch {
			case out.Unobserved:
				lo[i] = out.Tail
				for _, g := range out.Gaps {
					lo[i] = min(lo[i], g)
				}
			case out.Unknown:
			default:
				if out.Offset < 0 {
					return ops
				}
				lo[i], hi[i], off[i] = out.Offset, out.Offset, out.Offset
				top = max(top, out.Offset)
			}
		case model.Read:
			for _, r := range out.Records {
				lo[i] = max(lo[i], r.Offset+1)
			}
		case model.HighWatermark:
			lo[i], hi[i] = out.HighWatermark, out.HighWatermark
		}
	}
	if top < 1 || top > int64(4*n+64) {
		return ops // nothing to move, or offsets too sparse for dense tables
	}
	// porcupine's event list: the same events, in the same initial
	// order, sorted by the same unstable sort.
	evs := make(byTime, 0, 2*n)
	for i := range ops {
		evs = append(evs, event{ops[i].Call, false, i}, event{ops[i].Return, true, i})
	}
	sort.Sort(evs)
	call, ret := make([]int, n), make([]int, n)
	positions(evs, call, ret)
	// m[k]: the first invocation position of an append that can be
	// accepted at offset k; count[k]: how many can be.
	const none = math.MaxInt
	m, count := make([]int, top+1), make([]int, top+1)
	for k := range m {
		m[k] = none
	}
	tailFirst := make([]int, top+2) // by Tail, clamped to top+1
	for k := range tailFirst {
		tailFirst[k] = none
	}
	tailCount := make([]int, top+2)
	for i := range ops {
		if in := ops[i].Input.(model.Input); in.Kind != model.Append {
			continue
		}
		switch out := ops[i].Output.(model.Output); {
		case out.Unobserved:
			for _, g := range out.Gaps {
				if g >= 0 && g <= top {
					m[g] = min(m[g], call[i])
					count[g]++
				}
			}
			t := min(max(out.Tail, 0), top+1)
			tailFirst[t] = min(tailFirst[t], call[i])
			tailCount[t]++
		case out.Unknown: // any offset: as an unobserved append with Tail 0
			tailFirst[0] = min(tailFirst[0], call[i])
			tailCount[0]++
		default:
			m[out.Offset] = min(m[out.Offset], call[i])
			count[out.Offset]++
		}
	}
	tail, tails := none, 0
	for k := range m {
		tail, tails = min(tail, tailFirst[k]), tails+tailCount[k]
		m[k], count[k] = min(m[k], tail), count[k]+tails
	}
	// bound[o] = L(o): the largest m[k], k < o (-1 for o = 0).
	bound := make([]int, top+1)
	bound[0] = -1
	for o := 1; o <= int(top); o++ {
		bound[o] = max(bound[o-1], m[o-1])
	}
	// Invocations: after[i] is the position op i's invocation moves to
	// just after (call[i] when it stays). The operations it may compete
	// with are the known-offset appends at its offset and, rarer, those
	// that are not a known-offset append; each kind is listed by
	// invocation position, so only the candidates in range are looked at.
	atOffset := make([][]int, top+1)
	var others []int
	for p, e := range evs {
		switch {
		case e.ret:
		case off[e.id] >= 0:
			atOffset[off[e.id]] = append(atOffset[off[e.id]], p)
		default:
			others = append(others, p)
		}
	}
	after := make([]int, n)
	moved := false
	for i := range ops {
		after[i] = call[i]
		o := off[i]
		if o < 0 {
			continue
		}
		to := bound[o]
		if to >= ret[i] {
			to = ret[i] - 1 // never accepted: anywhere before its completion
		} else {
			// Keep its place before an operation it may compete with.
			for _, list := range [2][]int{atOffset[o], others} {
				k, _ := slices.BinarySearch(list, call[i]+1)
				for ; k < len(list) && list[k] <= to; k++ {
					if j := evs[list[k]].id; ret[j] > bound[o] && lo[j] <= o && o <= hi[j] {
						to = list[k] - 1
						break
					}
				}
			}
		}
		if to > call[i] {
			after[i], moved = to, true
		}
	}
	if moved {
		evs = relist(evs, after, call, false)
		positions(evs, call, ret)
	}
	// Completions: an append alone in being accepted at its offset o may
	// complete just after the last invocation before its completion of an
	// operation that may be accepted at a log at most o long (found in a
	// tree of the smallest lo of the invocations below each node).
	tree := newMinTree(len(evs))
	for p, e := range evs {
		if !e.ret {
			tree.set(p, lo[e.id])
		}
	}
	for i := range after {
		after[i] = ret[i]
	}
	for i := range ops {
		o := off[i]
		if o < 0 || count[o] != 1 || ret[i]-call[i] < 2 {
			continue
		}
		// NB: its own invocation has lo = o, so the search finds one.
		if p := tree.last(call[i], ret[i]-1, o); p < ret[i]-1 {
			after[i], moved = p, true
		}
	}
	if !moved {
		return ops
	}
	evs = relist(evs, after, ret, true)
	positions(evs, call, ret)
	// New times: the event at position p at p, distinct, in the new order.
	out := make([]porcupine.Operation, n)
	copy(out, ops)
	for i := range out {
		out[i].Call, out[i].Return = int64(call[i]), int64(ret[i])
	}
	return out
}

// positions records each operation's invocation and completion positions
// in evs.
func positions(evs byTime, call, ret []int) {
	for p, e := range evs {
		if e.ret {
			ret[e.id] = p
		} else {
			call[e.id] = p
		}
	}
}

// relist returns evs with the invocations (rets false) or completions
// (rets true) of each operation i moved to just after position after[i]
// (at[i] is its position now: it stays when after[i] == at[i]); events
// moved after one position keep their order.
func relist(evs byTime, after, at []int, rets bool) byTime {
	movedTo := func(e event) bool { return e.ret == rets && after[e.id] != at[e.id] }
	// start[p]: where the events moved just after position p begin, in
	// a list of every moved event in order (a counting sort by slot).
	start := make([]int, len(evs)+1)
	for _, e := range evs {
		if movedTo(e) {
			start[after[e.id]+1]++
		}
	}
	for p := 1; p < len(start); p++ {
		start[p] += start[p-1]
	}
	fill := slices.Clone(start)
	moved := make([]event, start[len(evs)])
	for _, e := range evs {
		if movedTo(e) {
			moved[fill[after[e.id]]] = e
			fill[after[e.id]]++
		}
	}
	out := make(byTime, 0, len(evs))
	for p, e := range evs {
		if !movedTo(e) {
			out = append(out, e)
		}
		out = append(out, moved[start[p]:start[p+1]]...)
	}
	return out
}

// minTree is a segment tree of the smallest value below each node, over
// positions 0..n-1 (unset positions hold +inf).
type minTree struct {
	size int // leaves, a power of two
	v    []int64
}

func newMinTree(n int) minTree {
	size := 1
	for size < n {
		size *= 2
	}
	v := make([]int64, 2*size)
	for i := range v {
		v[i] = math.MaxInt64
	}
	return minTree{size, v}
}

func (t minTree) set(p int, x int64) {
	for p += t.size; p > 0; p /= 2 {
		t.v[p] = min(t.v[p], x)
	}
}

// last returns the largest position in [l, r] whose value is at most x,
// or -1.
func (t minTree) last(l, r int, x int64) int {
	return t.lastIn(1, 0, t.size-1, l, r, x)
}

func (t minTree) lastIn(node, nl, nr, l, r int, x int64) int {
	if nr < l || nl > r || t.v[node] > x {
		return -1
	}
	if nl == nr {
		return nl
	}
	mid := (nl + nr) / 2
	if p := t.lastIn(2*node+1, mid+1, nr, l, r, x); p >= 0 {
		return p
	}
	return t.lastIn(2*node, nl, mid, l, r, x)
}
