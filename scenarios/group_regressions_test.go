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

// TestGroupSwarmNoRecordsAfterRevoke: group-swarm (eager) caught a member
// handing out records of partitions it had just revoked while its
// revocation commit was still retrying; it then committed a higher offset
// after them, the retried commit stored the lower one over it, and the
// next owner resumed below an acknowledged commit (offset-rewind). As
// Kafka 2.4+'s onJoinPrepare, the revoked partitions are given up at once.
// Seed 341 fails without that (checked by reverting it).
func TestGroupSwarmNoRecordsAfterRevoke(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Name != "group-swarm" {
			continue
		}
		res, err := s.Run("eager", Options{Seed: 341})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range res.Verdicts {
			if v.Checker == checkers.NameGroup && v.Result != checkers.ResultOK {
				t.Errorf("group %v: %v", v.Result, v.Anomalies)
			}
		}
		return
	}
	t.Fatal("no group-swarm scenario")
}

// TestGroupSwarmRejoinAfterUnknownMember: a cooperative member whose
// JoinGroup is answered UNKNOWN_MEMBER_ID must give up what it still owns
// (lost), as Kafka's onJoinPrepare after a reset generation; it kept
// consuming them at generation -1 next to their new owner, and commits went
// backwards. Seed 126 fails without that (checked by reverting it).
func TestGroupSwarmRejoinAfterUnknownMember(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Name != "group-swarm" {
			continue
		}
		res, err := s.Run("cooperative", Options{Seed: 126})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range res.Verdicts {
			if v.Checker == checkers.NameGroup && v.Result != checkers.ResultOK {
				t.Errorf("group %v: %v", v.Result, v.Anomalies)
			}
		}
		return
	}
	t.Fatal("no group-swarm scenario")
}
