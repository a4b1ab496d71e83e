package shrink

// This file shrinks a failing run: it takes the run's recorded choices and
// sets deviations from the default (alternative 0) back to the default,
// chunk by chunk (delta debugging), keeping each change under which the
// same checker still fails. Faults go first, then the other network and
// disk faults, then orders, then latencies. Each candidate is replayed with
// a guide chooser that keeps one cursor per kind of choice (as the seeded
// chooser keeps one stream per kind), so that removing one decision does
// not shift every later decision of other kinds; every accepted run is
// re-recorded, so the result replays exactly from its choice list.

import (
	"fmt"
	"time"

	"github.com/kafkasim/kafkasim/scenarios/workload"

	"github.com/kafkasim/kafkasim/scenarios/replay"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

// Config says what to shrink.
type Config struct {
	Variant string
	Set     map[string]string
	// Seed is the failing run's seed (a random run of the script), unless
	// From is set.
	Seed uint64
	// From is a saved run (an explored violation, or an earlier shrink).
	// With Variant naming another variant than the file's, its schedule is
	// shrunk under that variant (replay.RunChoiceFileUnder).
	From *replay.ChoiceFile
	// Checker is the checker that must keep failing; "" takes the first
	// whose violation breaks the contract, else the first violation.
	Checker string
	// MaxRuns bounds the candidate runs (0 means 300).
	MaxRuns int
	// Progress, if set, is called after each candidate run with the runs
	// so far and the current best run's faults and off-default choices.
	Progress func(runs, faults, deviated int)
}

// Shrunk is the outcome of Run.
type Shrunk struct {
	Checker        string
	Before, After  *harness.Result // the original and the shrunk run (with traces)
	File           *replay.ChoiceFile
	Runs           int
	FaultsBefore   int // fault records in the trace: crashes, power losses, pauses, cuts, partitions
	FaultsAfter    int
	DeviatedBefore int // choices off their default
	DeviatedAfter  int
}

// guide replays choices per kind, clamping an index to the alternatives
// the run offers, and takes the default past the end of a kind's list.
type guide struct {
	byKind [16][]int
	pos    [16]int
}

func newGuide(cs []sim.Choice) *guide {
	g := &guide{}
	for _, c := range cs {
		g.byKind[c.Kind%16] = append(g.byKind[c.Kind%16], c.Index)
	}
	return g
}

func (g *guide) Choose(k sim.Kind, n int) int {
	q := g.byKind[k%16]
	i := g.pos[k%16]
	g.pos[k%16]++
	if i >= len(q) {
		return 0
	}
	return min(q[i], n-1)
}

func (g *guide) Chance(k sim.Kind, p float64) bool { return g.Choose(k, 2) == 1 }

// faultKinds is the order in which shrinking resets kinds of choice.
var shrinkGroups = [][]sim.Kind{
	{sim.KindFault},
	{sim.KindCrashKeep, sim.KindTear, sim.KindCorrupt, sim.KindDrop, sim.KindDuplicate, sim.KindReorder, sim.KindDelay},
	{sim.KindOrder, sim.KindWorkload},
	{sim.KindLatency},
}

// countFaults counts the fault records of a run's trace.
func countFaults(res *harness.Result) int {
	n := 0
	for _, r := range res.World.Trace().Records() {
		switch r.Kind {
		case "crash", "pause", "cut", "partition":
			n++
		}
	}
	return n
}

func deviated(cs []sim.Choice) int {
	n := 0
	for _, c := range cs {
		if c.Index != 0 {
			n++
		}
	}
	return n
}

// failingChecker picks the checker a shrink keeps failing.
func failingChecker(res *harness.Result, want string) (string, bool) {
	if res.Failed != "" && want == "" {
		return "run-failed", true
	}
	first := ""
	for _, v := range res.Verdicts {
		if v.Result != checkers.ResultViolation {
			continue
		}
		if want != "" {
			if v.Checker == want {
				return want, v.ContractBroken()
			}
			continue
		}
		if v.ContractBroken() {
			return v.Checker, true
		}
		if first == "" {
			first = v.Checker
		}
	}
	if want != "" || first == "" {
		return "", false
	}
	return first, false
}

// stillFails reports whether res fails checker as the original did.
func stillFails(res *harness.Result, checker string, broken bool) bool {
	if checker == "run-failed" {
		return res.Failed != ""
	}
	if res.Failed != "" {
		return false
	}
	for _, v := range res.Verdicts {
		if v.Checker == checker && v.Result == checkers.ResultViolation {
			return !broken || v.ContractBroken()
		}
	}
	return false
}

// Run minimizes a failing run of s. The error is bad input, or a run that
// does not fail.
func Run(s *scenarios.Script, cfg Config) (*Shrunk, error) {
	if cfg.MaxRuns == 0 {
		cfg.MaxRuns = 300
	}
	variant, seed := cfg.Variant, cfg.Seed
	var params *workload.ExploreParams
	if cfg.From != nil {
		if err := replay.CheckHeader(s, cfg.From, cfg.Set); err != nil {
			return nil, err
		}
		seed, params = cfg.From.Seed, cfg.From.Explore
		if variant == "" {
			variant = cfg.From.Variant
		}
	}
	v, conf, err := harness.Prepare(s, variant, cfg.Set)
	if err != nil {
		return nil, err
	}
	// The linearizability search is bounded tightly: a shrink runs hundreds
	// of candidates, and one that times out is Unknown, never a failure.
	budget := 500 * time.Millisecond
	if cfg.Checker == checkers.NameLinearizability {
		budget = 5 * time.Second
	}
	run := func(c sim.Chooser) (*harness.Result, error) {
		opts := harness.Options{Seed: seed, Set: cfg.Set, Chooser: c, RecordChoices: true, KeepTrace: true, Budget: budget}
		if params != nil {
			return workload.ExploreRun(s, v.Name, *params, opts, nil)
		}
		return harness.Run(s, v.Name, opts)
	}
	var first sim.Chooser
	var strict *replay.StrictReplay
	if cfg.From != nil {
		// NB: under another variant than the file's, the schedule must fit
		// that variant's run, and its trace hash is not checked.
		strict = replay.NewScheduleReplay(cfg.From, v.Name)
		first = strict
	}
	before, err := run(first)
	if err != nil {
		return nil, err
	}
	if strict != nil {
		if err := strict.Verify(before); err != nil {
			return nil, err
		}
	}
	checker, broken := failingChecker(before, cfg.Checker)
	if checker == "" {
		if cfg.Checker != "" {
			return nil, fmt.Errorf("the run does not fail %s: nothing to shrink", cfg.Checker)
		}
		return nil, fmt.Errorf("the run fails no checker: nothing to shrink")
	}
	out := &Shrunk{Checker: checker, Before: before, Runs: 1, FaultsBefore: countFaults(before), DeviatedBefore: deviated(before.World.Choices())}
	best, cur := before, before.World.Choices()
	accept := func(res *harness.Result, err error) bool {
		if err != nil || !stillFails(res, checker, broken) {
			return false
		}
		// Accept only runs no larger than the current one: no more faults
		// and no more deviations.
		if countFaults(res) > countFaults(best) || deviated(res.World.Choices()) > deviated(cur) {
			return false
		}
		best, cur = res, res.World.Choices()
		return true
	}
	try := func(cand []sim.Choice) bool {
		if out.Runs >= cfg.MaxRuns {
			return false
		}
		out.Runs++
		ok := accept(run(newGuide(cand)))
		if cfg.Progress != nil {
			cfg.Progress(out.Runs, countFaults(best), deviated(cur))
		}
		return ok
	}
	for _, group := range shrinkGroups {
		in := func(k sim.Kind) bool {
			for _, g := range group {
				if g == k {
					return true
				}
			}
			return false
		}
		idx := func() []int {
			var out []int
			for i, c := range cur {
				if c.Index != 0 && in(c.Kind) {
					out = append(out, i)
				}
			}
			return out
		}
		// Delta debugging over this group's deviations: try resetting
		// chunks, halving the chunk size when no chunk can go.
		for chunk := len(idx()); chunk >= 1 && out.Runs < cfg.MaxRuns; {
			devs := idx()
			if len(devs) == 0 {
				break
			}
			chunk = min(chunk, len(devs))
			progress := false
			for startAt := 0; startAt < len(devs) && out.Runs < cfg.MaxRuns; startAt += chunk {
				cand := append([]sim.Choice(nil), cur...)
				for _, i := range devs[startAt:min(startAt+chunk, len(devs))] {
					cand[i].Index = 0
				}
				if try(cand) {
					progress = true
					break
				}
			}
			if !progress {
				if chunk == 1 {
					break
				}
				chunk /= 2
			}
		}
	}
	out.After = best
	out.FaultsAfter, out.DeviatedAfter = countFaults(best), deviated(cur)
	out.File = &replay.ChoiceFile{Version: replay.Version, Scenario: s.Name, Variant: v.Name, Seed: seed, Explore: params, Config: conf.NonDefaultPairs(), Choices: cur,
		TraceHash: best.TraceHash, Script: s.ReplayName(), Set: cfg.Set}
	return out, nil
}
