// cycles.go: Elle's cycle anomalies over the dependency graph that
// jepsen.tests.kafka builds (kafka.clj ww-graph, wr-graph, cycles!), and
// Elle's empty-transaction-graph.
//
// The graph relates completions (not invocations) of :txn, :poll and
// :send ops, whatever their type:
//   - ww: T1 -> T2 when T2 sent v2 to a key and T1 sent the value just
//     before v2 in the key's version order (Jepsen's :ww-deps, log order of
//     writes to the same key);
//   - wr: T1 -> T2 when T2 read a value T1 sent;
//   - realtime: T1 -> T2 when T1 completed :ok before T2 was invoked (Elle's
//     realtime-graph, a transitive reduction), as Jepsen asks Elle for
//     strict serializability.
//
// Each strongly connected component is searched, as Elle does, for G0 (ww
// only), G1c (ww and wr, at least one wr), G0-realtime and G1c-realtime
// (those with at least one realtime edge), in that order, skipping a type
// the ones found imply (G0 implies all the others, G1c implies
// G1c-realtime). A cycle is named by its edges as Elle's explainer does: an
// edge that is both ww and realtime is ww. One anomaly per type per
// component.
//
// G0-process and G1c-process: Jepsen's kafka checker never reports them
// (the realtime order holds every process's order, so Elle adds no process
// graph). kafkasim searches them as Elle does for the strong-session models,
// over ww, wr and each process's consecutive :ok ops, reporting a
// component's cycle only when neither G0 nor G1c is there; each is also a
// realtime cycle.
//
// What it simplifies: Elle searches simple paths breadth first from every
// op until a timeout; this takes, per component and type, the shortest
// cycle through the first edge (in history order) of the kind the type
// needs, and gives up (unknown) past a step budget or when the only walks
// found for G1c-realtime/-process revisit an op. A value with no writer in
// the history (Jepsen throws :no-writer-of-value) adds no edge.

package jepsen

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/checkers"
)

// The names of Elle's anomalies, as verdict and anomaly names.
const (
	NameG0                    = "G0"
	NameG1c                   = "G1c"
	NameG0Process             = "G0-process"
	NameG1cProcess            = "G1c-process"
	NameG0Realtime            = "G0-realtime"
	NameG1cRealtime           = "G1c-realtime"
	NameEmptyTransactionGraph = "empty-transaction-graph"
)

// CycleNames lists the cycle verdicts of Check, in order.
var CycleNames = []string{NameG0, NameG1c, NameG0Process, NameG1cProcess, NameG0Realtime, NameG1cRealtime}

// rel is a set of dependency kinds on an edge.
type rel uint8

const (
	relWW rel = 1 << iota
	relWR
	relRealtime
	relProcess
)

// cycleBudget bounds the search steps over the whole history; past it the
// cycle verdicts are unknown (Elle's :cycle-search-timeout).
var cycleBudget = 20_000_000

// depGraph is a dependency graph over op positions.
type depGraph struct {
	out   map[int]map[int]rel
	nodes []int // sorted
}

func newDepGraph() *depGraph { return &depGraph{out: map[int]map[int]rel{}} }

func (g *depGraph) link(a, b int, r rel) {
	if a == b {
		return
	}
	if g.out[a] == nil {
		g.out[a] = map[int]rel{}
	}
	g.out[a][b] |= r
}

func (g *depGraph) finish() {
	seen := map[int]bool{}
	for a, bs := range g.out {
		seen[a] = true
		for b := range bs {
			seen[b] = true
		}
	}
	for n := range seen {
		g.nodes = append(g.nodes, n)
	}
	sort.Ints(g.nodes)
}

// succ returns a's successors over edges intersecting mask, sorted.
func (g *depGraph) succ(a int, mask rel, in map[int]bool) []int {
	var out []int
	for b, r := range g.out[a] {
		if r&mask != 0 && (in == nil || in[b]) {
			out = append(out, b)
		}
	}
	sort.Ints(out)
	return out
}

