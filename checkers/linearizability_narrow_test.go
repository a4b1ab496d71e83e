package checkers

import (
	"strconv"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/kafkasim/kafkasim/model"
)

// TestNarrowKeepsVerdict holds narrow to its claim: on small random
// partition histories, porcupine finds the narrowed history linearizable
// exactly when it finds the recorded one so. The histories are mostly
// concurrent appends at known offsets, taking effect in offset order at a
// point inside their intervals (some with no completion, as acks=1), with
// appends of unknown outcome, reads and high-watermark reads among them;
// some are then corrupted (an offset, a read or an interval changed), so
// both verdicts occur. Both must, and narrowing must have changed most of
// the histories, or the test would prove nothing.
func TestNarrowKeepsVerdict(t *testing.T) {
	m := model.Model()
	m.Partition = nil
	var narrowed, ok, illegal int
	rapid.Check(t, func(t *rapid.T) {
		ops := drawNarrowable(t)
		n := narrow(ops)
		if &n[0] != &ops[0] {
			narrowed++
		}
		want := porcupine.CheckOperations(m, ops)
		if got := porcupine.CheckOperations(m, n); got != want {
			t.Fatalf("recorded history linearizable=%v, narrowed %v\nrecorded: %v\nnarrowed: %v", want, got, ops, n)
		}
		if want {
			ok++
		} else {
			illegal++
		}
	})
	if ok < 10 || illegal < 10 || narrowed < (ok+illegal)/2 {
		t.Fatalf("%d linearizable and %d not, %d narrowed: the draw does not exercise narrow", ok, illegal, narrowed)
	}
}

// drawNarrowable draws one partition's porcupine history of 2-9 operations
// against a true log (see TestNarrowKeepsVerdict).
func drawNarrowable(t *rapid.T) []porcupine.Operation {
	key := model.Key{Topic: "t"}
	var log []string
	ops := drawTimed(t, timing{minN: 2, maxN: 9, span: 30, before: 12, after: 12}, func(i int, op *porcupine.Operation) {
		switch kind := rapid.IntRange(0, 9).Draw(t, "kind"); {
		case kind < 6: // an acknowledged append, sometimes with no completion (acks=1)
			v := "m" + strconv.Itoa(i)
			op.Input, op.Output = model.Input{Key: key, Kind: model.Append, Value: v}, model.Output{Offset: int64(len(log))}
			if kind == 0 {
				op.Return = never
			}
			log = append(log, v)
		case kind == 6: // an append of unknown outcome
			v := "m" + strconv.Itoa(i)
			op.Input, op.Output, op.Return = model.Input{Key: key, Kind: model.Append, Value: v}, model.Output{Unknown: true}, never
			log = append(log, v)
		case kind == 7 && len(log) > 0: // a read of the log's tail
			from := rapid.IntRange(0, len(log)-1).Draw(t, "from")
			var recs []model.Record
			for o := from; o < len(log); o++ {
				recs = append(recs, model.Record{Offset: int64(o), Value: log[o]})
			}
			op.Input, op.Output = model.Input{Key: key, Kind: model.Read, Offset: int64(from)}, model.Output{Records: recs}
		default:
			op.Input, op.Output = model.Input{Key: key, Kind: model.HighWatermark}, model.Output{HighWatermark: int64(len(log))}
		}
	})
	corrupt(t, ops, corruption{min: 0, max: 2, shift: 20})
	return ops
}

// TestNarrowPlacesEachAppendAtFirstTry is the reason narrow exists: sends
// invoked first but acknowledged last (retries through a fault), around
// many sends that go through in order. Porcupine on the recorded history
// tries every stuck send at every step; on the narrowed one, every append's
// first try succeeds. Counts of model steps are deterministic.
func TestNarrowPlacesEachAppendAtFirstTry(t *testing.T) {
	const n, stuck = 200, 20
	key := model.Key{Topic: "t"}
	var ops []porcupine.Operation
	add := func(offset, call, ret int64) {
		ops = append(ops, porcupine.Operation{ClientId: len(ops) % 3, Call: call, Return: ret, Metadata: len(ops),
			Input: model.Input{Key: key, Kind: model.Append, Value: "m" + strconv.Itoa(len(ops))}, Output: model.Output{Offset: offset}})
	}
	for i := int64(0); i < stuck; i++ {
		add(n+i, i, 10*(n+1)) // invoked first, acknowledged last, at the last offsets
	}
	for i := int64(0); i < n; i++ {
		add(i, 10*i+stuck, 10*i+stuck+5)
	}
	steps := func(ops []porcupine.Operation) int {
		count := 0
		m := model.Model()
		m.Partition = nil
		step := m.Step
		m.Step = func(s, in, out any) (bool, any) { count++; return step(s, in, out) }
		if !porcupine.CheckOperations(m, ops) {
			t.Fatal("not linearizable")
		}
		return count
	}
	if got := steps(narrow(ops)); got != len(ops) {
		t.Errorf("narrowed: %d model steps for %d appends, want one each", got, len(ops))
	}
	if got := steps(ops); got < n*stuck {
		t.Errorf("recorded: %d model steps; each stuck send should have been tried at every step (%d)", got, n*stuck)
	}
}

// TestNarrowLeavesContradictionsAsRecorded: two appends at one offset, and
// an offset order that real time contradicts, have no linearization; narrow
// hands them back unchanged, for porcupine to explain.
func TestNarrowLeavesContradictionsAsRecorded(t *testing.T) {
	key := model.Key{Topic: "t"}
	op := func(offset, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Call: call, Return: ret, Input: model.Input{Key: key, Kind: model.Append, Value: "v"}, Output: model.Output{Offset: offset}}
	}
	for name, ops := range map[string][]porcupine.Operation{
		"one offset twice":       {op(0, 0, 1), op(1, 2, 3), op(1, 4, 5)},
		"offset 1 ends before 0": {op(0, 5, 6), op(1, 0, 1)},
	} {
		if n := narrow(ops); &n[0] != &ops[0] {
			t.Errorf("%s: narrowed to %v", name, n)
		}
	}
}
