package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
)

// cutShort's 'restart b2' breaks: b2 is up. The run ends at line 7.
const cutShort = `brokers 3
topic t partitions=1 rf=3
set min.insync.replicas=2
producer p1 acks=all
send p1 t/0 200 interval=10ms
run 1s
restart b2
run 2s
`

// TestCutShortRunIsNotJudgedOnItsEndPhase: issue 28. A run that a failed
// step cut short exits 4, and the checkers that judge the end phase it
// never reached (the final log, convergence, liveness) say not judged and
// where the run ended, instead of judging a half-run ("lost 200, not
// permitted" on KRaft); the checkers of what it did still judge it.
func TestCutShortRunIsNotJudgedOnItsEndPhase(t *testing.T) {
	s, err := scenarios.Parse("cut.txt", "cut", strings.NewReader(cutShort))
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []map[string]string{nil, {"process.roles": "broker"}} {
		res, err := Run(s, "", Options{Seed: 1, Set: set})
		if err != nil {
			t.Fatal(err)
		}
		if res.Exit() != ExitRunFailed || !strings.HasPrefix(res.Failed, "cut.txt:7: restart") {
			t.Fatalf("%v: exit %d, failed %q; want 4 at cut.txt:7", set, res.Exit(), res.Failed)
		}
		judged := 0
		for _, v := range res.Verdicts {
			if checkers.NeedsEndPhase(v.Checker) {
				if !v.NotJudged || len(v.Notes) == 0 || !strings.Contains(v.Notes[0], "the run ended at cut.txt:7") {
					t.Errorf("%v: %s", set, v)
				}
				continue
			}
			if v.NotJudged {
				t.Errorf("%v: %s is not judged, but judges what the run did", set, v.Checker)
			}
			judged++
		}
		if judged < 4 {
			t.Errorf("%v: only %d checkers judged the run", set, judged)
		}
	}
}
