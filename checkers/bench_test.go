package checkers

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/sim"
)

// generated is a healthy run: a history of n operations over partitions
// partitions of topic "t", its final state, and per-step snapshots.
type generated struct {
	h     History
	f     Final
	snaps [][]PartitionSnapshot
}

// generate simulates 12 clients against a correct 3-replica cluster: each
// client sends (acks=all, 2% info, half of those applied), polls from a
// recent offset or reads the HW, one operation at a time, on a random
// partition. Every operation takes effect at a point inside its interval.
// A final poll per partition reads the whole log (Jepsen's final polls).
func generate(seed uint64, n, partitions int) generated {
	return generateWith(seed, n, partitions, false)
}

// generateLoss is generate with a permitted loss halfway (no info sends):
// every replica goes down at once, b2 losing unflushed data (rule 4 of
// contract.go), and each partition's log is cut back by a quarter, its
// offsets written again; before it, one send in ten wrote an earlier copy
// of its record just below it (a retry whose first response was lost),
// which only the polls that happen to read it see.
func generateLoss(seed uint64, n, partitions int) generated {
	return generateWith(seed, n, partitions, true)
}

func generateWith(seed uint64, n, partitions int, loss bool) generated {
	rng := rand.New(rand.NewPCG(seed, 0))
	type planned struct {
		op    Op
		point sim.Time
		apply bool
	}
	const clients = 12
	cursor := make([]sim.Time, clients)
	plan := make([]planned, 0, n)
	for i := 0; i < n-partitions; i++ {
		c := i % clients
		call := cursor[c] + sim.Time(rng.IntN(3))*ms
		dur := sim.Time(1+rng.IntN(5)) * ms
		cursor[c] = call + dur
		op := Op{Process: "c" + strconv.Itoa(c), Topic: "t", Partition: int32(rng.IntN(partitions)),
			Leader: -1, Invoke: call, Complete: call + dur}
		apply := true
		switch r := rng.IntN(10); {
		case r < 6:
			op.Kind, op.Value, op.Acks, op.Outcome = Send, "v"+strconv.Itoa(i), -1, OK
			if !loss && rng.IntN(50) == 0 {
				op.Outcome, op.Error = Info, "REQUEST_TIMED_OUT"
				apply = rng.IntN(2) == 0
			}
		case r < 9:
			op.Kind, op.Outcome = Poll, OK
		default:
			op.Kind, op.Outcome = ReadHW, OK
		}
		plan = append(plan, planned{op, call + sim.Time(rng.Int64N(int64(dur)+1)), apply})
	}
	sort.SliceStable(plan, func(i, j int) bool { return plan[i].point < plan[j].point })
	logs := make([][]string, partitions)
	var g generated
	if loss {
		lossAt := plan[len(plan)/2].point
		g.f.Facts.Failures = []Failure{
			{Broker: 0, Kind: Crash, Time: lossAt - ms, End: lossAt + ms},
			{Broker: 1, Kind: Crash, Time: lossAt - ms, End: lossAt + ms},
			{Broker: 2, Kind: PowerLoss, Time: lossAt, End: lossAt + ms, LostUnflushed: true},
		}
	}
	for i := range plan {
		op := &plan[i].op
		log := &logs[op.Partition]
		if i == len(plan)/2 && loss {
			for p := range logs {
				logs[p] = logs[p][:len(logs[p])*3/4]
			}
		}
		switch op.Kind {
		case Send:
			if loss && i < len(plan)/2 && rng.IntN(10) == 0 {
				*log = append(*log, op.Value) // the copy
			}
			if plan[i].apply {
				op.Offset = int64(len(*log))
				*log = append(*log, op.Value)
			}
		case Poll:
			op.FetchOffset = max(0, int64(len(*log))-int64(rng.IntN(8)))
			for o := op.FetchOffset; o < int64(len(*log)) && o < op.FetchOffset+5; o++ {
				op.Records = append(op.Records, Record{Offset: o, Value: (*log)[o]})
			}
		case ReadHW:
			op.HighWatermark = int64(len(*log))
		}
		if i%len(logs) == 0 || i == len(plan)-1 {
			g.snaps = append(g.snaps, snapshotOf(logs))
		}
	}
	sort.SliceStable(plan, func(i, j int) bool { return plan[i].op.Invoke < plan[j].op.Invoke })
	end := sim.Time(0)
	for _, p := range plan {
		end = max(end, p.op.Complete)
	}
	for i, p := range plan {
		p.op.Index = i
		g.h.Ops = append(g.h.Ops, p.op)
	}
	for p := range logs {
		final := Op{Index: len(g.h.Ops), Process: "final", Kind: Poll, Topic: "t", Partition: int32(p),
			Invoke: end + ms, Complete: end + 2*ms, Outcome: OK, Leader: -1}
		for o, v := range logs[p] {
			final.Records = append(final.Records, Record{Offset: int64(o), Value: v})
		}
		g.h.Ops = append(g.h.Ops, final)
		pf := PartitionFinal{Topic: "t", Partition: int32(p), Leader: 0}
		for b := int32(0); b < 3; b++ {
			role := Follower
			if b == 0 {
				role = Leader
			}
			r := replica(b, role, 0, int64(len(logs[p])), logs[p]...)
			pf.Replicas = append(pf.Replicas, r)
		}
		g.f.Partitions = append(g.f.Partitions, pf)
	}
	g.f.Facts.ReplicationFactor, g.f.Facts.MinInsyncReplicas, g.f.Facts.Healed = 3, 2, true
	for c := 0; c < clients; c++ {
		g.h.Producers = append(g.h.Producers, Producer{Process: "c" + strconv.Itoa(c), MaxInFlight: 1, Retries: 3})
	}
	return g
}

