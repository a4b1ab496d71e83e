package harness

import (
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/checkers"
)

// builtinScript returns the built-in scenario name.
func builtinScript(t testing.TB, name string) *scenarios.Script {
	t.Helper()
	all, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no %s scenario", name)
	return nil
}

// mustBeOK runs scenario/variant at seed and fails unless checker says ok.
func mustBeOK(t *testing.T, scenario, variant string, seed uint64, checker string) {
	t.Helper()
	res, err := Run(builtinScript(t, scenario), variant, Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Verdicts {
		if v.Checker == checker && v.Result != checkers.ResultOK {
			t.Errorf("%s/%s seed %d: %s %v: %v", scenario, variant, seed, checker, v.Result, v.Anomalies)
		}
	}
}

// TestCoordinatorFailoverResetsDeadCoordinator: in coordinator-failover,
// seeds 7 and 8 send a JoinGroup to the crashed coordinator after asking a
// broker whose metadata still named it. Kafka's client learns of the dead
// process from the connection reset and looks for the new coordinator;
// without resets the member waited out the JoinGroup's rebalance timeout
// (5 minutes) and the group never read the last records (unseen). It
// then backs off the dead broker (reconnect.backoff.ms) instead of
// re-sending at once.
func TestCoordinatorFailoverResetsDeadCoordinator(t *testing.T) {
	s := builtinScript(t, "coordinator-failover")
	for _, seed := range []uint64{7, 8} {
		res, err := Run(s, "default", Options{Seed: seed, KeepTrace: true})
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
	mustBeOK(t, "group-swarm", "eager", 341, checkers.NameGroup)
}

// TestGroupSwarmRejoinAfterUnknownMember: a cooperative member whose
// JoinGroup is answered UNKNOWN_MEMBER_ID must give up what it still owns
// (lost), as Kafka's onJoinPrepare after a reset generation; it kept
// consuming them at generation -1 next to their new owner, and commits went
// backwards. Seed 126 fails without that (checked by reverting it).
func TestGroupSwarmRejoinAfterUnknownMember(t *testing.T) {
	mustBeOK(t, "group-swarm", "cooperative", 126, checkers.NameGroup)
}

// TestGroupSwarmLeaderAssignsBeforeMetadata: in group-swarm eager seed
// 274 the restarted leader c2 assigns before its first metadata answer
// (the topic unknown: every member gets nothing), and the metadata comes
// while the SyncGroup is in flight. Comparing the snapshot only when
// metadata arrived, it never rebalanced: the group stayed Stable owning
// nothing, and liveness caught it. Kafka compares at every poll.
func TestGroupSwarmLeaderAssignsBeforeMetadata(t *testing.T) {
	mustBeOK(t, "group-swarm", "eager", 274, checkers.NameLiveness)
	mustBeOK(t, "group-swarm", "eager", 274, checkers.NameConsumer)
}
