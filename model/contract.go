// contract.go: the contract model of a Kafka partition's committed log —
// the strict model of partition.go plus exactly the losses Kafka's
// durability contract permits.
//
// What it checks: the same as Model, except that a history may also carry
// Truncate operations, one per fact of the run that permits a loss (an
// unclean election, an acks=0/1 leader failure, every ISR member down at
// once with one losing unflushed data). A Truncate may take effect at any
// instant after its fact (the caller gives it the fact's time as Call and an
// infinite Return), and then removes any suffix of the committed log made
// only of values it excuses (Input.Excused) or of Hidden values: offsets
// then get reused, as they do in Kafka after such a loss. A value the fact
// does not excuse (an acks=all record when only an acks=1 leader failed)
// can never be truncated, so the model still catches a lost or rewritten
// record that no fact permits.
//
// The checker (checkers/linearizability.go) runs the strict model first and
// this one only on a strict violation: strict fails and contract holds means
// the violation is permitted; both fail means a protocol bug.
//
// What it simplifies: one Truncate per fact; a fact whose loss happens in
// two separate rewinds of the committed log would need two. The model is
// nondeterministic (a truncation may stop at any excused offset) and is
// turned into porcupine's deterministic form by its power-set construction
// (NondeterministicModel.ToModel); the sets stay small because every
// acknowledged append pins its offset.

package model

import "github.com/anishathalye/porcupine"

// Truncate is the kind of a contract-model operation that may remove a
// suffix of excused values from the committed log.
const Truncate OpKind = 3

// Prefix returns the first n entries of l (n clamped to [0, Len]).
func (l Log) Prefix(n int64) Log {
	if n <= 0 {
		return Log{}
	}
	t := l.tail
	for t != nil && t.n > n {
		t = t.prev
	}
	return Log{tail: t}
}

// ContractStep is the contract model's transition: Model's Step for
// appends, reads and HW reads (one next state, or none if illegal); for a
// Truncate, every prefix of log that removes only values in in.Excused or
// Hidden ones, log itself (no effect) included.
func ContractStep(log Log, in Input, out Output) []Log {
	if in.Kind != Truncate {
		if ok, next := Step(log, in, out); ok {
			return []Log{next}
		}
		return nil
	}
	next := []Log{log}
	for t := log.tail; t != nil; t = t.prev {
		if t.value != Hidden && !in.Excused[t.value] {
			break
		}
		next = append(next, Log{tail: t.prev})
	}
	return next
}

// ContractModel returns the porcupine model of the contract: states are
// sets of Logs (porcupine's power-set construction), inputs and outputs as
// Model's, plus Truncate inputs. It is partitioned per Key like Model.
func ContractModel() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition: Partition,
		Init:      func() []any { return []any{Log{}} },
		Step: func(state, input, output any) []any {
			next := ContractStep(state.(Log), input.(Input), output.(Output))
			out := make([]any, len(next))
			for i, l := range next {
				out[i] = l
			}
			return out
		},
		Equal:                     func(a, b any) bool { return a.(Log).Equal(b.(Log)) },
		Hash:                      func(s any) uint64 { return s.(Log).Hash() },
		DescribeOperation:         func(in, out any) string { return DescribeOperation(in.(Input), out.(Output)) },
		DescribeState:             func(s any) string { return DescribeState(s.(Log)) },
		DescribeOperationMetadata: describeMetadata,
	}
	return nm.ToModel()
}
