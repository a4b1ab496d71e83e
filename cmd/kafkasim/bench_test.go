package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchJSON: one cheap workload as JSON carries the figures the
// docs' table shows, each run's figures, and the machine.
func TestBenchJSON(t *testing.T) {
	code, out, errb := runCmd("bench", "-run", "^bare-loop$", "-count", "2", "-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	var got struct {
		Machine string `json:"machine"`
		Count   int    `json:"count"`
		Results []struct {
			Name       string  `json:"name"`
			Runs       int     `json:"runs"`
			EventsPerS float64 `json:"events_per_s"`
			Records    int     `json:"records"`
			PerRun     []struct {
				WallMs     float64 `json:"wall_ms"`
				EventsPerS float64 `json:"events_per_s"`
			} `json:"per_run"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Machine == "" || got.Count != 2 || len(got.Results) != 1 {
		t.Fatalf("%+v", got)
	}
	r := got.Results[0]
	if r.Name != "bare-loop" || r.Runs != 2 || r.EventsPerS <= 0 || r.Records != 2000000 || len(r.PerRun) != 2 {
		t.Fatalf("%+v", r)
	}
	for i, f := range r.PerRun {
		if f.WallMs <= 0 || f.EventsPerS <= 0 {
			t.Errorf("run %d: %+v", i+1, f)
		}
	}
}

// TestBenchTableHasNoGoals: the table names the machine and carries no
// verdict against internal goals (a baseline is the yardstick).
func TestBenchTableHasNoGoals(t *testing.T) {
	code, out, errb := runCmd("bench", "-run", "^bare-loop$")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	if !strings.Contains(out, "machine: ") || !strings.Contains(out, "GOMAXPROCS") || !strings.Contains(out, "go1.") {
		t.Errorf("no machine line:\n%s", out)
	}
	for _, bad := range []string{"GOAL", "NOT MET", "met"} {
		if strings.Contains(out, bad) {
			t.Errorf("the table says %q:\n%s", bad, out)
		}
	}
}

// syntheticBaseline has the bare loop 5 runs at 1 event/s (anything
// measured is faster) and a workload that no longer exists.
const syntheticBaseline = `{"machine": "synthetic", "count": 5, "results": [
  {"name": "bare-loop", "what": "older bare loop", "unit": "event", "runs": 5, "wall_ms": 2e9, "events_per_s": 1,
   "per_run": [{"wall_ms": 2e9, "events_per_s": 1}, {"wall_ms": 2e9, "events_per_s": 1.01}, {"wall_ms": 2e9, "events_per_s": 0.99},
               {"wall_ms": 2e9, "events_per_s": 1.02}, {"wall_ms": 2e9, "events_per_s": 0.98}]},
  {"name": "gone", "what": "a removed workload", "unit": "op", "runs": 1, "wall_ms": 5}]}
`

// TestBenchBaseline: -baseline prints each figure beside the baseline's,
// with the change and the U test's p, and names the workloads on one side
// only.
func TestBenchBaseline(t *testing.T) {
	file := filepath.Join(t.TempDir(), "base.json")
	if err := os.WriteFile(file, []byte(syntheticBaseline), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errb := runCmd("bench", "-run", "^(bare-loop|kernel|gone)$", "-count", "5", "-baseline", file)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	var events string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "events/s ") && events == "" {
			events = strings.Join(strings.Fields(line), " ")
		}
	}
	if !strings.HasPrefix(events, "events/s 1.000 ± 2% ") || !strings.Contains(events, "(p=0.008 n=5)") || !strings.Contains(events, "M ± ") {
		t.Errorf("bare loop's events/s row %q, want the baseline's 1.000 ± 2%%, this run's in millions, p=0.008 n=5:\n%s", events, out)
	}
	for _, want := range []string{"baseline: " + file + ": synthetic\n", "this run: ", "only in this run: kernel\n", "only in the baseline: gone\n",
		`NB: bare-loop is a different workload in the baseline: "older bare loop"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// TestBenchBadBaseline: a baseline missing, unreadable or not bench -json
// output exits 2 naming the file, before anything is measured.
func TestBenchBadBaseline(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ file, want string }{
		{filepath.Join(dir, "missing.json"), "no such file"},
		{dir, "not JSON"},
		{write("empty.json", ""), "empty"},
		{write("table.txt", "machine: x; 1 run(s) per workload\n"), "not JSON"},
		{write("other.json", `{"results": [{"name": "x"}]}`), `no "machine"`},
	} {
		code, out, errb := runCmd("bench", "-run", "^kernel$", "-baseline", c.file)
		if code != 2 || !strings.Contains(errb, "-baseline "+c.file+": ") || !strings.Contains(errb, c.want) || strings.Contains(errb, "done") || out != "" {
			t.Errorf("-baseline %s: exit %d, stderr %q, stdout %q; want 2 naming the file and saying %q", c.file, code, errb, out, c.want)
		}
	}
}

// TestBenchCurrent: -baseline with -current compares two saved outputs
// and measures nothing; a bad -current file exits 2 naming it.
func TestBenchCurrent(t *testing.T) {
	dir := t.TempDir()
	base, cur := filepath.Join(dir, "base.json"), filepath.Join(dir, "cur.json")
	if err := os.WriteFile(base, []byte(syntheticBaseline), 0o644); err != nil {
		t.Fatal(err)
	}
	twice := strings.NewReplacer(`"events_per_s": 1,`, `"events_per_s": 2,`, `"events_per_s": 1}`, `"events_per_s": 2}`,
		`"events_per_s": 1.01}`, `"events_per_s": 2.02}`, `"events_per_s": 0.99}`, `"events_per_s": 1.98}`,
		`"events_per_s": 1.02}`, `"events_per_s": 2.04}`, `"events_per_s": 0.98}`, `"events_per_s": 1.96}`, `"gone"`, `"new"`).Replace(syntheticBaseline)
	if err := os.WriteFile(cur, []byte(twice), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errb := runCmd("bench", "-baseline", base, "-current", cur)
	if code != 0 || errb != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	for _, want := range []string{"current: " + cur + ": synthetic\n", "CURRENT", "only in the current file: new\n", "only in the baseline: gone\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "events/s 1.000 ± 2% 2.000 ± 2% +100.00% (p=0.008 n=5)") {
		t.Errorf("events/s not doubled at p=0.008:\n%s", out)
	}
	code, _, errb = runCmd("bench", "-baseline", base, "-current", filepath.Join(dir, "nosuch.json"))
	if code != 2 || !strings.Contains(errb, "-current "+filepath.Join(dir, "nosuch.json")+": no such file") {
		t.Errorf("missing -current: exit %d, %q", code, errb)
	}
}

func TestBenchBadInput(t *testing.T) {
	for _, args := range [][]string{{"-count", "0"}, {"-run", "nosuch"}, {"-run", "("}, {"-json", "-baseline", "x.json"}, {"-current", "x.json"}} {
		code, _, errb := runCmd(append([]string{"bench"}, args...)...)
		if code != 2 || !strings.Contains(errb, args[1]) {
			t.Errorf("bench %v: exit %d, %q; want 2 naming the value", args, code, errb)
		}
	}
}
