package checkers

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/kafkasim/kafkasim/sim"
)

// TestAckedLossAndDuplicatesMatchReference holds ackedLoss and duplicates,
// which build their value indexes only when a send is missing or a value
// repeats and skip the lookups of polled records the committed log holds,
// to the versions they replaced (ackedLossReference, duplicatesReference,
// kept here as they were): on random runs (drawLossyRun: two partitions,
// replicas whose logs lose, move and repeat values, sends acknowledged at
// offsets that hold them or not, polls that read the committed log or
// other values, faults that excuse losses), both verdicts print the same.
// Runs with many lost sends (the holder index), some past the anomaly cap,
// and with duplicates must be drawn. The acked-loss verdict is also
// compared with the monitor's committed-lost records added (drawMonitor),
// some past the cap.
func TestAckedLossAndDuplicatesMatchReference(t *testing.T) {
	var lossy, duplicated, capped, unlisted int
	rapid.Check(t, func(t *rapid.T) {
		// NB: a fifth of the runs have hundreds of sends, past the anomaly cap.
		h, f := drawLossyRun(t, []int{1, 40, 40, 40, 40, 40, 40, 40, 800, 800}[rapid.IntRange(0, 9).Draw(t, "size")])
		con := newContract(f)
		if got, want := ackedLoss(h, f, con).String(), ackedLossReference(h, f, newContract(f)).String(); got != want {
			t.Fatalf("acked-loss:\n got %s\nwant %s", got, want)
		}
		m := drawMonitor(t, f)
		if got, want := m.committedLoss(ackedLoss(h, f, con), h, f, con).String(), m.committedLossReference(ackedLossReference(h, f, newContract(f)), h, f, newContract(f)).String(); got != want {
			t.Fatalf("acked-loss with committed-lost:\n got %s\nwant %s", got, want)
		}
		if strings.Contains(m.committedLoss(ackedLoss(h, f, con), h, f, con).String(), "more committed-lost") {
			unlisted++
		}
		v := duplicates(h, f, con, nil)
		if got, want := v.String(), duplicatesReference(h, f, newContract(f)).String(); got != want {
			t.Fatalf("duplicates:\n got %s\nwant %s", got, want)
		}
		if a := ackedLoss(h, f, con); len(a.Anomalies) > 5 {
			lossy++
			if a.Omitted > 0 {
				capped++
			}
		}
		if len(v.Anomalies) > 0 {
			duplicated++
		}
	})
	if lossy < 5 || duplicated < 5 || capped < 2 || unlisted < 2 {
		t.Fatalf("%d runs with more than 5 lost sends (%d past the cap, %d with committed-lost records past it), %d with duplicates: the draw does not exercise the indexes", lossy, capped, unlisted, duplicated)
	}
}

