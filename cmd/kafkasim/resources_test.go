package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// TestMaxMemoryRefusesAnOversizedPlan: a cluster whose estimate passes
// -max-memory is refused before it is built (exit 2), naming the estimate
// and the flag; a larger bound (or 0) lets a small one run.
func TestMaxMemoryRefusesAnOversizedPlan(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, []byte("describe too big\nbrokers 64\ntopic t partitions=10000 rf=64\nrun 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd("run", "-scenario", big)
	for _, want := range []string{"big/default needs about", "640,000 partition replicas", "past -max-memory 8.0 GiB", "-max-memory SIZE"} {
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("run big: exit %d, want 2 and %q in\n%s%s", code, want, out, errOut)
		}
	}
	code, out, errOut = runCmd("run", "-scenario", "acks1-leader-crash", "-variant", "acks1", "-max-memory", "1MiB")
	if code != 2 || !strings.Contains(errOut, "past -max-memory 1 MiB") {
		t.Errorf("run with 1MiB: exit %d, want 2 naming the bound:\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd("run", "-scenario", "acks1-leader-crash", "-variant", "acks1", "-max-memory", "lots")
	if code != 2 || !strings.Contains(errOut, `-max-memory "lots"`) {
		t.Errorf("run -max-memory lots: exit %d, want 2:\n%s%s", code, out, errOut)
	}
	if code, out, errOut = runCmd("run", "-scenario", "acks1-leader-crash", "-variant", "acks1", "-max-memory", "0"); code != 0 {
		t.Errorf("run -max-memory 0: exit %d, want 0:\n%s%s", code, out, errOut)
	}
}

// TestMemoryStopFailsTheRuns: once the watch finds the process past its
// bound, every run stops, failed (exit 4) with the reason, never judged.
func TestMemoryStopFailsTheRuns(t *testing.T) {
	var b strings.Builder
	stderr := &lockedWriter{w: &b} // the watch's goroutine writes it
	said := func() string { stderr.mu.Lock(); defer stderr.mu.Unlock(); return b.String() }
	stop := watchMemory(memoryPlan{bound: 1}, stderr) // anything is past 1 byte
	defer stop()
	for i := 0; i < 100 && !strings.Contains(said(), "stopping"); i++ {
		s, _ := scenarios.Load("acks1-leader-crash")
		harness.Run(s, "acks1", harness.Options{Seed: 1}) // gives the watch its time
	}
	s, err := scenarios.Load("swarm")
	if err != nil {
		t.Fatal(err)
	}
	res, err := harness.Run(s, "kip279-safe", harness.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Failed, "stopped at -max-memory") || res.Exit() != harness.ExitRunFailed {
		t.Errorf("a run after the stop: failed %q, exit %d; want it stopped at -max-memory, exit 4 (stderr %q)", res.Failed, res.Exit(), said())
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 640000: "640,000", 4660224: "4,660,224"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestMemoryStopExitsFour: a command whose runs the watch stopped exits 4
// with the reason, whatever its runs' own verdicts said.
func TestMemoryStopExitsFour(t *testing.T) {
	memoryStop = "stopped at -max-memory: 7 GiB held, past -max-memory 6 GiB"
	code, _, errOut := runCmd("list")
	if code != harness.ExitRunFailed || !strings.Contains(errOut, "stopped at -max-memory: 7 GiB held") {
		t.Errorf("exit %d, want 4 with the reason; stderr %q", code, errOut)
	}
	if memoryStop != "" {
		t.Errorf("the stop outlived its command: %q", memoryStop)
	}
}
