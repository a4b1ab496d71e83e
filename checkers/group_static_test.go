package checkers

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// staticHist is a history of static members c1 and c1b sharing
// group.instance.id i1 (a process and its replacement), and c2 (i2).
func staticHist() *chist {
	h := &chist{r: NewRecorder()}
	for _, c := range [][2]string{{"c1", "i1"}, {"c1b", "i1"}, {"c2", "i2"}} {
		h.r.Consumer(Consumer{Process: c[0], Group: "g", Semantics: AtLeastOnce, GroupInstanceID: c[1],
			SessionTimeout: 30 * sim.Second, HeartbeatInterval: sim.Second})
	}
	return h
}

// TestGroupsStaticHandover (KIP-345): a replacement process of a static
// member is given the partition in the generation its predecessor had
// it — a handover, not a double owner — unless the predecessor (a
// zombie) polls it after the takeover: zombie-consume, permitted (Kafka
// fences a zombie's commits, not the records it fetched). Two dynamic
// processes in one generation stay a double owner.
func TestGroupsStaticHandover(t *testing.T) {
	h := staticHist()
	h.assign("c1", 1)
	h.consume("c1", 0, "")
	h.assign("c1b", 1)
	if got := kinds(Groups(h.r.Finish(h.tick()), Final{})); got != "" {
		t.Errorf("handover: got %q, want no anomaly", got)
	}
	h = staticHist()
	h.assign("c1", 1)
	h.assign("c1b", 1)
	h.consume("c1", 0, "")
	if got := kinds(Groups(h.r.Finish(h.tick()), Final{})); got != "zombie-consume(permitted)" {
		t.Errorf("zombie polls after the takeover: got %q", got)
	}
	h = staticHist()
	h.assign("c1", 1)
	h.assign("c2", 1) // another instance: a double owner
	if got := kinds(Groups(h.r.Finish(h.tick()), Final{})); got != "double-owner" {
		t.Errorf("two instances in one generation: got %q", got)
	}
}

// TestGroupsStaticRestartRebalance (KIP-345): a static member that
// crashes and starts again within its session comes back at its
// generation with its partitions; a new generation is a contract break
// unless another member came or went meanwhile, and a restart after the
// session is not judged.
func TestGroupsStaticRestartRebalance(t *testing.T) {
	run := func(restartAfter sim.Duration, gen int32, other bool) string {
		h := staticHist()
		h.r.Assign(h.tick(), "c2", "g", "c2", 1, "t", 1)
		h.assign("c1", 1)
		down := h.tick()
		h.r.ConsumerCrashed(down, "c1")
		h.t = down.Add(restartAfter)
		h.r.ConsumerRestarted(h.t, "c1")
		if other {
			h.r.ConsumerCrashed(h.tick(), "c2")
		}
		h.assign("c1", gen)
		return kinds(Groups(h.r.Finish(h.tick()), Final{}))
	}
	if got := run(3*sim.Second, 1, false); got != "" {
		t.Errorf("restart keeping its generation: %q", got)
	}
	if got := run(3*sim.Second, 2, false); got != "static-restart-rebalance" {
		t.Errorf("restart within the session, new generation: %q", got)
	}
	if got := run(3*sim.Second, 2, true); got != "static-restart-rebalance(permitted)" {
		t.Errorf("another member crashed meanwhile: %q", got)
	}
	if got := run(40*sim.Second, 2, false); got != "" {
		t.Errorf("restart after the session: %q, want not judged", got)
	}
	// The same assignment recorded twice in a generation (a SyncGroup
	// answered again) is still the same set of partitions.
	h := staticHist()
	h.assign("c1", 1)
	h.assign("c1", 1)
	down := h.tick()
	h.r.ConsumerCrashed(down, "c1")
	h.r.ConsumerRestarted(h.tick(), "c1")
	h.assign("c1", 1)
	if got := kinds(Groups(h.r.Finish(h.tick()), Final{})); got != "" {
		t.Errorf("an assignment recorded twice before the crash: %q", got)
	}
	h = staticHist()
	h.assign("c1", 1)
	h.r.ConsumerCrashed(h.tick(), "c1")
	h.r.ConsumerRestarted(h.tick(), "c1")
	h.assign("c1", 2)
	v := Groups(h.r.Finish(h.tick()), Final{})
	if len(v.Anomalies) != 1 || !strings.Contains(v.Anomalies[0].Description, "group.instance.id i1") {
		t.Errorf("evidence: %+v", v.Anomalies)
	}
}

