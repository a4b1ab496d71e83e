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
	first := Sticky{}.Assign(sub("t")("a", "b", "c"), parts)
	if got := render(first); got != "a:[t-0 t-3] b:[t-1 t-4] c:[t-2 t-5]" {
		t.Fatalf("first: %s", got)
	}
	second := Sticky{}.Assign([]Member{{ID: "a", Topics: []string{"t"}, Owned: first["a"]}, {ID: "c", Topics: []string{"t"}, Owned: first["c"]}}, parts)
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
		for _, as := range []Assignor{Range{}, RoundRobin{}, Sticky{}} {
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
			before = Sticky{}.Assign(prev, parts)
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
		st, rr := Sticky{}.Assign(next, parts), RoundRobin{}.Assign(next, parts)
		checkExactlyOnce(t, "sticky", next, parts, st)
		if kept(st) < kept(rr) {
			t.Fatalf("sticky kept %d < roundrobin %d: sticky %s, roundrobin %s", kept(st), kept(rr), render(st), render(rr))
		}
		if s := spread(next, st); s > 1 {
			t.Fatalf("sticky spread %d: %s", s, render(st))
		}
	})
}
