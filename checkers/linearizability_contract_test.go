package checkers

import (
	"strconv"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/kafkasim/kafkasim/model"
)

// TestNarrowContractKeepsVerdict holds narrowContract to its claim: on
// small random contract-model histories, porcupine finds the narrowed
// history linearizable exactly when it finds the original so. The
// histories (drawContractHistory) are a log that truncations cut back and
// appends refill (offsets reused), read and HW-read, with appends of
// unknown outcome and unobserved ones; some are corrupted, so both
// verdicts occur. Both must, and narrowing must have moved invocations in
// most histories of each, or the test would prove nothing.
func TestNarrowContractKeepsVerdict(t *testing.T) {
	var ok, illegal, okMoved, illegalMoved int
	rapid.Check(t, func(t *rapid.T) {
		ops := drawContractHistory(t)
		n := narrowContract(ops)
		want := porcupine.CheckOperations(contractModel, ops)
		if got := porcupine.CheckOperations(contractModel, n); got != want {
			t.Fatalf("original linearizable=%v, narrowed %v\noriginal: %v\nnarrowed: %v", want, got, ops, n)
		}
		moved := &n[0] != &ops[0]
		if want {
			ok++
			if moved {
				okMoved++
			}
		} else {
			illegal++
			if moved {
				illegalMoved++
			}
		}
	})
	if ok < 10 || illegal < 10 || okMoved < ok/5 || illegalMoved < illegal/5 {
		t.Fatalf("%d linearizable (%d moved), %d not (%d moved): the draw does not exercise narrowContract", ok, okMoved, illegal, illegalMoved)
	}
}

// drawContractHistory draws a contract-model history of 2-10 operations
// (see TestNarrowContractKeepsVerdict) against a true log.
func drawContractHistory(t *rapid.T) []porcupine.Operation {
	key := model.Key{Topic: "t"}
	var log []string
	ops := drawTimed(t, timing{minN: 2, maxN: 12, span: 30, before: 20, after: 10}, func(i int, op *porcupine.Operation) {
		v := "m" + strconv.Itoa(i)
		switch kind := rapid.IntRange(0, 13).Draw(t, "kind"); {
		case kind < 7: // an acknowledged append, sometimes never completing (acks=1)
			op.Input, op.Output = model.Input{Key: key, Kind: model.Append, Value: v}, model.Output{Offset: int64(len(log))}
			if kind == 0 {
				op.Return = never
			}
			log = append(log, v)
		case kind == 7: // an append of unknown outcome
			op.Input, op.Output, op.Return = model.Input{Key: key, Kind: model.Append, Value: v}, model.Output{Unknown: true}, never
			log = append(log, v)
		case kind == 8: // an unobserved append, past the tail
			op.Input = model.Input{Key: key, Kind: model.Append, Value: v}
			op.Output, op.Return = model.Output{Unknown: true, Unobserved: true, Tail: int64(len(log))}, never
			log = append(log, model.Hidden)
		case kind < 11: // a truncation of an excused suffix, from its fact on
			excused := map[string]bool{}
			for _, x := range log {
				if rapid.Bool().Draw(t, "excused") {
					excused[x] = true
				}
			}
			cut := len(log)
			for cut > 0 && (excused[log[cut-1]] || log[cut-1] == model.Hidden) && rapid.Bool().Draw(t, "cut") {
				cut--
			}
			log = log[:cut]
			op.Input, op.Output, op.Return = model.Input{Key: key, Kind: model.Truncate, Value: "fact", Excused: excused}, model.Output{}, never
		case kind == 11 && len(log) > 0: // a read of part of the log
			from := rapid.IntRange(0, len(log)-1).Draw(t, "from")
			var recs []model.Record
			for o := from; o < len(log); o++ {
				if log[o] != model.Hidden {
					recs = append(recs, model.Record{Offset: int64(o), Value: log[o]})
				}
			}
			op.Input, op.Output = model.Input{Key: key, Kind: model.Read, Offset: int64(from)}, model.Output{Records: recs}
		default:
			op.Input, op.Output = model.Input{Key: key, Kind: model.HighWatermark}, model.Output{HighWatermark: int64(len(log))}
		}
	})
	corrupt(t, ops, corruption{min: 1, max: 3, shift: 15, clamp: true})
	return ops
}

// TestContractWitnessIsLinearizable: whenever contractWitness exhibits a
// linearization, porcupine finds the contract history linearizable. The
// drawn histories (drawContractHistory: truncations, reused offsets,
// reads, HW reads, appends of unknown outcome and unobserved ones, some
// corrupted) must include ones the witness decides, linearizable ones it
// leaves to porcupine, and refused ones, or the test proves nothing. The
// hint is each operation's invocation moved by a drawn amount: soundness
// must not depend on it.
func TestContractWitnessIsLinearizable(t *testing.T) {
	var found, missed, refused int
	// NB: five histories per case, so that each kind is drawn dozens of
	// times and the counts below cannot fall short by chance.
	rapid.Check(t, func(t *rapid.T) {
		for range 5 {
			ops := drawContractHistory(t)
			shift := int64(rapid.IntRange(0, 20).Draw(t, "hint shift"))
			w := contractWitness(ops, func(op *porcupine.Operation) int64 { return op.Call + shift })
			linear := porcupine.CheckOperations(contractModel, ops)
			switch {
			case w && !linear:
				t.Fatalf("contractWitness exhibited a linearization of a history porcupine refuses: %v", ops)
			case w:
				found++
			case linear:
				missed++
			default:
				refused++
			}
		}
	})
	t.Logf("%d exhibited, %d linearizable left to porcupine, %d refused", found, missed, refused)
	if found < 10 || missed < 10 || refused < 10 {
		t.Fatalf("%d exhibited, %d left to porcupine, %d refused: the draw does not exercise contractWitness", found, missed, refused)
	}
}
