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
	// The wrongly elected leader is the raft checker's finding; the run
	// may also stop at the follower invariant (a truncation below the HW
	// that leader asks for), which then names the violation run-failed.
	found := strings.Contains(out, "violation of raft") || strings.Contains(out, "violation of run-failed")
	if code != 1 || !found || !strings.Contains(out, "faults=crash,partition") || !strings.Contains(out, "became leader of epoch") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = runCmd("replay", "-scenario", script, "-set", "kafkasim.raft.vote.check.log=false", "-choices", file)
	// Exit 1 (the raft checker's violation) or 4 (the run stopped at the
	// follower's truncation invariant, a panic: a failed run).
	if code != 1 && !(code == 4 && strings.Contains(out, "raft: invariant")) {
		t.Fatalf("replay -choices: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCmd("explore", "-scenario", script, "-faults", "crash,elect", "-depth", "2"); code != 2 || !strings.Contains(errOut, "elects") {
		t.Fatalf("elect on KRaft: exit %d: %s", code, errOut)
	}
}
