package scenarios

// This file connects the exploration workload to the model checker of
// package explore, and judges each explored run.

import (
	"fmt"
	"strings"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/explore"
	"github.com/kafkasim/kafkasim/sim"
)

// exploreSeed seeds the nodes' own random streams in explored runs; every
// decision the explorer branches on goes through the chooser instead.
const exploreSeed = 1

// ExploreConfig is one exploration of a scenario's variant.
type ExploreConfig struct {
	Variant string
	Set     map[string]string
	Params  ExploreParams
	// Checkers are the checkers whose contract-breaking violations count
	// (default: acked-loss and divergence, the TLA+ models' StrongIsr and
	// log-divergence properties).
	Checkers  []string
	MaxRuns   int
	Parallel  int
	StateFile string
	// DepthFirst searches depth-first (explore.Options.DepthFirst).
	DepthFirst bool
	// NoOrders keeps simultaneous events in their default order (only the
	// workload's actions are branched).
	NoOrders bool
	// Progress is explore.Options.Progress.
	Progress func(explore.Report)
}

// DefaultExploreCheckers are the checkers an exploration judges by default.
var DefaultExploreCheckers = []string{checkers.NameAckedLoss, checkers.NameDivergence}

// Exploration is the outcome of Explore.
type Exploration struct {
	*explore.Report
	// Found is the violating run, replayed with its trace (nil if none).
	Found   *Result
	Checker string
	File    *ChoiceFile
}

// violated returns the first of names whose verdict broke Kafka's contract.
func violated(res *Result, names []string) string {
	if res.Failed != "" {
		return "run-failed"
	}
	for _, n := range names {
		for _, v := range res.Verdicts {
			if v.Checker == n && v.Result == checkers.ResultViolation && v.ContractBroken() {
				return n
			}
		}
	}
	return ""
}

// Explore searches every run of the exploration workload up to the bound.
func (s *Script) Explore(cfg ExploreConfig) (*Exploration, error) {
	if err := cfg.Params.Validate(); err != nil {
		return nil, err
	}
	if err := s.CheckExplorable(); err != nil {
		return nil, err
	}
	v, conf, err := s.Prepare(cfg.Variant, cfg.Set)
	if err != nil {
		return nil, err
	}
	if len(cfg.Checkers) == 0 {
		cfg.Checkers = DefaultExploreCheckers
	}
	for _, c := range cfg.Checkers {
		if !contains(Checkers, c) {
			return nil, fmt.Errorf("checker %q: allowed %s", c, strings.Join(Checkers, ", "))
		}
	}
	opts := explore.Options{MaxRuns: cfg.MaxRuns, Parallel: cfg.Parallel, StateFile: cfg.StateFile, DepthFirst: cfg.DepthFirst, Progress: cfg.Progress,
		Key: fmt.Sprintf("%s/%s %s %s checkers=%s orders=%t dfs=%t", s.Name, v.Name, strings.Join(conf.NonDefaultPairs(), " "), cfg.Params, strings.Join(cfg.Checkers, ","), !cfg.NoOrders, cfg.DepthFirst)}
	if cfg.NoOrders {
		opts.Branch = func(k sim.Kind) bool { return k != sim.KindOrder }
	}
	rep, err := explore.Search(func(c sim.Chooser, mark func(uint64)) (string, error) {
		res, err := s.ExploreRun(v.Name, cfg.Params, Options{Seed: exploreSeed, Set: cfg.Set, Chooser: c, Budget: time.Second}, mark)
		if err != nil {
			return "", err
		}
		return violated(res, cfg.Checkers), nil
	}, opts)
	if err != nil {
		return nil, err
	}
	out := &Exploration{Report: rep}
	if rep.Violation != nil {
		out.Checker = rep.Violation.What
		out.File = &ChoiceFile{Version: Version, Scenario: s.Name, Variant: v.Name, Seed: exploreSeed, Explore: &cfg.Params, Config: conf.NonDefaultPairs(), Choices: rep.Violation.Choices,
			Script: s.ReplayName(), Set: cfg.Set}
		out.Found, err = s.RunChoiceFile(out.File, cfg.Set, Options{KeepTrace: true})
		if err != nil {
			return nil, fmt.Errorf("replaying the violation: %w", err)
		}
		out.File.TraceHash = out.Found.TraceHash
	}
	return out, nil
}
