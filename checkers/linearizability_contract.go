// linearizability_contract.go: the second half of the linearizability
// checker — is a strict violation one that Kafka's contract permits?
//
// What it checks: a partition whose history the strict log model rejects is
// checked again against model.ContractModel, with the strict operations
// plus exactly what the facts of the run permit (contract.go):
//   - one Truncate per loss fact of the partition (an unclean election, an
//     acks=1 leader failure, the whole ISR down with one member losing
//     unflushed data), invoked at the fact's time, that may remove a suffix
//     of the committed log made of the values the fact excuses (the sends
//     invoked at or before it; for a leader failure only its acks<=1 sends);
//   - for a producer that may write a record twice (retries without
//     idempotence), one more append of the value at each other offset a
//     poll saw it at or the final committed log holds it at, which may or
//     may not have happened.
//
// Strict fails and contract holds: permitted, naming the facts. Both fail:
// a protocol bug. The contract check out of budget: unknown, never either.
//
// What it simplifies: the contract history names every fact of the
// partition, not only those the linearization used.

package checkers

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// contractCheck runs the contract model on ops, the strict porcupine
// history of partition key. decided is false when the budget ran out; why
// is the evidence.
func contractCheck(h History, con *contract, key model.Key, ops []porcupine.Operation, left time.Duration) (permitted bool, why string, decided bool) {
	k := tp{key.Topic, key.Partition}
	extra, facts := contractOps(h, con, k)
	if len(extra) == 0 {
		return false, "not permitted: no fact of the run permits a loss, a rewrite or a duplicate on " + k.String(), true
	}
	if left <= 0 {
		return false, "was not checked (budget spent)", false
	}
	all := append(append([]porcupine.Operation(nil), ops...), extra...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Call < all[j].Call })
	// NB: not CheckOperationsVerbose: the verdict is all this needs, and
	// the verbose search, the same search, also copies its stack at every
	// backtrack to keep the longest partial linearizations.
	res := porcupine.CheckOperationsTimeout(contractModel, all, left)
	allowed := strings.Join(facts, "; ")
	switch res {
	case porcupine.Ok:
		return true, "permitted: the contract model linearizes it when it allows " + allowed, true
	case porcupine.Illegal:
		return false, "not permitted: the contract model does not linearize it either, though it allows " + allowed, true
	}
	return false, "ran out of its budget", false
}

// contractModel is the contract model without partitioning (the checker
// partitions itself).
var contractModel = func() porcupine.Model {
	m := model.ContractModel()
	m.Partition = nil
	return m
}()

// contractOps returns what the contract adds to partition k's history, and
// the facts that permit it, in time order.
func contractOps(h History, con *contract, k tp) ([]porcupine.Operation, []string) {
	clients := clientIDs(h)
	key := model.Key{Topic: k.topic, Partition: k.partition}
	var sends []Op
	seen := make(map[string][]int64) // value -> offsets polls saw it at
	for _, op := range h.Ops {
		if op.Topic != k.topic || op.Partition != k.partition {
			continue
		}
		switch {
		case op.Kind == Send && op.Outcome != Fail:
			sends = append(sends, op)
		case op.Kind == Poll && (op.Outcome == OK || op.Outcome == Info):
			for _, r := range op.Records {
				if !containsOffset(seen[r.Value], r.Offset) {
					seen[r.Value] = append(seen[r.Value], r.Offset)
				}
			}
		}
	}
	for _, e := range con.committed[k] {
		if !containsOffset(seen[e.Value], e.Offset) {
			seen[e.Value] = append(seen[e.Value], e.Offset)
		}
	}
	var out []porcupine.Operation
	var facts []string
	for i, lf := range con.lossFacts(k) {
		excused := map[string]bool{}
		for _, op := range sends {
			if lf.excuses(op) {
				excused[op.Value] = true
			}
		}
		if len(excused) == 0 {
			continue
		}
		facts = append(facts, strings.TrimPrefix(lf.why, "permitted: "))
		out = append(out, porcupine.Operation{ClientId: len(clients) + i, Call: int64(lf.time), Return: never,
			Input:    model.Input{Key: key, Kind: model.Truncate, Value: strings.TrimPrefix(lf.why, "permitted: "), Excused: excused},
			Output:   model.Output{},
			Metadata: "loss fact"})
	}
	dups := 0
	for _, op := range sends {
		if _, ok := duplicateExcuse(h, op.Process); !ok {
			continue
		}
		for _, off := range seen[op.Value] {
			if op.Outcome == OK && off == op.Offset {
				continue
			}
			dups++
			out = append(out, porcupine.Operation{ClientId: clients[op.Process], Call: int64(op.Invoke), Return: never,
				Input:    model.Input{Key: key, Kind: model.Append, Value: op.Value},
				Output:   model.Output{Offset: off},
				Metadata: op.Index})
		}
	}
	if dups > 0 {
		facts = append(facts, strconv.Itoa(dups)+" duplicate appends by producers that retry without idempotence")
	}
	if len(facts) > 4 {
		n := len(facts)
		facts = append(facts[:3:3], "… ("+strconv.Itoa(n)+" facts in all)")
	}
	return out, facts
}
