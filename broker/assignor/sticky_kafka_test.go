package assignor

// This file ports the vectors of Kafka's AbstractStickyAssignorTest,
// StickyAssignorTest and CooperativeStickyAssignorTest (3.9 release
// branch) that sticky_test.go does not: first assignments, members with
// and without user data, stale and missing generations, and the
// non-rack-aware expectations of the rack tests. Rack-aware expectations
// are left out (no racks here). runCooperative and coopRounds, at the
// end, are CooperativeStickyAssignorTest's checks.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// pad is AbstractStickyAssignorTest.getCanonicalName: prefix, then i
// zero-padded to as many digits as max has.
func pad(prefix string, i, max int) string {
	return fmt.Sprintf("%s%0*d", prefix, len(fmt.Sprint(max)), i)
}

// TestStickyKafkaCasesMore are further AbstractStickyAssignorTest cases,
// each run through Sticky and CooperativeSticky (stickyCase.run).
func TestStickyKafkaCasesMore(t *testing.T) {
	cases := []stickyCase{
		{"testOneConsumerNoTopic", []Member{km("consumer", "", "", 0)}, map[string]int32{},
			map[string]string{"consumer": ""}, ""},
		{"testOneConsumerMultipleTopics", []Member{km("consumer", "topic1 topic2", "", 0)}, map[string]int32{"topic1": 1, "topic2": 2},
			map[string]string{"consumer": "topic1-0 topic2-0 topic2-1"}, ""},
		{"testTwoConsumersOneTopicOnePartition", []Member{km("consumer1", "topic", "", 0), km("consumer2", "topic", "", 0)},
			map[string]int32{"topic": 1}, nil, ""},
		{"testOwnedPartitionsAreInvalidatedForConsumerWithMultipleGeneration",
			[]Member{km("consumer1", "topic topic2", "topic-0 topic2-1 topic-1", 10), km("consumer2", "topic topic2", "topic-0 topic2-1 topic2-2", 8)},
			map[string]int32{"topic": 3, "topic2": 3},
			map[string]string{"consumer1": "topic-0 topic2-1 topic-1", "consumer2": "topic-2 topic2-2 topic2-0"}, ""},
		{"testMoveExistingAssignments",
			[]Member{km("consumer1", "topic1 topic2", "topic1-0", 1), km("consumer2", "topic1 topic2 topic3 topic4", "topic2-0 topic3-0", 1),
				km("consumer3", "topic2 topic3 topic4 topic5 topic6", "topic4-0 topic5-0 topic6-0", 1)},
			map[string]int32{"topic1": 1, "topic2": 1, "topic3": 1, "topic4": 1, "topic5": 1, "topic6": 1}, nil, "nil"},
		{"testPoorRoundRobinAssignmentScenario",
			[]Member{km("consumer1", "topic1 topic2 topic3 topic4 topic5", "", 0), km("consumer2", "topic1 topic3 topic5", "", 0),
				km("consumer3", "topic1 topic3 topic5", "", 0), km("consumer4", "topic1 topic2 topic3 topic4 topic5", "", 0)},
			map[string]int32{"topic1": 2, "topic2": 1, "topic3": 2, "topic4": 1, "topic5": 2}, nil, "nil"},
		// StickyAssignorTest.testAssignorWithOldVersionSubscriptions for
		// cooperative-sticky's view (owned partitions in the subscription).
		{"testAssignorWithOldVersionSubscriptions",
			[]Member{km("consumer1", "topic1", "topic1-0", 1), km("consumer2", "topic1", "topic1-1", 1), km("consumer3", "topic1", "", 1)},
			map[string]int32{"topic1": 3},
			map[string]string{"consumer1": "topic1-0", "consumer2": "topic1-1", "consumer3": "topic1-2"}, ""},
	}
	for _, c := range cases {
		c.run(t)
	}
}

