package checkers

import (
	"reflect"
	"sort"
	"strconv"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/kafkasim/kafkasim/model"
	"github.com/kafkasim/kafkasim/sim"
)

// TestPorcupineHistoryMatchesReference holds porcupineHistory, which reads
// a history in two passes with dense tables, to the maps-of-maps version
// it replaced (porcupineHistoryReference, kept here as it was): on random
// histories of sends (ok, fail, info and pending; acks 1 and all; at
// offsets that repeat and leave gaps), polls (ok, info, fail, some empty,
// some seeing a value at two offsets) and HW reads over two topics, both
// give the same partitions, keys and notes. Some histories have indexes
// that are not their positions (hand-written ones may), and some unknown
// sends that fill gaps or are left out, and both must be drawn.
func TestPorcupineHistoryMatchesReference(t *testing.T) {
	var unordered, unobserved, dropped int
	rapid.Check(t, func(t *rapid.T) {
		h := drawLinearizabilityHistory(t)
		parts, keys, notes := porcupineHistory(h)
		wparts, wkeys, wnotes := porcupineHistoryReference(h)
		if !reflect.DeepEqual(keys, wkeys) || !reflect.DeepEqual(notes, wnotes) {
			t.Fatalf("keys %v notes %q, want %v %q", keys, notes, wkeys, wnotes)
		}
		if len(parts) != len(wparts) {
			t.Fatalf("%d partitions, want %d", len(parts), len(wparts))
		}
		for i := range parts {
			if !reflect.DeepEqual(parts[i], wparts[i]) {
				t.Fatalf("partition %v:\n got %v\nwant %v", keys[i], parts[i], wparts[i])
			}
			for _, op := range parts[i] {
				if op.Output.(model.Output).Unobserved {
					unobserved++
				}
			}
		}
		for i := 1; i < len(h.Ops); i++ {
			if h.Ops[i].Index <= h.Ops[i-1].Index {
				unordered++
				break
			}
		}
		if len(notes) > 0 {
			dropped++
		}
	})
	if unordered < 5 || unobserved < 5 || dropped < 5 {
		t.Fatalf("%d histories out of index order, %d unobserved sends, %d with sends left out: the draw does not exercise porcupineHistory", unordered, unobserved, dropped)
	}
}

// drawLinearizabilityHistory draws a history of up to 30 operations on
// t-0, t-1 and u-0 (see TestPorcupineHistoryMatchesReference).
func drawLinearizabilityHistory(t *rapid.T) History {
	var h History
	n := rapid.IntRange(1, 30).Draw(t, "n")
	shuffled := rapid.IntRange(0, 4).Draw(t, "shuffled") == 0
	for i := range n {
		tps := []tp{{"t", 0}, {"t", 1}, {"u", 0}}
		k := tps[rapid.IntRange(0, len(tps)-1).Draw(t, "tp")]
		invoke := sim.Time(rapid.IntRange(0, 50).Draw(t, "invoke"))
		op := Op{Index: i, Process: "c" + strconv.Itoa(rapid.IntRange(0, 3).Draw(t, "process")), Topic: k.topic, Partition: k.partition,
			Leader: -1, Invoke: invoke, Complete: invoke + sim.Time(rapid.IntRange(-2, 20).Draw(t, "took"))}
		if shuffled {
			op.Index = rapid.IntRange(0, n).Draw(t, "index")
		}
		outcomes := []Outcome{OK, OK, OK, Fail, Info, Pending}
		op.Outcome = outcomes[rapid.IntRange(0, len(outcomes)-1).Draw(t, "outcome")]
		value := func() string { return "v" + strconv.Itoa(rapid.IntRange(0, 12).Draw(t, "value")) }
		switch rapid.IntRange(0, 5).Draw(t, "kind") {
		case 0, 1, 2:
			op.Kind, op.Value, op.Offset = Send, "v"+strconv.Itoa(i), int64(rapid.IntRange(0, 8).Draw(t, "offset"))
			op.Acks = []int16{-1, 1}[rapid.IntRange(0, 1).Draw(t, "acks")]
		case 3, 4:
			op.Kind, op.FetchOffset = Poll, int64(rapid.IntRange(0, 5).Draw(t, "from"))
			for at := range rapid.IntRange(0, 4).Draw(t, "records") {
				at += int(op.FetchOffset)
				v := "v" + strconv.Itoa(at) // mostly one value per offset, read again and again
				if rapid.IntRange(0, 2).Draw(t, "elsewhere") == 0 {
					v = value()
				}
				op.Records = append(op.Records, Record{Offset: int64(at), Value: v})
			}
		default:
			op.Kind, op.HighWatermark = ReadHW, int64(rapid.IntRange(0, 10).Draw(t, "hw"))
		}
		h.Ops = append(h.Ops, op)
	}
	return h
}

