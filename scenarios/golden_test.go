package scenarios_test

// The published traces as golden files (STYLE habit 5): for each scripted
// KIP/JIRA scenario and variant, seed 1, the transitions that tell the
// story — appends, fetched records, truncations, leadership, faults,
// acknowledgements — and the verdicts. Reviewers read a protocol change as
// a diff of these files. Regenerate with: go test ./scenarios -run Golden -rewrite

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"

	"github.com/kafkasim/kafkasim/checkers"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files of TestGolden")

// storyKinds are the trace kinds a golden file keeps.
var storyKinds = map[string]bool{
	"append": true, "follower-append": true, "truncate": true, "become-leader": true, "become-follower": true,
	"crash": true, "start": true, "cut": true, "heal": true, "partition": true, "pause": true,
	"client-ack": true, "client-fail": true, "client-unknown": true, "epoch-answer": true, "isr": true, "halt": true, "controller-partition-state": true,
	"end-phase": true, "final-read": true,
}

func story(r *harness.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s / %s, seed %d (regenerate: go test ./scenarios -run Golden -rewrite)\n", r.Scenario, r.Variant, r.Seed)
	for _, rec := range r.World.Trace().Records() {
		if storyKinds[rec.Kind] && !(rec.Kind == "start" && rec.Event == 0) {
			b.WriteString(rec.String() + "\n")
		}
	}
	b.WriteString("# verdicts\n")
	for _, v := range r.Verdicts {
		b.WriteString(v.Checker + ": " + v.Result.String())
		if v.Result == checkers.ResultViolation && !v.ContractBroken() {
			b.WriteString(" (permitted)")
		}
		b.WriteString("\n")
		for _, a := range v.Anomalies {
			b.WriteString("  " + a.Kind + " " + a.Value + "\n")
		}
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	all, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if !s.Manual {
			continue // the scripted KIP traces; the others are judged by the suite
		}
		for _, v := range s.Variants {
			res, err := harness.Run(s, v.Name, harness.Options{Seed: 1, KeepTrace: true})
			if err != nil {
				t.Fatal(err)
			}
			got := story(res)
			file := filepath.Join("testdata", s.Name+"."+v.Name+".golden")
			if *rewrite {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if string(want) != got {
				t.Errorf("%s differs from the run; if the change is intended, regenerate with -rewrite.\n--- got\n%s", file, got)
			}
		}
	}
}
