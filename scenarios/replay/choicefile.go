package replay

// This file reads and writes choice files: a saved run as the list of every
// decision its chooser made, with a header that says what it was a run of.
// Replaying a file checks the header against the scenario (name, variant,
// configuration, kafkasim version) and the choices against the run's
// requests (kind and number of alternatives, none left over, none missing):
// any difference is a *ChoiceMismatch. The seed still drives the nodes' own
// random streams, so the header also records the run's trace hash, and a
// replay whose trace hash differs (an edited choice that still fits) is
// refused as well; a header-sum seals the header lines (an edited seed
// may change nothing in a run that never draws from the nodes' streams).
//
//	# kafkasim choice list: kafkasim replay -scenario kip101-hw-lag -variant hw -choices /tmp/x.choices
//	kafkasim-choices 1
//	version 0.8.0-dev
//	scenario kip101-hw-lag
//	variant hw
//	seed 1
//	trace-hash 3f2a9c0d17b4e851
//	explore depth=12 records=2 faults=crash,power-loss,elect acks=all
//	config inter.broker.protocol.version=0.10.2 truncation=hw
//	header-sum 9b1e0c55a3d2f47e
//	choices 3
//	fault:1/6
//	order:1/2
//	fault:4/7

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios/workload"

	"github.com/kafkasim/kafkasim/scenarios/harness"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/explore"
	"github.com/kafkasim/kafkasim/sim"
)

// Version is the kafkasim version written into choice files: a file saved
// by another version may not replay, and is refused.
const Version = "0.8.0-dev"

const choiceMagic = "kafkasim-choices 1"

// ChoiceFile is a saved run.
type ChoiceFile struct {
	Scenario string
	Variant  string
	Seed     uint64
	// Explore is set for a run of the exploration workload; nil for a run
	// of the script's own steps.
	Explore *workload.ExploreParams
	Config  []string // the non-default configuration, key=value, as Result.Config
	Version string
	// TraceHash is the trace hash of the run the choices make: a replay
	// must reproduce it. 0 while unknown (a file built in memory before
	// its first replay); a file read from disk always has one.
	TraceHash uint64
	Choices   []sim.Choice
	// Lines are the line numbers of the choices in the file read (nil for
	// a file built in memory).
	Lines []int
	// Script is the -scenario argument of the file's replay command
	// (Script.ReplayName); "" means Scenario.
	Script string
	// Set are the -set flags of the saved run, for the replay command (the
	// config line is what a replay checks).
	Set map[string]string
	// Path is the absolute path the file was saved to or read from; ""
	// for a file only in memory.
	Path string
}

// ChoiceMismatch is a choice file that does not fit the scenario or the
// run: bad input.
type ChoiceMismatch struct{ Msg string }

func (e *ChoiceMismatch) Error() string { return "choice file does not match: " + e.Msg }

// ChoiceReplayError is a choice file whose choices all fit the run but do
// not reproduce the run it recorded (its seed or a choice was edited): bad
// input.
type ChoiceReplayError struct {
	Path      string
	Got, Want uint64
	Seed      uint64
}

func (e *ChoiceReplayError) Error() string {
	path := e.Path
	if path == "" {
		path = "(in memory)"
	}
	return fmt.Sprintf("choice file %s does not replay: trace hash %016x, header says %016x (seed %d: was a choice edited, or the file saved by another build?)",
		path, e.Got, e.Want, e.Seed)
}

// Write writes f in the text format.
func (f *ChoiceFile) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# kafkasim choice list: %s\n", ReplayChoicesCommand(f, f.Set))
	fmt.Fprintln(bw, choiceMagic)
	head := f.header(Version)
	fmt.Fprintf(bw, "%sheader-sum %016x\nchoices %d\n", head, headerSum(head), len(f.Choices))
	for _, c := range f.Choices {
		fmt.Fprintln(bw, c.String())
	}
	return bw.Flush()
}

// header renders the header lines a header-sum covers, as Write writes
// them (version is the file's version).
func (f *ChoiceFile) header(version string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version %s\nscenario %s\nvariant %s\nseed %d\n", version, f.Scenario, f.Variant, f.Seed)
	if f.TraceHash != 0 {
		fmt.Fprintf(&b, "trace-hash %016x\n", f.TraceHash)
	}
	if f.Explore != nil {
		fmt.Fprintf(&b, "explore %s\n", f.Explore)
	}
	fmt.Fprintf(&b, "config %s\n", strings.Join(f.Config, " "))
	return b.String()
}

// headerSum is the FNV-1a hash of a rendered header. NB: it seals the
// header against edits the replay cannot see: the seed drives only the
// nodes' own random streams (the sticky partitioner), so a run may well
// not depend on it, and the trace hash would not notice an edited seed.
func headerSum(head string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(head))
	return h.Sum64()
}

// Save writes f to path (whole or not at all: through a temporary file
// renamed into place) and sets f.Path to its absolute path.
func (f *ChoiceFile) Save(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if filepath.IsAbs(path) {
		abs = path // as given
	}
	old := f.Path
	f.Path = abs
	tmp := path + ".tmp"
	out, err := os.Create(tmp)
	if err == nil {
		err = f.Write(out)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, path)
		}
		if err != nil {
			os.Remove(tmp)
		}
	}
	if err != nil {
		f.Path = old
	}
	return err
}

