// ackedloss.go: the acked-loss checker.
//
// What it checks: every Send acknowledged OK is in the partition's final
// committed log at its acknowledged offset with its value. The final
// committed log is PartitionFinal.Judge's replica's log below its HW: the
// current leader's if it is alive, else the best live replica's. A record
// that is not there is an anomaly of one of three kinds:
//   - "lost": the value is nowhere in the committed log;
//   - "moved": the value is committed at another offset;
//   - "uncommitted": the value is at its offset but at or above the HW
//     (permitted when the partition is leaderless by design, Facts.Offline,
//     or, under KIP-966's strict min ISR, has fewer replicas than its
//     min.insync.replicas, Facts.Unwritable: held, not lost, but nobody may
//     commit it).
//
// On a compacted partition (PartitionFinal.Compacted: the log cleaner
// removed records), a keyed send whose offset the cleaner emptied while a
// later record of its key is committed is no anomaly: compaction keeps only
// the latest record of each key (Kafka documentation, "Log Compaction").
// The verdict's notes count them.
//
// Records a client deleted (DeleteRecords below its new log start; a
// topic DeleteTopics deleted) are no anomaly: deletion.go.
//
// Every anomaly is a violation; each also says whether Kafka's durability
// contract permits it (Permitted), by the loss facts of contract.go: acks=0,
// an unclean election, an acks=1 leader failure, or every ISR member down at
// once with one losing unflushed data (KIP-101's n-1 replicas; KIP-966's
// last replica standing), each at or after the send's invocation.
//
// Otherwise the loss breaks the contract: a protocol bug.
//
// What it simplifies: see contract.go. A
// partition with acknowledged sends but no final state or no live replica
// makes the verdict Unknown unless some other anomaly was found.
//
// How it stays cheap: the indexes an anomaly's evidence needs (where the
// judge commits each value; which replicas hold it) are built for a
// partition only when one of its sends is missing, and the holders from
// an index of every replica's values only once a few have been asked
// (holderIndex: the same brokers in the same order as scanning each log,
// property-tested against the version that scanned for every send). Past
// MaxAnomalies a missing send is only counted (Verdict.Omitted): the
// verdict keeps no anomaly past it, so none is described.

package checkers

