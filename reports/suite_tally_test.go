package reports

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/suite"
)

// TestSuiteTallyKeepsTheTable: a suite that tallies its runs as expected
// (the command without -json) prints the table a suite keeping every run
// does, keeping only the runs not as expected.
func TestSuiteTallyKeepsTheTable(t *testing.T) {
	var scripts []*scenarios.Script
	for _, name := range []string{"kip101-hw-lag", "acks1-leader-crash", "producer-reorder"} {
		s, err := scenarios.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, s)
	}
	o := suite.Options{Seeds: 3, Parallel: 2}
	full, err := suite.Run(scripts, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Tally = true
	tallied, err := suite.Run(scripts, o)
	if err != nil {
		t.Fatal(err)
	}
	// The table of the whole runs, counted here without Tally.Add.
	for i, row := range SuiteRows(full) {
		acked, lost, ok := 0, 0, 0
		for _, r := range full[i].Runs {
			acked, lost = acked+r.Stats.Acked, lost+r.Stats.AckedLost
			if r.OK() {
				ok++
			}
		}
		if row.Acked != acked || row.Lost != lost || row.AsExpected != ok || row.Runs != len(full[i].Runs) {
			t.Errorf("%s/%s: row %+v, want %d runs, %d as expected, %d acknowledged, %d lost", row.Scenario, row.Variant, row, len(full[i].Runs), ok, acked, lost)
		}
	}
	if d := cmp.Diff(SuiteRows(full), SuiteRows(tallied)); d != "" {
		t.Errorf("the table differs once the runs are tallied (-full +tallied):\n%s", d)
	}
	kept := 0
	for i, c := range tallied {
		kept += len(c.Runs)
		if c.Count() != o.Seeds || c.Count() != len(full[i].Runs) {
			t.Errorf("%s/%s: %d runs counted, want %d", c.Scenario, c.Variant, c.Count(), o.Seeds)
		}
		for _, r := range c.Runs {
			if r.OK() {
				t.Errorf("%s/%s seed %d: kept whole though as expected", c.Scenario, c.Variant, r.Seed)
			}
		}
	}
	if kept != 0 {
		t.Logf("%d runs not as expected kept whole", kept)
	}
	rows := SuiteRows(tallied)
	if len(rows) == 0 || rows[0].Runs != o.Seeds || len(rows[0].Outcomes) == 0 {
		t.Fatalf("no table to compare: %+v", rows)
	}
}
