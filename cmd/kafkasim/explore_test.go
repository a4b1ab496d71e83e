package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExploreFindsLossAndReplaysIt(t *testing.T) {
	file := filepath.Join(t.TempDir(), "loss.choices")
	code, out, _ := runCmd("explore", "-scenario", "kip101-hw-lag", "-variant", "hw", "-depth", "8", "-checkers", "acked-loss", "-save", file)
	if code != 1 || !strings.Contains(out, "violation of acked-loss") || !strings.Contains(out, "is lost") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = runCmd("replay", "-scenario", "kip101-hw-lag", "-choices", file)
	if code != 1 || !strings.Contains(out, "acked-loss       violation") {
		t.Fatalf("replay -choices: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd("shrink", "-scenario", "kip101-hw-lag", "-choices", file, "-save", file+".shrunk")
	if code != 0 || !strings.Contains(out, "acked-loss still fails") || !strings.Contains(out, "replay: kafkasim replay") {
		t.Fatalf("shrink: exit %d\n%s", code, out)
	}
}

func TestExploreBadInput(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(big, []byte("describe five brokers\nbrokers 5\ntopic t partitions=1 rf=3\nrun 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"explore", "-scenario", "kip101-hw-lag", "-depth", "0"},
		{"explore", "-scenario", big, "-depth", "3"},
		{"explore", "-scenario", "kip101-hw-lag", "-faults", "meteor"},
		{"explore", "-scenario", "kip101-hw-lag", "-checkers", "vibes"},
	} {
		if code, _, errOut := runCmd(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}

func TestRunChoicesMismatchIsBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "loss.choices")
	if code, out, _ := runCmd("explore", "-scenario", "kip101-hw-lag", "-variant", "hw", "-depth", "8", "-checkers", "acked-loss", "-save", file); code != 1 {
		t.Fatalf("explore: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCmd("run", "-scenario", "kip279-fast-failover", "-choices", file); code != 2 || !strings.Contains(errOut, "does not match") {
		t.Fatalf("another scenario: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCmd("run", "-scenario", "kip101-hw-lag", "-choices", file, "-set", "min.insync.replicas=2"); code != 2 {
		t.Fatalf("another configuration: exit %d: %s", code, errOut)
	}
	data, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	short := filepath.Join(dir, "short.choices")
	os.WriteFile(short, []byte(strings.Join(lines[:len(lines)-1], "\n")+"\n"), 0o644)
	if code, _, errOut := runCmd("replay", "-scenario", "kip101-hw-lag", "-choices", short); code != 2 {
		t.Fatalf("a truncated file: exit %d: %s", code, errOut)
	}
}
