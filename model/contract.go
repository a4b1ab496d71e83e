// contract.go: the contract model of a Kafka partition's committed log —
// the strict model of partition.go plus exactly the losses Kafka's
// durability contract permits.
//
// What it checks: the same as Model, except that a history may also carry
// Truncate operations, one per fact of the run that permits a loss (an
// unclean election, an acks=0/1 leader failure, the whole ISR down with one
// member losing unflushed data, a replica that lost data elected). A
// Truncate may take effect at any instant after its fact (the caller gives
// it the fact's time as Call and an infinite Return), and then removes any
// suffix of the committed log made only of values it excuses
// (Input.Excused) or of Hidden values: offsets then get reused, as they do
// in Kafka after such a loss. A value the fact does not excuse (an acks=all
// record when only an acks=1 leader failed) can never be truncated, so the
// model still catches a lost or rewritten record that no fact permits.
//
// A retrying producer without idempotence may write a record at every
// attempt, and a copy nobody read leaves no trace in the history: an
// acknowledged append with Output.Copies = c may take effect on a log up
// to c entries short of its offset, the entries between being Hidden
// copies of its value (written by its earlier attempts, inside its
// interval). The checker gives Copies only where a loss fact may later
// free those offsets (checkers/linearizability_copies.go); without it, an
// offset that held such a copy and was written again after the loss could
// not be filled before it, and a permitted loss read as a broken contract.
//
// The checker (checkers/linearizability_contract.go) runs the strict model
// first and this one only on a strict violation: strict fails and contract
// holds means the violation is permitted; both fail means a protocol bug.
//
// How it stays deterministic and cheap: a truncation does not pick its
// length at once. The state is a log and a floor: "any prefix of the log at
// least floor long" (an interval of candidate logs, all prefixes of one).
// The next operation that needs a definite length picks it: an append at
// offset o cuts to o (legal iff floor <= o <= Len; past Len, it pads with
// its copies, legal iff o-Copies <= Len); an HW read of h cuts to
// h; a read narrows the floor above the offsets it saw; a further Truncate
// lowers the floor. The set of possible logs is then always such an
// interval, so porcupine needs no power-set construction.
//
// What it simplifies: one Truncate per fact (a fact whose loss happens in
// two separate rewinds would need two); an unobserved append (Hidden), or
// an append padding with copies, with a cut pending resolves it at the
// longest prefix it may land at, not at every one.

package model

import (
	"sort"
	"strconv"

	"github.com/anishathalye/porcupine"
)

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

// ContractState is a state of the contract model: the committed log is any
// prefix of Log at least Floor long. Floor == Log.Len() means no cut is
// pending.
type ContractState struct {
	Log   Log
	Floor int64
}

// Equal reports whether two states stand for the same set of logs.
func (s ContractState) Equal(o ContractState) bool { return s.Floor == o.Floor && s.Log.Equal(o.Log) }

// String renders the state: the log, and "(cut to >= n pending)" if any.
func (s ContractState) String() string {
	if s.Floor >= s.Log.Len() {
		return s.Log.String()
	}
	return s.Log.String() + " (cut to >= " + strconv.FormatInt(s.Floor, 10) + " pending)"
}

// definite returns the state whose log is l, no cut pending.
func definite(l Log) ContractState { return ContractState{Log: l, Floor: l.Len()} }

// ContractStep is the contract model's transition: whether (in, out) is
// legal in state s, and the next state.
func ContractStep(s ContractState, in Input, out Output) (bool, ContractState) {
	n := s.Log.Len()
	switch in.Kind {
	case Truncate:
		floor := s.Floor
		for t := s.Log.Prefix(floor).tail; t != nil && (t.value == Hidden || in.Excused[t.value]); t = t.prev {
			floor = t.n - 1
		}
		return true, ContractState{Log: s.Log, Floor: floor}
	case Append:
		switch {
		case out.Unobserved:
			// The longest prefix it may land at: a gap, or from Tail on.
			k := n
			if k < out.Tail {
				i := sort.Search(len(out.Gaps), func(i int) bool { return out.Gaps[i] > k }) - 1
				if i < 0 || out.Gaps[i] < s.Floor {
					return false, s
				}
				k = out.Gaps[i]
			}
			return true, definite(s.Log.Prefix(k).Append(Hidden))
		case out.Unknown:
			return true, definite(s.Log.Append(in.Value))
		case out.Offset < s.Floor || out.Offset-out.Copies > n:
			return false, s
		case out.Offset > n:
			// The offsets between hold earlier copies of the value that
			// nobody observed (Output.Copies).
			l := s.Log
			for l.Len() < out.Offset {
				l = l.Append(Hidden)
			}
			return true, definite(l.Append(in.Value))
		}
		return true, definite(s.Log.Prefix(out.Offset).Append(in.Value))
	case Read:
		if !s.Log.holds(out.Records) {
			return false, s
		}
		floor := s.Floor
		for _, r := range out.Records {
			floor = max(floor, r.Offset+1)
		}
		return true, ContractState{Log: s.Log, Floor: floor}
	case HighWatermark:
		if out.HighWatermark < s.Floor || out.HighWatermark > n {
			return false, s
		}
		return true, definite(s.Log.Prefix(out.HighWatermark))
	}
	return false, s
}

// ContractModel returns the porcupine model of the contract: states
// ContractState, inputs and outputs as Model's plus Truncate inputs,
// partitioned per Key like Model.
func ContractModel() porcupine.Model {
	return porcupine.Model{
		Partition: Partition,
		Init:      func() any { return ContractState{} },
		Step: func(state, input, output any) (bool, any) {
			return ContractStep(state.(ContractState), input.(Input), output.(Output))
		},
		Equal: func(a, b any) bool { return a.(ContractState).Equal(b.(ContractState)) },
		Hash: func(s any) uint64 {
			cs := s.(ContractState)
			return cs.Log.Hash() ^ uint64(cs.Floor)*0x9e3779b97f4a7c15
		},
		DescribeOperation:         func(in, out any) string { return DescribeOperation(in.(Input), out.(Output)) },
		DescribeState:             func(s any) string { return s.(ContractState).String() },
		DescribeOperationMetadata: describeMetadata,
	}
}