// sccs returns the components of more than one node of the subgraph on
// nodes (sorted) over edges intersecting mask, each sorted, in order of
// their first node (Tarjan, iterative).
func (g *depGraph) sccs(nodes []int, mask rel) [][]int {
	in := map[int]bool{}
	for _, n := range nodes {
		in[n] = true
	}
	index, low := map[int]int{}, map[int]int{}
	onStack := map[int]bool{}
	var stack []int
	var out [][]int
	next := 0
	type frame struct {
		n    int
		succ []int
		i    int
	}
	for _, root := range nodes {
		if _, ok := index[root]; ok {
			continue
		}
		call := []frame{{n: root, succ: g.succ(root, mask, in)}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.i < len(f.succ) {
				w := f.succ[f.i]
				f.i++
				if _, ok := index[w]; !ok {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{n: w, succ: g.succ(w, mask, in)})
				} else if onStack[w] && index[w] < low[f.n] {
					low[f.n] = index[w]
				}
				continue
			}
			n := f.n
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].n
				if low[n] < low[p] {
					low[p] = low[n]
				}
			}
			if low[n] == index[n] {
				var comp []int
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == n {
						break
					}
				}
				if len(comp) > 1 {
					sort.Ints(comp)
					out = append(out, comp)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// cycleSpec is one of Elle's cycle anomaly types: the edges it may use
// and those it needs at least one of, each.
type cycleSpec struct {
	name     string
	rels     rel
	required []rel
}

var (
	specG0          = cycleSpec{NameG0, relWW, nil}
	specG1c         = cycleSpec{NameG1c, relWW | relWR, []rel{relWR}}
	specG0Process   = cycleSpec{NameG0Process, relWW | relProcess, []rel{relProcess}}
	specG1cProcess  = cycleSpec{NameG1cProcess, relWW | relWR | relProcess, []rel{relWR, relProcess}}
	specG0Realtime  = cycleSpec{NameG0Realtime, relWW | relRealtime, []rel{relRealtime}}
	specG1cRealtime = cycleSpec{NameG1cRealtime, relWW | relWR | relRealtime, []rel{relWR, relRealtime}}
)

// implied are the types a found type implies (elle.consistency-model's
// implied-anomalies, restricted to these), which are then not searched.
var implied = map[string][]string{
	NameG0:         {NameG1c, NameG0Process, NameG1cProcess, NameG0Realtime, NameG1cRealtime},
	NameG1c:        {NameG1cProcess, NameG1cRealtime},
	NameG0Process:  {NameG1cProcess, NameG0Realtime, NameG1cRealtime},
	NameG1cProcess: {NameG1cRealtime},
	NameG0Realtime: {NameG1cRealtime},
}

// search is the state of one history's cycle search.
type search struct {
	g      *depGraph
	budget int
	// undecided names the types whose search gave up, with why.
	undecided map[string]string
}

// findCycle returns a simple cycle of spec within comp (sorted), as the
// ops in order (the last links back to the first), or nil.
func (s *search) findCycle(comp []int, spec cycleSpec) []int {
	for _, sub := range s.g.sccs(comp, spec.rels) {
		in := map[int]bool{}
		for _, n := range sub {
			in[n] = true
		}
		// The edges of the first required kind (any edge for G0), in
		// history order: a cycle through one of them is wanted.
		first := spec.rels
		if len(spec.required) > 0 {
			first = spec.required[0]
		}
		var rest rel
		for _, r := range spec.required[min(1, len(spec.required)):] {
			rest |= r
		}
		nonSimple := false
		for _, u := range sub {
			for _, v := range s.g.succ(u, first, in) {
				if s.budget <= 0 {
					s.undecided[spec.name] = "the search budget ran out (Elle's cycle-search-timeout)"
					return nil
				}
				// A path v ~> u; if the edge u -> v lacks a rest kind, the
				// path must take one.
				need := rest != 0 && s.g.out[u][v]&rest == 0
				path, simple := s.path(v, u, spec.rels, rest, need, in)
				if path == nil {
					continue
				}
				if !simple {
					nonSimple = true
					continue
				}
				return rotateMin(path)
			}
		}
		if nonSimple {
			s.undecided[spec.name] = "only walks that revisit an op were found"
		}
	}
	return nil
}

// path returns a shortest path from a to b (inclusive) over edges
// intersecting mask within in; with need, one taking an edge intersecting
// rest. simple is false if the path revisits an op.
func (s *search) path(a, b int, mask, rest rel, need bool, in map[int]bool) ([]int, bool) {
	type state struct {
		n   int
		got bool
	}
	start := state{a, !need}
	parent := map[state]state{start: start}
	queue := []state{start}
	goal := state{b, true}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == goal {
			var rev []int
			for st := cur; ; st = parent[st] {
				rev = append(rev, st.n)
				if st == start {
					break
				}
			}
			seen := map[int]bool{}
			simple := true
			path := make([]int, len(rev))
			for i, n := range rev {
				path[len(rev)-1-i] = n
				if seen[n] {
					simple = false
				}
				seen[n] = true
			}
			return path, simple
		}
		for _, w := range s.g.succ(cur.n, mask, in) {
			s.budget--
			nxt := state{w, cur.got || s.g.out[cur.n][w]&rest != 0}
			if _, ok := parent[nxt]; !ok {
				parent[nxt] = cur
				queue = append(queue, nxt)
			}
		}
	}
	return nil, true
}