// TestStickyNewSubscription is Kafka's testNewSubscription: member i
// subscribes to topics t_i..t_(3i-2), then c0 also subscribes to t1; no
// member has a previous assignment either time.
func TestStickyNewSubscription(t *testing.T) {
	parts := map[string]int32{}
	for i := 1; i < 5; i++ {
		parts[pad("t", i, 5)] = 1
	}
	var ms []Member
	for i := 0; i < 3; i++ {
		var ts []string
		for j := i; j <= 3*i-2; j++ {
			ts = append(ts, pad("t", j, 5))
		}
		ms = append(ms, Member{ID: pad("c", i, 3), Topics: ts})
	}
	stickyCase{"first", ms, parts, nil, "nil"}.run(t)
	ms[0].Topics = append(ms[0].Topics, pad("t", 1, 5))
	stickyCase{"c0 subscribes to t1", ms, parts, nil, "nil"}.run(t)
}

// TestStickyReassignmentAfterOneConsumerAdded is Kafka's
// testReassignmentAfterOneConsumerAdded: nine members, then ten, none
// with a previous assignment (first assignments).
func TestStickyReassignmentAfterOneConsumerAdded(t *testing.T) {
	parts := map[string]int32{"topic": 20}
	var ms []Member
	for i := 1; i < 10; i++ {
		ms = append(ms, km(pad("c", i, 10), "topic", "", 0))
	}
	stickyCase{"nine", ms, parts, nil, ""}.run(t)
	ms = append(ms, km(pad("c", 10, 10), "topic", "", 0))
	stickyCase{"ten", ms, parts, nil, ""}.run(t)
}

// TestStickySameSubscriptions is Kafka's testSameSubscriptions: eight
// members on fourteen topics (topic i has i partitions); after c5 leaves,
// the others keep theirs and only take c5's (nothing is transferred).
func TestStickySameSubscriptions(t *testing.T) {
	parts := map[string]int32{}
	var topics []string
	for i := 1; i < 15; i++ {
		topics = append(topics, pad("t", i, 15))
		parts[topics[i-1]] = int32(i)
	}
	all := strings.Join(topics, " ")
	var ms []Member
	for i := 1; i < 9; i++ {
		ms = append(ms, km(pad("c", i, 9), all, "", 0))
	}
	a := stickyCase{"first", ms, parts, nil, ""}.run(t)
	var next []Member
	for _, m := range ms {
		if m.ID != pad("c", 5, 9) {
			next = append(next, Member{ID: m.ID, Topics: m.Topics, Owned: a[m.ID], Generation: 1})
		}
	}
	b := stickyCase{"c5 left", next, parts, nil, ""}.run(t)
	for _, m := range next {
		if !containsAll(b[m.ID], m.Owned) {
			t.Errorf("c5 left: %s had %v, now %v", m.ID, m.Owned, b[m.ID])
		}
	}
}

// TestStickySubscriptionNotEqualAndAssignSamePartitionWith3Generation is
// Kafka's test of that name: three members of generations 1, 2 and 3 in
// every order claim topic-2, a fourth on another topic; no partition twice
// and every member 1 or 2 partitions.
func TestStickySubscriptionNotEqualAndAssignSamePartitionWith3Generation(t *testing.T) {
	parts := map[string]int32{"topic": 6, "topic1": 1}
	for _, g := range [][3]int32{{1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}} {
		ms := []Member{km("consumer1", "topic", "topic-0 topic-2", g[0]), km("consumer2", "topic", "topic-1 topic-2 topic-3", g[1]),
			km("consumer3", "topic", "topic-2 topic-4 topic-5", g[2]), km("consumer4", "topic1", "topic1-0", 2)}
		a := stickyCase{fmt.Sprintf("generations %v", g), ms, parts, nil, "nil"}.run(t)
		for id, l := range a {
			if len(l) < 1 || len(l) > 2 {
				t.Errorf("generations %v: %s has %v", g, id, l)
			}
		}
	}
}

