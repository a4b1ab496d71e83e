package scenarios

import (
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
)

// SuiteOptions configure a suite run.
type SuiteOptions struct {
	Seeds    int            // seeds per scenario × variant, from 1
	Filter   *regexp.Regexp // on "scenario/variant"; nil for all
	Parallel int            // worlds run at once
	Budget   time.Duration  // linearizability budget per run
	// Progress, if set, is called after each run with the runs done and
	// the total (from one goroutine at a time).
	Progress func(done, total int)
}

// CaseResult is one scenario × variant over its seeds.
type CaseResult struct {
	Scenario, Variant string
	Runs              []*Result
	Wall              time.Duration
}

// Expected reports whether every run met the variant's expectations.
func (c *CaseResult) Expected() bool {
	for _, r := range c.Runs {
		if !r.OK() {
			return false
		}
	}
	return true
}

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

// All returns every built-in scenario and the swarm scenario.
func All() ([]*Script, error) {
	all, err := Builtin()
	if err != nil {
		return nil, err
	}
	all = append(all, Swarm())
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all, nil
}

// RunSuite runs every scenario under each variant over the seeds, worlds in
// parallel (each world is single-threaded and independent). Results come
// back in scenario, variant, seed order whatever the parallelism.
func RunSuite(scripts []*Script, o SuiteOptions) ([]*CaseResult, error) {
	type job struct {
		s    *Script
		v    string
		seed uint64
		c    *CaseResult
		i    int
	}
	var jobs []job
	var cases []*CaseResult
	for _, s := range scripts {
		for _, v := range s.Variants {
			if o.Filter != nil && !o.Filter.MatchString(s.Name+"/"+v.Name) {
				continue
			}
			if _, _, err := s.Prepare(v.Name, nil); err != nil {
				return nil, err
			}
			c := &CaseResult{Scenario: s.Name, Variant: v.Name, Runs: make([]*Result, o.Seeds)}
			cases = append(cases, c)
			for i := 0; i < o.Seeds; i++ {
				jobs = append(jobs, job{s, v.Name, uint64(i + 1), c, i})
			}
		}
	}
	par := max(o.Parallel, 1)
	finished := 0
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	var firstErr error
	for w := 0; w < par; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= len(jobs) || firstErr != nil {
					mu.Unlock()
					return
				}
				j := jobs[next]
				next++
				mu.Unlock()
				start := time.Now()
				res, err := j.s.Run(j.v, Options{Seed: j.seed, Budget: o.Budget})
				if res != nil {
					res.Summarize()
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				j.c.Runs[j.i] = res
				j.c.Wall += time.Since(start)
				finished++
				if o.Progress != nil {
					o.Progress(finished, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return cases, firstErr
}
