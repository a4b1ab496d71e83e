package harness

import (
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
)

// TestSummaryKeepsTheClassification: a summary keeps a few anomalies of a
// run as expected, and among them one outside the contract when the
// verdict had one, so the suite's worst outcome ("bug") is the whole
// run's, however late the broken anomaly came.
func TestSummaryKeepsTheClassification(t *testing.T) {
	var as []checkers.Anomaly
	for i := 0; i < 20; i++ {
		as = append(as, checkers.Anomaly{Kind: "reordered", Permitted: i != 17})
	}
	v := checkers.Verdict{Checker: checkers.NameOrdering, Result: checkers.ResultViolation, Anomalies: as}
	before := Outcome(v)
	r := &Result{Verdicts: []checkers.Verdict{v}, Expect: map[string]scenarios.Expectation{checkers.NameOrdering: scenarios.ExpectBug}}
	r.Summarize()
	got := r.Verdicts[0]
	if len(got.Anomalies) != summaryAnomalies || got.Omitted != 20-summaryAnomalies {
		t.Errorf("kept %d anomalies, %d omitted; want %d and %d", len(got.Anomalies), got.Omitted, summaryAnomalies, 20-summaryAnomalies)
	}
	if after := Outcome(got); before != "bug" || after != before {
		t.Errorf("outcome %q before the summary, %q after; want bug both", before, after)
	}
}
