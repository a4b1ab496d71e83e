package mutants

// This file runs one scenario once with one mutant on and says whether the
// checkers caught it: the unit every measurement of detection power is
// made of.

import (
	"fmt"
	"time"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// Failed is the name Detection.Checkers gives a run that broke (a panic,
// an invariant the harness asserts, an await that never happened): a
// mutant that crashes the code under test is caught too.
const Failed = "failed"

// Detection is what one run with a mutant on showed.
type Detection struct {
	// Detected is true when a checker found a contract break (a verdict
	// "bug", never "permitted") or the run failed.
	Detected bool
	// Checkers are the checkers whose verdict was bug, in checkers.Names
	// order, then Failed when the run failed.
	Checkers []string
	// Failed says why the run failed ("" if it did not).
	Failed string
	// Replay is the command that repeats the run.
	Replay string
}

// Judge reads a finished run's verdicts as a Detection.
func Judge(r *harness.Result) Detection {
	d := Detection{Failed: r.Failed, Replay: r.Replay}
	for _, v := range r.Verdicts {
		if harness.Outcome(v) == "bug" {
			d.Checkers = append(d.Checkers, v.Checker)
		}
	}
	if r.Failed != "" {
		d.Checkers = append(d.Checkers, Failed)
	}
	d.Detected = len(d.Checkers) > 0
	return d
}

// Set returns the -set overrides that switch mutant name on ("" or
// Control: no mutant).
func Set(name string) (map[string]string, error) {
	if name == "" || name == Control {
		return map[string]string{}, nil
	}
	m, ok := mutant.ByName(name)
	if !ok {
		return nil, fmt.Errorf("unknown mutant %q (kafkasim mutants -list names them)", name)
	}
	return map[string]string{m.Property(): "true"}, nil
}

// RunOne runs target's scenario and variant at seed with mutant name on
// ("" for the control) and judges it. budget bounds the linearizability
// check (0: harness's default).
func RunOne(name string, t mutant.Target, seed uint64, budget time.Duration) (Detection, *harness.Result, error) {
	set, err := Set(name)
	if err != nil {
		return Detection{}, nil, err
	}
	s, err := scenarios.Load(t.Scenario)
	if err != nil {
		return Detection{}, nil, err
	}
	r, err := harness.Run(s, t.Variant, harness.Options{Seed: seed, Set: set, Budget: budget})
	if err != nil {
		return Detection{}, nil, err
	}
	return Judge(r), r, nil
}