// drawLossyRun draws a run for TestAckedLossAndDuplicatesMatchReference.
// It has maxOps/2 to maxOps operations.
func drawLossyRun(t *rapid.T, maxOps int) (History, Final) {
	value := func(label string) string { return "v" + strconv.Itoa(rapid.IntRange(0, 15).Draw(t, label)) }
	var f Final
	for _, k := range []tp{{"t", 0}, {"t", 1}} {
		pf := PartitionFinal{Topic: k.topic, Partition: k.partition, Leader: -1}
		brokers := rapid.Permutation([]int32{0, 1, 2}).Draw(t, "brokers")[:rapid.IntRange(1, 3).Draw(t, "replicas")]
		for _, b := range brokers {
			r := Replica{ReplicaState: ReplicaState{Broker: b, Alive: rapid.IntRange(0, 4).Draw(t, "dead") > 0, Role: Follower}}
			base := int64(rapid.IntRange(0, 1).Draw(t, "base"))
			for o := range int64(rapid.IntRange(0, 12).Draw(t, "log")) {
				off := base + o
				if rapid.IntRange(0, 6).Draw(t, "gap") == 0 {
					off++ // not dense
					base++
				}
				r.Log = append(r.Log, Entry{Offset: off, Value: value("entry")})
			}
			r.LEO = base + int64(len(r.Log))
			r.HW = int64(rapid.IntRange(0, int(r.LEO)).Draw(t, "hw"))
			if rapid.Bool().Draw(t, "leader") {
				r.Role, pf.Leader = Leader, b
			}
			pf.Replicas = append(pf.Replicas, r)
		}
		f.Partitions = append(f.Partitions, pf)
	}
	for b := range int32(3) {
		if rapid.IntRange(0, 2).Draw(t, "failed") == 0 {
			f.Facts.Failures = append(f.Facts.Failures, Failure{Broker: b, Time: sim.Time(rapid.IntRange(0, 30).Draw(t, "down")),
				End: sim.Time(rapid.IntRange(0, 40).Draw(t, "up")), LostUnflushed: rapid.Bool().Draw(t, "lost")})
		}
	}
	var h History
	for p := range 2 {
		h.Producers = append(h.Producers, Producer{Process: "p" + strconv.Itoa(p), Acks: "all", MaxInFlight: 5, Retries: p * 3, Idempotent: p == 0})
	}
	reindexed := rapid.IntRange(0, 4).Draw(t, "reindexed") == 0 // indexes that repeat, as a hand-written history's may
	for i := range rapid.IntRange(maxOps/2, maxOps).Draw(t, "ops") {
		k := tp{"t", int32(rapid.IntRange(0, 1).Draw(t, "partition"))}
		invoke := sim.Time(rapid.IntRange(0, 40).Draw(t, "invoke"))
		op := Op{Index: i, Process: "p" + strconv.Itoa(rapid.IntRange(0, 2).Draw(t, "process")), Topic: k.topic, Partition: k.partition,
			Leader: -1, Invoke: invoke, Complete: invoke + 3, Outcome: OK}
		if reindexed {
			op.Index = rapid.IntRange(0, 5).Draw(t, "index")
		}
		if rapid.IntRange(0, 3).Draw(t, "kind") > 0 {
			op.Kind, op.Value, op.Offset = Send, value("sent"), int64(rapid.IntRange(0, 13).Draw(t, "offset"))
			op.Acks = []int16{-1, 1, 0}[rapid.IntRange(0, 2).Draw(t, "acks")]
		} else {
			op.Kind, op.Outcome = Poll, []Outcome{OK, OK, Info, Fail}[rapid.IntRange(0, 3).Draw(t, "outcome")]
			pf := f.Partitions[k.partition]
			judge, judged := pf.Judge()
			for o := range int64(rapid.IntRange(0, 6).Draw(t, "records")) {
				r := Record{Offset: o, Value: value("polled")}
				if e, ok := judge.At(o); judged && ok && rapid.IntRange(0, 3).Draw(t, "read committed") > 0 {
					r = Record{Offset: e.Offset, Value: e.Value} // most polls read the committed log
				}
				op.Records = append(op.Records, r)
			}
		}
		h.Ops = append(h.Ops, op)
	}
	return h, f
}

// drawMonitor draws a monitor that saw records committed on f's partitions
// (values and offsets drawn as drawLossyRun's: some still committed, most
// not), in one or two steps.
func drawMonitor(t *rapid.T, f Final) *Monitor {
	m := NewMonitor()
	for step := range uint64(rapid.IntRange(1, 2).Draw(t, "steps")) {
		var snaps []PartitionSnapshot
		for _, pf := range f.Partitions {
			s := PartitionSnapshot{Topic: pf.Topic, Partition: pf.Partition}
			for range rapid.IntRange(0, 300).Draw(t, "committed") {
				s.Committed = append(s.Committed, Entry{Offset: int64(rapid.IntRange(0, 13).Draw(t, "at")),
					Value: "v" + strconv.Itoa(rapid.IntRange(0, 40).Draw(t, "value"))})
			}
			snaps = append(snaps, s)
		}
		m.Observe(step, sim.Time(10*step), snaps)
	}
	return m
}

