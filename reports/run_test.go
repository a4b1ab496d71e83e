package reports

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
)

// TestUnknownVerdictsSayWhy: "unknown" alone cannot tell a spent budget
// from a history the checker was never meant to judge, so the text output
// prints an unknown verdict's notes, and keeps ok and violation verdicts'
// notes (what was checked) for -json.
func TestUnknownVerdictsSayWhy(t *testing.T) {
	var b strings.Builder
	WriteVerdictsText(&b, []checkers.Verdict{
		{Checker: checkers.NameLinearizability, Result: checkers.ResultUnknown, Notes: []string{"not judged: every partition holds transactions"}},
		{Checker: checkers.NameAckedLoss, Result: checkers.ResultOK, Notes: []string{"checked 3 sends"}},
		{Checker: checkers.NameOrdering, Result: checkers.ResultUnknown, NotJudged: true, Notes: []string{"does not apply"}},
		{Checker: checkers.NameDuplicates, Result: checkers.ResultViolation, Notes: []string{"checked 4 sends"},
			Anomalies: []checkers.Anomaly{{Kind: "duplicate", Topic: "t", Partition: 0, Value: "m1", Permitted: true}}},
	})
	out := b.String()
	if !strings.Contains(out, "  linearizability  unknown\n      note: not judged: every partition holds transactions\n") {
		t.Errorf("the unknown verdict's reason is missing:\n%s", out)
	}
	if !strings.Contains(out, "  ordering         not judged\n      note: does not apply\n") {
		t.Errorf("a checker that does not apply is not shown as not judged, with why:\n%s", out)
	}
	for _, n := range []string{"checked 3 sends", "checked 4 sends"} {
		if strings.Contains(out, n) {
			t.Errorf("a decided verdict's note %q is printed:\n%s", n, out)
		}
	}
}