// assignRound is one rebalance of Kafka's multi-step tests: for Sticky the
// assignment (valid and balanced), for CooperativeSticky the assignment
// after coopRounds' follow-up rebalances (what the test's
// verifyValidityAndBalance leaves in the assignment map).
func assignRound(t *testing.T, coop bool, name string, ms []Member, parts map[string]int32) Assignment {
	t.Helper()
	if coop {
		_, final := coopRounds(t, name+" (cooperative-sticky)", ms, parts)
		return final
	}
	a := stickyUD(ms, parts)
	checkValidityAndBalance(t, name, ms, parts, a)
	return a
}

// TestStickyTopicBalanceAfterReassignment is Kafka's
// testTopicBalanceAfterReassignment: two topics of 12 partitions; one
// member, then two, four, and two again; every member has as many
// partitions of each topic.
func TestStickyTopicBalanceAfterReassignment(t *testing.T) {
	parts := map[string]int32{"topic1": 12, "topic2": 12}
	all := "topic1 topic2"
	for _, coop := range []bool{false, true} {
		check := func(step string, a Assignment, per int) {
			for id, l := range a {
				n := map[string]int{}
				for _, tp := range l {
					n[tp.Topic]++
				}
				if n["topic1"] != per || n["topic2"] != per {
					t.Errorf("coop=%v %s: %s has %v, want %d of each topic", coop, step, id, l, per)
				}
			}
		}
		own := func(a Assignment, id string) string { return strings.Trim(fmt.Sprint(a[id]), "[]") }
		a := assignRound(t, coop, "one", []Member{km("consumer1", all, "", 0)}, parts)
		check("one", a, 12)
		a = assignRound(t, coop, "two", []Member{km("consumer1", all, own(a, "consumer1"), 1), km("consumer2", all, "", 1)}, parts)
		check("two", a, 6)
		a = assignRound(t, coop, "four", []Member{km("consumer1", all, own(a, "consumer1"), 1), km("consumer2", all, own(a, "consumer2"), 1),
			km("consumer3", all, "", 1), km("consumer4", all, "", 1)}, parts)
		check("four", a, 3)
		a = assignRound(t, coop, "two again", []Member{km("consumer3", all, own(a, "consumer3"), 1), km("consumer4", all, own(a, "consumer4"), 1)}, parts)
		check("two again", a, 6)
	}
}

// TestStickyClaimedByTwoInSameGeneration is StickyAssignorTest's and
// CooperativeStickyAssignorTest's
// testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration
// (equal and unequal partitions per member): topic-0, claimed by two
// members of generation 1, goes to the third; cooperative-sticky holds it
// back for one round.
func TestStickyClaimedByTwoInSameGeneration(t *testing.T) {
	for _, c := range []struct {
		n              int32
		c1, c2, c3     string
		coopC1, coopC3 string
	}{
		{3, "topic-1", "topic-2", "topic-0", "topic-1", ""},
		{4, "topic-1 topic-3", "topic-2", "topic-0", "topic-1 topic-3", ""},
	} {
		parts := map[string]int32{"topic": c.n}
		ms := []Member{km("consumer1", "topic", "topic-0 topic-1", 1), km("consumer2", "topic", "topic-0 topic-2", 1), km("consumer3", "topic", "", 1)}
		name := fmt.Sprintf("%d partitions", c.n)
		got := stickyUD(ms, parts)
		if set(got["consumer1"]) != set(tps(c.c1)) || set(got["consumer2"]) != set(tps(c.c2)) || set(got["consumer3"]) != set(tps(c.c3)) {
			t.Errorf("%s: sticky %s", name, render(got))
		}
		checkValidityAndBalance(t, name, ms, parts, got)
		first, _ := coopRounds(t, name, ms, parts)
		if set(first["consumer1"]) != set(tps(c.coopC1)) || set(first["consumer2"]) != set(tps(c.c2)) || set(first["consumer3"]) != set(tps(c.coopC3)) {
			t.Errorf("%s: cooperative-sticky %s", name, render(first))
		}
	}
}

