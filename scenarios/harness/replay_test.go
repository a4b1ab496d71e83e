package harness

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
	got := map[string]string{"name": s.Name, "path": s.Path, "replay": ReplayCommand(s.ReplayName(), "default", 3, map[string]string{"$x": "1", "acks": "all"})}
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
	res := runOK(t, s, "safe", Options{Seed: 5, RecordChoices: true})
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
	_, err = RunChoiceFile(s, g, nil, Options{})
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