// snapshotOf renders healthy replicas of each log: the leader b0 at the
// log's end, followers one record behind on LEO.
func snapshotOf(logs [][]string) []PartitionSnapshot {
	out := make([]PartitionSnapshot, len(logs))
	for p, l := range logs {
		n := int64(len(l))
		hw := max(0, n-1)
		out[p] = PartitionSnapshot{Topic: "t", Partition: int32(p), Replicas: []ReplicaState{
			rs(0, Leader, 0, n, hw, 0, 1, 2), rs(1, Follower, 0, max(hw, n-1), hw), rs(2, Follower, 0, n, hw)}}
	}
	return out
}

// TestGeneratedHistoryPasses checks the benchmark's input is a healthy run:
// every checker says ok, so the benchmark times the full work.
func TestGeneratedHistoryPasses(t *testing.T) {
	g := generate(1, 10000, 8)
	if len(g.h.Ops) != 10000 {
		t.Fatalf("%d operations", len(g.h.Ops))
	}
	m := NewMonitor()
	for i, s := range g.snaps {
		m.Observe(uint64(i), sim.Time(i), s)
	}
	g.f.Liveness = &Liveness{Deadline: sim.Time(sim.Minute), Samples: []LivenessSample{{}}} // recovered at once
	for _, v := range CheckAll(g.h, g.f, m, Options{LinearizabilityBudget: 30 * time.Second}) {
		if v.Result != ResultOK {
			t.Errorf("%s", v)
		}
	}
}

// TestGeneratedLossIsPermitted: the loss of generateLoss, with copies of
// retried sends below the rewritten offsets, is permitted by every
// checker that sees it, linearizability included (before the contract
// model knew such copies, it called every partition a broken contract).
func TestGeneratedLossIsPermitted(t *testing.T) {
	g := generateLoss(4, 4000, 4)
	for _, v := range []Verdict{Linearizability(g.h, g.f, 30*time.Second), AckedLoss(g.h, g.f), Duplicates(g.h, g.f)} {
		if v.Result != ResultViolation || v.ContractBroken() {
			t.Errorf("%s", v)
		}
	}
}

// withUnobservedInfo turns every rate-th send into an info send and drops
// the final polls, so many applied sends are never observed: the hard case
// for porcupine (gaps that unknown sends may fill).
func withUnobservedInfo(h History, rate int) History {
	out := History{Producers: h.Producers}
	for i, op := range h.Ops {
		if op.Process == "final" {
			continue
		}
		if op.Kind == Send && i%rate == 0 {
			op.Outcome, op.Error = Info, "REQUEST_TIMED_OUT"
		}
		out.Ops = append(out.Ops, op)
	}
	return out
}

