package workload

// This file prepares an exploration once for the many runs of a search.

import (
	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// ExploreSearch is a variant's exploration prepared once (its script
// checked, its configuration parsed and validated, its cluster planned:
// harness.ClusterPlan) for the many runs of a search, which read only each
// run's marks and verdicts.
type ExploreSearch struct {
	s    *scenarios.Script
	v    scenarios.Variant
	cfg  config.Config
	p    ExploreParams
	plan *cluster.Plan
}

// NewExploreSearch prepares the exploration of variant with the -set
// overrides set; the error is bad input.
func NewExploreSearch(s *scenarios.Script, variant string, p ExploreParams, set map[string]string) (*ExploreSearch, error) {
	v, cfg, err := harness.Prepare(s, variant, set)
	if err != nil {
		return nil, err
	}
	kraft := cfg.Broker.KRaftMode()
	if kraft {
		err = p.ValidateKRaft(cfg.Broker.KRaft.KRaftVersion >= 1)
	} else {
		err = p.Validate()
	}
	if err != nil {
		return nil, err
	}
	if err := CheckExplorable(s, kraft); err != nil {
		return nil, err
	}
	var plan *cluster.Plan
	if kraft {
		plan, err = harness.ClusterPlan(OnePartition(s), cfg, false) // as exploreKRaft runs it
	} else {
		plan, err = harness.ClusterPlan(OnePartition(s), cfg, true) // as exploreZK runs it
	}
	if err != nil {
		return nil, err
	}
	return &ExploreSearch{s: s, v: v, cfg: cfg, p: p, plan: plan}, nil
}

// Run is ExploreRun for a search (opts.Set is the one given to
// NewExploreSearch): in ZooKeeper mode the settle ends as soon as the
// cluster has provably converged (explore_settle.go), and Result.Config is
// left out. The verdicts are those of ExploreRun; the trace, its hash, the
// end time and the choices after the last action are not, so a run
// replayed or reported is run with ExploreRun.
//
// The prepared script and configuration are only read: one ExploreSearch
// serves the search's parallel workers.
func (x *ExploreSearch) Run(opts harness.Options, mark func(uint64)) (*harness.Result, error) {
	if x.cfg.Broker.KRaftMode() {
		return exploreKRaft(x.s, x.v, x.cfg, x.p, opts, mark, x.plan) // explore_kraft.go
	}
	return exploreZK(OnePartition(x.s), x.v, x.cfg, x.p, opts, mark, x.plan)
}
