package explore

// This file connects the exploration workload (workload.ExploreRun)
// to the model checker of the top-level package explore (imported here as
// engine), and judges each explored run.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kafkasim/kafkasim/scenarios/workload"

	"github.com/kafkasim/kafkasim/scenarios/replay"

	"github.com/kafkasim/kafkasim/checkers"
	engine "github.com/kafkasim/kafkasim/explore"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

// exploreSeed seeds the nodes' own random streams in explored runs; every
// decision the explorer branches on goes through the chooser instead.
const exploreSeed = 1

// Config is one exploration of a scenario's variant.
type Config struct {
	Variant string
	Set     map[string]string
	Params  workload.ExploreParams
	// Checkers are the checkers whose contract-breaking violations count
	// (default: acked-loss and divergence, the TLA+ models' StrongIsr and
	// log-divergence properties).
	Checkers  []string
	MaxRuns   int
	Parallel  int
	StateFile string
	// DepthFirst searches depth-first (engine.Options.DepthFirst).
	DepthFirst bool
	// NoOrders keeps simultaneous events in their default order (only the
	// workload's actions are branched).
	NoOrders bool
	// Progress is engine.Options.Progress.
	Progress func(engine.Report)
}

// DefaultCheckers are the checkers an exploration judges by default.
var DefaultCheckers = []string{checkers.NameAckedLoss, checkers.NameDivergence}

// KRaftDefaultCheckers are the checkers an exploration of a KRaft cluster
// judges by default: the raft checker's properties of the metadata quorum
// first, then the data's.
var KRaftDefaultCheckers = []string{checkers.NameRaft, checkers.NameAckedLoss, checkers.NameDivergence}

// Exploration is the outcome of Run.
type Exploration struct {
	*engine.Report
	// Params and Checkers are the bounds and the checkers explored, with
	// the defaults filled in.
	Params   workload.ExploreParams
	Checkers []string
	// Found is the violating run, replayed with its trace (nil if none).
	Found   *harness.Result
	Checker string
	File    *replay.ChoiceFile
}

// violated returns the first of names whose verdict broke Kafka's contract.
func violated(res *harness.Result, names []string) string {
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

// Run searches every run of s's exploration workload up to the bound.
func Run(s *scenarios.Script, cfg Config) (*Exploration, error) {
	v, conf, err := harness.Prepare(s, cfg.Variant, cfg.Set)
	if err != nil {
		return nil, err
	}
	kraft := conf.Broker.KRaftMode()
	cfg.Params.Faults = slices.Clone(cfg.Params.Faults)
	if kraft {
		err = cfg.Params.ValidateKRaft(conf.Broker.KRaft.KRaftVersion >= 1)
	} else {
		err = cfg.Params.Validate()
	}
	if err != nil {
		return nil, err
	}
	if err := workload.CheckExplorable(s, kraft); err != nil {
		return nil, err
	}
	if len(cfg.Checkers) == 0 {
		cfg.Checkers = DefaultCheckers
		if kraft {
			cfg.Checkers = KRaftDefaultCheckers
		}
	}
	for _, c := range cfg.Checkers {
		if !slices.Contains(scenarios.Checkers, c) {
			return nil, fmt.Errorf("checker %q: allowed %s", c, strings.Join(scenarios.Checkers, ", "))
		}
	}
	opts := engine.Options{MaxRuns: cfg.MaxRuns, Parallel: cfg.Parallel, StateFile: cfg.StateFile, DepthFirst: cfg.DepthFirst, Progress: cfg.Progress,
		Key: fmt.Sprintf("%s/%s %s %s checkers=%s orders=%t dfs=%t", s.Name, v.Name, strings.Join(conf.NonDefaultPairs(), " "), cfg.Params, strings.Join(cfg.Checkers, ","), !cfg.NoOrders, cfg.DepthFirst)}
	if cfg.NoOrders {
		opts.Branch = func(k sim.Kind) bool { return k != sim.KindOrder }
	}
	target, err := workload.NewExploreSearch(s, v.Name, cfg.Params, cfg.Set)
	if err != nil {
		return nil, err
	}
	rep, err := engine.Search(func(c sim.Chooser, mark func(uint64)) (string, error) {
		res, err := target.Run(harness.Options{Seed: exploreSeed, Set: cfg.Set, Chooser: c, Budget: time.Second}, mark)
		if err != nil {
			return "", err
		}
		return violated(res, cfg.Checkers), nil
	}, opts)
	if err != nil {
		return nil, err
	}
	out := &Exploration{Report: rep, Params: cfg.Params, Checkers: cfg.Checkers}
	if rep.Violation != nil {
		// The search's run may have ended its settle early, before its last
		// choices: the file holds those of the whole run.
		rec := &sim.Recorder{Inner: &sim.Prefix{Choices: rep.Violation.Choices}}
		if _, err := workload.ExploreRun(s, v.Name, cfg.Params, harness.Options{Seed: exploreSeed, Set: cfg.Set, Chooser: rec, Budget: time.Second}, nil); err != nil {
			return nil, err
		}
		rep.Violation.Choices = rec.Choices
		out.Checker = rep.Violation.What
		out.File = &replay.ChoiceFile{Version: replay.Version, Scenario: s.Name, Variant: v.Name, Seed: exploreSeed, Explore: &cfg.Params, Config: conf.NonDefaultPairs(), Choices: rep.Violation.Choices,
			Script: s.ReplayName(), Set: cfg.Set}
		out.Found, err = replay.RunChoiceFile(s, out.File, cfg.Set, harness.Options{KeepTrace: true})
		if err != nil {
			return nil, fmt.Errorf("replaying the violation: %w", err)
		}
		out.File.TraceHash = out.Found.TraceHash
	}
	return out, nil
}
