package reports

import (
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/suite"
)

// SuiteRow summarises one scenario × variant over its seeds. RunsFailed
// counts the runs that could not be carried out (an await broke, a panic).
type SuiteRow struct {
	Scenario   string   `json:"scenario"`
	Variant    string   `json:"variant"`
	Runs       int      `json:"runs"`
	AsExpected int      `json:"as_expected"`
	Acked      int      `json:"acked"`
	Lost       int      `json:"acked_lost"`
	LossRate   float64  `json:"loss_rate"`
	Divergent  int      `json:"runs_diverged"`
	Unknown    int      `json:"runs_unknown"`
	RunsFailed int      `json:"runs_failed"`
	Outcomes   []string `json:"outcomes"` // per checker: the worst verdict seen
}

// SuiteRows summarises a suite's cases.
func SuiteRows(cases []*suite.Case) []SuiteRow {
	var rows []SuiteRow
	for _, c := range cases {
		row := SuiteRow{Scenario: c.Scenario, Variant: c.Variant, Runs: c.Count()}
		// The runs kept whole and the tallied ones (suite.Options.Tally)
		// add up alike.
		t := c.Tally
		t.Worst = maps.Clone(t.Worst) // the case's own stays as it is
		row.AsExpected = t.Runs       // every tallied run was as expected
		for _, r := range c.Runs {
			t.Add(r)
			if r.OK() {
				row.AsExpected++
			}
			if r.Failed != "" {
				row.RunsFailed++
			}
		}
		row.Unknown, row.Acked, row.Lost, row.Divergent = t.Unknown, t.Acked, t.Lost, t.Divergent
		worst := t.Worst
		if row.Acked > 0 {
			row.LossRate = float64(row.Lost) / float64(row.Acked)
		}
		for _, name := range scenarios.Checkers {
			if o, ok := worst[name]; ok {
				row.Outcomes = append(row.Outcomes, name+"="+o)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteSuiteTable prints the suite as a table: scenario × variant, whether
// every seed showed what the scenario expects, loss rate, and the worst
// verdict of each checker. The first two columns widen to the longest
// name (a user's case named by its path, team/orders-acks).
func WriteSuiteTable(w io.Writer, cases []*suite.Case) {
	rows := SuiteRows(cases)
	sw, vw := 22, 12
	for _, row := range rows {
		sw, vw = max(sw, len(row.Scenario)), max(vw, len(row.Variant))
	}
	fmt.Fprintf(w, "%-*s %-*s %-9s %-9s %-10s %s\n", sw, "SCENARIO", vw, "VARIANT", "EXPECTED", "ACKED", "LOSS", "CHECKERS (worst over seeds)")
	for _, row := range rows {
		status := fmt.Sprintf("%d/%d", row.AsExpected, row.Runs)
		outcomes := strings.Join(row.Outcomes, " ")
		if row.RunsFailed > 0 {
			// NB: a run that could not be carried out has no verdict worth
			// reading: say so first.
			outcomes = fmt.Sprintf("RUN FAILED (%d of %d runs could not be carried out) %s", row.RunsFailed, row.Runs, outcomes)
		}
		fmt.Fprintf(w, "%-*s %-*s %-9s %-9d %-10s %s\n", sw, row.Scenario, vw, row.Variant, status, row.Acked,
			fmt.Sprintf("%.2f%%", 100*row.LossRate), outcomes)
	}
}