// rotateMin rotates a cycle to start at its first op in history order.
func rotateMin(c []int) []int {
	m := 0
	for i, x := range c {
		if x < c[m] {
			m = i
		}
	}
	return append(append([]int(nil), c[m:]...), c[:m]...)
}

// cycleFound is one cycle, named by its edges.
type cycleFound struct {
	name string
	ops  []int
}

// searchComponents runs the specs, in order, over every component of g.
func (s *search) searchComponents(specs []cycleSpec) []cycleFound {
	var out []cycleFound
	for _, comp := range s.g.sccs(s.g.nodes, relWW|relWR|relRealtime|relProcess) {
		skip := map[string]bool{}
		for _, spec := range specs {
			if skip[spec.name] {
				continue
			}
			c := s.findCycle(comp, spec)
			if c == nil {
				continue
			}
			name := s.classify(c)
			out = append(out, cycleFound{name, c})
			for _, t := range append([]string{spec.name}, implied[spec.name]...) {
				skip[t] = true
			}
		}
	}
	return out
}

// stepRel is how Elle's combined explainer explains an edge: ww first,
// then wr, then realtime or process.
func stepRel(r rel) rel {
	for _, k := range []rel{relWW, relWR, relRealtime, relProcess} {
		if r&k != 0 {
			return k
		}
	}
	return 0
}

// classify names a cycle as Elle's cycle-explainer does.
func (s *search) classify(c []int) string {
	var kinds rel
	for i, a := range c {
		kinds |= stepRel(s.g.out[a][c[(i+1)%len(c)]])
	}
	name := NameG0
	if kinds&relWR != 0 {
		name = NameG1c
	}
	switch {
	case kinds&relRealtime != 0:
		name += "-realtime"
	case kinds&relProcess != 0:
		name += "-process"
	}
	return name
}

// graphs are the dependency graphs of a history: Jepsen's (ww, wr,
// realtime) and the process one (ww, wr, process).
type graphs struct {
	main, process *depGraph
	// invokeOf is the position of each completion's invocation, or -1.
	invokeOf []int
	// noWriter counts read or ordered values with no writer.
	noWriter int
}

