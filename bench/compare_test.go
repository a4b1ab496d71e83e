package bench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

// runs are n runs of a workload whose figures are f(i) for run i.
func runs(n int, f func(i int) RunFigures) []RunFigures {
	var out []RunFigures
	for i := range n {
		out = append(out, f(i))
	}
	return out
}

// comparisonReports are a synthetic baseline and run: the kernel 10%
// faster in every run (a difference the U test finds at n=5), the bare
// loop the same within noise, explore only in the baseline, swarm only in
// this run, and the kernel's workload renamed.
func comparisonReports() (base, cur Report) {
	jitter := []float64{1, 1.01, 0.99, 1.02, 0.98}
	kernel := func(speed float64) func(int) RunFigures {
		return func(i int) RunFigures {
			e := 1e7 * speed * jitter[i]
			return RunFigures{WallMs: 2e6 / e * 1000, EventsPerS: e, PeakHeapMB: 0.6, VsBareLoop: 0.4 * speed * jitter[i]}
		}
	}
	bare := func(i int) RunFigures {
		return RunFigures{WallMs: 80 * jitter[4-i], EventsPerS: 2.5e7 * jitter[i], PeakHeapMB: 0.6}
	}
	base = Report{Machine: "base CPU", Count: 5, Results: []Result{
		{Name: "bare-loop", What: "bare", Unit: "event", Runs: 5, PerRun: runs(5, bare)},
		{Name: "kernel", What: "ping-pong, 1 in flight", Unit: "event", Runs: 5, PerRun: runs(5, kernel(1))},
		{Name: "explore", What: "explore", Unit: "run", Runs: 5, PerRun: runs(5, func(i int) RunFigures {
			return RunFigures{WallMs: 600, RunsPerS: 3000 * jitter[i], AllocsPerRecord: 870, BytesPerRecord: 113e3, PeakHeapMB: 14.8}
		})},
	}}
	cur = Report{Machine: "this CPU", Count: 5, Results: []Result{
		{Name: "bare-loop", What: "bare", Unit: "event", Runs: 5, PerRun: runs(5, func(i int) RunFigures { return bare(4 - i) })},
		{Name: "kernel", What: "ping-pong, 64 in flight", Unit: "event", Runs: 5, PerRun: runs(5, kernel(1.1))},
		{Name: "swarm", What: "swarm", Unit: "record", Runs: 5, PerRun: runs(5, func(i int) RunFigures {
			return RunFigures{WallMs: 660, Speedup: 1400 * jitter[i], EventsPerS: 3.9e5, AllocsPerRecord: 18.7, BytesPerRecord: 4893, PeakHeapMB: 49.9}
		})},
	}}
	return base, cur
}

// TestWriteComparison: the comparison's layout, medians, intervals,
// changes and p values, one-sided workloads and notes, against
// testdata/compare.golden (go test -rewrite regenerates it).
func TestWriteComparison(t *testing.T) {
	base, cur := comparisonReports()
	var buf bytes.Buffer
	if err := WriteComparison(&buf, base, "base.json", cur, "", []string{"a note from reading"}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "compare.golden")
	if *rewrite {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("comparison differs from %s (go test -rewrite to accept):\n%s", golden, got)
	}
}

// TestComparisonFigures: the figures the comparison claims, checked
// without the golden file: a 10% faster kernel is +10.00% at p=0.008 with
// 5 runs a side, the bare loop's shuffled runs are no change, and each
// one-sided workload is named so.
func TestComparisonFigures(t *testing.T) {
	base, cur := comparisonReports()
	var buf bytes.Buffer
	if err := WriteComparison(&buf, base, "base.json", cur, "", nil); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	workload := ""
	for _, line := range strings.Split(buf.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			workload, f = f[0], f[1:]
		}
		rows[workload+" "+f[0]] = strings.Join(f[1:], " ")
	}
	for key, want := range map[string]string{
		"kernel events/s":        "10.00M ± 2% 11.00M ± 2% +10.00% (p=0.008 n=5)",
		"kernel of-bare-loop":    "40.0% ± 2% 44.0% ± 2% +10.00% (p=0.008 n=5)",
		"bare-loop events/s":     "25.00M ± 2% 25.00M ± 2% ~ (p=1.000 n=5)",
		"kernel peak-heap-B":     "614.4Ki ± 0% 614.4Ki ± 0% ~ (p=1.000 n=5)¹",
		"bare-loop allocs/event": "",
	} {
		if got, ok := rows[key]; want == "" && ok {
			t.Errorf("%s: a row (%q) for a figure zero on both sides", key, got)
		} else if want != "" && got != want {
			t.Errorf("%s: %q, want %q\n%s", key, got, want, buf.String())
		}
	}
	for _, want := range []string{"\nonly in this run: swarm\n", "\nonly in the baseline: explore\n", "\n¹ all samples are equal\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no line %q:\n%s", strings.TrimSpace(want), buf.String())
		}
	}
	if !strings.Contains(buf.String(), `NB: kernel is a different workload in the baseline: "ping-pong, 1 in flight", now "ping-pong, 64 in flight"`) {
		t.Errorf("no note that the kernel's workload changed:\n%s", buf.String())
	}
}