// ackedLossReference is ackedLoss as it was, the reference it is tested
// against.
func ackedLossReference(h History, f Final, c *contract) Verdict {
	byTP := make(map[tp][]*Op) // NB: pointers into h.Ops: an Op is large to copy and sort
	total := 0
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == Send && op.Outcome == OK {
			k := tp{op.Topic, op.Partition}
			byTP[k] = append(byTP[k], op)
			total++
		}
	}
	var anomalies []Anomaly
	var notes []string
	unknown := false
	lost := 0
	for _, k := range sortedTPs(byTP) {
		ops := byTP[k]
		sort.SliceStable(ops, func(i, j int) bool {
			if ops[i].Offset != ops[j].Offset {
				return ops[i].Offset < ops[j].Offset
			}
			return ops[i].Index < ops[j].Index
		})
		pf, ok := f.Partition(k.topic, k.partition)
		if !ok {
			unknown = true
			notes = append(notes, k.String()+": no final state; "+strconv.Itoa(len(ops))+" acknowledged sends not judged")
			continue
		}
		judge, ok := pf.Judge()
		if !ok {
			unknown = true
			notes = append(notes, k.String()+": no live replica; "+strconv.Itoa(len(ops))+" acknowledged sends not judged")
			continue
		}
		where := make(map[string]int64) // value -> committed offset on the judge
		for _, e := range committed(judge) {
			if _, dup := where[e.Value]; !dup {
				where[e.Value] = e.Offset
			}
		}
		for _, op := range ops {
			e, found := judge.At(op.Offset)
			if found && e.Value == op.Value && e.Offset < judge.HW {
				continue
			}
			lost++
			a := Anomaly{Topic: k.topic, Partition: k.partition, Value: op.Value,
				Offsets: []int64{op.Offset}, Times: []sim.Time{op.Invoke, op.Complete}, Ops: []int{op.Index}}
			desc := "acknowledged (acks=" + strconv.Itoa(int(op.Acks)) + ") at offset " + strconv.FormatInt(op.Offset, 10) +
				" at " + op.Complete.String() + "; judged on " + judge.ReplicaState.String()
			switch off, ok := where[op.Value]; {
			case found && e.Value == op.Value:
				a.Kind = "uncommitted"
				desc += ": present but not below the HW"
			case ok:
				a.Kind = "moved"
				a.Offsets = append(a.Offsets, off)
				desc += ": committed at offset " + strconv.FormatInt(off, 10) + " instead"
			default:
				a.Kind = "lost"
				if found {
					desc += ": offset " + strconv.FormatInt(op.Offset, 10) + " holds " + e.Value + " (epoch " + strconv.Itoa(int(e.LeaderEpoch)) + ")"
				} else {
					desc += ": the committed log ends at " + strconv.FormatInt(judge.HW, 10)
				}
			}
			a.Replicas = holders(pf, op.Value)
			if len(a.Replicas) > 0 {
				desc += "; still held by " + brokerList(a.Replicas)
			}
			why, permitted := c.lossExcuse(*op)
			if off := offlineWhy(f.Facts.Offline, k.topic, k.partition); a.Kind == "uncommitted" && off != "" && !permitted {
				// Not lost: held, but the partition has no leader to commit
				// it (offline by design, KIP-966).
				why, permitted = off, true
			}
			a.Permitted = permitted
			a.Description = desc + "; " + why
			anomalies = append(anomalies, a)
		}
	}
	notes = append([]string{strconv.Itoa(total) + " acknowledged sends checked, " + strconv.Itoa(lost) + " not in the final committed log"}, notes...)
	return verdict(NameAckedLoss, anomalies, unknown, notes...)
}

