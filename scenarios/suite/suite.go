package suite

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
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
	// Tally keeps of the runs as expected only what the suite's table
	// needs (Case.Tally), and in Case.Runs only the others: the memory a
	// suite holds then grows with its failures, not its seeds. A command
	// that prints every run (-json) leaves it off.
	Tally bool
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
	// Runs are the case's runs in seed order; with Options.Tally, only
	// those not as expected (the rest are in Tally).
	Runs  []*harness.Result
	Tally Tally
	Wall  time.Duration
}

// Count is the number of runs the case made.
func (c *Case) Count() int { return len(c.Runs) + c.Tally.Runs }

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

// Item is one case of a suite: a script under one of its variants.
type Item struct {
	Script  *scenarios.Script
	Variant string
}

// Plan lists the cases of scripts that o.Filter keeps, in script then
// variant order, each checked by harness.Prepare before anything runs. A
// variant the script's own configuration makes unrunnable is bad input:
// every such variant is listed in the *BadInput returned, at file:line
// (the variant's line when the error names none). A case that runs as
// written but not under o.Set goes to o.Skip (without Skip, it is bad
// input too).
func Plan(scripts []*scenarios.Script, o Options) ([]Item, error) {
	var items []Item
	var bad BadInput
	for _, s := range scripts {
		for _, v := range s.Variants {
			if o.Filter != nil && !o.Filter.MatchString(s.Name+"/"+v.Name) {
				continue
			}
			if _, _, err := harness.Prepare(s, v.Name, nil); err != nil {
				bad.Problems = append(bad.Problems, at(s, v, err))
				continue
			}
			if _, _, err := harness.Prepare(s, v.Name, o.Set); err != nil {
				if o.Skip == nil {
					bad.Problems = append(bad.Problems, at(s, v, err))
					continue
				}
				o.Skip(s.Name, v.Name, err)
				continue
			}
			items = append(items, Item{s, v.Name})
		}
	}
	if len(bad.Problems) > 0 {
		return items, &bad
	}
	return items, nil
}

// at places a variant's error at its script's file and the variant's line
// when the error does not name a place itself.
func at(s *scenarios.Script, v scenarios.Variant, err error) string {
	msg := err.Error()
	if s.File == "" || strings.HasPrefix(msg, s.File+":") {
		return msg
	}
	if v.Line > 0 {
		return fmt.Sprintf("%s:%d: variant %s: %s", s.File, v.Line, v.Name, msg)
	}
	return fmt.Sprintf("%s: variant %s: %s", s.File, v.Name, msg)
}

// Shard returns shard i of n (0 <= i < n, as sweep's -shard counts) of the
// items: every n-th from the i-th, so that each shard gets a share of
// every script's variants and the shards of one plan together hold each
// item once. n <= 1 returns the items.
func Shard(items []Item, i, n int) []Item {
	if n <= 1 {
		return items
	}
	var out []Item
	for k, it := range items {
		if k%n == i {
			out = append(out, it)
		}
	}
	return out
}

// Run plans the scripts' cases (Plan) and runs them (RunItems).
func Run(scripts []*scenarios.Script, o Options) ([]*Case, error) {
	items, err := Plan(scripts, o)
	if err != nil {
		return nil, err
	}
	return RunItems(items, o)
}

// RunItems runs each item over the seeds, worlds in parallel (each world
// is single-threaded and independent). Results come back in item, seed
// order whatever the parallelism; each run is kept as its summary
// (harness.Result.Summarize).
func RunItems(items []Item, o Options) ([]*Case, error) {
	type job struct {
		s    *scenarios.Script
		v    string
		seed uint64
		c    *Case
		i    int
	}
	var jobs []job
	var cases []*Case
	for _, it := range items {
		c := &Case{Scenario: it.Script.Name, Variant: it.Variant, Runs: make([]*harness.Result, o.Seeds)}
		cases = append(cases, c)
		for i := 0; i < o.Seeds; i++ {
			jobs = append(jobs, job{it.Script, it.Variant, uint64(i + 1), c, i})
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
				if o.Tally && res != nil && res.OK() {
					j.c.Tally.Add(res) // a sum and a maximum: the order runs finish in does not matter
					res = nil
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
	if o.Tally {
		for _, c := range cases {
			c.Runs = slices.DeleteFunc(c.Runs, func(r *harness.Result) bool { return r == nil })
		}
	}
	return cases, firstErr
}
