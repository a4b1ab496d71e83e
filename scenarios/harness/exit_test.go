package harness

import (
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
)

// TestExitRule is the rule of exit.go, case by case: permitted loss is no
// failure unless -strict, a contract break is, an expect line decides its
// checker (an expected bug passes, a missed expectation fails), unknown is
// 3 unless not judged, a run that could not be carried out is 4.
func TestExitRule(t *testing.T) {
	ok := checkers.Verdict{Checker: checkers.NameAckedLoss}
	permitted := checkers.Verdict{Checker: checkers.NameAckedLoss, Result: checkers.ResultViolation,
		Anomalies: []checkers.Anomaly{{Kind: "lost", Permitted: true}}}
	broken := checkers.Verdict{Checker: checkers.NameAckedLoss, Result: checkers.ResultViolation,
		Anomalies: []checkers.Anomaly{{Kind: "lost"}}}
	unknown := checkers.Verdict{Checker: checkers.NameLinearizability, Result: checkers.ResultUnknown}
	notJudged := checkers.Verdict{Checker: checkers.NameLinearizability, Result: checkers.ResultUnknown, NotJudged: true}
	expect := func(e scenarios.Expectation) map[string]scenarios.Expectation {
		return map[string]scenarios.Expectation{checkers.NameAckedLoss: e}
	}
	for _, c := range []struct {
		name   string
		res    Result
		strict bool
		want   int
	}{
		{"all ok", Result{Verdicts: []checkers.Verdict{ok, notJudged}}, false, ExitOK},
		{"permitted loss", Result{Verdicts: []checkers.Verdict{permitted}}, false, ExitOK},
		{"permitted loss, strict", Result{Verdicts: []checkers.Verdict{permitted}}, true, ExitFailed},
		{"contract broken", Result{Verdicts: []checkers.Verdict{broken}}, false, ExitFailed},
		{"expected bug", Result{Verdicts: []checkers.Verdict{broken}, Expect: expect(scenarios.ExpectBug)}, false, ExitOK},
		{"expected permitted, strict", Result{Verdicts: []checkers.Verdict{permitted}, Expect: expect(scenarios.ExpectPermitted)}, true, ExitOK},
		{"expectation missed", Result{Verdicts: []checkers.Verdict{permitted}, Expect: expect(scenarios.ExpectOK)}, false, ExitFailed},
		{"expectation missed (mismatch)", Result{Verdicts: []checkers.Verdict{ok}, Mismatches: []string{"x"}}, false, ExitFailed},
		{"unknown", Result{Verdicts: []checkers.Verdict{ok, unknown}}, false, ExitUnknown},
		{"a break outranks an unknown", Result{Verdicts: []checkers.Verdict{unknown, broken}}, false, ExitFailed},
		{"not carried out", Result{Failed: "x.txt:3: restart: b2 is up", Verdicts: []checkers.Verdict{broken}}, false, ExitRunFailed},
	} {
		c.res.Strict = c.strict
		if got := c.res.Exit(); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		codes []int
		want  int
	}{
		{[]int{0, 0}, 0},
		{[]int{3, 1}, 1}, // a failure outranks another run's unknown
		{[]int{1, 4}, 4},
		{[]int{3, 0}, 3},
		{nil, 0},
	} {
		if got := CombineExits(c.codes...); got != c.want {
			t.Errorf("CombineExits(%v) = %d, want %d", c.codes, got, c.want)
		}
	}
}