// TestStickyAssignmentWithMultipleGenerations is StickyAssignorTest's
// testAssignmentWithMultipleGenerations1 and 2, each with equal and
// unequal subscriptions: members come back with the assignments of
// different generations (in user data); the newest claims win, the
// result is balanced and sticky.
func TestStickyAssignmentWithMultipleGenerations(t *testing.T) {
	for _, equal := range []bool{true, false} {
		name := fmt.Sprintf("1 equal=%v", equal)
		parts := map[string]int32{"topic": 6, "topic2": 6}
		all, t2 := "topic topic2", "topic topic2"
		if !equal {
			t2 = "topic"
		}
		ms := []Member{km("consumer1", all, "", 0), km("consumer2", t2, "", 0), km("consumer3", all, "", 0)}
		r1 := stickyUD(ms, parts)
		checkValidityAndBalance(t, name, ms, parts, r1)
		for _, id := range []string{"consumer1", "consumer2", "consumer3"} {
			if len(r1[id]) != 4 {
				t.Errorf("%s: r1 %s", name, render(r1))
			}
		}
		own := func(a Assignment, id string) string { return strings.Trim(fmt.Sprint(a[id]), "[]") }
		ms = []Member{ud("consumer1", all, own(r1, "consumer1"), 1), ud("consumer2", t2, own(r1, "consumer2"), 1)}
		r2 := stickyUD(ms, parts)
		checkValidityAndBalance(t, name, ms, parts, r2)
		if len(r2["consumer1"]) != 6 || len(r2["consumer2"]) != 6 || !containsAll(r2["consumer2"], r1["consumer2"]) ||
			(equal && !containsAll(r2["consumer1"], r1["consumer1"])) {
			t.Errorf("%s: r2 %s after %s", name, render(r2), render(r1))
		}
		if !overlaps(r2["consumer2"], r1["consumer3"]) {
			t.Errorf("%s: consumer2 took none of consumer3's partitions: %s after %s", name, render(r2), render(r1))
		}
		ms = []Member{ud("consumer2", t2, own(r2, "consumer2"), 2), ud("consumer3", all, own(r1, "consumer3"), 1)}
		r3 := stickyUD(ms, parts)
		checkValidityAndBalance(t, name, ms, parts, r3)
		if len(r3["consumer2"]) != 6 || len(r3["consumer3"]) != 6 {
			t.Errorf("%s: r3 %s", name, render(r3))
		}
	}
	for _, equal := range []bool{true, false} {
		name := fmt.Sprintf("2 equal=%v", equal)
		parts := map[string]int32{"topic": 4, "topic2": 4, "topic3": 4}
		all, t1, t3 := "topic topic2 topic3", "topic topic2 topic3", "topic topic2 topic3"
		if !equal {
			t1, t3 = "topic", "topic topic2"
		}
		ms := []Member{km("consumer1", t1, "", 0), km("consumer2", all, "", 0), km("consumer3", t3, "", 0)}
		r1 := stickyUD(ms, parts)
		checkValidityAndBalance(t, name, ms, parts, r1)
		own := func(a Assignment, id string) string { return strings.Trim(fmt.Sprint(a[id]), "[]") }
		ms2 := []Member{ud("consumer2", all, own(r1, "consumer2"), 1)}
		r2 := stickyUD(ms2, parts)
		if len(r2["consumer2"]) != 12 || !containsAll(r2["consumer2"], r1["consumer2"]) {
			t.Errorf("%s: r2 %s", name, render(r2))
		}
		ms3 := []Member{ud("consumer1", t1, own(r1, "consumer1"), 1), ud("consumer2", all, own(r2, "consumer2"), 2), ud("consumer3", t3, own(r1, "consumer3"), 1)}
		r3 := stickyUD(ms3, parts)
		checkValidityAndBalance(t, name, ms3, parts, r3)
		for _, id := range []string{"consumer1", "consumer2", "consumer3"} {
			if len(r3[id]) != 4 {
				t.Errorf("%s: r3 %s", name, render(r3))
			}
		}
	}
}

