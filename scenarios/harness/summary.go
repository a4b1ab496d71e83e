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
func (r *Result) Summarize() {
	r.World, r.History, r.Final, r.Changes, r.Truncations = nil, checkers.History{}, checkers.Final{}, nil, nil
	vs := make([]checkers.Verdict, len(r.Verdicts))
	for i, v := range r.Verdicts {
		v.Porcupine = nil
		vs[i] = v
	}
	r.Verdicts = vs
}
