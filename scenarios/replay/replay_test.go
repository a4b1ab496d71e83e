package replay

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios/harness"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/google/go-cmp/cmp"

	"github.com/kafkasim/kafkasim/sim"
)

// TestReplayCommandOfAFileScenario: issue 13. A script loaded from a file
// replays by its absolute path (quoted for the shell when it must be); a
// built-in one by its name.
func TestReplayCommandOfAFileScenario(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my scenarios")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "brokers 1\ntopic t\nrun 1s\n"
	if err := os.WriteFile(filepath.Join(dir, "mine.txt"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	s, err := scenarios.Load("mine.txt")
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(dir, "mine.txt")
	got := map[string]string{"name": s.Name, "path": s.Path, "replay": harness.ReplayCommand(s.ReplayName(), "default", 3, map[string]string{"$x": "1", "acks": "all"})}
	want := map[string]string{"name": "mine", "path": abs,
		"replay": "kafkasim replay -scenario '" + abs + "' -variant default -seed 3 -set '$x=1' -set acks=all"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	if b.Path != "" || b.ReplayName() != "kip101-hw-lag" {
		t.Errorf("built-in: path %q, replay name %q", b.Path, b.ReplayName())
	}
}

// TestChoiceFileOfTheWrongKindInASwarmStep: issue 13. A swarm step draws
// its profile outside the world's events; a replayed choice that does not
// fit there used to panic the program. It is a *ChoiceMismatch naming the
// choice, its line, and what the run asked for.
func TestChoiceFileOfTheWrongKindInASwarmStep(t *testing.T) {
	s := parseProfileSwarm(t)
	res := runOK(t, s, "safe", harness.Options{Seed: 5, RecordChoices: true})
	choices := res.World.Choices()
	first := -1
	for i, c := range choices {
		if c.Kind == sim.KindProfile {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("no profile choice")
	}
	choices[first].N++ // the alternatives the profile was drawn from changed
	f := &ChoiceFile{Version: Version, Scenario: s.Name, Variant: "safe", Seed: 5, Config: res.Config, TraceHash: res.TraceHash, Choices: choices}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := ReadChoiceFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunChoiceFile(s, g, nil, harness.Options{})
	var m *ChoiceMismatch
	if !errors.As(err, &m) {
		t.Fatalf("got %v, want a *ChoiceMismatch", err)
	}
	for _, w := range []string{"choice " + strconv.Itoa(first+1) + " (line:" + strconv.Itoa(g.Lines[first]) + ")", "profile choice of", "the file says"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%v: lacks %q", err, w)
		}
	}
}

// TestSwarmProfileReplaysFromAChoiceFile: a saved choice list replays the
// run's profile and trace exactly.
func TestSwarmProfileReplaysFromAChoiceFile(t *testing.T) {
	s := parseProfileSwarm(t)
	res := runOK(t, s, "safe", harness.Options{Seed: 5, RecordChoices: true})
	f := &ChoiceFile{Version: Version, Scenario: s.Name, Variant: "safe", Seed: 5, Config: res.Config, TraceHash: res.TraceHash, Choices: res.World.Choices()}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "profile:") {
		t.Fatal("the choice file holds no profile choice")
	}
	g, err := ReadChoiceFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	again, err := RunChoiceFile(s, g, nil, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Profile != res.Profile || again.TraceHash != res.TraceHash {
		t.Fatalf("replayed profile %q (trace %016x), recorded %q (trace %016x)", again.Profile, again.TraceHash, res.Profile, res.TraceHash)
	}
}

// TestSwarmBadProfileIsBadInput: $profile other than swarm or fixed is
// refused before the run, naming the variable and the allowed values.

func parseProfileSwarm(t *testing.T) *scenarios.Script {
	t.Helper()
	s, err := scenarios.Load("../testdata/profile-swarm.txt")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runOK(t *testing.T, s *scenarios.Script, variant string, opts harness.Options) *harness.Result {
	t.Helper()
	res, err := harness.Run(s, variant, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != "" {
		t.Fatalf("seed %d: %s", opts.Seed, res.Failed)
	}
	return res
}
