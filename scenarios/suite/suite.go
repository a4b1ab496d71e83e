package suite

import (
	"regexp"
	"sync"
	"time"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// Options configure a suite run.
type Options struct {
	Seeds    int            // seeds per scenario × variant, from 1
	Filter   *regexp.Regexp // on "scenario/variant"; nil for all
	Parallel int            // worlds run at once
	Budget   time.Duration  // linearizability budget per run
	// Strict fails a run on a violation Kafka's contract permits, too
	// (harness.Options.Strict).
	Strict bool
	// Set are -set overrides of every run (the -config files); Origins
	// and ConfigFiles say which keys the files gave and name the files,
	// for the replay commands (harness.Options).
	Set         map[string]string
	Origins     map[string]string
	ConfigFiles []string
	// Skip, if set, is called for a scenario × variant that runs without
	// Set but not under it, which is then left out; if nil, Run returns
	// the error.
	Skip func(scenario, variant string, err error)
	// Progress, if set, is called after each run with the runs done and
	// the total (from one goroutine at a time).
	Progress func(done, total int)
}

// Case is one scenario × variant over its seeds.
type Case struct {
	Scenario, Variant string
	Runs              []*harness.Result
	Wall              time.Duration
}

// Expected reports whether every run passed (harness.Result.OK: every
// verdict as its expect line says, and the rest within Kafka's contract).
func (c *Case) Expected() bool {
	for _, r := range c.Runs {
		if !r.OK() {
			return false
		}
	}
	return true
}

// Run runs every scenario under each variant over the seeds, worlds in
// parallel (each world is single-threaded and independent). Results come
// back in scenario, variant, seed order whatever the parallelism; each run
// is kept as its summary (harness.Result.Summarize).
func Run(scripts []*scenarios.Script, o Options) ([]*Case, error) {
	type job struct {
		s    *scenarios.Script
		v    string
		seed uint64
		c    *Case
		i    int
	}
	var jobs []job
	var cases []*Case
	for _, s := range scripts {
		for _, v := range s.Variants {
			if o.Filter != nil && !o.Filter.MatchString(s.Name+"/"+v.Name) {
				continue
			}
			if _, _, err := harness.Prepare(s, v.Name, nil); err != nil {
				return nil, err
			}
			if _, _, err := harness.Prepare(s, v.Name, o.Set); err != nil {
				if o.Skip == nil {
					return nil, err
				}
				o.Skip(s.Name, v.Name, err)
				continue
			}
			c := &Case{Scenario: s.Name, Variant: v.Name, Runs: make([]*harness.Result, o.Seeds)}
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
				res, err := harness.Run(j.s, j.v, harness.Options{Seed: j.seed, Set: o.Set, Budget: o.Budget, Strict: o.Strict, Origins: o.Origins, ConfigFiles: o.ConfigFiles})
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
