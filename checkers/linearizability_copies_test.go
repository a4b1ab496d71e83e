package checkers

import (
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/kafkasim/kafkasim/model"
)

// TestCopiesBelowLosesNoLinearization holds copiesBelow to its claim: on
// small random contract-model histories (drawContractHistory: offsets
// reused after truncations, appends over unobserved copies of their
// value, reads, HW reads, some corrupted), porcupine finds the history
// with the copies copiesBelow marks linearizable exactly when it finds it
// so with copies allowed below every append whose value a truncation
// excuses, at every offset. Copies must have mattered (a verdict without
// any differs) in enough histories, or the test proves nothing.
func TestCopiesBelowLosesNoLinearization(t *testing.T) {
	var mattered, ok int
	// NB: five histories per case, so that the counts below cannot fall
	// short by chance.
	rapid.Check(t, func(t *rapid.T) {
		for range 5 {
			checkCopiesBelow(t, &mattered, &ok)
		}
	})
	t.Logf("copies mattered in %d histories, %d linearizable", mattered, ok)
	if mattered < 10 || ok < 50 {
		t.Fatalf("copies mattered in %d histories, %d linearizable: the draw does not exercise copiesBelow", mattered, ok)
	}
}

// checkCopiesBelow draws one history for TestCopiesBelowLosesNoLinearization
// and checks it, counting those where copies mattered and the
// linearizable ones.
func checkCopiesBelow(t *rapid.T, mattered, ok *int) {
	ops := drawContractHistory(t)
	excused := map[string]bool{}
	for _, op := range ops {
		if in := op.Input.(model.Input); in.Kind == model.Truncate {
			for v := range in.Excused {
				excused[v] = true
			}
		}
	}
	none, marked, every := slices.Clone(ops), slices.Clone(ops), slices.Clone(ops)
	for i := range ops {
		in, out := ops[i].Input.(model.Input), ops[i].Output.(model.Output)
		if in.Kind != model.Append || out.Unknown || out.Unobserved {
			continue
		}
		out.Copies = 0
		none[i].Output, marked[i].Output = out, out
		if excused[in.Value] {
			out.Copies = max(out.Offset, 0)
		}
		every[i].Output = out
	}
	copiesBelow(marked, func(int) bool { return true })
	want := porcupine.CheckOperations(contractModel, every)
	if got := porcupine.CheckOperations(contractModel, marked); got != want {
		t.Fatalf("copies everywhere: linearizable=%v; copies where copiesBelow marks them: %v\nhistory: %v\nmarked: %v", want, got, every, marked)
	}
	if want {
		*ok++
	}
	if porcupine.CheckOperations(contractModel, none) != want {
		*mattered++
	}
}

// TestCopiesBelowValueWrittenAgain: a read after X that finds X's value
// at X's offset pins X's copies (none below it can have been cut) only
// when nothing else can put that value there again. X=v at 2 needs a
// copy at 1 (w takes offset 1 only after the loss); the last read finds
// v at 2 again, written by a retry of unknown outcome or a second append
// at 2: copies marked, linearizable. Without the second write, none is.
func TestCopiesBelowValueWrittenAgain(t *testing.T) {
	key := model.Key{Topic: "t"}
	app := func(v string, off, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: 0, Call: call, Return: ret,
			Input: model.Input{Key: key, Kind: model.Append, Value: v}, Output: model.Output{Offset: off}}
	}
	base := []porcupine.Operation{
		app("a", 0, 0, 1),
		app("v", 2, 0, 10),
		{ClientId: 1, Call: 20, Return: never, Input: model.Input{Key: key, Kind: model.Truncate, Value: "fact", Excused: map[string]bool{"v": true}}, Output: model.Output{}},
		app("w", 1, 30, 31),
		{ClientId: 2, Call: 40, Return: 41, Input: model.Input{Key: key, Kind: model.Read},
			Output: model.Output{Records: []model.Record{{Offset: 0, Value: "a"}, {Offset: 1, Value: "w"}, {Offset: 2, Value: "v"}}}},
	}
	unknown := app("v", 0, 25, never)
	unknown.Output = model.Output{Unknown: true}
	for _, tc := range []struct {
		name  string
		again []porcupine.Operation
		want  bool
	}{
		{"a retry of unknown outcome", []porcupine.Operation{unknown}, true},
		{"a second append at 2", []porcupine.Operation{app("v", 2, 25, never)}, true},
		{"nothing", nil, false},
	} {
		ops := append(slices.Clone(base), tc.again...)
		marked := copiesBelow(ops, func(int) bool { return true })
		if got := slices.Contains(marked, 1); got != tc.want {
			t.Errorf("%s: copies below v marked %v, want %v", tc.name, got, tc.want)
		}
		if got := porcupine.CheckOperations(contractModel, ops); got != tc.want {
			t.Errorf("%s: linearizable %v, want %v", tc.name, got, tc.want)
		}
	}
}
