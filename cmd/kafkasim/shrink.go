package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios/workload"

	"github.com/kafkasim/kafkasim/scenarios/replay"

	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/scenarios/shrink"
)

func init() {
	commands["shrink"] = command{"reduce a failing run (a seed or a saved choice list) to a few steps", runShrink}
}

// runShrink is 'kafkasim shrink'.
func runShrink(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("shrink", stderr)
	scenario := fs.String("scenario", "", "scenario name (kafkasim list) or path of a script file")
	variant := fs.String("variant", "", "variant of the failing run (default: the scenario's first)")
	seedText := fs.String("seed", "1", "seed of the failing run")
	set := setFlags{}
	fs.Var(set, "set", "override a configuration property, key=value (repeatable)")
	cf := addConfigFlags(fs)
	choices := fs.String("choices", "", "shrink the run saved in FILE (by explore or shrink) instead of a seed")
	checker := fs.String("checker", "", "the checker that must keep failing (default: the first that breaks the contract)")
	maxRuns := fs.Int("max-runs", 300, "candidate runs at most")
	save := fs.String("save", "", "write the shrunk choice list to FILE (default: shrunk-<scenario>-<variant>.choices)")
	script := fs.String("script", "", "also write the shrunk run as a scenario script to FILE (a run from an explore choice file: its faults and controller decisions as timed steps, every variant)")
	progressMode := fs.String("progress", "auto", progressFlagDoc)
	if err := parse(fs, args); err != nil {
		return err
	}
	lc, err := cf.load("shrink", set, stderr)
	if err != nil {
		return err
	}
	if err := checkOutputFile("-script", *script); err != nil {
		return err
	}
	if err := checkProgressMode(*progressMode); err != nil {
		return err
	}
	seed, err := strconv.ParseUint(*seedText, 10, 64)
	if err != nil {
		return usagef("-seed %q: want a non-negative integer", *seedText)
	}
	if *maxRuns < 1 {
		return usagef("-max-runs %d: must be at least 1", *maxRuns)
	}
	s, err := loadScenario(*scenario)
	if err != nil {
		return err
	}
	cfg := shrink.Config{Variant: *variant, Set: set, Seed: seed, Checker: *checker, MaxRuns: *maxRuns}
	if *choices != "" {
		if cfg.From, err = replay.LoadChoiceFile(*choices); err != nil {
			return usageError{err.Error()}
		}
	}
	if *script != "" && (cfg.From == nil || cfg.From.Explore == nil) {
		// NB: a script scenario's run already is a script (its steps; the
		// seed draws latencies and event order), and a swarm's drawn faults
		// interleave with its clients in a way script steps cannot say.
		return usagef("-script writes the schedule of an explored run: give -choices FILE saved by explore (or by a shrink of one); a run from -seed, or a choice file of a script's own steps, has no explored schedule to write")
	}
	bar := newProgress(stderr, *progressMode, "shrink", *maxRuns, 0)
	cfg.Progress = func(runs, faults, deviated int) {
		bar.update(runs, fmt.Sprintf("now %d faults, %d choices off the default", faults, deviated))
	}
	sh, err := shrink.Run(s, cfg)
	bar.finish()
	if err != nil {
		return lc.blame(err)
	}
	path := *save
	if path == "" {
		path = fmt.Sprintf("shrunk-%s-%s.choices", s.Name, sh.File.Variant)
	}
	if err := sh.File.Save(path); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "shrink %s / %s: %s still fails after %d runs\n", s.Name, sh.File.Variant, sh.Checker, sh.Runs)
	if cfg.From != nil && sh.File.Variant != cfg.From.Variant {
		fmt.Fprintf(stdout, "  schedule from variant %s, shrunk under %s (the trace hash of %s is not checked)\n", cfg.From.Variant, sh.File.Variant, *choices)
	}
	fmt.Fprintf(stdout, "  faults %d -> %d, choices off the default %d -> %d\n", sh.FaultsBefore, sh.FaultsAfter, sh.DeviatedBefore, sh.DeviatedAfter)
	if acts := workload.ExploreActions(sh.After); len(acts) > 0 {
		fmt.Fprintf(stdout, "  actions: %s\n", strings.Join(acts, "; "))
	}
	for _, st := range harness.Story(sh.After) {
		fmt.Fprintf(stdout, "  %s\n", st)
	}
	fmt.Fprintf(stdout, "choices saved to %s\n", path)
	if *script != "" {
		if err := workload.SaveScheduleScript(*script, s, sh.After, "kafkasim shrink "+strings.Join(args, " "), sh.Checker); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "script saved to %s: kafkasim run -scenario %s [-variant V]\n", *script, *script)
	}
	fmt.Fprintf(stdout, "replay: %s\n", replay.ReplayChoicesCommand(sh.File, set)) // Save set the file's path
	return nil
}
