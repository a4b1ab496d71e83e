package main

// This file is the -choices flag of run and replay: a saved choice list
// (from explore or shrink) replays a run exactly, in place of the seed, or,
// with -variant naming another variant of the scenario, replays the same
// schedule under that variant.

import (
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/scenarios/replay"
)

// runOrReplayChoices runs variant of s from the seed or, when file is set,
// replays the saved choice list. Without -variant (explicit ""), only the
// variant the file was saved for runs: the others return nil. With
// -variant naming another variant, the file's schedule runs under it
// (replay.RunChoiceFileUnder). A file that does not match the scenario
// (header, configuration, version, or choices that run out, are left over,
// exceed their ranges or do not fit the other variant) is an error, which
// the caller reports as bad input.
func runOrReplayChoices(s *scenarios.Script, variant, explicit, file string, opts harness.Options) (*harness.Result, error) {
	if file == "" {
		return harness.Run(s, variant, opts)
	}
	f, err := replay.LoadChoiceFile(file)
	if err != nil {
		return nil, err
	}
	if err := replay.CheckHeader(s, f, opts.Set); err != nil {
		return nil, err
	}
	if f.Variant != variant && explicit == "" {
		return nil, nil
	}
	return replay.RunChoiceFileUnder(s, f, variant, opts.Set, opts)
}
