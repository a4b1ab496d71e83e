package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// replayLine returns the arguments of the last "replay: kafkasim ..." line
// of out (without "kafkasim").
func replayLine(t *testing.T, out string) []string {
	t.Helper()
	var line string
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "replay: kafkasim "); i >= 0 {
			line = l[i+len("replay: kafkasim "):]
		}
	}
	if line == "" {
		t.Fatalf("no replay command in\n%s", out)
	}
	return strings.Fields(line)
}

// userScript copies a built-in script into dir as mine.txt, the way a user
// writes a scenario of their own.
func userScript(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile("../../scenarios/scripts/kip101-hw-lag.txt")
	if err != nil {
		t.Fatal(err)
	}
	// A user's own script without expect lines: the contract alone judges
	// it, so the hw variant's loss exits 1.
	data = regexp.MustCompile(`(?m)^expect .*\n`).ReplaceAll(data, nil)
	if err := os.WriteFile(filepath.Join(dir, "mine.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReplayCommandsRunAsPrinted: issue 13. Every printed replay command of
// a file scenario names the script by its absolute path and a choice file
// by its real path, and runs as printed from another directory (it used to
// say "-scenario mine", an unknown scenario, and "-choices FILE").
func TestReplayCommandsRunAsPrinted(t *testing.T) {
	work, elsewhere := t.TempDir(), t.TempDir()
	userScript(t, work)
	script := filepath.Join(work, "mine.txt")
	t.Chdir(work)

	code, out, errOut := runCmd("run", "-scenario", "mine.txt", "-variant", "hw")
	if code != 1 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	want := []string{"replay", "-scenario", script, "-variant", "hw", "-seed", "1"}
	if diff := cmp.Diff(want, replayLine(t, out)); diff != "" {
		t.Errorf("run's replay command (-want +got):\n%s", diff)
	}

	code, out, errOut = runCmd("explore", "-scenario", "mine.txt", "-variant", "hw", "-depth", "8", "-checkers", "acked-loss", "-save", "x.choices")
	if code != 1 {
		t.Fatalf("explore: exit %d\n%s%s", code, out, errOut)
	}
	choices := filepath.Join(work, "x.choices")
	exploreCmd := replayLine(t, out)
	want = []string{"replay", "-scenario", script, "-variant", "hw", "-choices", choices}
	if diff := cmp.Diff(want, exploreCmd); diff != "" {
		t.Errorf("explore's replay command (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(choices)
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(data), "\n")
	if diff := cmp.Diff("# kafkasim choice list: kafkasim "+strings.Join(want, " "), header); diff != "" {
		t.Errorf("the choice file's header (-want +got):\n%s", diff)
	}

	code, out, errOut = runCmd("shrink", "-scenario", "mine.txt", "-choices", "x.choices", "-save", "s.choices")
	if code != 0 {
		t.Fatalf("shrink: exit %d\n%s%s", code, out, errOut)
	}
	shrinkCmd := replayLine(t, out)
	want = []string{"replay", "-scenario", script, "-variant", "hw", "-choices", filepath.Join(work, "s.choices")}
	if diff := cmp.Diff(want, shrinkCmd); diff != "" {
		t.Errorf("shrink's replay command (-want +got):\n%s", diff)
	}

	// Each command runs as printed from another directory, and a replay
	// prints itself again.
	t.Chdir(elsewhere)
	for _, args := range [][]string{exploreCmd, shrinkCmd} {
		code, out, errOut := runCmd(args...)
		if code != 1 || !strings.Contains(out, "acked-loss       violation") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		if diff := cmp.Diff(args, replayLine(t, out)); diff != "" {
			t.Errorf("%v prints another replay command (-want +got):\n%s", args, diff)
		}
	}
}

// TestBuiltinReplayCommandNamesTheScenario: a built-in scenario stays a
// name in its replay command.
func TestBuiltinReplayCommandNamesTheScenario(t *testing.T) {
	code, out, errOut := runCmd("run", "-scenario", "kip101-hw-lag", "-variant", "hw")
	if code != 0 { // the variant expects its bug
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	want := []string{"replay", "-scenario", "kip101-hw-lag", "-variant", "hw", "-seed", "1"}
	if diff := cmp.Diff(want, replayLine(t, out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestEditedChoiceFilesExitTwo: issue 13. A choice file whose alternative
// count or kind was changed, or whose seed or a choice was edited, is bad
// input with a named error, never a panic nor a silent replay.
func TestEditedChoiceFilesExitTwo(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.choices")
	if code, out, errOut := runCmd("explore", "-scenario", "kip101-hw-lag", "-variant", "hw", "-depth", "8", "-checkers", "acked-loss", "-save", file); code != 1 {
		t.Fatalf("explore: exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	firstOf := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return i
			}
		}
		t.Fatalf("no %q line in\n%s", prefix, data)
		return 0
	}
	edit := func(name string, i int, line string) string {
		out := append([]string(nil), lines...)
		out[i] = line
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fault := firstOf("fault:")
	idx, _, _ := strings.Cut(strings.TrimPrefix(lines[fault], "fault:"), "/")
	var lastOrder int
	for i, l := range lines {
		if l == "order:0/2" {
			lastOrder = i
		}
	}
	for _, c := range []struct {
		name, file string
		cmds       [][]string
		want       []string
	}{
		{"alternatives", edit("n.choices", fault, "fault:"+idx+"/9"), [][]string{{"run"}, {"replay"}, {"shrink"}},
			[]string{"n.choices:" + strconv.Itoa(fault+1), "fault choice of", "the file says 9"}},
		{"kind", edit("k.choices", fault, "order:"+idx+"/"+strings.Split(lines[fault], "/")[1]), [][]string{{"run"}, {"shrink"}},
			[]string{"k.choices:" + strconv.Itoa(fault+1), "asked for a fault choice", "holds a order choice"}},
		{"seed", edit("s.choices", firstOf("seed "), "seed 7"), [][]string{{"run"}, {"replay"}, {"shrink"}},
			[]string{"header-sum", "was edited"}},
		{"a choice", edit("c.choices", lastOrder, "order:1/2"), [][]string{{"replay"}, {"shrink"}},
			[]string{"does not replay: trace hash"}},
	} {
		for _, cmd := range c.cmds {
			args := append(cmd, "-scenario", "kip101-hw-lag", "-choices", c.file)
			code, out, errOut := runCmd(args...)
			if code != 2 {
				t.Errorf("%s: %v: exit %d, want 2\n%s%s", c.name, cmd, code, out, errOut)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("%s: %v: stderr %q lacks %q", c.name, cmd, errOut, w)
				}
			}
		}
	}
}

// TestFlagBoundsExitTwo: issue 13. Flags out of their bounds are bad input
// that names the bound.
func TestFlagBoundsExitTwo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"suite", "-budget", "-1s"}, "-budget -1s: must be positive"},
		{[]string{"explore", "-scenario", "kip101-hw-lag", "-max-runs", "-1"}, "-max-runs -1"},
		{[]string{"explore", "-scenario", "kip101-hw-lag", "-faults", ""}, "name at least one of"},
		{[]string{"explore", "-scenario", "kip101-hw-lag", "-faults", " , "}, "name at least one of"},
		{[]string{"kernel", "-seed", "18446744073709551615", "-seeds", "2"}, "the last seed would pass"},
	} {
		code, out, errOut := runCmd(c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q\n%s%s", c.args, code, c.want, out, errOut)
		}
	}
}
