package reports

import (
	"fmt"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// The bounds of a failure's evidence: a CI page shows the JUnit text of
// every failing case, so each stays a few lines long whatever the run
// found (a swarm can report 200 anomalies per checker). The HTML report
// (-report) and the replay command give the rest.
const (
	// MaxEvidenceAnomalies is how many anomalies of each failing verdict
	// are quoted.
	MaxEvidenceAnomalies = 3
	// MaxEvidenceLine bounds one quoted anomaly, in bytes.
	MaxEvidenceLine = 400
	// MaxEvidenceVerdicts is how many failing verdicts are quoted.
	MaxEvidenceVerdicts = 4
)

// FailureText is a run that did not pass as a suite reports it (JUnit
// failure text, stderr): what failed, the replay command, and the
// anomalies of the verdicts that failed it (harness.Failing), bounded:
//
//	seed 3: acked-loss: expected ok, got permitted
//	  replay: kafkasim replay -scenario /ci/scenarios/orders.txt -variant acks1 -seed 3
//	  acked-loss: violation: lost t-0 m1 offsets=[1] ...: acknowledged ... [permitted]
func FailureText(r *harness.Result) string {
	why := r.Failed
	if why != "" && len(r.Unworkable) > 0 {
		why += " (note: " + strings.Join(r.Unworkable, "; ") + ")"
	}
	if why == "" {
		why = strings.Join(r.Mismatches, "; ")
	}
	if u := harness.Unexpected(r); len(u) > 0 {
		if why != "" {
			why += "; "
		}
		why += strings.Join(u, "; ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %s\n  replay: %s", r.Seed, why, r.Replay)
	failing := harness.Failing(r)
	for i, v := range failing {
		if i == MaxEvidenceVerdicts {
			fmt.Fprintf(&b, "\n  … %d more failing verdicts (see the replay)", len(failing)-i)
			break
		}
		for j, a := range v.Anomalies {
			if j == MaxEvidenceAnomalies {
				fmt.Fprintf(&b, "\n  %s: … %d more anomalies", v.Checker, len(v.Anomalies)+v.Omitted-j)
				break
			}
			fmt.Fprintf(&b, "\n  %s: %s: %s", v.Checker, harness.Outcome(v), clip(a.String(), MaxEvidenceLine))
		}
	}
	return b.String()
}

// clip shortens s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
