package assignor

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func render(a Assignment) string {
	ids := make([]string, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s:%v ", id, a[id])
	}
	return strings.TrimSpace(b.String())
}

func sub(topics ...string) func(ids ...string) []Member {
	return func(ids ...string) []Member {
		var out []Member
		for _, id := range ids {
			out = append(out, Member{ID: id, Topics: topics})
		}
		return out
	}
}

// TestRangeOrdering pins RangeAssignor's layout: per topic, members sorted
// by id, the first P%C members get one extra partition (Kafka's
// RangeAssignorTest.testTwoConsumersTwoTopicsSixPartitions shape).
func TestRangeOrdering(t *testing.T) {
	cases := []struct {
		members []Member
		parts   map[string]int32
		want    string
	}{
		{sub("t")("c1", "c0"), map[string]int32{"t": 3}, "c0:[t-0 t-1] c1:[t-2]"},
		{sub("t1", "t2")("c0", "c1"), map[string]int32{"t1": 3, "t2": 3}, "c0:[t1-0 t1-1 t2-0 t2-1] c1:[t1-2 t2-2]"},
		{sub("t")("a", "b", "c"), map[string]int32{"t": 2}, "a:[t-0] b:[t-1] c:[]"},
		{[]Member{{ID: "c0", Topics: []string{"t1"}}, {ID: "c1", Topics: []string{"t1", "t2"}}}, map[string]int32{"t1": 3, "t2": 2}, "c0:[t1-0 t1-1] c1:[t1-2 t2-0 t2-1]"},
		{sub("missing")("c0"), map[string]int32{"t": 2}, "c0:[]"},
	}
	for i, c := range cases {
		if got := render(Range{}.Assign(c.members, c.parts)); got != c.want {
			t.Errorf("case %d: got %s, want %s", i, got, c.want)
		}
	}
}

// TestRoundRobinOrdering pins RoundRobinAssignor: partitions sorted by
// topic then id, dealt over the sorted members, skipping unsubscribed ones.
func TestRoundRobinOrdering(t *testing.T) {
	cases := []struct {
		members []Member
		parts   map[string]int32
		want    string
	}{
		{sub("t1", "t2")("c1", "c0"), map[string]int32{"t1": 3, "t2": 3}, "c0:[t1-0 t1-2 t2-1] c1:[t1-1 t2-0 t2-2]"},
		{[]Member{{ID: "c0", Topics: []string{"t1"}}, {ID: "c1", Topics: []string{"t1", "t2"}}, {ID: "c2", Topics: []string{"t1", "t2", "t3"}}},
			map[string]int32{"t1": 1, "t2": 2, "t3": 3}, "c0:[t1-0] c1:[t2-0] c2:[t2-1 t3-0 t3-1 t3-2]"},
	}
	for i, c := range cases {
		if got := render(RoundRobin{}.Assign(c.members, c.parts)); got != c.want {
			t.Errorf("case %d: got %s, want %s", i, got, c.want)
		}
	}
}

// TestStickyKeepsOwners: after a member leaves, the survivors keep what
// they had and share only the departed member's partitions.
func TestStickyKeepsOwners(t *testing.T) {
	parts := map[string]int32{"t": 6}
	first := stickyUD(sub("t")("a", "b", "c"), parts)
	if got := render(first); got != "a:[t-0 t-3] b:[t-1 t-4] c:[t-2 t-5]" {
		t.Fatalf("first: %s", got)
	}
	second := stickyUD([]Member{{ID: "a", Topics: []string{"t"}, Owned: first["a"]}, {ID: "c", Topics: []string{"t"}, Owned: first["c"]}}, parts)
	for _, tp := range first["a"] {
		if !slices.Contains(second["a"], tp) {
			t.Errorf("a lost %v: %s", tp, render(second))
		}
	}
	for _, tp := range first["c"] {
		if !slices.Contains(second["c"], tp) {
			t.Errorf("c lost %v: %s", tp, render(second))
		}
	}
	if len(second["a"]) != 3 || len(second["c"]) != 3 {
		t.Errorf("unbalanced: %s", render(second))
	}
}

