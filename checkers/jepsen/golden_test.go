package jepsen

// The verdicts of every history in testdata as golden files: a change to
// the analysis reads as a diff of testdata/*.golden. Regenerate with:
// go test ./checkers/jepsen -run Golden -rewrite

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files of TestGolden")

func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.edn"))
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		h := readTestdata(t, name)
		got := "# " + name + ": " + Summary(h) + " (regenerate: go test ./checkers/jepsen -run Golden -rewrite)\n" + render(Check(h))
		golden := strings.TrimSuffix(f, ".edn") + ".golden"
		if *rewrite {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -rewrite to create it)", err)
		}
		if string(want) != got {
			t.Errorf("%s differs; if the change is intended, regenerate with -rewrite.\n--- got\n%s", golden, got)
		}
	}
}
