package checkers

import (
	"slices"
	"strconv"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/kafkasim/kafkasim/model"
)

// TestPostponeKeepsSearch holds postpone to its claim: porcupine's search
// of the postponed history takes the recorded one's path, so on small
// random partition histories it gives the same result and the same
// partial linearizations (the explanation's input), and explainIllegal the
// same anomaly. The histories (drawPostponable) mix appends at known
// offsets (some never completing, some at one offset twice), of unknown
// outcome and unobserved with gaps, reads and HW reads, with times drawn
// from a narrow range so that events tie; many are corrupted, so most are
// refused and the search backtracks. Postpone must have moved events in
// most histories of both kinds, or the test would prove nothing.
func TestPostponeKeepsSearch(t *testing.T) {
	m := model.Model()
	m.Partition = nil
	key := model.Key{Topic: "t"}
	var okMoved, illegalMoved, ok, illegal int
	rapid.Check(t, func(t *rapid.T) {
		ops := drawPostponable(t)
		p := postpone(ops)
		moved := &p[0] != &ops[0]
		res, info := porcupine.CheckOperationsVerbose(m, ops, 0)
		pres, pinfo := porcupine.CheckOperationsVerbose(m, p, 0)
		if res != pres {
			t.Fatalf("recorded %v, postponed %v\nrecorded: %v\npostponed: %v", res, pres, ops, p)
		}
		if want, got := partials(info), partials(pinfo); !slices.EqualFunc(want, got, slices.Equal) {
			t.Fatalf("partial linearizations differ\nrecorded: %v\npostponed: %v\nrecorded ops: %v\npostponed ops: %v", want, got, ops, p)
		}
		if res == porcupine.Illegal {
			if want, got := explainIllegal(key, ops, info), explainIllegal(key, ops, pinfo); want.String() != got.String() {
				t.Fatalf("explanations differ:\nrecorded: %s\npostponed: %s", want, got)
			}
			illegal++
			if moved {
				illegalMoved++
			}
		} else {
			ok++
			if moved {
				okMoved++
			}
		}
	})
	if ok < 10 || illegal < 10 || okMoved < ok/5 || illegalMoved < illegal/5 {
		t.Fatalf("%d linearizable (%d moved), %d not (%d moved): the draw does not exercise postpone", ok, okMoved, illegal, illegalMoved)
	}
}

// partials returns the info's partial linearizations of its one
// partition, sorted (porcupine lists them in map order).
func partials(info porcupine.LinearizationInfo) [][]int {
	var out [][]int
	if p := info.PartialLinearizations(); len(p) > 0 {
		out = slices.Clone(p[0])
	}
	slices.SortFunc(out, slices.Compare)
	return out
}

// drawPostponable draws one partition's porcupine history of 2-10
// operations against a true log (see TestPostponeKeepsSearch).
func drawPostponable(t *rapid.T) []porcupine.Operation {
	key := model.Key{Topic: "t"}
	var log []string
	ops := drawTimed(t, timing{minN: 2, maxN: 10, span: 20, before: 20, after: 10, callAtOrAbove0: true}, func(i int, op *porcupine.Operation) {
		v := "m" + strconv.Itoa(i)
		switch kind := rapid.IntRange(0, 11).Draw(t, "kind"); {
		case kind < 6: // an acknowledged append, sometimes never completing (acks=1)
			op.Input, op.Output = model.Input{Key: key, Kind: model.Append, Value: v}, model.Output{Offset: int64(len(log))}
			if kind == 0 {
				op.Return = never
			}
			log = append(log, v)
		case kind == 6: // an append of unknown outcome
			op.Input, op.Output, op.Return = model.Input{Key: key, Kind: model.Append, Value: v}, model.Output{Unknown: true}, never
			log = append(log, v)
		case kind == 7: // an unobserved append: a gap, or past the tail
			gap := int64(len(log))
			tail := gap + int64(rapid.IntRange(1, 4).Draw(t, "tail"))
			op.Input = model.Input{Key: key, Kind: model.Append, Value: v}
			op.Output, op.Return = model.Output{Unknown: true, Unobserved: true, Gaps: []int64{gap}, Tail: tail}, never
			log = append(log, model.Hidden)
		case kind < 10 && len(log) > 0: // a read of part of the log
			from := rapid.IntRange(0, len(log)-1).Draw(t, "from")
			to := rapid.IntRange(from, len(log)).Draw(t, "to")
			var recs []model.Record
			for o := from; o < to; o++ {
				if log[o] != model.Hidden {
					recs = append(recs, model.Record{Offset: int64(o), Value: log[o]})
				}
			}
			op.Input, op.Output = model.Input{Key: key, Kind: model.Read, Offset: int64(from)}, model.Output{Records: recs}
		default:
			op.Input, op.Output = model.Input{Key: key, Kind: model.HighWatermark}, model.Output{HighWatermark: int64(len(log))}
		}
	})
	corrupt(t, ops, corruption{min: 1, max: 3, shift: 15, clamp: true, reads: true})
	return ops
}
