package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

// TestSweepCSVAndJSONCarryTheIntervals: results.csv and results.json
// have the run-level columns, with the same values, and are the same
// bytes when written twice.
func TestSweepCSVAndJSONCarryTheIntervals(t *testing.T) {
	sw := &sweep.Spec{Scenario: "swarm", Variant: "kip279-safe", Seeds: 4, Grid: []sweep.Axis{{Key: "$crash", Values: []string{"0.1", "0.3"}}}}
	rows := sweep.Aggregate(sw, fakeRecords(sw))
	var c1, c2, j1, j2 bytes.Buffer
	for _, err := range []error{WriteSweepCSV(&c1, sw, rows), WriteSweepCSV(&c2, sw, rows), WriteSweepJSON(&j1, sw, rows), WriteSweepJSON(&j2, sw, rows)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(c1.Bytes(), c2.Bytes()) || !bytes.Equal(j1.Bytes(), j2.Bytes()) {
		t.Fatal("two writes of the same rows differ")
	}
	lines, err := csv.NewReader(&c1).ReadAll()
	if err != nil || len(lines) != 3 {
		t.Fatalf("%d CSV lines, %v", len(lines), err)
	}
	var doc struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(j1.Bytes(), &doc); err != nil || len(doc.Rows) != 2 {
		t.Fatalf("results.json: %v, %d rows", err, len(doc.Rows))
	}
	col := map[string]int{}
	for i, h := range lines[0] {
		col[h] = i
	}
	for _, name := range []string{"loss_rate", "loss_ci_low", "loss_ci_high", "p_run_loss", "p_run_loss_low", "p_run_loss_high",
		"unavailability", "unavailability_ci_low", "unavailability_ci_high"} {
		i, ok := col[name]
		if !ok {
			t.Errorf("results.csv has no column %s: %s", name, strings.Join(lines[0], ","))
			continue
		}
		v, ok := doc.Rows[1][name].(float64)
		if !ok || ftoa(v, 6) != lines[2][i] {
			t.Errorf("%s: JSON %v, CSV %s", name, doc.Rows[1][name], lines[2][i])
		}
	}
}
