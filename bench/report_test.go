package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReportRoundTrip: a report written as JSON reads back the same, each
// run's figures included.
func TestReportRoundTrip(t *testing.T) {
	rep := Report{Machine: "test CPU, 2 CPUs", Count: 2, Results: []Result{
		{Name: "kernel", What: "ping-pong", Unit: "event", Runs: 2, WallMs: 150, EventsPerS: 1.3e7, VsBareLoop: 0.45,
			PerRun: []RunFigures{{WallMs: 140, EventsPerS: 1.4e7, PeakHeapMB: 0.6, VsBareLoop: 0.5}, {WallMs: 160, EventsPerS: 1.2e7, PeakHeapMB: 0.7, VsBareLoop: 0.4}}},
		{Name: "explore", Unit: "run", Runs: 2, RunsPerS: 3000, AllocsPerRecord: 870,
			PerRun: []RunFigures{{WallMs: 600, RunsPerS: 2900, AllocsPerRecord: 860, BytesPerRecord: 1e5}, {WallMs: 620, RunsPerS: 3100, AllocsPerRecord: 880, BytesPerRecord: 1.1e5}}},
	}}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"per_run":[{"wall_ms":140,`) {
		t.Errorf("the JSON lacks the per-run figures:\n%s", buf.String())
	}
	got, notes, err := ReadReports(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rep, got); d != "" || len(notes) > 0 {
		t.Fatalf("read back differs (-wrote +read):\n%s\nnotes: %q", d, notes)
	}
}

// oldJSON is a report of kafkasim bench before issue 31: means only, and
// the goal fields it then had.
const oldJSON = `{"machine": "AMD EPYC, 2 CPUs", "count": 3, "results": [
  {"name": "kernel", "what": "ping-pong", "unit": "event", "runs": 3, "wall_ms": 334, "speedup": 3294,
   "events_per_s": 5.99e6, "records": 2000000, "allocs_per_record": 0, "bytes_per_record": 0, "peak_heap_mb": 0.6,
   "goal": "≥40% of the bare loop", "goal_met": false}]}`

// TestReadReportsOldJSONIsOneRun: a report without per-run figures counts
// as one run of its means, and a note says so.
func TestReadReportsOldJSONIsOneRun(t *testing.T) {
	got, notes, err := ReadReports(strings.NewReader(oldJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := []RunFigures{{WallMs: 334, Speedup: 3294, EventsPerS: 5.99e6, PeakHeapMB: 0.6}}
	if d := cmp.Diff(want, got.Results[0].PerRun); d != "" {
		t.Errorf("per-run figures (-want +got):\n%s", d)
	}
	if len(notes) != 1 || notes[0] != "report 1 holds no per-run figures (kafkasim before issue 31): a workload's means there count as one run" {
		t.Errorf("notes %q", notes)
	}
}

// TestReadReportsPools: reports appended to one file pool each workload's
// runs, in order.
func TestReadReportsPools(t *testing.T) {
	one := func(ms int) string {
		return fmt.Sprintf(`{"machine": "m", "count": 1, "results": [{"name": "kernel", "what": "w", "unit": "event", "runs": 1, "wall_ms": %d,
  "per_run": [{"wall_ms": %d, "allocs_per_record": 0, "bytes_per_record": 0, "peak_heap_mb": 1}]}]}`+"\n", ms, ms)
	}
	got, notes, err := ReadReports(strings.NewReader(one(10) + one(20) + one(30)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 1 || got.Results[0].Runs != 3 || got.Count != 3 || len(notes) > 0 {
		t.Fatalf("pooled %+v, notes %q", got, notes)
	}
	var walls []float64
	for _, f := range got.Results[0].PerRun {
		walls = append(walls, f.WallMs)
	}
	if d := cmp.Diff([]float64{10, 20, 30}, walls); d != "" {
		t.Errorf("pooled runs' wall times (-want +got):\n%s", d)
	}
}

// TestReadReportsRefuses: what is not bench -json output is refused,
// saying why.
func TestReadReportsRefuses(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"machine: x\n", "not JSON"},
		{`[1, 2]`, "not JSON"},
		{`{"name": "x"}`, `no "machine"`},
		{`{"machine": "m", "results": []}`, `no "results"`},
		{`{"machine": "m", "results": [{"runs": 1}]}`, `no "name"`},
		{`{"machine": "m", "results": [{"name": "k", "runs": 0}]}`, `"runs" is 0`},
		{`{"machine": "m", "results": [{"name": "k", "runs": 2, "per_run": [{"wall_ms": 1}]}]}`, "1 per-run figures for 2 runs"},
		{oldJSON + "\n{}", `report 2: not the output of kafkasim bench -json: no "machine"`},
	} {
		_, _, err := ReadReports(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one saying %q", c.in, err, c.want)
		}
	}
}
