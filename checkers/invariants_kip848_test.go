package checkers

import (
	"strings"
	"testing"
)

// stableGroup is a Stable group of A (t-0) and B (t-1) at epoch 3 on b0.
func stableGroup() GroupSnapshot {
	return GroupSnapshot{Coordinator: 0, Life: 1, Group: "g", State: "Stable", Epoch: 3, AssignmentEpoch: 3,
		Partitions: map[string]int32{"t": 2},
		Members: []GroupMemberSnapshot{
			{ID: "A", Epoch: 3, Stable: true, Subscribed: []string{"t"}, Assigned: []string{"t-0"}, Target: []string{"t-0"}, Held: []string{"t-0"}},
			{ID: "B", Epoch: 3, Stable: true, Subscribed: []string{"t"}, Assigned: []string{"t-1"}, Target: []string{"t-1"}, Held: []string{"t-1"}},
		}}
}

func clientsOf(a, b []string, epochA, epochB int32) []ClientSnapshot {
	return []ClientSnapshot{{Process: "c1", Life: 1, Group: "g", Member: "A", Epoch: epochA, Owned: a},
		{Process: "c2", Life: 1, Group: "g", Member: "B", Epoch: epochB, Owned: b}}
}

// kip848Kinds feeds the monitor each step's groups and clients and
// returns the anomaly kinds, joined.
func kip848Kinds(steps ...func() ([]GroupSnapshot, []ClientSnapshot)) string {
	m := NewMonitor()
	for i, s := range steps {
		g, c := s()
		m.ObserveGroups(uint64(i+1), 0, g, c)
	}
	var ks []string
	for _, a := range m.Verdict().Anomalies {
		ks = append(ks, a.Kind)
	}
	return strings.Join(ks, ",")
}

// TestKIP848InvariantsHold: a stable group and its clients break nothing
// (Vanlightly's invariants hold), and neither do a join (epoch 0) or a
// static leave (-2) lowering an epoch.
func TestKIP848InvariantsHold(t *testing.T) {
	ok := func() ([]GroupSnapshot, []ClientSnapshot) {
		return []GroupSnapshot{stableGroup()}, clientsOf([]string{"t-0"}, []string{"t-1"}, 3, 3)
	}
	leave := func() ([]GroupSnapshot, []ClientSnapshot) {
		g := stableGroup()
		g.State = "Reconciling"
		g.Members[0].Epoch = -2
		return []GroupSnapshot{g}, clientsOf(nil, []string{"t-1"}, 0, 3)
	}
	if got := kip848Kinds(ok, leave, ok); got != "" {
		t.Fatalf("a sound group: %s", got)
	}
}

// TestKIP848InvariantsBreak: each invariant, planted broken, is reported.
func TestKIP848InvariantsBreak(t *testing.T) {
	cases := []struct {
		name string
		want string
		mut  func(g *GroupSnapshot, c []ClientSnapshot) []ClientSnapshot
	}{
		{"target leaves t-1 out", KindKIP848StableGroup + "," + KindKIP848LegalTarget, func(g *GroupSnapshot, c []ClientSnapshot) []ClientSnapshot {
			g.Members[1].Target = nil
			return c
		}},
		{"both clients own t-0", KindKIP848DoubleAssignment, func(g *GroupSnapshot, c []ClientSnapshot) []ClientSnapshot {
			c[1].Owned = []string{"t-0", "t-1"}
			c[1].Epoch = 2
			return c
		}},
		{"at the target epoch with B's partition", KindKIP848MemberEpoch, func(g *GroupSnapshot, c []ClientSnapshot) []ClientSnapshot {
			c[0].Owned = []string{"t-0", "t-1"}
			c[1].Owned = nil
			return c
		}},
		{"Stable with a member revoking", KindKIP848StableGroup, func(g *GroupSnapshot, c []ClientSnapshot) []ClientSnapshot {
			g.Members[0].Pending = []string{"t-9"}
			g.Members[0].Held = []string{"t-0", "t-9"}
			return c
		}},
		{"a held partition no owner records", KindKIP848PartitionEpoch, func(g *GroupSnapshot, c []ClientSnapshot) []ClientSnapshot {
			g.Members[0].Held = nil
			return c
		}},
	}
	for _, tc := range cases {
		step := func() ([]GroupSnapshot, []ClientSnapshot) {
			g := stableGroup()
			c := tc.mut(&g, clientsOf([]string{"t-0"}, []string{"t-1"}, 3, 3))
			return []GroupSnapshot{g}, c
		}
		if got := kip848Kinds(step, step); got != tc.want {
			t.Errorf("%s: got %q, want %q (once, though it persists)", tc.name, got, tc.want)
		}
	}
	// Epochs going down: client side within a process life, coordinator
	// side within a coordinator's life.
	base := func() ([]GroupSnapshot, []ClientSnapshot) {
		return []GroupSnapshot{stableGroup()}, clientsOf([]string{"t-0"}, []string{"t-1"}, 3, 3)
	}
	clientDown := func() ([]GroupSnapshot, []ClientSnapshot) {
		g, c := base()
		c[0].Epoch = 2
		return g, c
	}
	if got := kip848Kinds(base, clientDown); got != KindKIP848ClientEpochDown {
		t.Errorf("client epoch 3 -> 2: %q", got)
	}
	restarted := func() ([]GroupSnapshot, []ClientSnapshot) {
		g, c := clientDown()
		c[0].Life = 2
		return g, c
	}
	if got := kip848Kinds(base, restarted); got != "" {
		t.Errorf("a new process at a lower epoch: %q, want none", got)
	}
	memberDown := func() ([]GroupSnapshot, []ClientSnapshot) {
		g, c := base()
		g[0].State, g[0].Members[1].Epoch = "Reconciling", 2
		c[1].Epoch = 1
		return g, c
	}
	if got := kip848Kinds(base, memberDown); !strings.Contains(got, KindKIP848MemberEpochDown) {
		t.Errorf("member epoch 3 -> 2 at one coordinator: %q", got)
	}
	reloaded := func() ([]GroupSnapshot, []ClientSnapshot) {
		g, c := memberDown()
		g[0].Life = 2
		c[1].Life = 2
		return g, c
	}
	if got := kip848Kinds(base, reloaded); got != "" {
		t.Errorf("a new load at a lower epoch: %q, want none", got)
	}
}