import (
	"cmp"
	"slices"
	"sort"
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// AckedLoss checks that every acknowledged send survives in f.
func AckedLoss(h History, f Final) Verdict {
	return ackedLoss(h, f, newContract(f))
}

// ackedLoss is AckedLoss with the run's contract given (CheckAll builds one for all).
func ackedLoss(h History, f Final, c *contract) Verdict {
	byTP := make(map[tp][]*Op) // NB: pointers into h.Ops: an Op is large to copy and sort
	total := 0
	distinct := true // the ops' indexes are strictly increasing, so no two compare equal below
	for i := range h.Ops {
		if i > 0 && h.Ops[i].Index <= h.Ops[i-1].Index {
			distinct = false
		}
		if op := &h.Ops[i]; op.Kind == Send && op.Outcome == OK {
			k := tp{op.Topic, op.Partition}
			byTP[k] = append(byTP[k], op)
			total++
		}
	}
	var anomalies []Anomaly
	var notes []string
	unknown := false
	lost, omitted := 0, 0 // NB: past MaxAnomalies a loss is only counted: the verdict keeps none past it
	compacted := 0        // keyed sends the log cleaner removed (PartitionFinal.Compacted)
	deleted := 0          // sends below a DeleteRecords log start (PartitionFinal.DeletedBelow)
	var groups grouper    // every missing send by reason, also those past MaxAnomalies
	for _, k := range sortedTPs(byTP) {
		ops := byTP[k]
		byOffset := func(a, b *Op) int { return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Index, b.Index)) }
		if distinct {
			// NB: an order with no ties has one sorted result, so the
			// faster unstable sort gives the stable one's.
			slices.SortFunc(ops, byOffset)
		} else {
			slices.SortStableFunc(ops, byOffset)
		}
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
		// NB: where (value -> committed offset on the judge) and who (value
		// -> the brokers holding it) are built for the first send not in
		// the committed log, if any: most partitions have none.
		var where map[string]int64
		var who *holderIndex
		keys := compactionIndex{pf: pf, judge: judge}
		for _, op := range ops {
			e, found := judge.At(op.Offset)
			if found && e.Value == op.Value && e.Offset < judge.HW {
				continue
			}
			if op.Offset < pf.DeletedBelow && !found {
				deleted++ // below DeleteRecords' log start: gone by request (deletion.go)
				continue
			}
			if keys.superseded(op.Key, op.Offset, found && e.Offset == op.Offset) {
				compacted++ // removed by the cleaner: a later record of its key is committed
				continue
			}
			if where == nil {
				es := committed(judge)
				where = make(map[string]int64, len(es))
				for _, e := range es {
					if _, dup := where[e.Value]; !dup {
						where[e.Value] = e.Offset
					}
				}
				who = newHolderIndex(pf)
			}
			lost++
			a := Anomaly{Topic: k.topic, Partition: k.partition, Value: op.Value,
				Offsets: []int64{op.Offset}, Times: []sim.Time{op.Invoke, op.Complete}, Ops: []int{op.Index}}
			off, moved := where[op.Value]
			switch {
			case found && e.Value == op.Value:
				a.Kind = "uncommitted"
			case moved:
				a.Kind = "moved"
			default:
				a.Kind = "lost"
			}
			// NB: the kind and the reason are decided for every missing
			// send, also those past MaxAnomalies, so that the groups count
			// them all; only the description (holders) is left out.
			why, permitted := c.lossExcuse(*op)
			if off := offlineWhy(f.Facts.Offline, k.topic, k.partition); a.Kind == "uncommitted" && off != "" && !permitted {
				// Not lost: held, but the partition has no leader to commit
				// it (offline by design, KIP-966).
				why, permitted = off, true
			}
			if un := offlineWhy(f.Facts.Unwritable, k.topic, k.partition); a.Kind == "uncommitted" && un != "" && f.Facts.EligibleLeaderReplicas && !permitted {
				// Not lost: held, but under KIP-966's strict min ISR a
				// partition with fewer replicas than min.insync.replicas
				// never advances its HW, so an acks=0/1 write is held,
				// never committed.
				why, permitted = un+"; under KIP-966's strict min ISR its HW never advances, so what it takes is never committed", true
			}
			a.Permitted, a.Reason = permitted, why
			listed := len(anomalies) < MaxAnomalies
			a.Group = groups.add(a, op.Acks, op.Offset, op.Complete, listed)
			if !listed {
				omitted++
				continue
			}
			desc := "acknowledged (acks=" + strconv.Itoa(int(op.Acks)) + ") at offset " + strconv.FormatInt(op.Offset, 10) +
				" at " + op.Complete.String() + "; judged on " + judge.ReplicaState.String()
			switch a.Kind {
			case "uncommitted":
				desc += ": present but not below the HW"
			case "moved":
				a.Offsets = append(a.Offsets, off)
				desc += ": committed at offset " + strconv.FormatInt(off, 10) + " instead"
			default:
				if found {
					desc += ": offset " + strconv.FormatInt(op.Offset, 10) + " holds " + e.Value + " (epoch " + strconv.Itoa(int(e.LeaderEpoch)) + ")"
				} else {
					desc += ": the committed log ends at " + strconv.FormatInt(judge.HW, 10)
				}
			}
			a.Replicas = who.holders(op.Value)
			if len(a.Replicas) > 0 {
				desc += "; still held by " + brokerList(a.Replicas)
			}
			a.Description = desc + "; " + why
			anomalies = append(anomalies, a)
		}
	}
	notes = append([]string{strconv.Itoa(total) + " acknowledged sends checked, " + strconv.Itoa(lost) + " not in the final committed log"}, notes...)
	if compacted > 0 {
		notes = append(notes, strconv.Itoa(compacted)+" acknowledged keyed sends removed by log compaction (cleanup.policy=compact): a later record of each one's key is committed, as compaction promises")
	}
	if deleted > 0 {
		notes = append(notes, strconv.Itoa(deleted)+" acknowledged sends below the log start offset DeleteRecords set: deleted by request, not lost")
	}
	v := verdict(NameAckedLoss, anomalies, unknown, notes...)
	v.Omitted += omitted
	v.Groups = groups.groups
	return v
}

