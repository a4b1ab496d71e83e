package suite

import "github.com/kafkasim/kafkasim/scenarios/harness"

// Tally is what a suite's table needs of a case's runs as expected
// (Options.Tally): counts, sums and each checker's worst outcome, a few
// hundred bytes whatever the seeds.
type Tally struct {
	Runs, Unknown          int
	Acked, Lost, Divergent int
	// Worst is each checker's worst outcome (harness.Outcome) by
	// outcomeRank.
	Worst map[string]string
}

// outcomeRank orders harness.Outcome's words, the worst highest.
var outcomeRank = map[string]int{"not-judged": -1, "ok": 0, "unknown": 1, "permitted": 2, "bug": 3}

// worse reports whether outcome a is worse than b ("" is better than any).
func worse(a, b string) bool { return b == "" || outcomeRank[a] > outcomeRank[b] }

// Add folds r in.
func (t *Tally) Add(r *harness.Result) {
	t.Runs++
	if r.Unknown() {
		t.Unknown++
	}
	t.Acked += r.Stats.Acked
	t.Lost += r.Stats.AckedLost
	if r.Stats.DivergentOffsets > 0 {
		t.Divergent++
	}
	if t.Worst == nil {
		t.Worst = map[string]string{}
	}
	for _, v := range r.Verdicts {
		if o := harness.Outcome(v); worse(o, t.Worst[v.Checker]) {
			t.Worst[v.Checker] = o
		}
	}
}
