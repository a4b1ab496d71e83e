package replay

// This file replays a choice file under another variant of its scenario:
// the same schedule (every decision the recorded run's chooser made, in
// order) asked of another configuration, so that "does kip279 survive the
// schedule that broke hw?" is one command. The choices are consumed in
// order; the first one whose kind or number of alternatives differs from
// what the other variant's run asks for ends the run as bad input (the
// schedule does not fit), and so does a schedule that runs out or has
// choices left over. The trace hash is not checked: the file's is the hash
// of its own variant's run, which another variant need not reproduce.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/scenarios/workload"

	"github.com/kafkasim/kafkasim/scenarios/harness"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/sim"
)

// chooseUnder is Choose for a schedule replayed under another variant.
func (s *StrictReplay) chooseUnder(k sim.Kind, n int) int {
	asks := fmt.Sprintf("variant %s asks %s:?/%d", s.under, k, n)
	if s.pos >= len(s.choices) {
		s.err = &ChoiceMismatch{fmt.Sprintf("%s: choice %d: the schedule from variant %s ends after %d choices, %s — the schedule does not fit this variant",
			s.pathName(), s.pos+1, s.file.Variant, len(s.choices), asks)}
		panic(s.err)
	}
	c := s.choices[s.pos]
	if c.Kind != k || c.N != n {
		s.err = &ChoiceMismatch{fmt.Sprintf("%s: recorded %v, %s — the schedule does not fit this variant", s.where(s.pos), c, asks)}
		panic(s.err)
	}
	s.pos++
	return c.Index
}

// pathName is the file for a message.
func (s *StrictReplay) pathName() string {
	if s.path == "" {
		return "(in memory)"
	}
	return s.path
}

// RunChoiceFileUnder replays the schedule of f under variant, another
// variant of the scenario the file was saved for ("" or the file's own
// variant is RunChoiceFile, the exact replay). The header is checked as
// for an exact replay (scenario, version, the configuration the file's
// variant has under set, the header-sum), the variant must prepare under
// set, and every choice must fit (else a *ChoiceMismatch naming the
// choice, what was recorded and what the variant asked for). The result's
// ScheduleFrom names the file's variant and its Replay command reruns the
// schedule under variant.
func RunChoiceFileUnder(s *scenarios.Script, f *ChoiceFile, variant string, set map[string]string, opts harness.Options) (*harness.Result, error) {
	if variant == "" || variant == f.Variant {
		return RunChoiceFile(s, f, set, opts)
	}
	if err := CheckHeader(s, f, set); err != nil {
		return nil, err
	}
	if _, _, err := harness.Prepare(s, variant, set); err != nil {
		return nil, err
	}
	rp := NewStrictReplay(f)
	rp.under = variant
	opts.Seed, opts.Set, opts.Chooser = f.Seed, set, rp
	var res *harness.Result
	var err error
	if f.Explore != nil {
		res, err = workload.ExploreRun(s, variant, *f.Explore, opts, nil)
	} else {
		res, err = harness.Run(s, variant, opts)
	}
	if err != nil {
		return nil, err
	}
	if err := rp.Verify(res); err != nil {
		return nil, err
	}
	g := *f
	g.Script, g.Variant = s.ReplayName(), variant
	res.Replay = ReplayChoicesCommand(&g, set)
	res.ScheduleFrom = f.Variant
	return res, nil
}

// NewScheduleReplay returns a chooser that replays f's choices under
// variant, another variant than the file's (see RunChoiceFileUnder): Verify
// then skips the trace hash.
func NewScheduleReplay(f *ChoiceFile, variant string) *StrictReplay {
	rp := NewStrictReplay(f)
	if variant != f.Variant {
		rp.under = variant
	}
	return rp
}