func TestByName(t *testing.T) {
	for _, n := range []string{"range", "roundrobin", "sticky", "cooperative-sticky"} {
		a, err := ByName(n)
		if err != nil || a.Name() != n {
			t.Errorf("ByName(%q) = %v, %v", n, a, err)
		}
	}
	if _, err := ByName("bogus"); err == nil || !strings.Contains(err.Error(), "allowed") {
		t.Errorf("ByName(bogus) error = %v", err)
	}
}

func TestProtocolRoundTrip(t *testing.T) {
	owned := []TopicPartition{{"b", 1}, {"a", 0}}
	m, err := DecodeSubscription("m1", EncodeSubscription([]string{"b", "a"}, owned))
	if err != nil || m.ID != "m1" || !slices.Equal(m.Topics, []string{"a", "b"}) || len(m.Owned) != 2 {
		t.Fatalf("subscription: %+v %v", m, err)
	}
	tps, err := DecodeAssignment(EncodeAssignment(owned))
	if err != nil || !slices.Equal(tps, []TopicPartition{{"a", 0}, {"b", 1}}) {
		t.Fatalf("assignment: %v %v", tps, err)
	}
	if tps, err := DecodeAssignment(nil); err != nil || tps != nil {
		t.Fatalf("empty assignment: %v %v", tps, err)
	}
}

// genGroup draws members with subscriptions over up to 3 topics.
func genGroup(t *rapid.T, same bool) ([]Member, map[string]int32) {
	topics := []string{"t0", "t1", "t2"}
	parts := map[string]int32{}
	for _, tp := range topics[:rapid.IntRange(1, 3).Draw(t, "topics")] {
		parts[tp] = int32(rapid.IntRange(1, 8).Draw(t, "parts-"+tp))
	}
	var names []string
	for tp := range parts {
		names = append(names, tp)
	}
	slices.Sort(names)
	n := rapid.IntRange(1, 6).Draw(t, "members")
	var ms []Member
	for i := 0; i < n; i++ {
		subs := names
		if !same {
			subs = rapid.SliceOfNDistinct(rapid.SampledFrom(names), 1, len(names), rapid.ID[string]).Draw(t, "subs")
		}
		ms = append(ms, Member{ID: fmt.Sprintf("m%02d", rapid.IntRange(0, 99).Draw(t, "id")), Topics: subs})
	}
	// Unique ids.
	seen := map[string]bool{}
	var out []Member
	for _, m := range ms {
		if !seen[m.ID] {
			seen[m.ID] = true
			out = append(out, m)
		}
	}
	return out, parts
}

// checkExactlyOnce: every partition of a subscribed topic is assigned to
// exactly one member, which subscribes to its topic.
func checkExactlyOnce(t *rapid.T, name string, ms []Member, parts map[string]int32, a Assignment) {
	owner := map[TopicPartition]string{}
	for _, m := range ms {
		for _, tp := range a[m.ID] {
			if prev, ok := owner[tp]; ok {
				t.Fatalf("%s: %v assigned to %s and %s", name, tp, prev, m.ID)
			}
			if !m.subscribes(tp.Topic) {
				t.Fatalf("%s: %v assigned to %s, not subscribed", name, tp, m.ID)
			}
			owner[tp] = m.ID
		}
	}
	if len(a) != len(ms) {
		t.Fatalf("%s: %d entries for %d members", name, len(a), len(ms))
	}
	for _, tp := range allPartitions(ms, parts) {
		if _, ok := owner[tp]; !ok {
			t.Fatalf("%s: %v unassigned: %s", name, tp, render(a))
		}
	}
}

