package checkers

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/kafkasim/kafkasim/model"
)

// TestNarrowContractKeepsVerdict holds narrowContract to its claim: on
// small random contract-model histories, porcupine finds the narrowed
// history linearizable exactly when it finds the original so. The
// histories (drawContractHistory) are a log that truncations cut back and
// appends refill (offsets reused), read and HW-read, with appends of
// unknown outcome, unobserved ones and ones over unobserved copies of
// their value (model.Output.Copies); some are corrupted, so both
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
// (see TestNarrowContractKeepsVerdict) against a true log; one append in
// six writes an earlier append's value again, as a retry does.
func drawContractHistory(t *rapid.T) []porcupine.Operation {
	key := model.Key{Topic: "t"}
	var log, sent []string
	ops := drawTimed(t, timing{minN: 2, maxN: 12, span: 30, before: 20, after: 10}, func(i int, op *porcupine.Operation) {
		v := "m" + strconv.Itoa(i)
		kind := rapid.IntRange(0, 13).Draw(t, "kind")
		if kind < 8 && len(sent) > 0 && rapid.IntRange(0, 5).Draw(t, "again") == 0 {
			v = sent[rapid.IntRange(0, len(sent)-1).Draw(t, "value again")] // a retry writing a record again
		}
		if kind < 8 {
			sent = append(sent, v)
		}
		switch {
		case kind < 7: // an acknowledged append, sometimes never completing (acks=1), sometimes over unobserved copies
			copies := max(0, rapid.IntRange(-2, 2).Draw(t, "copies"))
			for range copies {
				log = append(log, model.Hidden)
			}
			op.Input, op.Output = model.Input{Key: key, Kind: model.Append, Value: v}, model.Output{Offset: int64(len(log))}
			if copies > 0 || rapid.IntRange(0, 4).Draw(t, "claims copies") == 0 {
				op.Output = model.Output{Offset: int64(len(log)), Copies: int64(copies + rapid.IntRange(0, 1).Draw(t, "more copies"))}
			}
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

// retriedCopyRewritten is the shape of swarm kip279-safe seed 5 under
// inter.broker.protocol.version=2.7, reduced: p1's first attempt of m1
// was appended at offset 1 and its response lost; the retry was
// acknowledged at 2, and a read found m1 and m2 at 2 and 3, never offset
// 1. Then every ISR member went down at once, b1 losing unflushed data
// (rule 4 of contract.go); b1 came back still in the ISR and was elected
// with only m0 (rule 5), and m3, m4, m5 took offsets 1 to 3 again, as the
// last read found. Offset 1 is named only after the loss: what it held
// before, the copy, no operation observed.
func retriedCopyRewritten(idempotent bool, facts bool) (History, Final) {
	h := History{Ops: []Op{
		send(0, "p1", "m0", -1, 0, 2*ms, OK, 0),
		send(1, "p1", "m1", -1, 3*ms, 10*ms, OK, 2),
		send(2, "p2", "m2", -1, 4*ms, 11*ms, OK, 3),
		poll(3, "c1", 12*ms, 13*ms, 2, Record{Offset: 2, Value: "m1"}, Record{Offset: 3, Value: "m2"}),
		send(4, "p2", "m3", -1, 30*ms, 32*ms, OK, 1),
		send(5, "p1", "m4", -1, 33*ms, 35*ms, OK, 2),
		send(6, "p2", "m5", -1, 36*ms, 38*ms, OK, 3),
		poll(7, "c1", 40*ms, 41*ms, 0, Record{Offset: 0, Value: "m0"}, Record{Offset: 1, Value: "m3"}, Record{Offset: 2, Value: "m4"}, Record{Offset: 3, Value: "m5"}),
	}, Producers: []Producer{
		{Process: "p1", Acks: "all", Idempotent: idempotent, MaxInFlight: 5, Retries: 10},
		{Process: "p2", Acks: "all", Idempotent: idempotent, MaxInFlight: 5, Retries: 10},
	}}
	fs := Facts{ReplicationFactor: 3, MinInsyncReplicas: 2, ISRChanges: []ISRChange{
		{Topic: "t", Partition: 0, Time: 0, ISR: []int32{0, 1, 2}, Leader: 0},
		{Topic: "t", Partition: 0, Time: 27 * ms, ISR: []int32{1}, Leader: 1, LeaderEpoch: 1},
	}}
	if facts {
		fs.Failures = []Failure{
			{Broker: 0, Kind: Crash, Time: 15 * ms, End: 26 * ms},
			{Broker: 2, Kind: Crash, Time: 16 * ms, End: 26 * ms},
			{Broker: 1, Kind: PowerLoss, Time: 20 * ms, End: 25 * ms, LostUnflushed: true},
		}
	}
	f := final1(1, 1, fs,
		replica(0, Follower, 1, 4, "m0", "m3@1", "m4@1", "m5@1"),
		replica(1, Leader, 1, 4, "m0", "m3@1", "m4@1", "m5@1"),
		replica(2, Follower, 1, 4, "m0", "m3@1", "m4@1", "m5@1"))
	return h, f
}

// TestContractRetriedCopyFreedByLoss: a loss fact that permits losing
// every record sent before it permits the rewrite above, where the log
// held an unobserved earlier copy of a retried send: linearizability
// calls it permitted, as acked-loss does, naming the copies. The same
// rewrite without the fact, or with idempotent producers (which write no
// copy), breaks the contract.
func TestContractRetriedCopyFreedByLoss(t *testing.T) {
	h, f := retriedCopyRewritten(false, true)
	if v := AckedLoss(h, f); len(v.Anomalies) != 2 || !v.Anomalies[0].Permitted || !v.Anomalies[1].Permitted {
		t.Fatalf("acked-loss: %s", v)
	}
	lin := Linearizability(h, f, 5*time.Second)
	mustResult(t, lin, ResultViolation)
	a := onlyAnomaly(t, lin)
	if !a.Permitted || !strings.Contains(a.Description, "3 replicas [0 1 2] were down at once") ||
		!strings.Contains(a.Description, "unobserved earlier copies of 1 send") {
		t.Fatalf("with the fact: %s", a)
	}
	for _, tc := range []struct {
		name              string
		idempotent, facts bool
		want              string
	}{
		{"without the fact", false, false, "no fact of the run permits"},
		{"idempotent", true, true, "does not linearize it either"},
	} {
		h, f := retriedCopyRewritten(tc.idempotent, tc.facts)
		a := onlyAnomaly(t, Linearizability(h, f, 5*time.Second))
		if a.Permitted || !strings.Contains(a.Description, tc.want) {
			t.Errorf("%s: %s", tc.name, a)
		}
	}
}
