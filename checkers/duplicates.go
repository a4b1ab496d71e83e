// duplicates.go: the duplicates checker.
//
// What it checks: no value appears at two offsets of a partition, counting
// the final committed log (PartitionFinal.Judge's replica below its HW) and
// every record a poll saw (a value polled at offset 3, lost, and committed
// again at offset 5 by a retry counts, as Jepsen's :duplicate does).
//
// Whether Kafka permits a duplicate (contract.go): a producer without
// idempotence may write a record twice when it retries a request whose
// response was lost, so its duplicates are Permitted. With
// enable.idempotence=true (KIP-98) a duplicate is permitted only when a copy
// that a poll saw is no longer in the final committed log and a loss fact
// permits losing the record: the producer, never told of the first append,
// wrote it again after the loss. Otherwise it is a contract break, as it is
// for a producer not listed in History.Producers or a value no Send wrote.
//
// A value is the evidence, never the identity (issue 28): an application
// may send equal values. A record's identity is its send: an idempotent
// producer's (producer id, epoch, sequence) when the history has it (serve
// mode, where every produce request is its own send and a retry shares the
// identity), else the send operation itself (the simulated clients, whose
// retries are one operation). A value at n offsets is a duplicate only when
// fewer than n identities sent it (and did not certainly fail): then some
// record is at two offsets. Two producers writing "1" once each are not.
//
// What it simplifies: values are compared within one partition only; a
// producer without idempotence in serve mode cannot be judged for
// duplicates (each produce request is its own identity, since a broker
// cannot tell a client's retry from its resend).
//
// How it stays cheap: a polled record that the committed log holds at its
// offset (found by index when the committed offsets are consecutive) was
// already counted with it, so it is not looked up again; and which send
// wrote a value is looked up only for values at two offsets. The same
// anomalies as looking up everything (property-tested against that
// version).

package checkers

import (
	"sort"
	"strconv"
)

// Duplicates checks that no value is at two offsets of a partition.
func Duplicates(h History, f Final) Verdict {
	return duplicates(h, f, newContract(f), nil)
}

