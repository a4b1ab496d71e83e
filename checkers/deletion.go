// deletion.go: what DeleteTopics and DeleteRecords permit.
//
// Deleting is not losing. Records a client asked the cluster to delete
// are gone by request, and no checker reports them:
//   - A topic deleted during the run (PartitionFinal.DeletedAt: when the
//     controller deleted it) takes its partitions with it.
//     SetAsideDeleted removes the operations on them invoked before the
//     deletion from the history the checkers judge, and says how many in
//     a note; a topic created again under the same name is judged from
//     its new start (its new sends, polls and committed records only).
//     The invariants monitor's ever-committed records of the deleted
//     incarnation are not looked for in the final log either.
//   - DeleteRecords (PartitionFinal.DeletedBelow: the highest log start
//     offset it set) removes the records below that offset: an
//     acknowledged or committed record below it that the final log no
//     longer holds is no loss (acked-loss counts them in a note), and a
//     consumer that never delivered it skipped nothing.
//
// What it simplifies: deletion is a fact of the run, read from the
// brokers' and controllers' trace (scenarios/harness/deletion.go), not a
// fault: it permits exactly the absence of the deleted records, nothing
// else (a record above the new log start that is missing is still lost).

package checkers

import (
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// deletedTopicOp reports whether op acted on a topic that was deleted
// after it was invoked.
func deletedTopicOp(f Final, op *Op) bool {
	pf, ok := f.Partition(op.Topic, op.Partition)
	return ok && pf.DeletedAt > 0 && op.Invoke < pf.DeletedAt
}

// SetAsideDeleted returns h without the operations a topic's deletion
// made moot (invoked on it before it was deleted), numbered again in
// order, and a note saying what was set aside ("" when nothing was). It
// returns h itself when no partition of f was deleted.
func SetAsideDeleted(h History, f Final) (History, string) {
	return SetAsideDeletedAfter(h, f, 0)
}

// SetAsideDeletedAfter is SetAsideDeleted for a history from which
// forgotten operations that it would have set aside were already removed
// (Recorder.Forget, as a served run goes): the note counts them too.
func SetAsideDeletedAfter(h History, f Final, forgotten int) (History, string) {
	deleted := false
	for _, pf := range f.Partitions {
		if pf.DeletedAt > 0 {
			deleted = true
		}
	}
	if !deleted {
		return h, setAsideNote(forgotten)
	}
	out := h
	out.Ops = make([]Op, 0, len(h.Ops))
	aside := forgotten
	for i := range h.Ops {
		if deletedTopicOp(f, &h.Ops[i]) {
			aside++
			continue
		}
		op := h.Ops[i]
		op.Index = len(out.Ops)
		out.Ops = append(out.Ops, op)
	}
	if aside == forgotten {
		return h, setAsideNote(aside)
	}
	return out, setAsideNote(aside)
}

// setAsideNote is the note that says how many operations deletions set
// aside ("" for none).
func setAsideNote(aside int) string {
	if aside == 0 {
		return ""
	}
	return strconv.Itoa(aside) + " operations on topics deleted by DeleteTopics set aside: deleting is not losing (a topic created again is judged from its new start)"
}

// deletedByRequest reports whether the record at offset, committed at
// committedAt, of pf is gone by request: below DeleteRecords' log start,
// or of a topic deleted since.
func deletedByRequest(pf PartitionFinal, offset int64, committedAt sim.Time) bool {
	return offset < pf.DeletedBelow || pf.DeletedAt > 0 && committedAt < pf.DeletedAt
}
