package harness

// This file is the one rule that turns a run's verdicts into an exit code,
// shared by run, replay, serve, check, suite and matrix (each command's help
// lists it as ExitRule):
//
//	4  the run could not be carried out (Result.Failed)
//	1  a verdict breaks Kafka's contract, or misses the script's expect line
//	   for its checker; with strict, a permitted violation too
//	3  a checker could not decide (unknown; not "not judged")
//	0  every verdict is ok, permitted, not judged, or what the script's
//	   expect lines say
//
// The script's expect lines decide the checkers they name: a verdict that
// meets its expectation passes whatever it is (a scenario that shows a bug
// expects it), one that misses it fails. They apply only to the variant as
// written: a run whose configuration -set (or a matrix release, a sweep's
// grid) changed is judged by the contract alone, since the script's claims
// were made for its own configuration.

import (
	"strings"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
)

// The exit codes of the commands that judge runs.
const (
	ExitOK        = 0 // every verdict ok, permitted, not judged or as expected
	ExitFailed    = 1 // a contract broken or an expectation missed
	ExitBadInput  = 2 // bad input: flags, scenario, script, choice file, history
	ExitUnknown   = 3 // a checker could only say unknown
	ExitRunFailed = 4 // the run could not be carried out
)

// ExitRule is the rule as the commands' help prints it.
const ExitRule = `0  every verdict is ok, permitted by Kafka's contract, not judged, or what
   the script's expect lines say
1  a verdict breaks Kafka's contract or misses the script's expect line for
   its checker (-strict: a permitted violation too)
2  bad input (flags, scenario, script, choice file, history)
3  a checker could only say unknown
4  the run could not be carried out: a step's expectation broke (an await
   that never happened or got another outcome, e.g. a produce refused with
   NOT_ENOUGH_REPLICAS), a panic`

// Exit is the run's exit code under the rule above (strict as
// Options.Strict was).
func (r *Result) Exit() int {
	if r.Failed != "" {
		return ExitRunFailed
	}
	if len(r.Mismatches) > 0 {
		return ExitFailed
	}
	return VerdictsExit(r.Verdicts, r.Expect, r.Strict)
}

// OK reports whether the run passes (a suite case, a CI gate): its exit
// is 0, or 3 (an undecided checker is counted apart, not as a failure).
func (r *Result) OK() bool {
	e := r.Exit()
	return e == ExitOK || e == ExitUnknown
}

// VerdictsExit is the rule for verdicts alone (a checked history has no
// run to fail): expect decides the checkers it names (a missed
// expectation is the caller's, Result.Mismatches), the contract the rest.
func VerdictsExit(verdicts []checkers.Verdict, expect map[string]scenarios.Expectation, strict bool) int {
	code := ExitOK
	for _, v := range verdicts {
		if _, ok := expect[v.Checker]; ok {
			if !meets(v, expect[v.Checker]) {
				return ExitFailed
			}
			continue
		}
		switch {
		case v.NotJudged:
		case v.Result == checkers.ResultViolation && (strict || v.ContractBroken()):
			return ExitFailed
		case v.Undecided():
			code = ExitUnknown
		}
	}
	return code
}

// CombineExits is the exit of several runs: 4 when some run could not be
// carried out, else 1 when some run failed (even if another's checker said
// unknown), else 3 on an unknown, else 0.
func CombineExits(codes ...int) int {
	out := ExitOK
	for _, c := range codes {
		if rank(c) > rank(out) {
			out = c
		}
	}
	return out
}

// rank orders exit codes by precedence.
func rank(code int) int {
	switch code {
	case ExitRunFailed:
		return 4
	case ExitBadInput:
		return 3
	case ExitFailed:
		return 2
	case ExitUnknown:
		return 1
	}
	return 0
}

// Unexpected names the verdicts that fail the run with no expect line for
// their checker ("duplicates: bug"; under Strict, "acked-loss: permitted
// (-strict)"), beside Result.Mismatches for those that miss theirs.
func Unexpected(r *Result) []string {
	var out []string
	for _, v := range r.Verdicts {
		if _, ok := r.Expect[v.Checker]; ok || v.NotJudged || v.Result != checkers.ResultViolation {
			continue
		}
		switch {
		case v.ContractBroken():
			out = append(out, v.Checker+": bug (outside Kafka's contract)")
		case r.Strict:
			out = append(out, v.Checker+": permitted (-strict)")
		}
	}
	return out
}

// OutcomesExit is the rule over a run's summary, as a sweep or matrix
// journal keeps it: failed (Result.Failed) and the verdicts as
// "checker=outcome" words (Outcome). A journal keeps no expect lines: a
// matrix or sweep run's configuration is never the variant's own.
func OutcomesExit(failed string, outcomes []string, strict bool) int {
	if failed != "" {
		return ExitRunFailed
	}
	code := ExitOK
	for _, o := range outcomes {
		_, word, _ := strings.Cut(o, "=")
		switch {
		case word == "bug", word == "permitted" && strict:
			return ExitFailed
		case word == "unknown":
			code = ExitUnknown
		}
	}
	return code
}

// Failing returns the verdicts that fail the run by the rule above: those
// that miss their expect line, and, where no expect line names the
// checker, those that break Kafka's contract (under Strict, any
// violation). A suite's failure message quotes their anomalies.
func Failing(r *Result) []checkers.Verdict {
	var out []checkers.Verdict
	for _, v := range r.Verdicts {
		if e, ok := r.Expect[v.Checker]; ok {
			if !meets(v, e) {
				out = append(out, v)
			}
			continue
		}
		if !v.NotJudged && v.Result == checkers.ResultViolation && (r.Strict || v.ContractBroken()) {
			out = append(out, v)
		}
	}
	return out
}
