package checkers

import (
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/kafkasim/kafkasim/model"
)

// TestOffsetConflictIsIllegal: whenever offsetConflict finds two appends
// at one offset, porcupine finds the history not linearizable. The drawn
// histories (drawNarrowable: appends at known and unknown offsets, reads,
// HW reads, some corrupted) must include conflicts, refused histories
// without one, and linearizable ones, or the test proves nothing.
func TestOffsetConflictIsIllegal(t *testing.T) {
	m := model.Model()
	m.Partition = nil
	var conflicts, otherIllegal, ok int
	// NB: five histories per case, so that each kind is drawn dozens of
	// times (about one history in ten has a conflict) and the counts below
	// cannot fall short by chance.
	rapid.Check(t, func(t *rapid.T) {
		for range 5 {
			ops := drawNarrowable(t)
			_, conflict := offsetConflict(model.Key{Topic: "t"}, ops)
			linear := porcupine.CheckOperations(m, ops)
			switch {
			case conflict && linear:
				t.Fatalf("offsetConflict found two appends at one offset in a linearizable history: %v", ops)
			case conflict:
				conflicts++
			case !linear:
				otherIllegal++
			default:
				ok++
			}
		}
	})
	t.Logf("%d conflicts, %d other refused histories, %d linearizable", conflicts, otherIllegal, ok)
	if conflicts < 10 || otherIllegal < 10 || ok < 10 {
		t.Fatalf("%d conflicts, %d other refused histories, %d linearizable: the draw does not exercise offsetConflict", conflicts, otherIllegal, ok)
	}
}

// TestOffsetConflictExplains: the lowest offset taken twice is named, with
// its first two appends in history order (the first is the anomaly's
// value) and what a read found there;
// appends of unknown or unobserved offset take none.
func TestOffsetConflictExplains(t *testing.T) {
	key := model.Key{Topic: "t", Partition: 2}
	app := func(id int, v string, off int64) porcupine.Operation {
		return porcupine.Operation{Input: model.Input{Key: key, Kind: model.Append, Value: v}, Output: model.Output{Offset: off}, Metadata: id, Return: never}
	}
	unknown := porcupine.Operation{Input: model.Input{Key: key, Kind: model.Append, Value: "u"}, Output: model.Output{Unknown: true}, Metadata: 9, Return: never}
	hidden := porcupine.Operation{Input: model.Input{Key: key, Kind: model.Append, Value: "h"}, Output: model.Output{Unobserved: true, Gaps: []int64{0}, Tail: 1}, Metadata: 10, Return: never}
	read := porcupine.Operation{Input: model.Input{Key: key, Kind: model.Read, Offset: 0},
		Output: model.Output{Records: []model.Record{{Offset: 0, Value: "a"}, {Offset: 1, Value: "c"}}}, Metadata: 8, Return: 5}
	if _, found := offsetConflict(key, []porcupine.Operation{app(0, "a", 0), unknown, hidden, app(1, "b", 1), read}); found {
		t.Fatal("a conflict among appends at distinct offsets and appends of unknown offset")
	}
	read.Output = model.Output{Records: []model.Record{{Offset: 0, Value: "a"}, {Offset: 1, Value: "e"}}}
	ops := []porcupine.Operation{app(0, "a", 0), app(1, "b", 2), app(2, "c", 1), app(3, "d", 2), app(4, "e", 1), app(5, "f", 1), read}
	a, found := offsetConflict(key, ops)
	if !found {
		t.Fatal("no conflict found")
	}
	want := "append(c) -> 1 (#2) and append(e) -> 1 (#4) both took offset 1: a log holds one record at each offset, so no order of the operations is legal (2 offsets are each taken by two appends or more); e is what a read found there (#8)"
	if a.Description != want || a.Value != "c" || a.Topic != "t" || a.Partition != 2 || len(a.Offsets) != 1 || a.Offsets[0] != 1 ||
		len(a.Ops) != 2 || a.Ops[0] != 2 || a.Ops[1] != 4 || !strings.HasPrefix(a.String(), "nonlinearizable t-2 c offsets=[1]") {
		t.Fatalf("got %+v\nwant description %s", a, want)
	}
}