// ReadChoiceFile parses a choice file; errors are *ChoiceMismatch.
func ReadChoiceFile(r io.Reader) (*ChoiceFile, error) {
	sc := bufio.NewScanner(r)
	f := &ChoiceFile{}
	line, want := 0, -1
	bad := func(format string, args ...any) error {
		return &ChoiceMismatch{fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)}
	}
	magic := false
	sum, sumLine := "", 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if !magic {
			if text != choiceMagic {
				return nil, bad("not a choice file (want %q first)", choiceMagic)
			}
			magic = true
			continue
		}
		if want >= 0 {
			c, err := explore.ParseChoice(text)
			if err != nil {
				return nil, bad("%v", err)
			}
			f.Choices = append(f.Choices, c)
			f.Lines = append(f.Lines, line)
			continue
		}
		key, val, _ := strings.Cut(text, " ")
		var err error
		switch key {
		case "version":
			f.Version = val
		case "scenario":
			f.Scenario = val
		case "variant":
			f.Variant = val
		case "seed":
			f.Seed, err = strconv.ParseUint(val, 10, 64)
		case "trace-hash":
			f.TraceHash, err = strconv.ParseUint(val, 16, 64)
			if err == nil && f.TraceHash == 0 {
				err = fmt.Errorf("0 is no trace hash")
			}
		case "header-sum":
			sum, sumLine = val, line
		case "explore":
			var p workload.ExploreParams
			p, err = workload.ParseExploreParams(val)
			f.Explore = &p
		case "config":
			f.Config = strings.Fields(val)
		case "choices":
			want, err = strconv.Atoi(val)
			if err == nil && want < 0 {
				err = fmt.Errorf("negative count")
			}
		default:
			return nil, bad("unknown header %q (allowed: version, scenario, variant, seed, trace-hash, explore, config, header-sum, choices)", key)
		}
		if err != nil {
			return nil, bad("%s: %v", key, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	switch {
	case !magic:
		return nil, &ChoiceMismatch{"empty file"}
	case want < 0:
		return nil, &ChoiceMismatch{"no 'choices N' line"}
	case len(f.Choices) != want:
		return nil, &ChoiceMismatch{fmt.Sprintf("the header announces %d choices, the file holds %d", want, len(f.Choices))}
	case f.Scenario == "" || f.Variant == "":
		return nil, &ChoiceMismatch{"the header lacks the scenario or the variant"}
	case f.TraceHash == 0 || sum == "":
		return nil, &ChoiceMismatch{"the header has no 'trace-hash H' or no 'header-sum H' line: the replay could not be verified (save the run again with explore or shrink)"}
	}
	if want := fmt.Sprintf("%016x", headerSum(f.header(f.Version))); sum != want {
		line = sumLine
		return nil, bad("header-sum %s, but the header lines hash to %s: the header (the seed, the variant, the configuration, ...) was edited after saving, and a choice file replays only as saved", sum, want)
	}
	return f, nil
}

// LoadChoiceFile reads a choice file from path.
func LoadChoiceFile(path string) (*ChoiceFile, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, &ChoiceMismatch{err.Error()}
	}
	defer in.Close()
	f, err := ReadChoiceFile(in)
	if m, ok := err.(*ChoiceMismatch); ok {
		m.Msg = path + ": " + m.Msg
	}
	if err != nil {
		return nil, err
	}
	if f.Path, err = filepath.Abs(path); err != nil {
		return nil, &ChoiceMismatch{path + ": " + err.Error()}
	}
	if filepath.IsAbs(path) {
		f.Path = path // as given
	}
	return f, nil
}

// StrictReplay is a chooser that replays a choice file exactly: a choice
// of another kind, another number of alternatives or past the file's end
// panics (the world turns the panic into a failed run) and is remembered
// for Verify.
type StrictReplay struct {
	file    *ChoiceFile
	choices []sim.Choice
	lines   []int  // the choices' lines in the file (may be nil)
	path    string // the file ("" in memory)
	pos     int
	err     *ChoiceMismatch
	// under is the variant the schedule runs under when it is not the
	// file's own (RunChoiceFileUnder): a choice that does not fit is then
	// named as the schedule not fitting that variant.
	under string
}

// NewStrictReplay returns a chooser that replays f's choices exactly.
func NewStrictReplay(f *ChoiceFile) *StrictReplay {
	return &StrictReplay{file: f, choices: f.Choices, lines: f.Lines, path: f.Path}
}

// Verify reports whether res, the run that used the replay, is the run
// the file saved: the first choice that did not fit (a *ChoiceMismatch),
// a choice count other than the file's (a *ChoiceMismatch) or another
// trace hash (a *ChoiceReplayError); nil if it is. Under another variant
// (RunChoiceFileUnder) the trace hash is not checked: the file's is the
// hash of its own variant's run.
func (s *StrictReplay) Verify(res *harness.Result) error {
	f := s.file
	switch {
	case s.err != nil:
		return s.err
	case s.pos != len(s.choices) && s.under != "":
		return &ChoiceMismatch{fmt.Sprintf("%s: the run under variant %s made %d choices, the schedule from variant %s holds %d (%d left over) — the schedule does not fit this variant",
			s.pathName(), s.under, s.pos, f.Variant, len(s.choices), len(s.choices)-s.pos)}
	case s.pos != len(s.choices):
		return &ChoiceMismatch{fmt.Sprintf("the run made %d choices, the file holds %d", s.pos, len(s.choices))}
	case s.under == "" && f.TraceHash != 0 && res.TraceHash != f.TraceHash:
		return &ChoiceReplayError{Path: f.Path, Got: res.TraceHash, Want: f.TraceHash, Seed: f.Seed}
	}
	return nil
}

// where names choice i (0-based) for an error: its number and its line.
func (s *StrictReplay) where(i int) string {
	at := fmt.Sprintf("choice %d", i+1)
	if i < len(s.lines) {
		file := s.path
		if file == "" {
			file = "line"
		}
		at += fmt.Sprintf(" (%s:%d)", file, s.lines[i])
	}
	return at
}

func (s *StrictReplay) Choose(k sim.Kind, n int) int {
	if s.err != nil {
		panic(s.err)
	}
	if s.under != "" {
		return s.chooseUnder(k, n)
	}
	if s.pos >= len(s.choices) {
		s.err = &ChoiceMismatch{fmt.Sprintf("the run asked for choice %d (%s of %d) but the file holds only %d", s.pos+1, k, n, len(s.choices))}
		panic(s.err)
	}
	c := s.choices[s.pos]
	switch {
	case c.Kind != k:
		s.err = &ChoiceMismatch{fmt.Sprintf("%s is %v: the run asked for a %s choice (of %d alternatives), the file holds a %s choice", s.where(s.pos), c, k, n, c.Kind)}
	case c.N != n:
		s.err = &ChoiceMismatch{fmt.Sprintf("%s is %v: the run asked for a %s choice of %d alternatives, the file says %d", s.where(s.pos), c, k, n, c.N)}
	case c.Index < 0 || c.Index >= n:
		s.err = &ChoiceMismatch{fmt.Sprintf("%s is %v: alternative %d is out of range [0, %d)", s.where(s.pos), c, c.Index, n)}
	}
	if s.err != nil {
		panic(s.err)
	}
	s.pos++
	return c.Index
}

func (s *StrictReplay) Chance(k sim.Kind, p float64) bool { return s.Choose(k, 2) == 1 }

// CheckHeader compares the file's header with the scenario and its
// configuration under set.
func CheckHeader(s *scenarios.Script, f *ChoiceFile, set map[string]string) error {
	if f.Version != Version {
		return &ChoiceMismatch{fmt.Sprintf("saved by kafkasim %s, this is %s", f.Version, Version)}
	}
	if f.Scenario != s.Name {
		return &ChoiceMismatch{fmt.Sprintf("saved for scenario %s, not %s", f.Scenario, s.Name)}
	}
	_, cfg, err := harness.Prepare(s, f.Variant, set)
	if err != nil {
		return &ChoiceMismatch{err.Error()}
	}
	if got, want := strings.Join(cfg.NonDefaultPairs(), " "), strings.Join(f.Config, " "); got != want {
		return &ChoiceMismatch{fmt.Sprintf("saved with configuration [%s], this run has [%s] (give the same -set flags)", want, got)}
	}
	return nil
}

// RunChoiceFile replays a saved run exactly. A header or a choice that does
// not fit is a *ChoiceMismatch.
func RunChoiceFile(s *scenarios.Script, f *ChoiceFile, set map[string]string, opts harness.Options) (*harness.Result, error) {
	if err := CheckHeader(s, f, set); err != nil {
		return nil, err
	}
	rp := NewStrictReplay(f)
	opts.Seed, opts.Set, opts.Chooser = f.Seed, set, rp
	var res *harness.Result
	var err error
	if f.Explore != nil {
		res, err = workload.ExploreRun(s, f.Variant, *f.Explore, opts, nil)
	} else {
		res, err = harness.Run(s, f.Variant, opts)
	}
	if err != nil {
		return nil, err
	}
	if err := rp.Verify(res); err != nil {
		return nil, err
	}
	g := *f
	g.Script = s.ReplayName()
	res.Replay = ReplayChoicesCommand(&g, set)
	return res, nil
}

// ReplayChoicesCommand is the command line that replays the choice file f:
// the file's path is f.Path (FILE while it is only in memory).
func ReplayChoicesCommand(f *ChoiceFile, set map[string]string) string {
	scenario := f.Script
	if scenario == "" {
		scenario = f.Scenario
	}
	cmd := harness.ReplayCommand(scenario, f.Variant, f.Seed, set)
	path := "FILE"
	if f.Path != "" {
		path = harness.ShellQuote(f.Path)
	}
	return strings.Replace(cmd, fmt.Sprintf(" -seed %d", f.Seed), "", 1) + " -choices " + path
}