// duplicates is Duplicates with the run's contract given (CheckAll builds
// one for all), and th the run's transactions (nil: none): a value that
// neither a send nor a transaction of the history wrote, in a partition
// whose final log holds transactions, is left to the transactions
// checker, with a note. A served run's transactional records are not
// sends of its history, nor are its transactions reconstructed
// (serve/history.go), and a client's transactions may repeat a value (an
// aborted write and its committed retry, or an application's equal
// values), so the value is no evidence of a record written twice there.
// A scripted transaction's values are known (th.Txns) and still judged.
func duplicates(h History, f Final, con *contract, th *TxnHistory) Verdict {
	var txnParts map[tp]bool
	var txnWritten map[string]bool // the values the history's transactions wrote
	if th != nil {
		for _, p := range th.Final {
			if p.Transactional {
				if txnParts == nil {
					txnParts = map[tp]bool{}
				}
				txnParts[tp{p.Topic, p.Partition}] = true
			}
		}
		for _, t := range th.Txns {
			for _, w := range t.Writes {
				if txnWritten == nil {
					txnWritten = map[string]bool{}
				}
				txnWritten[w.Value] = true
			}
		}
	}
	leftToTxn := 0
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
	final := make(map[tp]Replica)
	dense := make(map[tp][]Entry) // the committed logs whose offsets are base, base+1, ...
	for _, pf := range f.Partitions {
		if judge, ok := pf.Judge(); ok {
			k := tp{pf.Topic, pf.Partition}
			final[k] = judge
			if es := committed(judge); len(es) > 0 {
				if isDense(es) {
					dense[k] = es
				}
				m := offsets[k]
				if m == nil {
					m = make(map[string][]int64, len(es)) // NB: presized, not grown one rehash at a time
					offsets[k] = m
				}
				for _, e := range es {
					add(m, e.Value, e.Offset)
				}
			}
		}
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != Poll || (op.Outcome != OK && op.Outcome != Info) || len(op.Records) == 0 {
			continue
		}
		k := tp{op.Topic, op.Partition}
		es := dense[k]
		m := offsetsOf(k)
		for _, r := range op.Records {
			// NB: a record the committed log holds at its offset was added
			// with it (most polls read the committed log): no lookup.
			if len(es) > 0 {
				if j := r.Offset - es[0].Offset; j >= 0 && j < int64(len(es)) && es[j].Value == r.Value {
					continue
				}
			}
			add(m, r.Value, r.Offset)
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
	// sender maps each duplicated value to the first send of it, by index
	// into h.Ops; built only when some value is duplicated.
	var sender map[string]int
	var identities map[tp]map[string]int
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
		if len(values) > 0 && sender == nil {
			sender = firstSenders(h, offsets)
			identities = senderIdentities(h, offsets)
		}
		for _, v := range values {
			if len(offsets[k][v]) <= identities[k][v] {
				continue // as many records as offsets: equal values, not a duplicate
			}
			offs := append([]int64(nil), offsets[k][v]...)
			sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
			a := Anomaly{Kind: "duplicate", Topic: k.topic, Partition: k.partition, Value: v, Offsets: offs}
			si, ok := sender[v]
			if !ok && txnParts[k] && !txnWritten[v] {
				leftToTxn++
				continue
			}
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
	v := verdict(NameDuplicates, anomalies, false)
	if leftToTxn > 0 {
		v.Notes = append(v.Notes, strconv.Itoa(leftToTxn)+" values at two offsets of partitions holding transactions, which no send of the history wrote: not judged here (the transactions checker judges those partitions' records)")
	}
	return v
}

// isDense reports whether es are at consecutive offsets, so that the entry
// at offset o is es[o-es[0].Offset].
func isDense(es []Entry) bool {
	for i := range es {
		if es[i].Offset != es[0].Offset+int64(i) {
			return false
		}
	}
	return true
}

// firstSenders maps each value at two offsets of a partition to the index
// in h.Ops of the first send of it.
func firstSenders(h History, offsets map[tp]map[string][]int64) map[string]int {
	dup := make(map[string]bool)
	for _, m := range offsets {
		for v, offs := range m {
			if len(offs) > 1 {
				dup[v] = true
			}
		}
	}
	sender := make(map[string]int, len(dup))
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == Send && dup[op.Value] {
			if _, ok := sender[op.Value]; !ok {
				sender[op.Value] = i
			}
		}
	}
	return sender
}

// senderIdentities counts, for each value at two offsets of a partition,
// the distinct records that sent it there: its sends that did not
// certainly fail, an idempotent producer's by (producer id, epoch,
// sequence) when known, any other by the operation.
func senderIdentities(h History, offsets map[tp]map[string][]int64) map[tp]map[string]int {
	idempotent := map[string]bool{}
	for _, p := range h.Producers {
		idempotent[p.Process] = p.Idempotent
	}
	type key struct {
		k tp
		v string
	}
	type pes struct {
		pid   int64
		epoch int16
		seq   int32
	}
	seen := map[key]map[pes]bool{}
	out := map[tp]map[string]int{}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != Send || op.Outcome == Fail {
			continue
		}
		k := tp{op.Topic, op.Partition}
		if offs := offsets[k][op.Value]; len(offs) < 2 {
			continue
		}
		if out[k] == nil {
			out[k] = map[string]int{}
		}
		if !idempotent[op.Process] || op.Sequence < 0 || op.ProducerID < 0 {
			out[k][op.Value]++ // the operation is the record
			continue
		}
		kv, id := key{k, op.Value}, pes{op.ProducerID, op.ProducerEpoch, op.Sequence}
		if seen[kv] == nil {
			seen[kv] = map[pes]bool{}
		}
		if !seen[kv][id] {
			seen[kv][id] = true
			out[k][op.Value]++
		}
	}
	return out
}

func min64(xs []int64) int64 {
	m := xs[0]
	for _, x := range xs[1:] {
		m = min(m, x)
	}
	return m
}
