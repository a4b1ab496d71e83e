package mutants

// This file is what a mutants run does once the seeds are judged: it
// shrinks each mutant's first detection (scenarios/shrink) and records how
// short the failing schedule gets, and it explores the small clusters of
// the model checker with the mutant on (scenarios/explore) and records the
// runs to the first violation. Explore's workload produces and crashes,
// elects and cuts: it reaches the replication, controller, Raft, KIP-966
// and storage layers, not groups, transactions or clients.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/scenarios"
	kexplore "github.com/kafkasim/kafkasim/scenarios/explore"
	"github.com/kafkasim/kafkasim/scenarios/shrink"
	"github.com/kafkasim/kafkasim/scenarios/sweep"
	"github.com/kafkasim/kafkasim/scenarios/workload"
)

// ShrinkResult is the shrink of a mutant's first detection.
type ShrinkResult struct {
	Checker string `json:"checker"`
	Runs    int    `json:"runs"`
	// Steps is the shrunk schedule's length: its faults plus its choices
	// off the default (event orders, latencies, the swarm's draws).
	Steps          int    `json:"steps"`
	FaultsBefore   int    `json:"faults_before"`
	FaultsAfter    int    `json:"faults_after"`
	DeviatedBefore int    `json:"choices_before"`
	DeviatedAfter  int    `json:"choices_after"`
	Error          string `json:"error,omitempty"`
}

// ExploreResult is one exploration with a mutant on.
type ExploreResult struct {
	Scenario string `json:"scenario"`
	Variant  string `json:"variant"`
	// Runs is the runs made: up to the first violation, or the bound.
	Runs    int    `json:"runs"`
	Found   bool   `json:"found"`
	Checker string `json:"checker,omitempty"`
	Depth   int    `json:"depth,omitempty"`
	Error   string `json:"error,omitempty"`
}

// The explorations: a ZooKeeper cluster of three brokers (KIP-101's
// scenario) and a KRaft one (three controllers), each with its defaults;
// and a dynamic KRaft quorum (KIP-853) with its voter changes among the
// faults (crash, partition, reconfig), for the mutants that
// kraft-voter-changes reaches.
var (
	exploreZK     = mutant.Target{Scenario: "kip101-hw-lag", Variant: "kip279"}
	exploreKRaft  = mutant.Target{Scenario: "kraft-controller-failover", Variant: "kraft"}
	exploreKIP853 = mutant.Target{Scenario: "kraft-voter-changes", Variant: "dynamic"}
	exploreDepth  = 10 // explore's default
)

// Explorations returns the explorations that apply to m: the ZooKeeper one
// when a ZooKeeper swarm reaches it, the KRaft one when the KRaft swarm
// does, for the layers explore's workload reaches.
func Explorations(m mutant.Mutant) []mutant.Target {
	switch m.Layer {
	case mutant.Txn, mutant.Groups, mutant.Client:
		return nil
	}
	var out []mutant.Target
	for _, t := range m.Targets {
		switch {
		case t.Scenario == "swarm" && !slices.Contains(out, exploreZK):
			out = append(out, exploreZK)
		case t.Scenario == "kraft-swarm" && !slices.Contains(out, exploreKRaft):
			out = append(out, exploreKRaft)
		case t.Scenario == exploreKIP853.Scenario && !slices.Contains(out, exploreKIP853):
			out = append(out, exploreKIP853)
		}
	}
	return out
}

