package harness

import (
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
)

// TestISRWriteWhoseAnswerWasLost: swarm seed 463 (found by suite -seeds
// 1000). b0, leader of t-0, writes ISR [0] to ZooKeeper at 47 s and is
// paused and then cut off before the answer arrives; the write applied.
// Kafka's client sends a write whose connection was lost again, and on
// BADVERSION reads the znode and finds its own write there
// (checkLeaderAndIsrZkData). Without that, b0 kept the old zkVersion and
// every later ISR change was refused: b2 never rejoined the ISR and the
// liveness checker called it a contract break.
func TestISRWriteWhoseAnswerWasLost(t *testing.T) {
	res, err := Run(scenarios.Swarm(), "kip279-safe", Options{Seed: 463})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Verdicts {
		if v.Checker == checkers.NameLiveness && v.Result != checkers.ResultOK {
			t.Errorf("liveness:\n%v", v)
		}
	}
	if res.Failed != "" {
		t.Errorf("run failed: %s", res.Failed)
	}
}
