package scenarios_test

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// FuzzScript: issue 13. No script may panic the parser or the preparation
// of a run (Prepare, which checks the configuration and the client steps
// of every variant): bad input is an error. The seed corpus in
// testdata/fuzz/FuzzScript holds the built-in scripts and malformed ones;
// 'go test' runs it, 'go test -fuzz FuzzScript' searches further.
func FuzzScript(f *testing.F) {
	f.Add("brokers 3\ntopic t partitions=1 rf=2 assignment=1,0\nrun 5s\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := scenarios.Parse("fuzz.txt", "fuzz", strings.NewReader(src))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error %q does not name the file and line", err)
			}
			return
		}
		for _, v := range s.Variants {
			harness.Prepare(s, v.Name, nil)
		}
	})
}
