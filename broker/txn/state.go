package txn

// This file holds the transaction states and their valid transitions, as
// Kafka's TransactionState: each state names the states it may be entered
// from. A transition outside them is a bug and panics.

import "fmt"

// State is a transaction's state; its value is the TransactionStatus id
// written in TransactionLogValue.
type State int8

// The states, with Kafka's ids.
const (
	Empty             State = 0 // no transaction: just initialised, or expired partitions cleared
	Ongoing           State = 1 // partitions added, not yet ended
	PrepareCommit     State = 2 // EndTxn(commit) written; markers being sent
	PrepareAbort      State = 3 // EndTxn(abort) or a coordinator abort written; markers being sent
	CompleteCommit    State = 4 // commit markers written
	CompleteAbort     State = 5 // abort markers written
	Dead              State = 6 // transactional.id expired: its tombstone is being written
	PrepareEpochFence State = 7 // a new producer fences an ongoing transaction (in memory only)
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
	"CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// validPrevious is Kafka's TransactionState.validPreviousStates.
// NB: PrepareAbort may follow Empty and Complete* for transaction version
// 2, whose EndTxn may abort a transaction that added no partition.
var validPrevious = map[State][]State{
	Empty:             {Empty, CompleteCommit, CompleteAbort},
	Ongoing:           {Ongoing, Empty, CompleteCommit, CompleteAbort},
	PrepareCommit:     {Ongoing},
	PrepareAbort:      {Ongoing, PrepareEpochFence, Empty, CompleteCommit, CompleteAbort},
	CompleteCommit:    {PrepareCommit},
	CompleteAbort:     {PrepareAbort},
	Dead:              {Empty, CompleteAbort, CompleteCommit},
	PrepareEpochFence: {Ongoing},
}

// CanTransition reports whether from -> to is one of Kafka's transitions.
func CanTransition(from, to State) bool {
	for _, s := range validPrevious[to] {
		if s == from {
			return true
		}
	}
	return false
}

// complete reports whether s ends a transaction (no transaction is open).
func (s State) complete() bool { return s == Empty || s == CompleteCommit || s == CompleteAbort }

// preparing reports whether markers are being written.
func (s State) preparing() bool { return s == PrepareCommit || s == PrepareAbort }
