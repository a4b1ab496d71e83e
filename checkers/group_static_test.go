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