func spread(ms []Member, a Assignment) int {
	lo, hi := 1<<30, 0
	for _, m := range ms {
		lo, hi = min(lo, len(a[m.ID])), max(hi, len(a[m.ID]))
	}
	return hi - lo
}

func TestPropertyEveryPartitionOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ms, parts := genGroup(t, false)
		for _, as := range []Assignor{Range{}, RoundRobin{}, Sticky{}, CooperativeSticky{}} {
			checkExactlyOnce(t, as.Name(), ms, parts, as.Assign(ms, parts))
		}
	})
}

// With identical subscriptions, RoundRobin and Sticky balance within one.
func TestPropertyBalanced(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ms, parts := genGroup(t, true)
		for _, as := range []Assignor{RoundRobin{}, Sticky{}} {
			if s := spread(ms, as.Assign(ms, parts)); s > 1 {
				t.Fatalf("%s: spread %d: %s", as.Name(), s, render(as.Assign(ms, parts)))
			}
		}
	})
}

// Sticky keeps at least as many partitions with their previous owner as
// RoundRobin does, after an arbitrary change of membership; and it stays
// balanced.
func TestPropertyStickyKeepsOwners(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prev, parts := genGroup(t, true)
		var topics []string
		for tp := range parts {
			topics = append(topics, tp)
		}
		slices.Sort(topics)
		before := RoundRobin{}.Assign(prev, parts)
		if rapid.Bool().Draw(t, "sticky-before") {
			before = stickyUD(prev, parts)
		}
		var next []Member
		for _, m := range prev {
			if rapid.IntRange(0, 3).Draw(t, "keep") > 0 {
				next = append(next, Member{ID: m.ID, Topics: topics, Owned: before[m.ID]})
			}
		}
		for i := 0; i < rapid.IntRange(0, 2).Draw(t, "new"); i++ {
			next = append(next, Member{ID: fmt.Sprintf("n%d", i), Topics: topics})
		}
		if len(next) == 0 {
			return
		}
		kept := func(a Assignment) int {
			n := 0
			for _, m := range next {
				for _, tp := range a[m.ID] {
					if slices.Contains(m.Owned, tp) {
						n++
					}
				}
			}
			return n
		}
		st, rr := stickyUD(next, parts), RoundRobin{}.Assign(next, parts)
		checkExactlyOnce(t, "sticky", next, parts, st)
		if kept(st) < kept(rr) {
			t.Fatalf("sticky kept %d < roundrobin %d: sticky %s, roundrobin %s", kept(st), kept(rr), render(st), render(rr))
		}
		if s := spread(next, st); s > 1 {
			t.Fatalf("sticky spread %d: %s", s, render(st))
		}
	})
}

// genPrevious gives each member previous partitions: those of a random
// earlier assignment, with some members stale (an older generation) or
// claiming partitions another member also claims, as Kafka's
// allSubscriptionsEqual and prepopulateCurrentAssignments must resolve.
func genPrevious(t *rapid.T, ms []Member, parts map[string]int32) []Member {
	all := allPartitions(ms, parts)
	out := slices.Clone(ms)
	var before Assignment
	switch rapid.IntRange(0, 2).Draw(t, "before") {
	case 0:
		before = RoundRobin{}.Assign(ms, parts)
	case 1:
		before = Range{}.Assign(ms, parts)
	default:
		before = stickyUD(ms, parts)
	}
	for i := range out {
		out[i].Owned = slices.Clone(before[out[i].ID])
		out[i].Generation = int32(rapid.IntRange(0, 3).Draw(t, "gen"))
		if len(all) > 0 && rapid.IntRange(0, 3).Draw(t, "extra-claim") == 0 {
			out[i].Owned = append(out[i].Owned, rapid.SampledFrom(all).Draw(t, "claim"))
		}
	}
	return out
}

