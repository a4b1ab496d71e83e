// check.go: the verdicts of a Jepsen history, one per Jepsen error type.

package jepsen

import (
	"strconv"

	"github.com/kafkasim/kafkasim/checkers"
)

// The names of Jepsen's error types, as verdict and anomaly names.
const (
	NameInconsistentOffsets = "inconsistent-offsets"
	NameDuplicate           = "duplicate"
	NameLostWrite           = "lost-write"
	NameG1a                 = "G1a"
	NamePrecommittedRead    = "precommitted-read"
	NamePollSkip            = "poll-skip"
	NameNonmonotonicPoll    = "nonmonotonic-poll"
	NameNonmonotonicSend    = "nonmonotonic-send"
	NameIntPollSkip         = "int-poll-skip"
	NameIntNonmonotonicPoll = "int-nonmonotonic-poll"
	NameIntSendSkip         = "int-send-skip"
	NameIntNonmonotonicSend = "int-nonmonotonic-send"
	NameUnseen              = "unseen"
	// NameCycles stands for Elle's cycle anomalies (G0, G1c, ...), which
	// are not searched.
	NameCycles = "cycles"
)

// Names lists the verdicts of Check, in order.
var Names = []string{NameInconsistentOffsets, NameDuplicate, NameLostWrite, NameG1a, NamePrecommittedRead,
	NamePollSkip, NameNonmonotonicPoll, NameNonmonotonicSend, NameIntPollSkip, NameIntNonmonotonicPoll,
	NameIntSendSkip, NameIntNonmonotonicSend, NameUnseen}

// Check runs Jepsen's Kafka analyses on h and returns one verdict per name
// in Names: Violation with the anomalies found, else OK; unseen is Unknown
// when acknowledged values were never read (see doc.go).
func Check(h *History) []checkers.Verdict {
	a := analyze(h)
	intPollSkip, intNMPoll := a.internal(false)
	intSendSkip, intNMSend := a.internal(true)
	pollSkip, nmPoll := a.external(false)
	_, nmSend := a.external(true)
	found := map[string][]checkers.Anomaly{
		NameInconsistentOffsets: a.inconsistentOffsets(),
		NameDuplicate:           a.duplicate(),
		NameLostWrite:           a.lostWrite(),
		NameG1a:                 a.g1a(),
		NamePrecommittedRead:    a.precommittedRead(),
		NamePollSkip:            pollSkip,
		NameNonmonotonicPoll:    nmPoll,
		NameNonmonotonicSend:    nmSend,
		NameIntPollSkip:         intPollSkip,
		NameIntNonmonotonicPoll: intNMPoll,
		NameIntSendSkip:         intSendSkip,
		NameIntNonmonotonicSend: intNMSend,
	}
	out := make([]checkers.Verdict, 0, len(Names))
	for _, name := range Names[:len(Names)-1] {
		out = append(out, checkers.NewVerdict(name, found[name], false))
	}
	notes := a.unseen()
	if len(notes) == 0 {
		out = append(out, checkers.NewVerdict(NameUnseen, nil, false, "every acknowledged value was read by an ok poll or txn"))
	} else {
		notes = append([]string{"acknowledged values never read by the end: lost, or sent after the last polls caught up; " +
			"Jepsen counts :unseen as invalid, but only final polls that read every key to its end can tell, " +
			"and values below what a poll read are judged by lost-write"}, notes...)
		out = append(out, checkers.NewVerdict(NameUnseen, nil, true, notes...))
	}
	return out
}

// Unjudged returns the verdicts that a Jepsen history cannot give: the
// kafkasim checkers that need the replicas' state, and Elle's cycles.
// Each is Unknown with the reason; none is ever OK.
func Unjudged() []checkers.Verdict {
	return []checkers.Verdict{
		checkers.NewVerdict(checkers.NameLinearizability, nil, true,
			"not judged: the porcupine log model needs the offset each poll fetched from and dense offsets; a Jepsen history records neither (transaction markers leave gaps)"),
		checkers.NewVerdict(checkers.NameAckedLoss, nil, true,
			"not judged: needs the replicas' final logs, which a Jepsen history does not hold (lost-write judges acknowledged sends against the polls)"),
		checkers.NewVerdict(checkers.NameDivergence, nil, true,
			"not judged: needs every replica's log, which a Jepsen history does not hold (inconsistent-offsets judges what clients saw)"),
		checkers.NewVerdict(checkers.NameInvariants, nil, true,
			"not judged: the invariants monitor watches a live simulated run"),
		checkers.NewVerdict(checkers.NameLiveness, nil, true,
			"not judged: needs the cluster's state after the final heal (leaders, ISRs, groups), which a Jepsen history does not hold"),
		checkers.NewVerdict(NameCycles, nil, true,
			"not judged: Elle's cycle search over ww/wr dependencies (G0, G1c, PL-1, PL-2) is not implemented"),
	}
}

// Summary describes a history in one line: ops, keys and skipped lines.
func Summary(h *History) string {
	s := plural(len(h.Ops), "client operation") + ", " + plural(h.Keys(), "key")
	if h.Skipped > 0 {
		s += ", " + plural(h.Skipped, "non-client operation") + " skipped"
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
