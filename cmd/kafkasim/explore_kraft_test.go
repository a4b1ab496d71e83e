package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExploreKRaftPlantedBug: 'kafkasim explore' on a KRaft script with
// the planted vote bug exits 1 with the raft violation and its actions,
// and the saved choices replay it; the safe configuration and elect on
// KRaft are checked in scenarios/explore.
func TestExploreKRaftPlantedBug(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2,000-run exploration")
	}
	file := filepath.Join(t.TempDir(), "raft.choices")
	script := "../../scenarios/testdata/kraft-explore.txt"
	code, out, _ := runCmd("explore", "-scenario", script, "-set", "kafkasim.raft.vote.check.log=false", "-depth", "4", "-records", "1", "-parallel", "2", "-progress", "none", "-save", file)
	// The wrongly elected leader is the raft checker's finding, and so is
	// the follower it asks to truncate below its HW: that node halts on the
	// fatal error, as Kafka's fault handler halts it (a verdict, not a
	// failed run).
	if code != 1 || !strings.Contains(out, "violation of raft") || !strings.Contains(out, "faults=crash,partition") ||
		!(strings.Contains(out, "became leader of epoch") || strings.Contains(out, "halted on a fatal raft error")) {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = runCmd("replay", "-scenario", script, "-set", "kafkasim.raft.vote.check.log=false", "-choices", file)
	if code != 1 || strings.Contains(out, "RUN FAILED") {
		t.Fatalf("replay -choices: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCmd("explore", "-scenario", script, "-faults", "crash,elect", "-depth", "2"); code != 2 || !strings.Contains(errOut, "elects") {
		t.Fatalf("elect on KRaft: exit %d: %s", code, errOut)
	}
}
