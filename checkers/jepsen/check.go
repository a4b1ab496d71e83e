// check.go: the verdicts of a Jepsen history, one per Jepsen error type.

package jepsen

import (
	"strconv"
	"strings"

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
)

// Names lists the verdicts of Check, in order: Jepsen's per-key error
// types, Elle's cycles (CycleNames), empty-transaction-graph, and unseen.
var Names = append(append([]string{NameInconsistentOffsets, NameDuplicate, NameLostWrite, NameG1a, NamePrecommittedRead,
	NamePollSkip, NameNonmonotonicPoll, NameNonmonotonicSend, NameIntPollSkip, NameIntNonmonotonicPoll,
	NameIntSendSkip, NameIntNonmonotonicSend}, CycleNames...), NameEmptyTransactionGraph, NameUnseen)

// Check runs Jepsen's Kafka analyses on h and returns one verdict per name
// in Names: Violation with the anomalies found, else OK; a cycle verdict
// is Unknown when its search gave up, empty-transaction-graph Unknown
// when there is nothing to analyse.
func Check(h *History) []checkers.Verdict { return CheckWith(h, Options{WWDeps: true}) }

// Options are jepsen.tests.kafka's test options that change the analysis.
type Options struct {
	// WWDeps is Jepsen's :ww-deps: infer ww dependencies from the log
	// order of writes to a key. Jepsen's default is off (its G0 and
	// ww-borne G1c cycles then go unseen, and the cycle verdicts here are
	// unknown unless a cycle is found); Check turns it on.
	WWDeps bool
}

// CheckWith is Check with Jepsen's test options.
func CheckWith(h *History, opts Options) []checkers.Verdict {
	a := analyze(h)
	a.wwDeps = opts.WWDeps
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
	for _, name := range Names {
		if as, ok := found[name]; ok {
			out = append(out, checkers.NewVerdict(name, as, false))
		}
	}
	out = append(out, a.cycles()...)
	unseen, n := a.unseen()
	lost := a.unrecordedPolls()
	switch {
	case n == 0:
		out = append(out, checkers.NewVerdict(NameUnseen, nil, false, "every acknowledged value was read by an ok poll or txn"))
	case len(lost) > 0:
		// Jepsen's clients complete every poll as [:poll msgs]; an ok
		// [:poll] is a completion whose reads the file lost. Maelstrom's
		// history.edn writes its final polls so, while its jepsen.log
		// shows them reading every key to its end and results.edn has no
		// :unseen. What they read could be exactly the unseen values.
		out = append(out, checkers.NewVerdict(NameUnseen, nil, true,
			"unknown: "+plural(len(lost), "ok poll")+" ("+strings.Join(lost, ", ")+") completed without a recorded result ([:poll], not [:poll {...}]): "+
				"the history lost what they read, so whether these were ever read cannot be told: "+unseen.Description))
	default:
		out = append(out, checkers.NewVerdict(NameUnseen, []checkers.Anomaly{unseen}, false,
			"Jepsen counts :unseen as invalid; kafkasim notes that an unseen value may be late rather than lost: "+
				"sent after the last polls caught up, it could still arrive; only final polls that read every key to its end can tell, "+
				"and values below what an ok poll read are judged by lost-write"))
	}
	return out
}

// Unjudged returns the verdicts that a Jepsen history cannot give: the
// kafkasim checkers that need the replicas' state.
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
