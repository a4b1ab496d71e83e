package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exploreHW saves the explored KIP-101 loss of kip101-hw-lag/hw (the
// TLA+ alphabet, depth 8) to dir/name and returns its path.
func exploreHW(t *testing.T, dir, name string) string {
	t.Helper()
	file := filepath.Join(dir, name)
	if code, out, errOut := runCmd("explore", "-scenario", "kip101-hw-lag", "-variant", "hw", "-depth", "8", "-checkers", "acked-loss", "-save", file, "-progress", "none"); code != 1 {
		t.Fatalf("explore: exit %d\n%s%s", code, out, errOut)
	}
	return file
}

// TestScheduleUnderAnotherVariant: issue 13. The schedule hw's explored
// loss took runs under kip101 (where it fits): the header says so, the
// trace hash is not checked, kip101 keeps m1, and the printed replay
// command reruns the schedule under kip101.
func TestScheduleUnderAnotherVariant(t *testing.T) {
	file := exploreHW(t, t.TempDir(), "hw.choices")
	code, out, errOut := runCmd("replay", "-scenario", "kip101-hw-lag", "-variant", "kip101", "-choices", file)
	// NB: an explored run has no end phase, so liveness is unknown: 3.
	if code != exitUnknown {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitUnknown, out, errOut)
	}
	for _, want := range []string{
		"scenario kip101-hw-lag, variant kip101, seed 1:",
		"  schedule from variant hw, run under kip101 (the trace hash is not checked",
		"  acked-loss       ok",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runCmd("run", "-scenario", "kip101-hw-lag", "-variant", "kip101", "-choices", file, "-json")
	if code != exitUnknown {
		t.Fatalf("-json: exit %d\n%s%s", code, out, errOut)
	}
	var got struct {
		Variant      string `json:"variant"`
		ScheduleFrom string `json:"schedule_from"`
		Replay       string `json:"replay"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := struct {
		Variant      string `json:"variant"`
		ScheduleFrom string `json:"schedule_from"`
		Replay       string `json:"replay"`
	}{"kip101", "hw", "kafkasim replay -scenario kip101-hw-lag -variant kip101 -choices " + file}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-json (-want +got):\n%s", diff)
	}

	// Under its own variant, the file replays exactly as before: no
	// schedule line, and the violation it saved.
	code, out, _ = runCmd("run", "-scenario", "kip101-hw-lag", "-variant", "hw", "-choices", file)
	if code != exitViolation || strings.Contains(out, "schedule from") || !strings.Contains(out, "acked-loss       violation") {
		t.Errorf("under hw: exit %d\n%s", code, out)
	}
}

// misfit is the message of a schedule that does not fit a variant.
var misfit = regexp.MustCompile(`choice \d+ \(.*\.choices:\d+\): recorded [a-z-]+:\d+/\d+, variant kip279 asks [a-z-]+:\?/\d+ — the schedule does not fit this variant`)

// TestScheduleThatDoesNotFitExitsTwo: issue 13. Under kip279 the hw
// schedule's choices stop fitting (kip279 sends OffsetsForLeaderEpoch where
// hw truncates to its HW, so other events fall due together): run, replay
// and shrink refuse it as bad input naming the choice, what was recorded
// and what the variant asked for, and print no verdicts.
func TestScheduleThatDoesNotFitExitsTwo(t *testing.T) {
	dir := t.TempDir()
	file := exploreHW(t, dir, "hw.choices")
	for _, cmd := range []string{"run", "replay", "shrink"} {
		code, out, errOut := runCmd(cmd, "-scenario", "kip101-hw-lag", "-variant", "kip279", "-choices", file, "-save", filepath.Join(dir, "no.choices"))
		if cmd != "shrink" {
			code, out, errOut = runCmd(cmd, "-scenario", "kip101-hw-lag", "-variant", "kip279", "-choices", file)
		}
		if code != exitBadInput || !misfit.MatchString(errOut) {
			t.Errorf("%s: exit %d, want 2 and a message matching %s\n%s%s", cmd, code, misfit, out, errOut)
		}
		if out != "" {
			t.Errorf("%s: printed %q for a schedule that does not fit", cmd, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "no.choices")); !os.IsNotExist(err) {
		t.Errorf("shrink wrote a choice file for a schedule that does not fit (%v)", err)
	}

	// A variant the scenario lacks is named with the allowed ones.
	code, _, errOut := runCmd("replay", "-scenario", "kip101-hw-lag", "-variant", "kip999", "-choices", file)
	if code != exitBadInput || !strings.Contains(errOut, `no variant "kip999" (allowed: hw, kip101, kip279)`) {
		t.Errorf("unknown variant: exit %d: %s", code, errOut)
	}
}

// TestScheduleLeftOverOrShortExitsTwo: a schedule with a choice more, or
// one less, than the other variant's run makes does not fit either; under
// its own variant the extra choice is caught as before.
func TestScheduleLeftOverOrShortExitsTwo(t *testing.T) {
	dir := t.TempDir()
	file := exploreHW(t, dir, "hw.choices")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	count := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "choices ") {
			count = i
		}
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(lines[count], "choices "))
	write := func(name string, body []string, k int) string {
		out := append([]string(nil), body...)
		out[count] = "choices " + strconv.Itoa(k)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	extra := write("extra.choices", append(append([]string(nil), lines...), "order:0/2"), n+1)
	short := write("short.choices", lines[:len(lines)-1], n-1)
	for _, c := range []struct {
		file, variant, want string
	}{
		{extra, "kip101", "(1 left over) — the schedule does not fit this variant"},
		{short, "kip101", "the schedule from variant hw ends after " + strconv.Itoa(n-1) + " choices, variant kip101 asks"},
		{extra, "hw", "the run made " + strconv.Itoa(n) + " choices, the file holds " + strconv.Itoa(n+1)},
	} {
		code, out, errOut := runCmd("replay", "-scenario", "kip101-hw-lag", "-variant", c.variant, "-choices", c.file)
		if code != exitBadInput || !strings.Contains(errOut, c.want) {
			t.Errorf("%s under %s: exit %d, want 2 and %q\n%s%s", filepath.Base(c.file), c.variant, code, c.want, out, errOut)
		}
	}
}
