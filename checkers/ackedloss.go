// ackedloss.go: the acked-loss checker.
//
// What it checks: every Send acknowledged OK is in the partition's final
// committed log at its acknowledged offset with its value. The final
// committed log is PartitionFinal.Judge's replica's log below its HW: the
// current leader's if it is alive, else the best live replica's. A record
// that is not there is an anomaly of one of three kinds:
//   - "lost": the value is nowhere in the committed log;
//   - "moved": the value is committed at another offset;
//   - "uncommitted": the value is at its offset but at or above the HW.
//
// Every anomaly is a violation; each also says whether Kafka's durability
// contract permits it (Permitted). The rule, applied in this order, with t0
// the Send's invocation time:
//  1. acks=0: permitted (an acks=0 send is never really acknowledged).
//  2. An unclean election of the partition happened at or after t0.
//  3. acks=1 and the broker that acknowledged it (Op.Leader; when unknown,
//     any replica of the partition) failed (crash, power loss, isolation,
//     pause) at or after t0: the leader may die before followers copy it.
//  4. At some instant at or after t0, at least RF replicas of the partition
//     (RF = Facts.ReplicationFactor, or the number of replicas in Final) were
//     down at once (any failure) and at least one of them had lost unflushed
//     data: more replicas failed at once than RF-1, which is all Kafka
//     guarantees to survive (KIP-101: "Kafka guarantees durability for n-1
//     replicas"), and one came back with less than it acknowledged.
//
// Otherwise the loss breaks the contract: a protocol bug.
//
// What it simplifies: it does not know the ISR when the record was
// acknowledged, so a loss of an acks=all record whose ISR had shrunk below RF
// is only permitted when all RF replicas were down at once (rule 4 is
// strict): KIP-966's "last replica standing" loss, where the others had left
// the ISR before the last one lost power, is reported as a bug. A
// partition with acknowledged sends but no final state or no live replica
// makes the verdict Unknown unless some other anomaly was found.

package checkers

import (
	"sort"
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// AckedLoss checks that every acknowledged send survives in f.
func AckedLoss(h History, f Final) Verdict {
	byTP := make(map[tp][]Op)
	total := 0
	for _, op := range h.Ops {
		if op.Kind == Send && op.Outcome == OK {
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
			var why string
			a.Permitted, why = permittedLoss(op, pf, f.Facts)
			a.Description = desc + "; " + why
			anomalies = append(anomalies, a)
		}
	}
	notes = append([]string{strconv.Itoa(total) + " acknowledged sends checked, " + strconv.Itoa(lost) + " not in the final committed log"}, notes...)
	return verdict(NameAckedLoss, anomalies, unknown, notes...)
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

// permittedLoss applies the rule in the file header and says why.
func permittedLoss(op Op, pf PartitionFinal, facts Facts) (bool, string) {
	if op.Acks == 0 {
		return true, "permitted: acks=0 promises nothing"
	}
	for _, u := range facts.UncleanElections {
		if u.Topic == op.Topic && u.Partition == op.Partition && u.Time >= op.Invoke {
			return true, "permitted: unclean election of b" + strconv.Itoa(int(u.Broker)) +
				" at epoch " + strconv.Itoa(int(u.Epoch)) + " at " + u.Time.String()
		}
	}
	if op.Acks == 1 {
		for _, fl := range sortedFailures(facts.Failures) {
			if fl.Time < op.Invoke {
				continue
			}
			if fl.Broker == op.Leader || (op.Leader < 0 && isReplica(pf, fl.Broker)) {
				return true, "permitted: acks=1 and the leader b" + strconv.Itoa(int(fl.Broker)) +
					" failed (" + fl.Kind.String() + ") at " + fl.Time.String()
			}
		}
	}
	rf := facts.ReplicationFactor
	if rf <= 0 {
		rf = len(pf.Replicas)
	}
	for _, fl := range sortedFailures(facts.Failures) {
		t := max(fl.Time, op.Invoke)
		lost := lostAt(facts.Failures, pf, t, true)
		down := lostAt(facts.Failures, pf, t, false)
		if rf > 0 && len(down) >= rf && len(lost) > 0 {
			return true, "permitted: " + strconv.Itoa(len(down)) + " replicas " + brokerList(down) +
				" were down at once at " + t.String() + ", " + brokerList(lost) + " having lost unflushed data (RF=" + strconv.Itoa(rf) + " covers " + strconv.Itoa(rf-1) + ")"
		}
	}
	return false, "not permitted: no unclean election, no acks=1 leader failure, and never RF replicas down at once with one losing unflushed data"
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
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Time != out[j].Time {
			return out[i].Time < out[j].Time
		}
		return out[i].Broker < out[j].Broker
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
