package mutants

// This file runs a mutants plan's jobs in parallel worlds (sweep.RunJobs:
// many worlds at once, never threads inside one) and keeps one record per
// run, the line of DIR/runs.jsonl that resume and merge read back.

import (
	"fmt"
	"sort"
	"time"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

// RunRecord is one run of a mutants plan.
type RunRecord struct {
	Mutant   string `json:"mutant"`
	Scenario string `json:"scenario"`
	Variant  string `json:"variant"`
	Seed     uint64 `json:"seed"`
	Detected bool   `json:"detected"`
	// Checkers are the checkers that found a contract break (Failed when
	// the run broke).
	Checkers  []string `json:"checkers,omitempty"`
	Failed    string   `json:"failed,omitempty"`
	TraceHash string   `json:"trace_hash"`
	Replay    string   `json:"replay"`
}

// Key is the key of the record's job (Job.Key).
func (r RunRecord) Key() string {
	return fmt.Sprintf("%s %s/%s %d", r.Mutant, r.Scenario, r.Variant, r.Seed)
}

// Options configure the running of a plan.
type Options struct {
	Parallel      int
	Shard, Shards int
	// Done holds the keys of runs already finished (resume): skipped.
	Done map[string]bool
	// OnRun is called for each finished run, one at a time.
	OnRun func(RunRecord) error
	// Stop, when closed, stops the plan from starting new runs.
	Stop <-chan struct{}
}

// Run runs the plan's jobs (of one shard) not yet done. It reports whether
// it was stopped before the end.
func Run(sp *Spec, o Options) (bool, error) {
	var jobs []Job
	for _, j := range sp.Jobs(o.Shard, o.Shards) {
		if !o.Done[j.Key()] {
			jobs = append(jobs, j)
		}
	}
	budget := time.Duration(sp.BudgetMs) * time.Millisecond
	_, stopped, err := sweep.RunJobs(len(jobs), o.Parallel, o.Stop, func(i int) (RunRecord, error) {
		j := jobs[i]
		d, res, err := RunOne(j.Mutant, j.Target, j.Seed, budget)
		if err != nil {
			return RunRecord{}, fmt.Errorf("%s: %w", j.Key(), err)
		}
		return RunRecord{Mutant: j.Mutant, Scenario: j.Scenario, Variant: j.Variant, Seed: j.Seed, Detected: d.Detected,
			Checkers: d.Checkers, Failed: d.Failed, TraceHash: fmt.Sprintf("%016x", res.TraceHash), Replay: d.Replay}, nil
	}, o.OnRun)
	return stopped, err
}

// SortRecords orders records as the plan numbers its jobs and drops
// repeated runs (the first record of a job is kept).
func SortRecords(sp *Spec, recs []RunRecord) []RunRecord {
	order := map[string]int{}
	for i, j := range sp.Jobs(0, 1) {
		order[j.Key()] = i
	}
	sort.SliceStable(recs, func(a, b int) bool { return order[recs[a].Key()] < order[recs[b].Key()] })
	out := recs[:0]
	seen := map[string]bool{}
	for _, r := range recs {
		if _, mine := order[r.Key()]; !mine || seen[r.Key()] {
			continue
		}
		seen[r.Key()] = true
		out = append(out, r)
	}
	return out
}