// TestGroupsStaticRestartCooperative: the cooperative protocol records
// only what a generation adds, so what a member held at a crash is its
// assignments less its revocations; and a broker fault around the restart
// permits a new generation (the coordinator may not have seen the rejoin
// within the session).
func TestGroupsStaticRestartCooperative(t *testing.T) {
	restart := func(h *chist) {
		down := h.tick()
		h.r.ConsumerCrashed(down, "c1")
		h.t = down.Add(2 * sim.Second)
		h.r.ConsumerRestarted(h.t, "c1")
	}
	h := staticHist()
	h.r.Assign(h.tick(), "c1", "g", "c1", 1, "t", 0)
	h.r.Assign(h.tick(), "c1", "g", "c1", 1, "t", 2)
	h.r.Revoke(h.tick(), "c1", "g", "c1", 1, "t", 2, "revoked")
	h.r.Assign(h.tick(), "c1", "g", "c1", 2, "t", 1) // kept t-0, gained t-1
	restart(h)
	h.r.Assign(h.tick(), "c1", "g", "c1", 2, "t", 0)
	h.r.Assign(h.t, "c1", "g", "c1", 2, "t", 1)
	if got := kinds(Groups(h.r.Finish(h.tick()), Final{})); got != "" {
		t.Errorf("cooperative restart keeping t-0 and t-1 at generation 2: %q", got)
	}
	h = staticHist()
	h.r.Assign(h.tick(), "c1", "g", "c1", 1, "t", 0)
	restart(h)
	h.r.Assign(h.tick(), "c1", "g", "c1", 2, "t", 0)
	f := Final{Facts: Facts{Failures: []Failure{{Broker: 0, Kind: Crash, Time: h.t.Add(-sim.Second), End: h.t}}}}
	if got := kinds(Groups(h.r.Finish(h.tick()), f)); got != "static-restart-rebalance(permitted)" {
		t.Errorf("a broker crash around the restart: %q", got)
	}
}

// TestGroupsStaticRestartHeldIsThisProcess (KIP-345): what a static
// member held at a crash is what its crashed process was given, not what
// an earlier process of it held. A crash records no revocation, so an
// earlier process's partitions (here t-4 and t-5, given at generation 1
// before a crash past the session) must not count; the coordinator
// rightly hands the restarted process generation 2's [t-2 t-3] back
// (GroupMetadata.replaceStaticMember keeps the member's assignment).
// static-swarm eager seed 28 called this a contract break.
func TestGroupsStaticRestartHeldIsThisProcess(t *testing.T) {
	give := func(h *chist, gen int32, parts ...int32) {
		at := h.tick()
		for _, p := range parts {
			h.r.Assign(at, "c1", "g", "c1", gen, "t", p)
		}
	}
	restart := func(h *chist, after sim.Duration) {
		down := h.tick()
		h.r.ConsumerCrashed(down, "c1")
		h.t = down.Add(after)
		h.r.ConsumerRestarted(h.t, "c1")
	}
	h := staticHist()
	give(h, 1, 4, 5)
	restart(h, 40*sim.Second) // past the session: a new member, not judged
	give(h, 2, 2, 3)
	restart(h, 2*sim.Second)
	give(h, 2, 2, 3)
	if got := kinds(Groups(h.r.Finish(h.tick()), Final{})); got != "" {
		t.Errorf("restart given back its process's [t-2 t-3] at generation 2: %q, want no anomaly", got)
	}
	// The same history with the restart given fewer partitions than its
	// process held is still the coordinator breaking KIP-345.
	h = staticHist()
	give(h, 1, 4, 5)
	restart(h, 40*sim.Second)
	give(h, 2, 2, 3)
	restart(h, 2*sim.Second)
	give(h, 2, 2)
	v := Groups(h.r.Finish(h.tick()), Final{})
	if got := kinds(v); got != "static-restart-rebalance" {
		t.Errorf("restart given [t-2] of its process's [t-2 t-3]: %q, want static-restart-rebalance", got)
	} else if d := v.Anomalies[0].Description; !strings.Contains(d, "it held [t-2 t-3]") {
		t.Errorf("evidence names an earlier process's partitions: %s", d)
	}
}

// TestGroupsStaticRestartAfterStall (KIP-345): a stalled process sends no
// heartbeat, so a process that crashed while stalled had its session
// running from the stall's start: restarted past it, the member is new
// and a new generation is not judged. Another member stalled past its
// session is a membership change (its session expires, it rejoins on
// waking): a new generation is permitted. A stall shorter than the
// session changes nothing: a new generation stays a contract break.
// static-swarm eager seeds 128 and 184 called both a contract break.
func TestGroupsStaticRestartAfterStall(t *testing.T) {
	h := staticHist()
	h.assign("c1", 1)
	stall := h.tick()
	h.r.ConsumerPaused(stall, stall.Add(40*sim.Second), "c1")
	down := stall.Add(20 * sim.Second)
	h.r.ConsumerCrashed(down, "c1")
	h.t = down.Add(10 * sim.Second) // 10s after the crash, 30s after its last heartbeat
	h.r.ConsumerRestarted(h.t, "c1")
	h.assign("c1", 2)
	if got := kinds(Groups(h.r.Finish(h.tick()), Final{})); got != "" {
		t.Errorf("crash in a stall, restarted past the session from the stall: %q, want not judged", got)
	}
	other := func(pause sim.Duration) string {
		h := staticHist()
		h.r.Assign(h.tick(), "c2", "g", "c2", 1, "t", 1)
		h.assign("c1", 1)
		stall := h.tick()
		h.r.ConsumerPaused(stall, stall.Add(pause), "c2")
		down := stall.Add(28 * sim.Second)
		h.r.ConsumerCrashed(down, "c1")
		h.t = down.Add(2 * sim.Second)
		h.r.ConsumerRestarted(h.t, "c1")
		h.assign("c1", 2)
		return kinds(Groups(h.r.Finish(h.tick()), Final{}))
	}
	if got := other(40 * sim.Second); got != "static-restart-rebalance(permitted)" {
		t.Errorf("another member stalled past its session meanwhile: %q", got)
	}
	if got := other(3 * sim.Second); got != "static-restart-rebalance" {
		t.Errorf("another member stalled 3s, within its session: %q, want a contract break", got)
	}
}