// TestUnobservedInfoSendsStayTractable: with a fifth of the sends of unknown
// outcome and no final polls, porcupine still finishes well within budget.
func TestUnobservedInfoSendsStayTractable(t *testing.T) {
	h := withUnobservedInfo(generate(2, 10000, 8).h, 5)
	mustResult(t, Linearizability(h, Final{}, 30*time.Second), ResultOK)
}

// TestVerdictsAreDeterministic: two checks of one broken run print the same
// verdicts (no map order reaches an output).
func TestVerdictsAreDeterministic(t *testing.T) {
	run := func() string {
		g := generate(3, 2000, 4)
		// Break it: lose committed entries on one leader, duplicate one value,
		// diverge a follower, and reorder a producer.
		p := &g.f.Partitions[1]
		p.Replicas[0].Log = p.Replicas[0].Log[:len(p.Replicas[0].Log)-5]
		p.Replicas[0].HW -= 5
		p.Replicas[0].LEO -= 5
		q := &g.f.Partitions[2].Replicas[1]
		q.Log[3].Value = "other"
		g.f.Partitions[3].Replicas[0].Log[4].Value = g.f.Partitions[3].Replicas[0].Log[2].Value
		m := NewMonitor()
		for i, s := range g.snaps {
			m.Observe(uint64(i), sim.Time(i), s)
		}
		var b strings.Builder
		for _, v := range CheckAll(g.h, g.f, m, Options{LinearizabilityBudget: 30 * time.Second}) {
			b.WriteString(v.String() + "\n")
		}
		return b.String()
	}
	first := run()
	if !strings.Contains(first, "acked-loss: violation") || !strings.Contains(first, "divergence: violation") || !strings.Contains(first, "duplicates: violation") {
		t.Fatalf("the broken run was not caught:\n%s", first)
	}
	for i := 0; i < 3; i++ {
		if again := run(); again != first {
			t.Fatalf("verdicts differ between two checks:\n%s\n---\n%s", first, again)
		}
	}
}

// BenchmarkCheckers10k times the checkers on a 10,000-operation history over
// 8 partitions: porcupine alone, the property checkers alone (acked-loss,
// divergence, duplicates, ordering, and the invariants monitor fed one
// snapshot of all partitions per 8 operations), and everything.
func BenchmarkCheckers10k(b *testing.B) {
	g := generate(1, 10000, 8)
	b.Run("porcupine", func(b *testing.B) {
		for b.Loop() {
			if v := Linearizability(g.h, Final{}, time.Minute); v.Result != ResultOK {
				b.Fatal(v)
			}
		}
	})
	props := func() {
		m := NewMonitor()
		for i, s := range g.snaps {
			m.Observe(uint64(i), sim.Time(i), s)
		}
		for _, v := range []Verdict{AckedLoss(g.h, g.f), Divergence(g.f), Duplicates(g.h, g.f), Ordering(g.h, g.f), m.Verdict()} {
			if v.Result != ResultOK {
				b.Fatal(v)
			}
		}
	}
	hard := withUnobservedInfo(g.h, 5)
	b.Run("porcupine-unobserved-info", func(b *testing.B) {
		for b.Loop() {
			if v := Linearizability(hard, Final{}, time.Minute); v.Result != ResultOK {
				b.Fatal(v)
			}
		}
	})
	lost := generateLoss(1, 10000, 8)
	b.Run("porcupine-contract", func(b *testing.B) {
		for b.Loop() {
			if v := Linearizability(lost.h, lost.f, time.Minute); v.Result != ResultViolation || v.ContractBroken() {
				b.Fatal(v)
			}
		}
	})
	b.Run("properties", func(b *testing.B) {
		for b.Loop() {
			props()
		}
	})
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			if v := Linearizability(g.h, Final{}, time.Minute); v.Result != ResultOK {
				b.Fatal(v)
			}
			props()
		}
	})
}
