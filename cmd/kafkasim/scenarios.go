package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

func init() {
	commands["list"] = command{"list the scenarios with what each shows", runList}
	commands["run"] = command{"run a scenario once per variant and print the verdicts", func(a []string, o, e io.Writer) error { return runScenario(a, o, e, false) }}
	commands["replay"] = command{"run a scenario and print the timeline of the trace", func(a []string, o, e io.Writer) error { return runScenario(a, o, e, true) }}
}

// setFlags collects repeated -set key=value flags.
type setFlags map[string]string

func (s setFlags) String() string { return "" }

func (s setFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q: want key=value (a Kafka property, e.g. acks=all)", v)
	}
	s[k] = val
	return nil
}

func runList(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	all, err := scenarios.All()
	if err != nil {
		return err
	}
	for _, s := range all {
		var vs []string
		for _, v := range s.Variants {
			vs = append(vs, v.Name)
		}
		fmt.Fprintf(stdout, "%-22s %s\n%-22s   from %s; variants: %s\n", s.Name, s.Description, "", s.Source, strings.Join(vs, ", "))
	}
	return nil
}

// loadScenario resolves -scenario: a built-in name, "swarm", or a file.
func loadScenario(name string) (*scenarios.Script, error) {
	if name == "" {
		return nil, usagef("-scenario is required (see kafkasim list)")
	}
	s, err := scenarios.Load(name)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return s, nil
}

func runScenario(args []string, stdout, stderr io.Writer, replay bool) error {
	name := "run"
	if replay {
		name = "replay"
	}
	fs := newFlags(name, stderr)
	scenario := fs.String("scenario", "", "scenario name (kafkasim list) or path of a script file")
	variant := fs.String("variant", "", "variant to run (default: every variant of the scenario)")
	seedText := fs.String("seed", "1", "seed of the run")
	set := setFlags{}
	fs.Var(set, "set", "override a configuration property, key=value (repeatable)")
	cf := addConfigFlags(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per run")
	strict := fs.Bool("strict", false, "exit 1 on a violation Kafka's contract permits, too (where no expect line names the checker)")
	trace := fs.Bool("trace", false, "print the whole trace")
	all := fs.Bool("all", false, "replay: show every trace record, messages and timers included")
	export := fs.String("export", "", "write every broker's disk to DIR/<variant>/<broker>/<log.dirs path>/ in Kafka's layout")
	report := fs.String("report", "", "write a self-contained HTML run report per run into DIR, and its timeline as -timeline.svg and .png")
	choices := fs.String("choices", "", "replay the choice list saved in FILE (by explore or shrink) instead of the seed")
	history := fs.String("history", "", "save the run's client history and final logs to FILE (JSON lines; kafkasim check reads it)")
	maxMemory := addMaxMemory(fs)
	var tape *string
	if replay {
		tape = fs.String("tape", "", "replay the served run recorded by kafkasim serve -tape FILE (its scenario, variant, seed and -set come from the tape)")
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if tape != nil && *tape != "" {
		if *scenario != "" || *choices != "" || len(set) > 0 || cf.given() {
			return usagef("-tape names the scenario, variant, seed and -set itself: leave out -scenario, -choices, -set and the -config files")
		}
		return replayTape(*tape, stdout, stderr, *all, *report, *history, *strict)
	}
	lc, err := cf.load(name, set, stderr)
	if err != nil {
		return err
	}
	seed, err := strconv.ParseUint(*seedText, 10, 64)
	if err != nil {
		return usagef("-seed %q: want a non-negative integer", *seedText)
	}
	s, err := loadScenario(*scenario)
	if err != nil {
		return err
	}
	variants := s.Variants
	if *variant != "" {
		v, _, err := harness.Prepare(s, *variant, set)
		if err != nil {
			return lc.blame(err)
		}
		variants = []scenarios.Variant{v}
	}
	runnable := variants[:0:0]
	otherRelease := false
	for _, v := range variants {
		if _, _, err := harness.Prepare(s, v.Name, set); err != nil {
			var ce *config.Error
			otherRelease = otherRelease || errors.As(err, &ce) && ce.Kind == config.NotInRelease
			if _, _, own := harness.Prepare(s, v.Name, nil); *variant != "" || own != nil {
				return lc.blame(err)
			}
			// A variant -set cannot apply to (offsets in ZooKeeper under a
			// KRaft release): the others run, and this one says why not.
			fmt.Fprintf(stderr, "kafkasim %s: variant %s does not run under %s: %v\n", name, v.Name, cf.under(), lc.blame(err))
			continue
		}
		runnable = append(runnable, v)
	}
	if len(runnable) == 0 {
		if otherRelease {
			// The variants' releases are the scenario's; properties of
			// another release ask for that release by name.
			return usagef("no variant of %s runs under %s (see above); to run another release, name it, e.g. -set %s=4.0 (Kafka 4.x files run under 4.0 or later)",
				s.Name, cf.under(), config.PropInterBrokerProtocolVersion)
		}
		return usagef("no variant of %s runs under %s (see above)", s.Name, cf.under())
	}
	variants = runnable
	if *history != "" && len(variants) > 1 {
		return usagef("-history saves one run: name one of the %d variants with -variant", len(variants))
	}
	if *history != "" {
		if st, err := os.Stat(filepath.Dir(*history)); err != nil || !st.IsDir() {
			return usagef("-history %s: the directory %s does not exist", *history, filepath.Dir(*history))
		}
	}
	groups := [][]scenarios.Variant{}
	for _, v := range variants {
		groups = append(groups, []scenarios.Variant{v})
	}
	if *variant == "" && *choices == "" && len(set) > 0 {
		// Variants that -set made identical run once.
		groups = harness.IdenticalVariants(s, set, variants)
	}
	var planned []plannedRun
	for _, g := range groups {
		planned = append(planned, plannedRun{s: s, variant: g[0].Name, set: set, traced: replay || *report != "" || *trace})
	}
	mp, err := checkMemory(*maxMemory, 1, planned)
	if err != nil {
		return err
	}
	defer watchMemory(mp, stderr)()
	code := harness.ExitOK
	for _, g := range groups {
		v := g[0]
		res, err := runOrReplayChoices(s, v.Name, *variant, *choices, harness.Options{Seed: seed, Set: set, Timeline: replay || *report != "", KeepTrace: *trace, Strict: *strict, Origins: lc.labels(), ConfigFiles: cf.replayArgs()})
		if err != nil {
			return lc.blame(err)
		}
		if res == nil {
			continue // -choices replays the variant it was saved for
		}
		for _, same := range g[1:] {
			res.SameAs = append(res.SameAs, same.Name)
		}
		switch {
		case *asJSON:
			if err := reports.WriteRunJSON(stdout, res); err != nil {
				return err
			}
		default:
			if replay || *trace {
				writeTimeline(stdout, res, *all || *trace)
			}
			reports.WriteRunText(stdout, res)
		}
		if err := writeRunFiles(res, *report, *history, stderr); err != nil {
			return err
		}
		if *export != "" {
			if err := exportDisks(res.World, filepath.Join(*export, v.Name)); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "exported the brokers' disks to %s\n", filepath.Join(*export, v.Name))
		}
		code = harness.CombineExits(code, res.Exit())
	}
	return runExit(code)
}

// writeRunFiles writes a run's HTML report into dir report and its
// history to file history, each when named.
func writeRunFiles(res *harness.Result, report, history string, stderr io.Writer) error {
	if report != "" {
		if err := writeRunReport(report, res, stderr, true); err != nil {
			return err
		}
	}
	if history != "" {
		if err := saveHistory(history, res); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "saved the history to %s\n", history)
	}
	return nil
}

