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
