package explore

import (
	"reflect"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// sender sends its name to the sink when it starts.
type sender struct {
	name string
	sink sim.NodeID
}

func (s *sender) Start(ctx *sim.Context)                            { ctx.Send(s.sink, msg(s.name)) }
func (s *sender) Receive(*sim.Context, sim.NodeID, sim.Message)     {}
func (s *sender) Timer(*sim.Context, sim.TimerID, string)           {}
func (k *sink) Start(*sim.Context)                                  {}
func (k *sink) Timer(*sim.Context, sim.TimerID, string)             {}
func (k *sink) Receive(_ *sim.Context, _ sim.NodeID, m sim.Message) { k.got += string(m.(msg)) }

// msg is a one-letter message.
type msg string

func (m msg) Kind() string { return "msg" }
func (m msg) Size() int    { return len(m) }

// sink records the order in which the messages arrive.
type sink struct{ got string }

// toy is a protocol of three senders whose messages reach the sink at the
// same instant: the kernel orders them through KindOrder choices (3, then
// 2 alternatives). The bug is the arrival order "cba", one interleaving of
// six. The state is the sequence received so far.
func toy(bug string) RunFunc {
	return func(c sim.Chooser, mark func(uint64)) (string, error) {
		w, err := sim.New(sim.Config{Chooser: c, Link: sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond}})
		if err != nil {
			return "", err
		}
		k := &sink{}
		sid, _ := w.AddNode("sink", func() sim.Node { return k }, sim.NodeOptions{})
		w.Inject(sim.Start{Node: sid})
		for _, n := range []string{"a", "b", "c"} {
			id, _ := w.AddNode(n, func() sim.Node { return &sender{name: n, sink: sid} }, sim.NodeOptions{})
			w.Inject(sim.Start{Node: id})
		}
		state := func() uint64 { return fnv(k.got) }
		mark(state())
		for {
			if _, ok := w.NextEventTime(); !ok {
				break
			}
			before := k.got
			w.Step()
			if k.got != before {
				mark(state())
			}
		}
		if k.got == bug {
			return "received " + k.got, nil
		}
		return "", nil
	}
}

func fnv(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// TestToyExhaustiveStateCount: the distinct states are the arrival
// sequences' prefixes: 1 empty + 3 of one + 6 of two + 6 of three = 16;
// each of the 3! = 6 orders takes exactly one run.
func TestToyExhaustiveStateCount(t *testing.T) {
	for _, p := range []int{1, 4} {
		rep, err := Search(toy("none"), Options{Parallel: p})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Exhausted || rep.Violation != nil || rep.States != 16 || rep.Runs != 6 || rep.Depth != 3 {
			t.Fatalf("parallel %d: %+v, want exhausted, 16 states, 6 runs, depth 3", p, rep)
		}
	}
}

// TestToyFindsTheOneBadInterleaving: breadth-first, "cba" is the sixth
// order tried (abc, bac, cab, acb, bca, cba) and every state is reached by
// then.
func TestToyFindsTheOneBadInterleaving(t *testing.T) {
	rep, err := Search(toy("cba"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Violation == nil || rep.Violation.What != "received cba" || rep.Violation.Run != 6 || rep.States != 16 {
		t.Fatalf("%+v %+v, want the violation in run 6 with 16 states", rep, rep.Violation)
	}
	// The saved choices replay the bad order exactly.
	got, _ := toy("cba")(sim.Replay(rep.Violation.Choices), func(uint64) {})
	if got != "received cba" {
		t.Fatalf("replay gave %q", got)
	}
}

// TestResume: a search stopped after 2 runs and resumed from its state file
// ends as the uninterrupted search does.
func TestResume(t *testing.T) {
	file := t.TempDir() + "/state.json"
	rep, err := Search(toy("cba"), Options{MaxRuns: 2, StateFile: file, Key: "toy"})
	if err != nil || rep.Violation != nil || rep.Runs != 2 {
		t.Fatalf("%+v %v", rep, err)
	}
	rep, err = Search(toy("cba"), Options{StateFile: file, Key: "toy"})
	if err != nil || rep.Violation == nil || rep.Violation.Run != 6 || rep.States != 16 {
		t.Fatalf("resumed: %+v %v", rep, err)
	}
	if _, err := Search(toy("cba"), Options{StateFile: file, Key: "other"}); err == nil {
		t.Fatal("a state file saved for another key was accepted")
	}
}

// TestRunBatchSerialSameAsParallel: the batch run in the caller (one
// worker) and on several workers gives the same outcomes in the same
// order: prefixes, choices, marks and violations.
func TestRunBatchSerialSameAsParallel(t *testing.T) {
	o3 := func(i int) sim.Choice { return sim.Choice{Kind: sim.KindOrder, N: 3, Index: i} }
	o2 := func(i int) sim.Choice { return sim.Choice{Kind: sim.KindOrder, N: 2, Index: i} }
	var prefixes [][]sim.Choice
	for i := 0; i < 3; i++ {
		prefixes = append(prefixes, []sim.Choice{o3(i)}, []sim.Choice{o3(i), o2(1)})
	}
	prefixes = append(prefixes, nil)
	run := toy("cba")
	serial := runBatch(run, prefixes, 1)
	for _, p := range []int{2, 3, 16} {
		par := runBatch(run, prefixes, p)
		if len(par) != len(serial) {
			t.Fatalf("parallel %d: %d outcomes, serial %d", p, len(par), len(serial))
		}
		for i := range serial {
			a, b := serial[i], par[i]
			if !reflect.DeepEqual(a.prefix, b.prefix) || !reflect.DeepEqual(a.choices, b.choices) || !reflect.DeepEqual(a.marks, b.marks) ||
				a.violation != b.violation || a.err != nil || b.err != nil {
				t.Fatalf("parallel %d, prefix %d %v: serial %+v, parallel %+v", p, i, prefixes[i], a, b)
			}
		}
	}
	violations := 0
	for _, o := range serial {
		if o.violation != "" {
			violations++
		}
	}
	if violations == 0 {
		t.Fatal("no prefix reached the bad order: the comparison checks little")
	}
}
