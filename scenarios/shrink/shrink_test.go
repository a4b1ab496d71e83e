package shrink

import (
	"bytes"
	"os"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios/replay"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// TestShrinkSwarmSeed: a failing swarm seed shrinks to a run that fails the
// same checker with no more faults, deterministically.
func TestShrinkSwarmSeed(t *testing.T) {
	data, err := os.ReadFile("../testdata/swarm-short.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Parse("testdata/swarm-short.txt", "swarm-short", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var hashes []uint64
	for i := 0; i < 2; i++ {
		sh, err := Run(s, Config{Variant: "hw-unsafe", Seed: 5, Checker: "invariants", MaxRuns: 16})
		if err != nil {
			t.Fatal(err)
		}
		if !stillFails(sh.After, "invariants", false) || sh.FaultsAfter > sh.FaultsBefore || sh.DeviatedAfter >= sh.DeviatedBefore {
			t.Fatalf("faults %d -> %d, deviations %d -> %d", sh.FaultsBefore, sh.FaultsAfter, sh.DeviatedBefore, sh.DeviatedAfter)
		}
		res, err := replay.RunChoiceFile(s, sh.File, nil, harness.Options{})
		if err != nil || res.TraceHash != sh.After.TraceHash {
			t.Fatalf("the shrunk file does not replay: %v", err)
		}
		hashes = append(hashes, sh.After.TraceHash)
	}
	if hashes[0] != hashes[1] {
		t.Fatal("shrinking is not deterministic")
	}
}
