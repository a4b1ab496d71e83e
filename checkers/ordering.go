// ordering.go: the ordering checker (Jepsen's nonmonotonic-send).
//
// What it checks: per producer and partition, the offsets of acknowledged
// sends follow the order the sends were invoked: if send a was invoked
// before send b (Invoke, then history order), a's offset is below b's. A
// send acknowledged below an earlier send's offset is "reordered"; two sends
// acknowledged at one offset are "same-offset".
//
// Whether Kafka permits a reordering: with retries > 0 and more than one
// request in flight (max.in.flight.requests.per.connection > 1) and no
// idempotence, a failed batch retried after a later one succeeded lands
// after it, so the reordering is Permitted. With one request in flight,
// with retries = 0, or with idempotence (KIP-98 sequence numbers keep order
// for up to 5 in flight) it is a contract break, as is any same-offset pair
// and any reordering by a producer not listed in History.Producers.
//
// What it simplifies: only OK sends count (an info send whose record landed
// is not placed); sends are ordered by invocation, which is the
// application's send order for one producer.

package checkers

import (
	"sort"
	"strconv"
)

// Ordering checks per-producer, per-partition send order.
func Ordering(h History) Verdict {
	type key struct {
		process string
		tp      tp
	}
	groups := make(map[key][]Op)
	var keys []key
	for _, op := range h.Ops {
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
		sort.SliceStable(ops, func(i, j int) bool {
			if ops[i].Invoke != ops[j].Invoke {
				return ops[i].Invoke < ops[j].Invoke
			}
			return ops[i].Index < ops[j].Index
		})
		p, declared := h.Producer(k.process)
		mayReorder := declared && !p.Idempotent && p.MaxInFlight > 1 && p.Retries > 0
		var config string
		switch {
		case !declared:
			config = "producer configuration not declared"
		default:
			config = "max.in.flight=" + strconv.Itoa(p.MaxInFlight) + " retries=" + strconv.Itoa(p.Retries) +
				" idempotence=" + strconv.FormatBool(p.Idempotent)
		}
		var top Op
		for i, op := range ops {
			if i > 0 && op.Offset <= top.Offset {
				a := Anomaly{Topic: k.tp.topic, Partition: k.tp.partition, Value: op.Value,
					Offsets: []int64{top.Offset, op.Offset}, Ops: []int{top.Index, op.Index}}
				if op.Offset == top.Offset {
					a.Kind = "same-offset"
					a.Description = k.process + " had " + top.Value + " and " + op.Value + " both acknowledged at offset " +
						strconv.FormatInt(op.Offset, 10) + "; not permitted"
				} else {
					a.Kind = "reordered"
					a.Permitted = mayReorder
					a.Description = k.process + " sent " + top.Value + " before " + op.Value + " but they landed at " +
						strconv.FormatInt(top.Offset, 10) + " and " + strconv.FormatInt(op.Offset, 10) + " (" + config + ")"
					if mayReorder {
						a.Description += "; permitted: a retried batch may land after a later one"
					} else {
						a.Description += "; not permitted"
					}
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