// compactionIndex tells, on a compacted partition, whether a keyed record
// missing from the judge's log may have been removed by the log cleaner:
// a later record of its key is committed. Its index of the last committed
// offset of each key is built on the first question.
type compactionIndex struct {
	pf    PartitionFinal
	judge Replica
	last  map[string]int64
	// removed are the acknowledged offsets the cleaner removed
	// (consumer.go's removedByCleaner), built on first use.
	removed map[int64]bool
}

// superseded reports whether the record of key at offset, absent from
// the judge's log (held false: its offset holds no other record), was
// removed by compaction.
func (x *compactionIndex) superseded(key string, offset int64, held bool) bool {
	if !x.pf.Compacted || key == "" || held {
		return false
	}
	if x.last == nil {
		x.last = map[string]int64{}
		for _, e := range committed(x.judge) {
			if e.Key != "" {
				x.last[e.Key] = e.Offset
			}
		}
	}
	last, ok := x.last[key]
	return ok && last > offset
}

// holds reports whether the judge's log has a record at offset.
func (x *compactionIndex) holds(offset int64) bool {
	_, ok := x.judge.At(offset)
	return ok
}

// holderIndex answers holders for one partition, from an index of every
// value its replicas hold once a few have been asked (a lossy run asks for
// every lost send, and each scan reads every replica's log).
type holderIndex struct {
	pf    PartitionFinal
	asked int
	index map[string]heldBy
}

// heldBy are the brokers holding one value, and the last replica (in
// sortedReplicas order) that added one.
type heldBy struct {
	brokers []int32
	last    int
}

func newHolderIndex(pf PartitionFinal) *holderIndex { return &holderIndex{pf: pf} }

// holders returns holders(pf, value).
func (x *holderIndex) holders(value string) []int32 {
	if x.asked++; x.asked <= 4 {
		return holders(x.pf, value)
	}
	if x.index == nil {
		n := 0
		for _, r := range x.pf.Replicas {
			n = max(n, len(r.Log))
		}
		x.index = make(map[string]heldBy, n)
		for ri, r := range sortedReplicas(x.pf.Replicas) {
			for _, e := range r.Log {
				// NB: a replica once per value, as the scan's break does.
				if h := x.index[e.Value]; len(h.brokers) == 0 || h.last != ri {
					x.index[e.Value] = heldBy{append(h.brokers, r.Broker), ri}
				}
			}
		}
	}
	return slices.Clone(x.index[value].brokers)
}

// holders returns the brokers whose log holds value anywhere, in id order.
func holders(pf PartitionFinal, value string) []int32 {
	var out []int32
	for _, r := range sortedReplicas(pf.Replicas) {
		for _, e := range r.Log {
			if e.Value == value {
				out = append(out, r.Broker)
				break
			}
		}
	}
	return out
}

// lostAt returns the replicas of pf down at t (only those whose failure
// lost unflushed data, with onlyLost), in id order.
func lostAt(failures []Failure, pf PartitionFinal, t sim.Time, onlyLost bool) []int32 {
	var out []int32
	for _, fl := range sortedFailures(failures) {
		if (fl.LostUnflushed || !onlyLost) && fl.down(t) && isReplica(pf, fl.Broker) && !containsBroker(out, fl.Broker) {
			out = append(out, fl.Broker)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// sortedFailures returns failures by time, then broker.
func sortedFailures(fs []Failure) []Failure {
	out := append([]Failure(nil), fs...)
	// NB: a stable sort has one result: SortStableFunc gives sort.SliceStable's
	// without its reflection allocations.
	slices.SortStableFunc(out, func(a, b Failure) int {
		if a.Time != b.Time {
			return cmp.Compare(a.Time, b.Time)
		}
		return cmp.Compare(a.Broker, b.Broker)
	})
	return out
}

func isReplica(pf PartitionFinal, broker int32) bool {
	_, ok := pf.Replica(broker)
	return ok
}

func containsBroker(ids []int32, b int32) bool {
	for _, id := range ids {
		if id == b {
			return true
		}
	}
	return false
}
