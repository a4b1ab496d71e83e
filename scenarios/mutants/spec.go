package mutants

// This file is the plan of a mutants run: which mutants, which scenarios
// reach each (mutant.Mutant.Targets), N seeds per target, and the control
// (no mutant) on every target the selected mutants name. The jobs are
// numbered control first, then the mutants in catalogue order, each
// target in order, seeds 1..N; a shard i/n runs the jobs whose number is
// i modulo n, so nothing depends on the sharding.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// Control names the runs without a mutant in records and rows.
const Control = "control"

// Spec is what decides a mutants run: shards of one run must agree on
// every field (it is written to DIR/mutants-spec.json and compared).
type Spec struct {
	// Mutants are the mutants measured, by name, in catalogue order.
	Mutants []string `json:"mutants"`
	Seeds   int      `json:"seeds"`
	// BudgetMs bounds each run's linearizability check, in wall ms.
	BudgetMs int64 `json:"budget_ms"`
	// ShrinkRuns bounds the shrink of each mutant's first detection (0: no
	// shrink); ExploreRuns the explorations (0: no exploration).
	ShrinkRuns  int `json:"shrink_runs"`
	ExploreRuns int `json:"explore_runs"`
}

// NewSpec selects mutants by name or layer ("" or "all": every one),
// keeping catalogue order. An unknown name is an error listing the names.
func NewSpec(selection []string, seeds int) (*Spec, error) {
	if seeds < 1 {
		return nil, fmt.Errorf("-seeds %d: must be at least 1", seeds)
	}
	want := map[string]bool{}
	for _, s := range selection {
		s = strings.TrimPrefix(strings.TrimSpace(s), mutant.Prefix)
		if s == "" {
			continue
		}
		if s == "all" {
			want = map[string]bool{}
			break
		}
		known := false
		for _, m := range mutant.Catalogue {
			if m.Name == s || string(m.Layer) == s {
				known = true
			}
		}
		if !known {
			var near []string
			for _, m := range mutant.Catalogue {
				if strings.Contains(m.Name, s) {
					near = append(near, m.Name)
				}
			}
			if len(near) > 0 {
				return nil, fmt.Errorf("-mutant %q: not a mutant or layer; did you mean %s? (kafkasim mutants -list names them all)", s, strings.Join(near, ", "))
			}
			return nil, fmt.Errorf("-mutant %q: not a mutant or layer; allowed: all, a layer (%s) or a name (%s)", s, strings.Join(layers(), ", "), strings.Join(mutant.Names(), ", "))
		}
		want[s] = true
	}
	sp := &Spec{Seeds: seeds}
	for _, m := range mutant.Catalogue {
		if len(want) == 0 || want[m.Name] || want[string(m.Layer)] {
			sp.Mutants = append(sp.Mutants, m.Name)
		}
	}
	return sp, nil
}

func layers() []string {
	var out []string
	for _, m := range mutant.Catalogue {
		if !slices.Contains(out, string(m.Layer)) {
			out = append(out, string(m.Layer))
		}
	}
	return out
}

// Job is one run: a mutant (Control for none) on one target at one seed.
type Job struct {
	Mutant   string        `json:"mutant"`
	Target   mutant.Target `json:"-"`
	Scenario string        `json:"scenario"`
	Variant  string        `json:"variant"`
	Seed     uint64        `json:"seed"`
}

// Key identifies a job among the records of a journal.
func (j Job) Key() string {
	return fmt.Sprintf("%s %s/%s %d", j.Mutant, j.Scenario, j.Variant, j.Seed)
}

// measured returns the selected mutants, equivalent ones apart (nothing
// can detect those: they are listed, not run).
func (sp *Spec) measured() []mutant.Mutant {
	var out []mutant.Mutant
	for _, n := range sp.Mutants {
		if m, ok := mutant.ByName(n); ok && m.Equivalent == "" {
			out = append(out, m)
		}
	}
	return out
}

// ControlTargets are the targets the measured mutants name, each once, in
// order of first appearance.
func (sp *Spec) ControlTargets() []mutant.Target {
	var out []mutant.Target
	for _, m := range sp.measured() {
		for _, t := range m.Targets {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Jobs returns the runs of shard i of n (n <= 1: every run), control
// first.
func (sp *Spec) Jobs(shard, shards int) []Job {
	var all []Job
	add := func(name string, ts []mutant.Target) {
		for _, t := range ts {
			for s := 1; s <= sp.Seeds; s++ {
				all = append(all, Job{Mutant: name, Target: t, Scenario: t.Scenario, Variant: t.Variant, Seed: uint64(s)})
			}
		}
	}
	add(Control, sp.ControlTargets())
	for _, m := range sp.measured() {
		add(m.Name, m.Targets)
	}
	if shards <= 1 {
		return all
	}
	var out []Job
	for k, j := range all {
		if k%shards == shard {
			out = append(out, j)
		}
	}
	return out
}