// TestGroupsStaticRestartAfterCleanClose (KIP-848's static leave, epoch
// -2): a process that revoked its partitions as it shut down, at the
// instant it died, keeps them at the coordinator; its successor must come
// back with them at its epoch. A new epoch is a contract break (not
// excused as "rebalancing": the revocation was its own shutdown), and a
// revocation before the crash's instant still is a rebalance under way.
func TestGroupsStaticRestartAfterCleanClose(t *testing.T) {
	run := func(gen int32, revokeEarlier bool) string {
		h := staticHist()
		h.r.Assign(h.tick(), "c2", "g", "c2", 1, "t", 1)
		h.assign("c1", 1)
		if revokeEarlier {
			h.revoke("c1", 1)
		}
		down := h.tick()
		h.r.Revoke(down, "c1", "g", "c1", 1, "t", 0, "revoked") // Close
		h.r.ConsumerCrashed(down, "c1")
		h.t = down.Add(3 * sim.Second)
		h.r.ConsumerRestarted(h.t, "c1")
		h.assign("c1", gen)
		return kinds(Groups(h.r.Finish(h.tick()), Final{}))
	}
	if got := run(1, false); got != "" {
		t.Errorf("clean close, successor at its epoch with its partition: %q, want none", got)
	}
	if got := run(2, false); got != "static-restart-rebalance" {
		t.Errorf("clean close, successor at a new epoch: %q, want static-restart-rebalance", got)
	}
	if got := run(2, true); got != "static-restart-rebalance(permitted)" {
		t.Errorf("revoked before the close (a rebalance under way): %q", got)
	}
}

// TestGroupsStaticRestartConsumerProtocol (KIP-848): a static member that
// crashed without leaving is not promised its place (its successor is
// refused UNRELEASED_INSTANCE_ID until the session expires), so a new
// epoch after a crash is not judged; after a clean close it is.
func TestGroupsStaticRestartConsumerProtocol(t *testing.T) {
	run := func(closed bool) string {
		h := &chist{r: NewRecorder()}
		for _, c := range []string{"c1", "c2"} {
			h.r.Consumer(Consumer{Process: c, Group: "g", Semantics: AtLeastOnce, GroupInstanceID: "i-" + c,
				SessionTimeout: 30 * sim.Second, HeartbeatInterval: sim.Second, GroupProtocol: "consumer"})
		}
		h.r.Assign(h.tick(), "c2", "g", "c2", 1, "t", 1)
		h.assign("c1", 1)
		down := h.tick()
		if closed {
			h.r.Revoke(down, "c1", "g", "c1", 1, "t", 0, "revoked")
		}
		h.r.ConsumerCrashed(down, "c1")
		h.t = down.Add(3 * sim.Second)
		h.r.ConsumerRestarted(h.t, "c1")
		h.assign("c1", 2)
		return kinds(Groups(h.r.Finish(h.tick()), Final{}))
	}
	if got := run(false); got != "" {
		t.Errorf("crash without leaving, new epoch: %q, want not judged", got)
	}
	if got := run(true); got != "static-restart-rebalance" {
		t.Errorf("clean close, new epoch: %q, want static-restart-rebalance", got)
	}
}

// TestGroupsGenerationsRestart (KIP-848's migration): when a group of the
// other protocol replaces an empty one its generations start over, so
// generation 3 after the restart is not generation 3 before it: no
// double-owner. Without the restart it is one.
func TestGroupsGenerationsRestart(t *testing.T) {
	run := func(restart bool) string {
		h := staticHist()
		h.r.Assign(h.tick(), "c1", "g", "c1", 3, "t", 0)
		h.r.Revoke(h.tick(), "c1", "g", "c1", 3, "t", 0, "lost")
		if restart {
			h.r.GroupGenerationsRestarted(h.tick(), "g")
		}
		h.r.Assign(h.tick(), "c2", "g", "c2", 3, "t", 0)
		return kinds(Groups(h.r.Finish(h.tick()), Final{}))
	}
	if got := run(true); got != "" {
		t.Errorf("generation 3 of two incarnations: %q, want none", got)
	}
	if got := run(false); got != "double-owner" {
		t.Errorf("generation 3 twice in one incarnation: %q, want double-owner", got)
	}
}
