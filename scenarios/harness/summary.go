package harness

// This file is what a driver that keeps many runs needs of each: a
// summary of a Result (the catalogue of every scenario is
// scenarios.All).

import "github.com/kafkasim/kafkasim/checkers"

// Summarize drops what a suite's table, JSON and JUnit do not read: the
// world and its trace, the history, the final replica states, the state
// changes, the truncations and porcupine's evidence (tens of MB for a
// swarm run). It keeps the verdicts with their anomalies and notes, the
// counts and the replay command; a report reruns the seed.
//
// Invariant: the memory a suite holds grows with its runs by a summary
// each (a few KB), not by a run's world.
//
// A run as expected (OK) keeps at most summaryAnomalies anomalies per
// verdict, the rest counted in Omitted: a permitted reordering can list
// thousands, and 1,000 seeds of them held a suite's memory (issue 36).
// A run not as expected keeps every anomaly: its JUnit failure and its
// report name them.
func (r *Result) Summarize() {
	r.World, r.History, r.Final, r.Changes, r.Truncations = nil, checkers.History{}, checkers.Final{}, nil, nil
	r.Transactions, r.Schedule = nil, nil
	ok := r.OK()
	vs := make([]checkers.Verdict, len(r.Verdicts))
	for i, v := range r.Verdicts {
		v.Porcupine = nil
		if ok && len(v.Anomalies) > summaryAnomalies {
			v.Omitted += len(v.Anomalies) - summaryAnomalies
			v.Anomalies = keepAnomalies(v.Anomalies, summaryAnomalies)
		}
		vs[i] = v
	}
	r.Verdicts = vs
}

// summaryAnomalies is how many anomalies per verdict a summary of a run
// as expected keeps.
const summaryAnomalies = 5

// keepAnomalies returns n of as, in their order, in a new slice (the rest
// can go): those outside Kafka's contract first, so that a summary
// classifies its verdict as the whole did (harness.Outcome: "bug" when
// any kept anomaly is not permitted), then the earliest permitted ones.
func keepAnomalies(as []checkers.Anomaly, n int) []checkers.Anomaly {
	keep := make([]bool, len(as))
	left := n
	for pass := 0; pass < 2; pass++ { // broken ones, then permitted ones
		for i, a := range as {
			if left > 0 && !keep[i] && (pass == 1 || !a.Permitted) {
				keep[i] = true
				left--
			}
		}
	}
	out := make([]checkers.Anomaly, 0, n)
	for i, a := range as {
		if keep[i] {
			out = append(out, a)
		}
	}
	return out
}