func overlaps(a, b []TopicPartition) bool {
	for _, tp := range a {
		for _, x := range b {
			if tp == x {
				return true
			}
		}
	}
	return false
}

// TestStickyClaimAgainstSubscriptionGeneration: Kafka's
// allSubscriptionsEqual weighs a claim's MemberData generation against the
// earlier claimant's Subscription.generationId. consumer3 (put first in
// Java's HashMap order: consumer3, consumer2, consumer1) had its
// generation reset: its subscription says -1, its user data still claims
// topic-0 in generation 5. consumer2 claims topic-0 in generation 5 too and
// wins it (5 > -1) rather than both losing it (5 == 5), so the fresh
// consumer1 does not get it.
func TestStickyClaimAgainstSubscriptionGeneration(t *testing.T) {
	if got := hashMapOrder([]Member{{ID: "consumer1"}, {ID: "consumer2"}, {ID: "consumer3"}}, []Member{{ID: "consumer1"}, {ID: "consumer2"}, {ID: "consumer3"}}); fmt.Sprint(got) != "[2 1 0]" {
		t.Fatalf("HashMap order %v, want consumer3, consumer2, consumer1", got)
	}
	parts := map[string]int32{"topic": 3}
	c2 := ud("consumer2", "topic", "topic-0", 5)
	c2.Generation = 5
	ms := []Member{km("consumer1", "topic", "", 0), c2, ud("consumer3", "topic", "topic-0", 5)}
	a, tr := stickyAssign(ms, parts, stickyMemberData)
	if got, want := render(a), "consumer1:[topic-1] consumer2:[topic-0] consumer3:[topic-2]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if len(tr) != 0 {
		t.Errorf("transferring %v, want none", tr)
	}
}

// TestStickyMemberData is AbstractStickyAssignorTest.testMemberData and
// the memberData tests of StickyAssignorTest and
// CooperativeStickyAssignorTest: which owned partitions and generation
// each assignor reads from a subscription (v0: user data only; v1: owned
// partitions, no generation; v2+: both).
func TestStickyMemberData(t *testing.T) {
	owned := "topic1-0 topic2-1"
	coopUD := func(gen int32) []byte { return EncodeCooperativeStickyUserData(gen) }
	for _, c := range []struct {
		name  string
		data  memberData
		m     Member
		owned string
		gen   int32
	}{
		{"sticky v0", stickyMemberData, Member{UserData: EncodeStickyUserData(tps(owned), 1)}, owned, 1},
		{"sticky v1", stickyMemberData, Member{Owned: tps(owned), UserData: EncodeStickyUserData(tps(owned), 1)}, owned, 1},
		{"sticky v2", stickyMemberData, Member{Owned: tps(owned), Generation: 1, UserData: EncodeStickyUserData(tps(owned), 1)}, owned, 1},
		// testMemberDataWithInconsistentData: user data outranks the subscription.
		{"sticky inconsistent", stickyMemberData, Member{Owned: tps("topic-0"), UserData: EncodeStickyUserData(tps("topic-1"), 1)}, "topic-1", 1},
		// testMemberDataWillHonorUserData.
		{"sticky honors user data", stickyMemberData, Member{Generation: 1, UserData: EncodeStickyUserData(tps(owned), 0)}, owned, 0},
		{"sticky no user data", stickyMemberData, Member{Owned: tps(owned), Generation: 1}, "", DefaultGeneration},
		{"cooperative v1", cooperativeMemberData, Member{Owned: tps(owned), UserData: coopUD(1)}, owned, 1},
		{"cooperative v2", cooperativeMemberData, Member{Owned: tps(owned), Generation: 1, UserData: coopUD(DefaultGeneration)}, owned, 1},
		// testMemberDataWithInconsistentData: owned partitions from the
		// subscription, the generation from user data.
		{"cooperative inconsistent", cooperativeMemberData, Member{Owned: tps("topic-0"), UserData: coopUD(1)}, "topic-0", 1},
		// testMemberDataWithEmptyPartitionsAndEqualGeneration / HigherGeneration.
		{"cooperative empty owned", cooperativeMemberData, Member{Generation: 1, UserData: coopUD(0)}, "", 1},
		// testEncodeAndDecodeGeneration, testDecodeGeneration.
		{"cooperative user data generation", cooperativeMemberData, Member{UserData: coopUD(10)}, "", 10},
		{"cooperative default user data", cooperativeMemberData, Member{UserData: coopUD(DefaultGeneration)}, "", DefaultGeneration},
		{"cooperative nothing", cooperativeMemberData, Member{}, "", DefaultGeneration},
	} {
		got, gen := c.data(c.m)
		if set(got) != set(tps(c.owned)) || gen != c.gen {
			t.Errorf("%s: %v generation %d, want %v generation %d", c.name, got, gen, tps(c.owned), c.gen)
		}
	}
}