func (a *analysis) buildGraphs() *graphs {
	h := a.h
	gs := &graphs{main: newDepGraph(), process: newDepGraph(), invokeOf: make([]int, len(h.Ops))}
	isTxn := func(i int) bool {
		f := h.Ops[i].F
		return f == "txn" || f == "poll" || f == "send"
	}
	both := func(x, y int, r rel) {
		gs.main.link(x, y, r)
		gs.process.link(x, y, r)
	}
	// ww: the writer of the value before each written value.
	for _, k := range a.keys {
		if !a.wwDeps {
			break
		}
		o := a.orders[k]
		vals := make([]Value, 0, len(a.writerOf[k]))
		for v := range a.writerOf[k] {
			vals = append(vals, v)
		}
		sortValues(vals)
		for _, v2 := range vals {
			op2 := a.writerOf[k][v2]
			i2, ok := o.index(v2)
			if !ok || i2 == 0 || !isTxn(op2) {
				continue
			}
			op1, ok := a.writerOf[k][o.byIndex[i2-1]]
			if !ok {
				gs.noWriter++
				continue
			}
			if isTxn(op1) {
				both(op1, op2, relWW)
			}
		}
	}
	// wr: the writer of each value to its readers.
	for i := range h.Ops {
		if h.Ops[i].Type == Invoke || !isTxn(i) {
			continue
		}
		for _, kv := range a.reads[i] {
			for _, v := range kv.values {
				w, ok := a.writerOf[kv.key][v]
				if !ok {
					gs.noWriter++
					continue
				}
				if isTxn(w) {
					both(w, i, relWR)
				}
			}
		}
	}
	// realtime (Elle's realtime-graph) and process order, over txn, poll
	// and send ops.
	pending := map[int64]int{}
	lastOK := map[int64]int{}
	completionOf := map[int]int{}
	for i := range h.Ops {
		gs.invokeOf[i] = -1
		if !isTxn(i) {
			continue
		}
		op := &h.Ops[i]
		if op.Type == Invoke {
			pending[op.Process] = i
			continue
		}
		if inv, ok := pending[op.Process]; ok {
			gs.invokeOf[i] = inv
			completionOf[inv] = i
			delete(pending, op.Process)
		}
	}
	buffer := map[int]bool{}
	into := map[int][]int{}
	for i := range h.Ops {
		if !isTxn(i) {
			continue
		}
		op := &h.Ops[i]
		switch op.Type {
		case Invoke:
			if c, ok := completionOf[i]; ok {
				for b := range buffer {
					gs.main.link(b, c, relRealtime)
					into[c] = append(into[c], b)
				}
			}
		case OK:
			for _, b := range into[i] {
				delete(buffer, b)
			}
			delete(into, i)
			buffer[i] = true
			if p, ok := lastOK[op.Process]; ok {
				gs.process.link(p, i, relProcess)
			}
			lastOK[op.Process] = i
		}
	}
	gs.main.finish()
	gs.process.finish()
	return gs
}

// cycles returns the verdicts of CycleNames and empty-transaction-graph.
func (a *analysis) cycles() []checkers.Verdict {
	gs := a.buildGraphs()
	main := &search{g: gs.main, budget: cycleBudget, undecided: map[string]string{}}
	found := main.searchComponents([]cycleSpec{specG0, specG1c, specG0Realtime, specG1cRealtime})
	proc := &search{g: gs.process, budget: cycleBudget, undecided: map[string]string{}}
	for _, c := range proc.searchComponents([]cycleSpec{specG0, specG1c, specG0Process, specG1cProcess}) {
		if strings.HasSuffix(c.name, "-process") {
			found = append(found, c)
		}
	}
	for name, why := range proc.undecided {
		if strings.HasSuffix(name, "-process") {
			main.undecided[name] = why
		}
	}
	byName := map[string][]checkers.Anomaly{}
	for _, c := range found {
		byName[c.name] = append(byName[c.name], a.cycleAnomaly(c, gs))
	}
	var notes []string
	if gs.noWriter > 0 {
		notes = append(notes, plural(gs.noWriter, "read or ordered value")+" with no send in the history add no edge (Jepsen throws :no-writer-of-value)")
	}
	out := make([]checkers.Verdict, 0, len(CycleNames)+1)
	for _, name := range CycleNames {
		ns := append([]string(nil), notes...)
		why, undecided := main.undecided[name]
		if undecided {
			ns = append(ns, "search incomplete: "+why)
		}
		if !a.wwDeps {
			// Without ww edges a cycle through one cannot be seen: none
			// found is not "none there".
			undecided = true
			ns = append(ns, "without :ww-deps (-ww-deps=false) there are no ww edges, so cycles through one are not searched")
		}
		out = append(out, checkers.NewVerdict(name, byName[name], undecided, ns...))
	}
	if len(gs.main.nodes) == 0 {
		// Elle's :empty-transaction-graph: nothing to analyse. Jepsen
		// counts it invalid; Elle's own valid? is :unknown, and so is this
		// verdict (with the anomaly as its evidence), never ok.
		out = append(out, checkers.Verdict{Checker: NameEmptyTransactionGraph, Result: checkers.ResultUnknown,
			Anomalies: []checkers.Anomaly{{Kind: NameEmptyTransactionGraph, Permitted: true,
				Description: "no dependency between txn, poll or send ops (no ww, wr or realtime edge): Elle has nothing to analyse, and Jepsen counts the history invalid"}},
			Notes: []string{"nothing to analyse is not a pass"}})
	} else {
		out = append(out, checkers.NewVerdict(NameEmptyTransactionGraph, nil, false,
			"the dependency graph has "+plural(len(gs.main.nodes), "op")))
	}
	return out
}

