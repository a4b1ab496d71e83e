// ordering.go: the ordering checker (Jepsen's nonmonotonic-send).
//
// What it checks: per producer and partition, the offsets of acknowledged
// sends follow the order the sends were invoked: if send a was invoked
// before send b (Invoke, then history order), a's offset is below b's. A
// send acknowledged below an earlier send's offset is "reordered"; two sends
// acknowledged at one offset are "same-offset".
//
// Whether Kafka permits it (contract.go): the earlier record's loss is
// permitted by a loss fact between its invocation and the later one's
// acknowledgement (the log was truncated below it and the offset reused:
// both kinds are then permitted); or, for "reordered", retries > 0, more
// than one request in flight (max.in.flight.requests.per.connection > 1)
// and no idempotence: a failed batch retried after a later one succeeded
// lands after it; or the client is the scripted one, whose records are
// sent independently (Producer.Independent). With one request in flight, with retries = 0, or with
// idempotence (KIP-98 sequence numbers keep order for up to 5 in flight) a
// reordering is a contract break, as is any other same-offset pair and any
// reordering by a producer not listed in History.Producers.
//
// What it simplifies: only OK sends count (an info send whose record landed
// is not placed); sends are ordered by invocation, which is the
// application's send order for one producer. An idempotent producer's
// sends that carry their record's identity (serve's: producer id, epoch,
// sequence) are ordered by epoch and sequence instead, its own order: a
// served client's retry of a timed-out batch is a second send invoked
// after later batches, acknowledged at the offset its first attempt
// took, and is the same record, placed once (the duplicates checker
// judges a record acknowledged at two offsets).

package checkers

import (
	"sort"
	"strconv"
)

// Ordering checks per-producer, per-partition send order.
func Ordering(h History, f Final) Verdict {
	return ordering(h, f, newContract(f))
}

// ordering is Ordering with the run's contract given (CheckAll builds one for all).
func ordering(h History, f Final, con *contract) Verdict {
	type key struct {
		process string
		tp      tp
	}
	groups := make(map[key][]*Op) // NB: pointers into h.Ops: an Op is large to copy and sort
	var keys []key
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != Send || op.Outcome != OK {
			continue
		}
		k := key{op.Process, tp{op.Topic, op.Partition}}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], op)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].tp != keys[j].tp {
			return keys[i].tp.less(keys[j].tp)
		}
		return keys[i].process < keys[j].process
	})
	var anomalies []Anomaly
	for _, k := range keys {
		ops := groups[k]
		if bySequence(h, k.process, ops) {
			ops = firstOfEachRecord(ops)
			sort.SliceStable(ops, func(i, j int) bool {
				switch a, b := ops[i], ops[j]; {
				case a.ProducerEpoch != b.ProducerEpoch:
					return a.ProducerEpoch < b.ProducerEpoch
				case a.Sequence != b.Sequence:
					return a.Sequence < b.Sequence
				case a.Invoke != b.Invoke: // no identity recorded (zero): as sent
					return a.Invoke < b.Invoke
				default:
					return a.Index < b.Index
				}
			})
		} else {
			sort.SliceStable(ops, func(i, j int) bool {
				if ops[i].Invoke != ops[j].Invoke {
					return ops[i].Invoke < ops[j].Invoke
				}
				return ops[i].Index < ops[j].Index
			})
		}
		config, mayReorder := reorderExcuse(h, k.process)
		var top *Op
		for i, op := range ops {
			if i > 0 && op.Offset <= top.Offset {
				a := Anomaly{Topic: k.tp.topic, Partition: k.tp.partition, Value: op.Value,
					Offsets: []int64{top.Offset, op.Offset}, Ops: []int{top.Index, op.Index}}
				lossWhy, lost := con.lossExcuseUntil(*top, op.Complete)
				if op.Offset == top.Offset {
					a.Kind = "same-offset"
					a.Description = k.process + " had " + top.Value + " and " + op.Value + " both acknowledged at offset " +
						strconv.FormatInt(op.Offset, 10)
				} else {
					a.Kind = "reordered"
					a.Description = k.process + " sent " + top.Value + " before " + op.Value + " but they landed at " +
						strconv.FormatInt(top.Offset, 10) + " and " + strconv.FormatInt(op.Offset, 10) + " (" + config + ")"
				}
				switch {
				case lost:
					a.Permitted = true
					a.Description += "; " + lossWhy + " (" + top.Value + " may be lost and its offset reused)"
				case a.Kind == "reordered" && mayReorder:
					a.Permitted = true
					a.Description += "; permitted: a retried batch may land after a later one"
				default:
					a.Description += "; not permitted"
				}
				anomalies = append(anomalies, a)
			}
			if i == 0 || op.Offset > top.Offset {
				top = op
			}
		}
	}
	return verdict(NameOrdering, anomalies, false)
}

// bySequence reports whether process's sends ops are ordered by their
// records' identities: the process is a declared idempotent producer and
// every send carries its (producer id, epoch, sequence).
func bySequence(h History, process string, ops []*Op) bool {
	if p, ok := h.Producer(process); !ok || !p.Idempotent {
		return false
	}
	for _, op := range ops {
		if op.ProducerID < 0 || op.Sequence < 0 {
			return false
		}
	}
	return true
}

// firstOfEachRecord keeps, in history order, the first acknowledged send
// of each record (ops are in history order): its identity and its value,
// so that sends recorded with no identity (zero) stay apart.
func firstOfEachRecord(ops []*Op) []*Op {
	type id struct {
		pid   int64
		epoch int16
		seq   int32
		value string
	}
	seen := make(map[id]bool, len(ops))
	out := make([]*Op, 0, len(ops))
	for _, op := range ops {
		k := id{op.ProducerID, op.ProducerEpoch, op.Sequence, op.Value}
		if !seen[k] {
			seen[k] = true
			out = append(out, op)
		}
	}
	return out
}
