package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafkasim/kafkasim/scenarios"
)

// variantNames lists a script's variants.
func variantNames(s *scenarios.Script) []string {
	var out []string
	for _, v := range s.Variants {
		out = append(out, v.Name+" "+scenarios.SetLabel(v.Props))
	}
	return out
}

// TestExploreScriptReplaysTheLoss: issue 13. explore -script writes hw's
// explored KIP-101 loss as a scenario script with the scenario's variants;
// it parses and validates, hw still loses m1 from it (at every seed tried:
// the seed draws only the order of simultaneous events), and kip279 — whose
// run the choice file does not fit — survives it.
func TestExploreScriptReplaysTheLoss(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "hw-loss.txt")
	code, out, errOut := runCmd("explore", "-scenario", "kip101-hw-lag", "-variant", "hw", "-depth", "8", "-checkers", "acked-loss",
		"-save", filepath.Join(dir, "hw.choices"), "-script", script, "-progress", "none")
	if code != 1 || !strings.Contains(out, "script saved to "+script) {
		t.Fatalf("explore: exit %d\n%s%s", code, out, errOut)
	}
	s, err := scenarios.Load(script)
	if err != nil {
		t.Fatalf("the written script does not load: %v", err)
	}
	orig, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(variantNames(orig), variantNames(s)); diff != "" {
		t.Errorf("the script's variants (-original +written):\n%s", diff)
	}
	data, _ := os.ReadFile(script)
	for _, want := range []string{"# What this script does not express", "controller manual", "set kafkasim.link.latency.ms=1 ", "\ncrash b1\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the script lacks %q:\n%s", want, data)
		}
	}
	for seed := 1; seed <= 3; seed++ {
		code, out, errOut := runCmd("run", "-scenario", script, "-variant", "hw", "-seed", strconv.Itoa(seed))
		if code != exitViolation || !strings.Contains(out, "acked-loss       violation") {
			t.Errorf("hw, seed %d: exit %d, want 1 and the loss\n%s%s", seed, code, out, errOut)
		}
	}
	code, out, errOut = runCmd("run", "-scenario", script, "-variant", "kip279")
	if code != exitOK {
		t.Errorf("kip279: exit %d, want 0\n%s%s", code, out, errOut)
	}
	code, out, _ = runCmd("run", "-scenario", script)
	if code != exitViolation || strings.Count(out, "scenario kip101-hw-lag-schedule, variant ") != 3 {
		t.Errorf("every variant: exit %d\n%s", code, out)
	}
}

// TestShrinkScriptWritesTheShrunkSchedule: shrink -script writes the
// minimized run, which still fails hw.
func TestShrinkScriptWritesTheShrunkSchedule(t *testing.T) {
	dir := t.TempDir()
	file := exploreHW(t, dir, "hw.choices")
	script := filepath.Join(dir, "short.txt")
	code, out, errOut := runCmd("shrink", "-scenario", "kip101-hw-lag", "-choices", file, "-save", filepath.Join(dir, "s.choices"), "-script", script, "-progress", "none")
	if code != 0 || !strings.Contains(out, "script saved to "+script) {
		t.Fatalf("shrink: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd("run", "-scenario", script, "-variant", "hw")
	if code != exitViolation || !strings.Contains(out, "acked-loss       violation") {
		t.Errorf("hw: exit %d\n%s%s", code, out, errOut)
	}
}

// TestScheduleScriptGap: what holds where the script does not reproduce
// the explored violation. KAFKA-6361's explored divergence under kip101
// depends on where within an instant the explorer acted and on the order
// of simultaneous events, which a script cannot say (README, "Model
// checking"): the written script parses and runs under every variant (no
// bad input, no run that could not be carried out), and kip279 converges.
func TestScheduleScriptGap(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "ff.txt")
	if code, out, errOut := runCmd("explore", "-scenario", "kip279-fast-failover", "-variant", "kip101", "-depth", "9",
		"-save", filepath.Join(dir, "ff.choices"), "-script", script, "-progress", "none"); code != 1 {
		t.Fatalf("explore: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runCmd("run", "-scenario", script)
	if code == exitBadInput || code == exitRunFailed {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runCmd("run", "-scenario", script, "-variant", "kip279"); code != exitOK {
		t.Errorf("kip279: exit %d\n%s", code, out)
	}
}

// TestScriptFlagBadInput: -script where it cannot be written, or for a run
// without an explored schedule, is bad input before anything runs, and no
// file is left behind.
func TestScriptFlagBadInput(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "x.txt")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explore", "-scenario", "kip101-hw-lag", "-script", filepath.Join(dir, "no", "x.txt")}, "the directory " + filepath.Join(dir, "no") + " does not exist"},
		{[]string{"explore", "-scenario", "kip101-hw-lag", "-script", dir}, "a directory; want the path of a file"},
		{[]string{"shrink", "-scenario", "kip101-hw-lag", "-variant", "hw", "-seed", "1", "-script", script, "-save", filepath.Join(dir, "s.choices")}, "-script writes the schedule of an explored run"},
		{[]string{"run", "-scenario", "kip101-hw-lag", "-set", "kafkasim.link.latency.ms=0"}, "kafkasim.link.latency.ms=\"0\": want a positive integer"},
	} {
		code, out, errOut := runCmd(c.args...)
		if code != exitBadInput || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q\n%s%s", c.args, code, c.want, out, errOut)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("bad input left files behind: %v", entries)
	}
}