// controlExplorations are the explorations of the plan's mutants, each
// once, in order: those the control explores.
func controlExplorations(sp *Spec) []mutant.Target {
	var out []mutant.Target
	for _, m := range sp.measured() {
		for _, t := range Explorations(m) {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// FollowUps shrinks and explores the rows' mutants, and explores the
// control's clusters (every exploration a mutant had, with no mutant: it
// must find nothing), parallel runs at once, filling Row.Shrink and
// Row.Explore in place. progress, when set, is called after each row.
func FollowUps(sp *Spec, rows []Row, parallel int, progress func()) error {
	type job struct {
		row *Row
	}
	var jobs []job
	for i := range rows {
		measured := rows[i].Mutant != Control && rows[i].Equivalent == ""
		if (measured && (sp.ShrinkRuns > 0 || sp.ExploreRuns > 0)) || (rows[i].Mutant == Control && sp.ExploreRuns > 0) {
			jobs = append(jobs, job{&rows[i]})
		}
	}
	type done struct {
		row     *Row
		shrink  *ShrinkResult
		explore []ExploreResult
	}
	_, _, err := sweep.RunJobs(len(jobs), parallel, nil, func(i int) (done, error) {
		r := jobs[i].row
		d := done{row: r}
		if sp.ShrinkRuns > 0 && r.FirstSeed > 0 {
			d.shrink = shrinkFirst(r, sp.ShrinkRuns)
		}
		if sp.ExploreRuns > 0 {
			m, _ := mutant.ByName(r.Mutant)
			targets := Explorations(m)
			if r.Mutant == Control {
				m, targets = mutant.Mutant{Name: Control}, controlExplorations(sp)
			}
			for _, t := range targets {
				d.explore = append(d.explore, exploreOne(m, t, sp.ExploreRuns))
			}
		}
		return d, nil
	}, func(d done) error {
		d.row.Shrink, d.row.Explore = d.shrink, d.explore
		if progress != nil {
			progress()
		}
		return nil
	})
	return err
}

// shrinkFirst shrinks the row's first detection by the first checker that
// fired there. A detection that is only a failed run has no checker to
// keep failing: it is not shrunk.
func shrinkFirst(r *Row, maxRuns int) *ShrinkResult {
	scenario, variant, _ := strings.Cut(r.FirstTarget, "/")
	out := &ShrinkResult{}
	s, err := scenarios.Load(scenario)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	set, _ := Set(r.Mutant)
	sh, err := shrink.Run(s, shrink.Config{Variant: variant, Set: set, Seed: r.FirstSeed, MaxRuns: maxRuns})
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Checker, out.Runs = sh.Checker, sh.Runs
	out.FaultsBefore, out.FaultsAfter, out.DeviatedBefore, out.DeviatedAfter = sh.FaultsBefore, sh.FaultsAfter, sh.DeviatedBefore, sh.DeviatedAfter
	out.Steps = sh.FaultsAfter + sh.DeviatedAfter
	return out
}

// exploreOne explores target's cluster with m on, up to maxRuns runs.
func exploreOne(m mutant.Mutant, t mutant.Target, maxRuns int) ExploreResult {
	out := ExploreResult{Scenario: t.Scenario, Variant: t.Variant}
	s, err := scenarios.Load(t.Scenario)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	set, _ := Set(m.Name)
	p := workload.ExploreParams{Depth: exploreDepth, Records: 2, Acks: "all"}
	if t == exploreKIP853 {
		p.Faults = []string{"crash", "partition", "reconfig"}
	}
	ex, err := kexplore.Run(s, kexplore.Config{Variant: t.Variant, Set: set, MaxRuns: maxRuns, Parallel: 1, NoOrders: true, Params: p})
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Runs = ex.Runs
	if ex.Violation != nil {
		out.Found, out.Checker, out.Depth, out.Runs = true, ex.Checker, ex.Violation.Depth, ex.Violation.Run
	}
	return out
}

// String renders an exploration for a table cell: "zk 13" (runs to the
// violation), "kraft none/500".
func (e ExploreResult) String() string {
	name := "zk"
	switch e.Scenario {
	case exploreKRaft.Scenario:
		name = "kraft"
	case exploreKIP853.Scenario:
		name = "kip853"
	}
	switch {
	case e.Error != "":
		return name + " error"
	case e.Found:
		return fmt.Sprintf("%s %d", name, e.Runs)
	}
	return fmt.Sprintf("%s none/%d", name, e.Runs)
}
