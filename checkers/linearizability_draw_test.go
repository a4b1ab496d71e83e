package checkers

import (
	"slices"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/kafkasim/kafkasim/model"
)

// timing says how drawTimed places a drawn history's operations.
type timing struct {
	minN, maxN     int  // how many operations
	span           int  // the instants they take effect, in [0, span]
	before, after  int  // how far an interval reaches before and after its instant
	callAtOrAbove0 bool // no invocation before time 0
}

// drawTimed draws the operations of a partition history against a true
// log: their instants, sorted, then for each one its interval around the
// instant, and then what kind calls each draw (its input and output, and
// what it does to the log), in instant order.
func drawTimed(t *rapid.T, c timing, kind func(i int, op *porcupine.Operation)) []porcupine.Operation {
	n := rapid.IntRange(c.minN, c.maxN).Draw(t, "n")
	points := make([]int64, n) // the instants the operations take effect, in order
	for i := range points {
		points[i] = int64(rapid.IntRange(0, c.span).Draw(t, "point"))
	}
	slices.Sort(points)
	ops := make([]porcupine.Operation, 0, n)
	for i, p := range points {
		call := p - int64(rapid.IntRange(0, c.before).Draw(t, "before"))
		if c.callAtOrAbove0 {
			call = max(0, call)
		}
		ret := p + int64(rapid.IntRange(0, c.after).Draw(t, "after"))
		op := porcupine.Operation{ClientId: i % 3, Call: call, Return: ret, Metadata: i}
		kind(i, &op)
		ops = append(ops, op)
	}
	return ops
}

// corruption says how drawn partition histories are corrupted, so that the
// property tests of the checker's shortcuts see refused histories too.
type corruption struct {
	min, max int  // how many corruptions
	shift    int  // how far an invocation or completion moves, at most
	clamp    bool // keep offsets at 0 or above
	reads    bool // also move a read's first record to the next offset
}

// corrupt applies c to ops: each corruption picks one operation and moves
// its offset (by up to 2) and HW (by up to 1), its invocation later or its
// completion earlier (by up to c.shift), or, with c.reads, a read's first
// record one offset on; a completion never ends up before its invocation.
func corrupt(t *rapid.T, ops []porcupine.Operation, c corruption) {
	hows := 3
	if c.reads {
		hows = 4
	}
	for range rapid.IntRange(c.min, c.max).Draw(t, "corruptions") {
		op := &ops[rapid.IntRange(0, len(ops)-1).Draw(t, "victim")]
		how := rapid.IntRange(0, hows-1).Draw(t, "how")
		if !c.reads && how > 0 {
			how++ // no read corruption: 1 and 2 are the times
		}
		switch how {
		case 0: // another offset (two appends at one offset) or HW
			if out, ok := op.Output.(model.Output); ok {
				out.Offset += int64(rapid.IntRange(-2, 2).Draw(t, "offset by"))
				if c.clamp {
					out.Offset = max(0, out.Offset)
				}
				out.HighWatermark += int64(rapid.IntRange(-1, 1).Draw(t, "hw by"))
				op.Output = out
			}
		case 1: // a read of a value at another offset
			if out := op.Output.(model.Output); len(out.Records) > 0 {
				recs := slices.Clone(out.Records)
				recs[0].Offset++
				out.Records = recs
				op.Output = out
			}
		case 2:
			op.Call += int64(rapid.IntRange(0, c.shift).Draw(t, "call by"))
		default:
			if op.Return != never {
				op.Return -= int64(rapid.IntRange(0, c.shift).Draw(t, "return by"))
			}
		}
		if op.Return < op.Call {
			op.Return = op.Call
		}
	}
}