// The sticky assignors with arbitrary previous owners: every partition
// once (cooperative: at most once, and the missing ones are exactly those
// in transfer), Kafka's balance condition (no partition could move to a
// member with two fewer), and the same result when run again.
func TestPropertyStickyWithPrevious(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ms, parts := genGroup(t, rapid.Bool().Draw(t, "same"))
		ms = genPrevious(t, ms, parts)
		st := stickyUD(ms, parts)
		checkExactlyOnce(t, "sticky", ms, parts, st)
		if again := stickyUD(ms, parts); render(again) != render(st) {
			t.Fatalf("not deterministic: %s then %s", render(st), render(again))
		}
		for i, x := range ms {
			for _, y := range ms[i+1:] {
				small, large := x, y
				if len(st[x.ID]) > len(st[y.ID]) {
					small, large = y, x
				}
				if len(st[large.ID])-len(st[small.ID]) <= 1 {
					continue
				}
				for _, tp := range st[large.ID] {
					if small.subscribes(tp.Topic) {
						t.Fatalf("unbalanced: %v could move from %s to %s: %s", tp, large.ID, small.ID, render(st))
					}
				}
			}
		}
		co := CooperativeSticky{}.Assign(ms, parts)
		checkCooperative(t, ms, co)
	})
}

// checkCooperative: no partition goes to a member that did not own it
// while another member owned it (it must be revoked first, KIP-429).
func checkCooperative(t *rapid.T, ms []Member, co Assignment) {
	prevOwners := map[TopicPartition][]string{}
	for _, m := range ms {
		for _, tp := range m.Owned {
			prevOwners[tp] = append(prevOwners[tp], m.ID)
		}
	}
	seen := map[TopicPartition]string{}
	for _, m := range ms {
		for _, tp := range co[m.ID] {
			if o, ok := seen[tp]; ok {
				t.Fatalf("cooperative: %v to %s and %s", tp, o, m.ID)
			}
			seen[tp] = m.ID
			owners := prevOwners[tp]
			if len(owners) > 0 && !slices.Contains(owners, m.ID) {
				t.Fatalf("cooperative: %v given to %s in the round it is taken from %v: %s", tp, m.ID, owners, render(co))
			}
		}
	}
}

// Cooperative after a membership change: what it withholds is exactly
// what Sticky moves between members, and the follow-up round (owners
// having revoked) completes Sticky's assignment.
func TestPropertyCooperativeTwoRounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ms, parts := genGroup(t, true)
		first := stickyUD(ms, parts)
		var next []Member
		for _, m := range ms {
			if rapid.IntRange(0, 3).Draw(t, "keep") > 0 {
				next = append(next, Member{ID: m.ID, Topics: m.Topics, Owned: first[m.ID], Generation: 1})
			}
		}
		for i := 0; i < rapid.IntRange(0, 2).Draw(t, "new"); i++ {
			next = append(next, Member{ID: fmt.Sprintf("n%d", i), Topics: ms[0].Topics, Generation: 1})
		}
		if len(next) == 0 {
			return
		}
		st := stickyUD(next, parts)
		co := CooperativeSticky{}.Assign(next, parts)
		checkCooperative(t, next, co)
		tr := TransferringOwnership(next, st)
		for _, m := range next {
			want := slices.DeleteFunc(slices.Clone(st[m.ID]), func(tp TopicPartition) bool { return tr[tp] == m.ID })
			if !slices.Equal(co[m.ID], want) {
				t.Fatalf("%s: cooperative %v, sticky less transfers %v", m.ID, co[m.ID], want)
			}
		}
		// Round two: everyone owns what round one gave them.
		for i := range next {
			next[i].Owned, next[i].Generation = co[next[i].ID], 2
		}
		co2 := CooperativeSticky{}.Assign(next, parts)
		checkExactlyOnce(t, "cooperative round 2", next, parts, co2)
		if s := spread(next, co2); s > 1 {
			t.Fatalf("cooperative round 2 spread %d: %s", s, render(co2))
		}
	})
}