// porcupineHistoryReference is porcupineHistory as it was (maps of maps, a
// sort by index), the reference it is tested against: it turns h into one porcupine history per partition, in
// topic-partition order, with notes on what was dropped.
func porcupineHistoryReference(h History) ([][]porcupine.Operation, []model.Key, []string) {
	clients := clientIDs(h)
	// seen maps a value to the offsets polls saw it at, per partition.
	// NB: the loops take each op by pointer and look its partition's maps
	// up once, not once per record: an Op is large, and hashing a tp
	// hashes its topic name.
	seen := make(map[tp]map[string][]int64)
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != Poll || (op.Outcome != OK && op.Outcome != Info) {
			continue
		}
		k := tp{op.Topic, op.Partition}
		sk := seen[k]
		if sk == nil {
			sk = make(map[string][]int64)
			seen[k] = sk
		}
		for _, r := range op.Records {
			if offs := sk[r.Value]; !containsOffset(offs, r.Offset) {
				sk[r.Value] = append(offs, r.Offset)
			}
		}
	}
	type pending struct {
		op  porcupine.Operation
		key tp
	}
	n := 0 // NB: ops gets room for every op it may take, at once
	for i := range h.Ops {
		if k := h.Ops[i].Kind; k == Send || k == Poll || k == ReadHW {
			n++
		}
	}
	ops := make([]porcupine.Operation, 0, n)
	var unresolved []pending
	named := make(map[tp]map[int64]bool) // offsets named by a value
	need := make(map[tp]int64)           // one past the highest offset named or implied
	// namedIn returns k's named offsets; the caller raises need[k] to one
	// past the highest offset it marks.
	namedIn := func(k tp) map[int64]bool {
		nk := named[k]
		if nk == nil {
			nk = make(map[int64]bool)
			named[k] = nk
		}
		return nk
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != Send && op.Kind != Poll && op.Kind != ReadHW {
			continue // NB: before the boxing below, which allocates
		}
		k := tp{op.Topic, op.Partition}
		key := model.Key{Topic: op.Topic, Partition: op.Partition}
		pop := porcupine.Operation{ClientId: clients[op.Process], Call: int64(op.Invoke), Return: int64(op.Complete), Metadata: op.Index}
		switch op.Kind {
		case Send:
			pop.Input = model.Input{Key: key, Kind: model.Append, Value: op.Value}
			switch op.Outcome {
			case OK:
				pop.Output = model.Output{Offset: op.Offset}
				if op.Acks != -1 {
					pop.Return = never
				}
				namedIn(k)[op.Offset] = true
				if op.Offset+1 > need[k] {
					need[k] = op.Offset + 1
				}
			case Info, Pending:
				pop.Return = never
				if offs := seen[k][op.Value]; len(offs) == 1 {
					pop.Output = model.Output{Offset: offs[0]}
				} else {
					pop.Output = model.Output{Unknown: true}
					unresolved = append(unresolved, pending{pop, k})
					continue
				}
			default:
				continue
			}
		case Poll:
			// An empty read is always legal: it constrains nothing.
			if len(op.Records) == 0 || (op.Outcome != OK && op.Outcome != Info) {
				continue
			}
			if op.Outcome != OK {
				pop.Return = never
			}
			recs := make([]model.Record, len(op.Records))
			nk, top := namedIn(k), need[k]
			for i, r := range op.Records {
				recs[i] = model.Record{Offset: r.Offset, Value: r.Value}
				nk[r.Offset] = true
				top = max(top, r.Offset+1)
			}
			if top > need[k] { // NB: as marking one at a time would: unset while no offset+1 exceeds 0
				need[k] = top
			}
			pop.Input = model.Input{Key: key, Kind: model.Read, Offset: op.FetchOffset}
			pop.Output = model.Output{Records: recs}
		case ReadHW:
			if op.Outcome != OK {
				continue
			}
			pop.Input = model.Input{Key: key, Kind: model.HighWatermark}
			pop.Output = model.Output{HighWatermark: op.HighWatermark}
			if op.HighWatermark > need[k] {
				need[k] = op.HighWatermark
			}
		default:
			continue
		}
		if pop.Return < pop.Call {
			pop.Return = pop.Call
		}
		ops = append(ops, pop)
	}
	var notes []string
	dropped := make(map[tp]int)
	gaps := make(map[tp][]int64)
	for k, n := range need {
		for off := int64(0); off < n; off++ {
			if !named[k][off] {
				gaps[k] = append(gaps[k], off)
			}
		}
	}
	for _, u := range unresolved {
		if g := gaps[u.key]; len(g) > 0 {
			u.op.Output = model.Output{Unknown: true, Unobserved: true, Gaps: g, Tail: need[u.key]}
			ops = append(ops, u.op)
		} else {
			dropped[u.key]++
		}
	}
	for _, k := range sortedTPs(dropped) {
		notes = append(notes, k.String()+": "+strconv.Itoa(dropped[k])+" unobserved sends of unknown outcome cannot fill a gap and were left out")
	}
	// Keep each partition in history order (porcupine sorts by time itself).
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Metadata.(int) < ops[j].Metadata.(int) })
	return model.Partition(ops), model.PartitionKeys(ops), notes
}