// duplicatesReference is duplicates as it was, the reference it is tested
// against.
func duplicatesReference(h History, f Final, con *contract) Verdict {
	offsets := make(map[tp]map[string][]int64)
	// offsetsOf returns k's offsets by value. NB: the loops below look it
	// up once per op, not per record, and a value's first offset is a
	// one-element slice carved from a shared block (most values are at
	// one offset; a second one makes append copy it out).
	offsetsOf := func(k tp) map[string][]int64 {
		m := offsets[k]
		if m == nil {
			m = make(map[string][]int64)
			offsets[k] = m
		}
		return m
	}
	var block []int64
	add := func(m map[string][]int64, v string, off int64) {
		offs := m[v]
		switch {
		case containsOffset(offs, off):
		case offs != nil:
			m[v] = append(offs, off)
		default:
			if len(block) == cap(block) {
				block = make([]int64, 0, 1024)
			}
			block = append(block, off)
			m[v] = block[len(block)-1 : len(block) : len(block)]
		}
	}
	for _, pf := range f.Partitions {
		if judge, ok := pf.Judge(); ok {
			if es := committed(judge); len(es) > 0 {
				m := offsetsOf(tp{pf.Topic, pf.Partition})
				for _, e := range es {
					add(m, e.Value, e.Offset)
				}
			}
		}
	}
	sends := 0
	for i := range h.Ops {
		if h.Ops[i].Kind == Send {
			sends++
		}
	}
	// NB: sender holds indexes into h.Ops, presized: a map of Op values
	// (too large to be held inline) allocated once per send.
	sender := make(map[string]int, sends)
	for i := range h.Ops {
		op := &h.Ops[i]
		switch {
		case op.Kind == Send:
			if _, ok := sender[op.Value]; !ok {
				sender[op.Value] = i
			}
		case op.Kind == Poll && (op.Outcome == OK || op.Outcome == Info) && len(op.Records) > 0:
			m := offsetsOf(tp{op.Topic, op.Partition})
			for _, r := range op.Records {
				add(m, r.Value, r.Offset)
			}
		}
	}
	final := make(map[tp]Replica)
	for _, pf := range f.Partitions {
		if judge, ok := pf.Judge(); ok {
			final[tp{pf.Topic, pf.Partition}] = judge
		}
	}
	// lostCopy reports whether some offset of v is not v's in the final
	// committed log of k.
	lostCopy := func(k tp, v string, offs []int64) bool {
		judge, ok := final[k]
		if !ok {
			return false
		}
		for _, off := range offs {
			if e, found := judge.At(off); !found || e.Value != v || off >= judge.HW {
				return true
			}
		}
		return false
	}
	var anomalies []Anomaly
	for _, k := range sortedTPs(offsets) {
		var values []string
		for v, offs := range offsets[k] {
			if len(offs) > 1 {
				values = append(values, v)
			}
		}
		sort.Slice(values, func(i, j int) bool {
			a, b := offsets[k][values[i]], offsets[k][values[j]]
			if min64(a) != min64(b) {
				return min64(a) < min64(b)
			}
			return values[i] < values[j]
		})
		for _, v := range values {
			if len(offsets[k][v]) <= identitiesReference(h, k, v) {
				continue // issue 28: as many sending records as offsets
			}
			offs := append([]int64(nil), offsets[k][v]...)
			sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
			a := Anomaly{Kind: "duplicate", Topic: k.topic, Partition: k.partition, Value: v, Offsets: offs}
			si, ok := sender[v]
			if !ok {
				a.Description = "no send in the history wrote " + v + "; not permitted"
				anomalies = append(anomalies, a)
				continue
			}
			op := h.Ops[si]
			a.Ops = []int{op.Index}
			why, permitted := duplicateExcuse(h, op.Process)
			if !permitted && lostCopy(k, v, offs) {
				if lossWhy, lost := con.lossExcuse(op); lost {
					why, permitted = "sent by "+op.Process+"; a copy a poll saw is not in the final committed log, and "+lossWhy+": written again after the loss", true
				}
			}
			a.Permitted, a.Description = permitted, why
			anomalies = append(anomalies, a)
		}
	}
	return verdict(NameDuplicates, anomalies, false)
}

// identitiesReference counts the records that sent v to k the naive way:
// each send not certainly failed, the idempotent ones with a known
// sequence merged by (producer id, epoch, sequence).
func identitiesReference(h History, k tp, v string) int {
	ids := map[string]bool{}
	for i, op := range h.Ops {
		if op.Kind != Send || op.Outcome == Fail || op.Topic != k.topic || op.Partition != k.partition || op.Value != v {
			continue
		}
		id := "op" + strconv.Itoa(i)
		for _, p := range h.Producers {
			if p.Process == op.Process && p.Idempotent && op.Sequence >= 0 && op.ProducerID >= 0 {
				id = strconv.FormatInt(op.ProducerID, 10) + "/" + strconv.Itoa(int(op.ProducerEpoch)) + "/" + strconv.Itoa(int(op.Sequence))
			}
		}
		ids[id] = true
	}
	return len(ids)
}