// TestStickyRackTestsWithoutRacks are the non-rack-aware expectations of
// AbstractStickyAssignorTest.testRackAwareAssignmentWithUniformSubscription
// and testRackAwareAssignmentWithNonEqualSubscription
// (verifyRackAssignment: members consumer0..2 with owned partitions in the
// subscription, no user data, no generation). Sticky reads no previous
// assignment from such members (they upgraded from another assignor), so
// it assigns as the first time; CooperativeSticky keeps the owned
// partitions and, on the general path, revokes before it hands over.
func TestStickyRackTestsWithoutRacks(t *testing.T) {
	parts := map[string]int32{"t1": 6, "t2": 7, "t3": 2}
	members := func(topics, owned []string) []Member {
		var ms []Member
		for i, ts := range topics {
			m := Member{ID: fmt.Sprintf("consumer%d", i), Topics: strings.Fields(ts)}
			if owned != nil {
				m.Owned = tps(strings.ReplaceAll(owned[i], ",", ""))
			}
			ms = append(ms, m)
		}
		return ms
	}
	expect := func(name string, a Assignment, want []string) {
		t.Helper()
		for i, w := range want {
			id := fmt.Sprintf("consumer%d", i)
			if set(a[id]) != set(tps(strings.ReplaceAll(w, ",", ""))) {
				t.Errorf("%s: %s got %v, want %s (all: %s)", name, id, set(a[id]), w, render(a))
			}
		}
	}
	all := "t1 t2 t3"
	uniform := []string{all, all, all}
	uniformWant := []string{"t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"}
	nonEqual := []string{all, all, "t1 t3"}
	nonEqualWant := []string{"t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-4, t3-1"}
	for _, c := range []struct {
		name   string
		topics []string
		want   []string
	}{{"uniform", uniform, uniformWant}, {"non-equal", nonEqual, nonEqualWant}} {
		for _, owned := range [][]string{nil, c.want} {
			ms := members(c.topics, owned)
			name := fmt.Sprintf("%s owned=%v", c.name, owned != nil)
			expect(name+" sticky", Sticky{}.Assign(ms, parts), c.want)
			expect(name+" cooperative-sticky", CooperativeSticky{}.Assign(ms, parts), c.want)
		}
	}
	// "Verify that result is same as non-rack-aware assignment if all racks
	// match", with owned partitions unlike the result.
	owned := []string{"t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3", "t2-4, t2-5, t2-6, t3-0, t3-1"}
	expect("non-equal, other owners, sticky", Sticky{}.Assign(members(nonEqual, owned), parts), nonEqualWant)
	intermediate := []string{"t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"}
	expect("non-equal, other owners, cooperative-sticky", CooperativeSticky{}.Assign(members(nonEqual, owned), parts), intermediate)
	expect("non-equal, after revoking, cooperative-sticky", CooperativeSticky{}.Assign(members(nonEqual, intermediate), parts),
		[]string{"t1-2, t1-3, t1-4, t2-4, t2-5", "t2-0, t2-1, t2-2, t2-3, t2-6", "t1-0, t1-1, t1-5, t3-0, t3-1"})
}

