package checkers

import (
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/kafkasim/kafkasim/model"
)

// TestWitnessOnlyForLinearizable holds witness to its claim: on small
// random partition histories (drawWitnessable: appends at known offsets,
// reads and HW reads, taking effect inside their intervals, then
// corrupted or not, some reads seeing two records swapped), whenever witness finds a linearization, porcupine
// finds the history linearizable. Refused histories must be drawn (which
// witness must turn down), and witness must find most of the linearizable
// ones, or the test would prove nothing.
func TestWitnessOnlyForLinearizable(t *testing.T) {
	m := model.Model()
	m.Partition = nil
	var found, ok, illegal int
	rapid.Check(t, func(t *rapid.T) {
		ops := drawWitnessable(t)
		w := witness(ops)
		lin := porcupine.CheckOperations(m, ops)
		if w && !lin {
			t.Fatalf("witness found a linearization of a history porcupine refuses: %v", ops)
		}
		switch {
		case !lin:
			illegal++
		case w:
			found++
			ok++
		default:
			ok++
		}
	})
	if illegal < 10 || ok < 10 || found < ok/2 {
		t.Fatalf("%d refused, %d linearizable, %d of them found: the draw does not exercise witness", illegal, ok, found)
	}
}

// drawWitnessable draws a partition history of the kinds witness handles:
// drawNarrowable's, with its appends of unknown outcome made known (they
// took effect) and, a tenth of the time, one left unknown; now and then
// a read sees two of its records' values swapped.
func drawWitnessable(t *rapid.T) []porcupine.Operation {
	ops := drawNarrowable(t)
	keep := rapid.IntRange(0, 9).Draw(t, "keep unknown") == 0
	log := int64(0)
	for i := range ops {
		in, out := ops[i].Input.(model.Input), ops[i].Output.(model.Output)
		if in.Kind != model.Append {
			continue
		}
		if out.Unknown && !keep {
			ops[i].Output = model.Output{Offset: log}
		}
		log++
	}
	// A read that names a record at the wrong offset (witness takes reads
	// by their last offset; only the model's check refuses the values).
	var reads []int
	for i := range ops {
		if len(ops[i].Output.(model.Output).Records) > 1 {
			reads = append(reads, i)
		}
	}
	if len(reads) > 0 && rapid.IntRange(0, 3).Draw(t, "misread") == 0 {
		victim := reads[rapid.IntRange(0, len(reads)-1).Draw(t, "victim")]
		out := ops[victim].Output.(model.Output)
		recs := slices.Clone(out.Records)
		recs[0].Value, recs[1].Value = recs[1].Value, recs[0].Value
		out.Records = recs
		ops[victim].Output = out
	}
	return ops
}