// committedLossReference is committedLoss as it was, the reference it is
// tested against.
func (m *Monitor) committedLossReference(v Verdict, h History, f Final, c *contract) Verdict {
	if m == nil {
		return v
	}
	reported := map[tp]map[string]bool{}
	for _, a := range v.Anomalies {
		k := tp{a.Topic, a.Partition}
		if reported[k] == nil {
			reported[k] = map[string]bool{}
		}
		reported[k][a.Value] = true
	}
	perTP := map[tp]int{}
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == Send {
			perTP[tp{op.Topic, op.Partition}]++
		}
	}
	// NB: sends holds indexes into h.Ops, presized: a map of Op values
	// (too large to be held inline) allocated once per send.
	sends := make(map[tp]map[string]int, len(perTP))
	for i, op := range h.Ops {
		if op.Kind != Send {
			continue
		}
		k := tp{op.Topic, op.Partition}
		if sends[k] == nil {
			sends[k] = make(map[string]int, perTP[k])
		}
		if _, dup := sends[k][op.Value]; !dup {
			sends[k][op.Value] = i
		}
	}
	checked, lost := 0, 0
	var added []Anomaly
	for _, k := range sortedTPs(m.parts) {
		if sends[k] == nil {
			// Only the workload's partitions: an internal topic's records
			// (__consumer_offsets) are the consumer checkers' to judge.
			continue
		}
		w := m.parts[k]
		pf, ok := f.Partition(k.topic, k.partition)
		if !ok {
			continue
		}
		judge, ok := pf.Judge()
		if !ok {
			continue
		}
		for _, ec := range w.committed {
			checked++
			e, found := judge.At(ec.Offset)
			if found && e.Value == ec.Value && e.Offset < judge.HW {
				continue
			}
			if !found && deletedByRequest(pf, ec.Offset, ec.time) {
				continue // deleted by request (deletion.go)
			}
			if reported[k][ec.Value] {
				continue
			}
			lost++
			var op Op
			si, known := sends[k][ec.Value]
			if known {
				op = h.Ops[si]
			} else {
				op = Op{Kind: Send, Topic: k.topic, Partition: k.partition, Value: ec.Value, Acks: -1, Invoke: ec.time, Leader: -1}
			}
			a := Anomaly{Kind: KindCommittedLost, Topic: k.topic, Partition: k.partition, Value: ec.Value,
				Offsets: []int64{ec.Offset}, Steps: []uint64{ec.step}, Times: []sim.Time{ec.time}, Replicas: holders(pf, ec.Value)}
			if known {
				a.Ops = []int{op.Index}
			}
			desc := "committed at offset " + strconv.FormatInt(ec.Offset, 10) + " (epoch " + strconv.Itoa(int(ec.LeaderEpoch)) + ") by " +
				ec.time.String() + "; judged on " + judge.ReplicaState.String()
			switch {
			case found && e.Value == ec.Value:
				desc += ": present but not below the HW"
			case found:
				desc += ": offset " + strconv.FormatInt(ec.Offset, 10) + " holds " + e.Value + " (epoch " + strconv.Itoa(int(e.LeaderEpoch)) + ")"
			default:
				desc += ": the committed log ends at " + strconv.FormatInt(judge.HW, 10)
			}
			why, permitted := c.lossExcuse(op)
			if off := offlineWhy(f.Facts.Offline, k.topic, k.partition); found && e.Value == ec.Value && off != "" && !permitted {
				why, permitted = off, true
			}
			a.Permitted = permitted
			a.Description = desc + "; " + why
			added = append(added, a)
		}
	}
	notes := append(append([]string(nil), v.Notes...), strconv.Itoa(checked)+" ever-committed records checked, "+strconv.Itoa(lost)+" not in the final committed log")
	// NB: Omitted keeps counting acknowledged records only (run statistics
	// add it to the listed acked losses): committed-lost anomalies past
	// the cap are counted in a note instead.
	if room := max(MaxAnomalies-len(v.Anomalies), 0); len(added) > room {
		notes = append(notes, strconv.Itoa(len(added)-room)+" more committed-lost records not listed")
		added = added[:room]
	}
	anomalies := append(append([]Anomaly(nil), v.Anomalies...), added...)
	out := verdict(v.Checker, anomalies, v.Result == ResultUnknown, notes...)
	out.Omitted += v.Omitted
	return out
}
