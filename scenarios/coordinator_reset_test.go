package scenarios

import (
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
)

// TestCoordinatorFailoverResetsDeadCoordinator: in coordinator-failover,
// seeds 7 and 8 send a JoinGroup to the crashed coordinator after asking a
// broker whose metadata still named it. Kafka's client learns of the dead
// process from the connection reset and looks for the new coordinator;
// without resets the member waited out the JoinGroup's rebalance timeout
// (5 minutes) and the group never read the last records (unseen). It
// then backs off the dead broker (reconnect.backoff.ms) instead of
// re-sending at once.
func TestCoordinatorFailoverResetsDeadCoordinator(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var s *Script
	for _, x := range all {
		if x.Name == "coordinator-failover" {
			s = x
		}
	}
	if s == nil {
		t.Fatal("no coordinator-failover scenario")
	}
	for _, seed := range []uint64{7, 8} {
		res, err := s.Run("default", Options{Seed: seed, KeepTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		resets := 0
		for _, r := range res.World.Trace().Records() {
			if r.Kind == "consumer-disconnected" {
				resets++
			}
		}
		if resets == 0 {
			t.Errorf("seed %d: no consumer saw a connection reset", seed)
		}
		// Without reconnect.backoff.ms a member re-sends to the dead broker
		// as fast as the resets come back: over a million events here.
		if res.Events > 100_000 {
			t.Errorf("seed %d: %d events: the consumers do not back off after a reset", seed, res.Events)
		}
		for _, v := range res.Verdicts {
			if v.Checker == checkers.NameConsumer && v.Result != checkers.ResultOK {
				t.Errorf("seed %d: consumer verdict %v: %v", seed, v.Result, v.Anomalies)
			}
		}
	}
}
