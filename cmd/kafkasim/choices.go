package main

// This file is the -choices flag of run and replay: a saved choice list
// (from explore or shrink) replays a run exactly, in place of the seed.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/scenarios"
)

// runOrReplayChoices runs variant of s from the seed or, when file is set,
// replays the saved choice list. With a file, only the variant it was saved
// for runs: the others return nil. A file that does not match the scenario
// (header, configuration, version, or choices that run out or exceed their
// ranges) is an error, which the caller reports as bad input.
func runOrReplayChoices(s *scenarios.Script, variant, explicit, file string, opts scenarios.Options) (*scenarios.Result, error) {
	if file == "" {
		return s.Run(variant, opts)
	}
	f, err := scenarios.LoadChoiceFile(file)
	if err != nil {
		return nil, err
	}
	if err := s.CheckHeader(f, opts.Set); err != nil {
		return nil, err
	}
	if f.Variant != variant {
		if explicit != "" {
			return nil, &scenarios.ChoiceMismatch{Msg: fmt.Sprintf("%s was saved for variant %s, not %s", file, f.Variant, variant)}
		}
		return nil, nil
	}
	return s.RunChoiceFile(f, opts.Set, opts)
}