// runCooperative runs the case through CooperativeSticky, as
// CooperativeStickyAssignorTest runs AbstractStickyAssignorTest: the
// members' owned partitions and generation travel in the subscription
// (buildSubscriptionV2Above). partitionsTransferringOwnership must be the
// eager one; the first round is the eager result without the transferring
// partitions; the rounds that follow (coopRounds) must end in want.
func (c stickyCase) runCooperative(t *testing.T, eager Assignment, eagerTransferring string) {
	t.Helper()
	name := c.name + " (cooperative-sticky)"
	_, tr := stickyAssign(c.members, c.parts, cooperativeMemberData)
	if got := renderTransferring(tr); got != eagerTransferring {
		t.Errorf("%s: transferring %q, want %q", name, got, eagerTransferring)
	}
	if tr == nil {
		tr = TransferringOwnership(c.members, eager)
	}
	first, final := coopRounds(t, name, c.members, c.parts)
	for _, m := range c.members {
		want := slices.DeleteFunc(slices.Clone(eager[m.ID]), func(tp TopicPartition) bool { return tr[tp] == m.ID })
		if set(first[m.ID]) != set(want) {
			t.Errorf("%s: first round %s got %v, want %v", name, m.ID, set(first[m.ID]), set(want))
		}
	}
	for id, w := range c.want {
		if set(final[id]) != set(tps(w)) {
			t.Errorf("%s: after the follow-up rebalances %s got %v, want %v (all: %s)", name, id, set(final[id]), set(tps(w)), render(final))
		}
	}
}

func renderTransferring(tr map[TopicPartition]string) string {
	if tr == nil {
		return "nil"
	}
	var b []string
	for _, tp := range slices.SortedFunc(maps.Keys(tr), Compare) {
		b = append(b, tp.String()+":"+tr[tp])
	}
	return strings.Join(b, " ")
}

// coopRounds is CooperativeStickyAssignorTest.verifyValidityAndBalance: it
// assigns with CooperativeSticky and, while some member loses a partition,
// rebalances again with every member owning what it was given (generation
// 1, as the test's generationId), at most four more times. No partition
// may be revoked from one member and given to another in the same round.
// The final assignment must be valid and balanced. It returns the first
// and the final assignment.
func coopRounds(t *testing.T, name string, ms []Member, parts map[string]int32) (first, final Assignment) {
	t.Helper()
	a := CooperativeSticky{}.Assign(ms, parts)
	first = a
	for rebalances := 0; ; rebalances++ {
		added, revoked := map[TopicPartition]bool{}, map[TopicPartition]bool{}
		for _, m := range ms {
			for _, tp := range a[m.ID] {
				if !slices.Contains(m.Owned, tp) {
					added[tp] = true
				}
			}
			for _, tp := range m.Owned {
				if !slices.Contains(a[m.ID], tp) {
					revoked[tp] = true
				}
			}
		}
		for _, tp := range slices.SortedFunc(maps.Keys(added), Compare) {
			if revoked[tp] {
				t.Fatalf("%s: round %d: %v assigned to a new member in the rebalance it is revoked in: %s", name, rebalances+1, tp, render(a))
			}
		}
		if len(revoked) == 0 {
			break
		}
		if rebalances == 4 {
			t.Fatalf("%s: still revoking after %d rebalances: %s", name, rebalances+1, render(a))
		}
		next := make([]Member, len(ms))
		for i, m := range ms {
			next[i] = Member{ID: m.ID, Topics: m.Topics, Owned: a[m.ID], Generation: 1}
		}
		ms = next
		a = CooperativeSticky{}.Assign(ms, parts)
	}
	checkValidityAndBalance(t, name, ms, parts, a)
	return first, a
}