// The exit codes, as the tests and check name them (harness.ExitRule).
const (
	exitOK        = harness.ExitOK
	exitViolation = harness.ExitFailed
	exitBadInput  = harness.ExitBadInput
	exitUnknown   = harness.ExitUnknown
	exitRunFailed = harness.ExitRunFailed
)

// runExit turns the exit code of one or more runs (harness.Exit, combined
// by harness.CombineExits) into the command's error.
func runExit(code int) error {
	switch code {
	case harness.ExitRunFailed:
		return exitError{code, "a run could not be carried out: a step's expectation broke (RUN FAILED above)"}
	case harness.ExitFailed:
		return failedError{"a verdict breaks Kafka's contract or misses the script's expectation (see above)"}
	case harness.ExitUnknown:
		return exitError{code, "a checker could not decide (unknown)"}
	}
	return nil
}

// noisy are the trace kinds replay hides unless -all: every message and
// timer of the run.
var noisy = map[string]bool{"send": true, "recv": true, "timer": true, "drop": true, "zk-txn": true}

// writeTimeline prints the trace with the replicas' states after each
// event that changed them.
func writeTimeline(w io.Writer, r *harness.Result, everything bool) {
	recs := r.World.Trace().Records()
	changes := r.Changes
	ci := 0
	flush := func(upTo uint64) {
		for ci < len(changes) && changes[ci].Event <= upTo {
			fmt.Fprintf(w, "%12s %6d %-8s %s\n", changes[ci].Time, changes[ci].Event, "state", changes[ci].State)
			ci++
		}
	}
	fmt.Fprintf(w, "== %s / %s, seed %d (time: simulated, event number, node, record)\n", r.Scenario, r.Variant, r.Seed)
	for i, rec := range recs {
		if i > 0 && rec.Event != recs[i-1].Event {
			flush(recs[i-1].Event)
		}
		if !everything && (noisy[rec.Kind] || strings.HasPrefix(rec.Kind, "zk-session")) {
			continue
		}
		fmt.Fprintln(w, rec.String())
	}
	flush(^uint64(0))
}

func exportDisks(w *sim.World, dir string) error {
	for i := 0; i < w.Nodes(); i++ {
		id := sim.NodeID(i)
		name := w.Name(id)
		if !strings.HasPrefix(name, "b") && !strings.HasPrefix(name, "c") {
			continue // brokers and KRaft controllers have disks
		}
		if w.Disk(id) == nil {
			continue
		}
		if err := w.Disk(id).Export(filepath.Join(dir, name), false); err != nil {
			return err
		}
	}
	return nil
}

// exitError carries a specific exit code.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }
