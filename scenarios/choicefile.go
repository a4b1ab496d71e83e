package scenarios

// This file reads and writes choice files: a saved run as the list of every
// decision its chooser made, with a header that says what it was a run of.
// Replaying a file checks the header against the scenario (name, variant,
// configuration, kafkasim version) and the choices against the run's
// requests (kind and number of alternatives, none left over, none missing):
// any difference is a *ChoiceMismatch.
//
//	# kafkasim choice list
//	kafkasim-choices 1
//	version 0.8.0-dev
//	scenario kip101-hw-lag
//	variant hw
//	seed 1
//	explore depth=12 records=2 faults=crash,power-loss,elect acks=all
//	config inter.broker.protocol.version=0.10.2 truncation=hw
//	choices 3
//	fault:1/6
//	order:1/2
//	fault:4/7

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

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
	Explore *ExploreParams
	Config  []string // the non-default configuration, key=value, as Result.Config
	Version string
	Choices []sim.Choice
}

// ChoiceMismatch is a choice file that does not fit the scenario or the
// run: bad input.
type ChoiceMismatch struct{ Msg string }

func (e *ChoiceMismatch) Error() string { return "choice file does not match: " + e.Msg }

// Write writes f in the text format.
func (f *ChoiceFile) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# kafkasim choice list: kafkasim replay -scenario %s -variant %s -choices FILE\n", f.Scenario, f.Variant)
	fmt.Fprintln(bw, choiceMagic)
	fmt.Fprintf(bw, "version %s\nscenario %s\nvariant %s\nseed %d\n", Version, f.Scenario, f.Variant, f.Seed)
	if f.Explore != nil {
		fmt.Fprintf(bw, "explore %s\n", f.Explore)
	}
	fmt.Fprintf(bw, "config %s\nchoices %d\n", strings.Join(f.Config, " "), len(f.Choices))
	for _, c := range f.Choices {
		fmt.Fprintln(bw, c.String())
	}
	return bw.Flush()
}

// Save writes f to path.
func (f *ChoiceFile) Save(path string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f.Write(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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
		case "explore":
			var p ExploreParams
			p, err = ParseExploreParams(val)
			f.Explore = &p
		case "config":
			f.Config = strings.Fields(val)
		case "choices":
			want, err = strconv.Atoi(val)
			if err == nil && want < 0 {
				err = fmt.Errorf("negative count")
			}
		default:
			return nil, bad("unknown header %q (allowed: version, scenario, variant, seed, explore, config, choices)", key)
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
	return f, err
}

// strictReplay replays a choice list exactly and remembers the first
// mismatch (the world also turns the panic into a failed run).
type strictReplay struct {
	choices []sim.Choice
	pos     int
	err     *ChoiceMismatch
}

func (s *strictReplay) Choose(k sim.Kind, n int) int {
	if s.err != nil {
		panic(s.err)
	}
	if s.pos >= len(s.choices) {
		s.err = &ChoiceMismatch{fmt.Sprintf("the run asked for choice %d (%s of %d) but the file holds only %d", s.pos+1, k, n, len(s.choices))}
		panic(s.err)
	}
	c := s.choices[s.pos]
	if c.Kind != k || c.N != n || c.Index >= n {
		s.err = &ChoiceMismatch{fmt.Sprintf("choice %d is %v, but the run asked for %s with %d alternatives", s.pos+1, c, k, n)}
		panic(s.err)
	}
	s.pos++
	return c.Index
}

func (s *strictReplay) Chance(k sim.Kind, p float64) bool { return s.Choose(k, 2) == 1 }

// CheckHeader compares the file's header with the scenario and its
// configuration under set.
func (s *Script) CheckHeader(f *ChoiceFile, set map[string]string) error {
	if f.Version != Version {
		return &ChoiceMismatch{fmt.Sprintf("saved by kafkasim %s, this is %s", f.Version, Version)}
	}
	if f.Scenario != s.Name {
		return &ChoiceMismatch{fmt.Sprintf("saved for scenario %s, not %s", f.Scenario, s.Name)}
	}
	_, cfg, err := s.Prepare(f.Variant, set)
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
func (s *Script) RunChoiceFile(f *ChoiceFile, set map[string]string, opts Options) (*Result, error) {
	if err := s.CheckHeader(f, set); err != nil {
		return nil, err
	}
	rp := &strictReplay{choices: f.Choices}
	opts.Seed, opts.Set, opts.Chooser = f.Seed, set, rp
	var res *Result
	var err error
	if f.Explore != nil {
		res, err = s.ExploreRun(f.Variant, *f.Explore, opts, nil)
	} else {
		res, err = s.Run(f.Variant, opts)
	}
	if err != nil {
		return nil, err
	}
	if rp.err != nil {
		return nil, rp.err
	}
	if rp.pos != len(rp.choices) {
		return nil, &ChoiceMismatch{fmt.Sprintf("the run made %d choices, the file holds %d", rp.pos, len(rp.choices))}
	}
	res.Replay = ReplayChoicesCommand(f, set)
	return res, nil
}

// ReplayChoicesCommand is the command line that replays a choice file
// saved as FILE.
func ReplayChoicesCommand(f *ChoiceFile, set map[string]string) string {
	cmd := ReplayCommand(f.Scenario, f.Variant, f.Seed, set)
	return strings.Replace(cmd, fmt.Sprintf(" -seed %d", f.Seed), "", 1) + " -choices FILE"
}