// cycleAnomaly renders a cycle with Jepsen's explanations of its steps.
func (a *analysis) cycleAnomaly(c cycleFound, gs *graphs) checkers.Anomaly {
	g := gs.main
	if strings.HasSuffix(c.name, "-process") {
		g = gs.process
	}
	an := checkers.Anomaly{Kind: c.name}
	var steps []string
	hasWW := false
	for i, x := range c.ops {
		y := c.ops[(i+1)%len(c.ops)]
		r := stepRel(g.out[x][y])
		step, offs := a.explainStep(x, y, r, gs)
		steps = append(steps, step)
		an.Offsets = append(an.Offsets, offs...)
		if r == relWW {
			hasWW = true
		}
	}
	for _, x := range c.ops {
		an.Ops = append(an.Ops, a.h.Ops[x].ID())
	}
	refs := make([]string, 0, len(c.ops)+1)
	for _, x := range append(c.ops, c.ops[0]) {
		refs = append(refs, a.ref(x))
	}
	an.Description = "cycle " + strings.Join(refs, " -> ") + ": " + strings.Join(steps, "; ") +
		" (ops " + strings.Join(refs[:len(refs)-1], ", ") + ")"
	switch {
	case strings.HasPrefix(c.name, NameG0):
		an.Permitted = true
		an.Description += "; permitted: Kafka does not isolate writes (Jepsen always allows G0)"
	case hasWW:
		an.Permitted = true
		an.Description += "; permitted: a ww edge, and Kafka does not isolate writes (Jepsen allows G1c with :ww-deps)"
	case c.name == NameG1c:
		an.Description += "; no ww edge: information flowed in a circle through reads alone, which read committed forbids"
	default:
		an.Description += "; no ww edge: a read saw a write that the " + strings.TrimPrefix(c.name, NameG1c+"-") +
			" order puts after it, which read committed with that order forbids"
	}
	return an
}

// explainStep says why x precedes y, as Jepsen's explainers do, with the
// offsets involved.
func (a *analysis) explainStep(x, y int, r rel, gs *graphs) (string, []int64) {
	h := a.h
	switch r {
	case relWW:
		for _, kv := range a.writes[y] {
			o := a.orders[kv.key]
			for _, v2 := range kv.values {
				i2, ok := o.index(v2)
				if !ok || i2 == 0 {
					continue
				}
				v1 := o.byIndex[i2-1]
				if w, ok := a.writerOf[kv.key][v1]; ok && w == x {
					return a.ref(x) + " sent " + v1.String() + " to " + kv.key.String() + " at offset " + itoa(o.offsets[i2-1]) +
						" before " + a.ref(y) + " sent " + v2.String() + " at offset " + itoa(o.offsets[i2]) + " (ww)", []int64{o.offsets[i2-1], o.offsets[i2]}
				}
			}
		}
	case relWR:
		for _, kv := range a.reads[y] {
			for j, v := range kv.values {
				if w, ok := a.writerOf[kv.key][v]; ok && w == x {
					s := a.ref(x) + " sent " + v.String() + " to " + kv.key.String()
					var offs []int64
					if kv.pairs[j].HasOffset {
						s += " at offset " + itoa(kv.pairs[j].Offset)
						offs = []int64{kv.pairs[j].Offset}
					}
					return s + " which was polled by " + a.ref(y) + " (wr)", offs
				}
			}
		}
	case relRealtime:
		s := a.ref(x) + " completed before " + a.ref(y)
		if inv := gs.invokeOf[y]; inv >= 0 {
			s += " was invoked (" + a.ref(inv) + ")"
		} else {
			s += " was invoked"
		}
		return s + " (realtime)", nil
	case relProcess:
		return "process " + strconv.FormatInt(h.Ops[x].Process, 10) + " ran " + a.ref(x) + " before " + a.ref(y) + " (process)", nil
	}
	return a.ref(x) + " precedes " + a.ref(y), nil
}
