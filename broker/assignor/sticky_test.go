package assignor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tps parses "topic-0 topic2-1" into partitions.
func tps(s string) []TopicPartition {
	var out []TopicPartition
	for _, f := range strings.Fields(s) {
		i := strings.LastIndexByte(f, '-')
		p, err := strconv.Atoi(f[i+1:])
		if err != nil {
			panic(f)
		}
		out = append(out, TopicPartition{f[:i], int32(p)})
	}
	return out
}

func set(l []TopicPartition) string {
	s := slices.Clone(l)
	slices.SortFunc(s, Compare)
	return fmt.Sprint(s)
}

// km builds a member as Kafka's tests' buildSubscriptionV2Above does:
// topics, owned partitions, generation.
func km(id, topics, owned string, gen int32) Member {
	return Member{ID: id, Topics: strings.Fields(topics), Owned: tps(owned), Generation: gen}
}

type stickyCase struct {
	name    string
	members []Member // in Kafka's test's put order
	parts   map[string]int32
	want    map[string]string // member -> partitions (any order)
	// transferring is partitionsTransferringOwnership; "nil" for the
	// general path.
	transferring string
}

func (c stickyCase) run(t *testing.T) Assignment {
	t.Helper()
	got, tr := stickyAssign(withUserData(c.members), c.parts, stickyMemberData)
	for id, w := range c.want {
		if set(got[id]) != set(tps(w)) {
			t.Errorf("%s: %s got %v, want %v (all: %s)", c.name, id, set(got[id]), set(tps(w)), render(got))
		}
	}
	trs := renderTransferring(tr)
	if trs != c.transferring {
		t.Errorf("%s: transferring %q, want %q", c.name, trs, c.transferring)
	}
	checkValidityAndBalance(t, c.name, c.members, c.parts, got)
	c.runCooperative(t, got, trs)
	return got
}

// checkValidityAndBalance is Kafka's verifyValidityAndBalance: every
// subscribed partition once, to a subscriber; and where two members'
// counts differ by more than one, the smaller does not subscribe to any
// topic of the larger's partitions.
func checkValidityAndBalance(t *testing.T, name string, ms []Member, parts map[string]int32, a Assignment) {
	t.Helper()
	owner := map[TopicPartition]string{}
	for _, m := range ms {
		for _, tp := range a[m.ID] {
			if o, ok := owner[tp]; ok {
				t.Fatalf("%s: %v to %s and %s", name, tp, o, m.ID)
			}
			if !m.subscribes(tp.Topic) {
				t.Fatalf("%s: %v to %s, which does not subscribe to it", name, tp, m.ID)
			}
			owner[tp] = m.ID
		}
	}
	for _, tp := range allPartitions(ms, parts) {
		if _, ok := owner[tp]; !ok {
			t.Fatalf("%s: %v unassigned: %s", name, tp, render(a))
		}
	}
	for i, x := range ms {
		for _, y := range ms[i+1:] {
			small, large := x, y
			if len(a[x.ID]) > len(a[y.ID]) {
				small, large = y, x
			}
			if len(a[large.ID])-len(a[small.ID]) <= 1 {
				continue
			}
			for _, tp := range a[large.ID] {
				if small.subscribes(tp.Topic) {
					t.Fatalf("%s: %v can move from %s to %s: %s", name, tp, large.ID, small.ID, render(a))
				}
			}
		}
	}
}

// TestStickyKafkaCases are AbstractStickyAssignorTest's cases with exact
// expectations (Kafka 3.5+, no racks), members put in the test's order.
func TestStickyKafkaCases(t *testing.T) {
	all12 := "topic1 topic2"
	cases := []stickyCase{
		{"testOneConsumerOneTopic", []Member{km("consumer", "topic", "", 0)}, map[string]int32{"topic": 3},
			map[string]string{"consumer": "topic-0 topic-1 topic-2"}, ""},
		{"testOneConsumerNonexistentTopic", []Member{km("consumer", "topic", "", 0)}, map[string]int32{},
			map[string]string{"consumer": ""}, ""},
		{"testOnlyAssignsPartitionsFromSubscribedTopics", []Member{km("consumer", "topic", "topic-0 topic-1 other-0 other-1", 1)}, map[string]int32{"topic": 2},
			map[string]string{"consumer": "topic-0 topic-1"}, ""},
		{"testTwoConsumersOneTopicTwoPartitions", []Member{km("consumer1", "topic", "", 0), km("consumer2", "topic", "", 0)}, map[string]int32{"topic": 2},
			map[string]string{"consumer1": "topic-0", "consumer2": "topic-1"}, ""},
		{"testMultipleConsumersMixedTopicSubscriptions",
			[]Member{km("consumer1", "topic1", "", 0), km("consumer2", "topic1 topic2", "", 0), km("consumer3", "topic1", "", 0)},
			map[string]int32{"topic1": 3, "topic2": 2},
			map[string]string{"consumer1": "topic1-0 topic1-2", "consumer2": "topic2-0 topic2-1", "consumer3": "topic1-1"}, "nil"},
		{"testTwoConsumersTwoTopicsSixPartitions", []Member{km("consumer1", all12, "", 0), km("consumer2", all12, "", 0)},
			map[string]int32{"topic1": 3, "topic2": 3},
			map[string]string{"consumer1": "topic1-0 topic1-2 topic2-1", "consumer2": "topic1-1 topic2-0 topic2-2"}, ""},
		{"testConsumerOwningMinQuotaExpectedMaxQuota",
			[]Member{km("consumer1", all12, "topic1-0 topic2-1", 1), km("consumer2", all12, "topic1-1 topic2-2", 1)},
			map[string]int32{"topic1": 2, "topic2": 3},
			map[string]string{"consumer1": "topic1-0 topic2-1 topic2-0", "consumer2": "topic1-1 topic2-2"}, ""},
		{"testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers",
			[]Member{km("consumer1", all12, "topic1-0 topic2-0", 1), km("consumer2", all12, "topic1-1 topic2-1", 1), km("consumer3", all12, "", 1)},
			map[string]int32{"topic1": 2, "topic2": 2},
			map[string]string{"consumer1": "topic1-0", "consumer2": "topic1-1 topic2-1", "consumer3": "topic2-0"}, "topic2-0:consumer3"},
		{"testAllConsumersAreUnderMinQuota",
			[]Member{km("consumer1", all12, "topic1-0", 1), km("consumer2", all12, "topic1-1", 1), km("consumer3", all12, "", 1)},
			map[string]int32{"topic1": 2, "topic2": 3},
			map[string]string{"consumer1": "topic1-0 topic2-1", "consumer2": "topic1-1 topic2-2", "consumer3": "topic2-0"}, ""},
		{"testAllConsumersReachExpectedQuotaAndAreConsideredFilled",
			[]Member{km("consumer1", "topic", "topic-0 topic-1", 1), km("consumer2", "topic", "topic-2", 1), km("consumer3", "topic", "", 1)},
			map[string]int32{"topic": 4},
			map[string]string{"consumer1": "topic-0 topic-1", "consumer2": "topic-2", "consumer3": "topic-3"}, ""},
		{"testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration",
			[]Member{km("consumer1", "topic topic2", "topic-0 topic-2 topic2-1", 10), km("consumer2", "topic topic2", "topic-0 topic-2 topic2-1", 9)},
			map[string]int32{"topic": 3, "topic2": 3},
			map[string]string{"consumer1": "topic-0 topic-2 topic2-1", "consumer2": "topic-1 topic2-0 topic2-2"}, ""},
		{"testOwnedPartitionsAreInvalidatedForConsumerWithNoGeneration",
			[]Member{km("consumer1", "topic topic2", "topic-0 topic-2 topic2-1", 10), km("consumer2", "topic topic2", "topic-0 topic-2 topic2-1", DefaultGeneration)},
			map[string]int32{"topic": 3, "topic2": 3},
			map[string]string{"consumer1": "topic-0 topic-2 topic2-1", "consumer2": "topic-1 topic2-0 topic2-2"}, ""},
		{"testPartitionsTransferringOwnershipIncludeThePartitionClaimedByMultipleConsumersInSameGeneration",
			[]Member{km("consumer1", "topic", "topic-0 topic-1", 1), km("consumer2", "topic", "topic-0 topic-2", 1), km("consumer3", "topic", "", 1)},
			map[string]int32{"topic": 3},
			map[string]string{"consumer1": "topic-1", "consumer2": "topic-2", "consumer3": "topic-0"}, "topic-0:consumer3"},
		{"testEnsurePartitionsAssignedToHighestGeneration",
			[]Member{km("consumer1", "topic topic2 topic3", "topic-0 topic2-0 topic3-0", 10),
				km("consumer2", "topic topic2 topic3", "topic-1 topic2-1 topic3-1", 9),
				km("consumer3", "topic topic2 topic3", "topic2-1 topic3-0 topic3-2", 8)},
			map[string]int32{"topic": 3, "topic2": 3, "topic3": 3},
			map[string]string{"consumer1": "topic-0 topic2-0 topic3-0", "consumer2": "topic-1 topic2-1 topic3-1", "consumer3": "topic-2 topic2-2 topic3-2"}, ""},
		{"testNoReassignmentOnCurrentMembers",
			[]Member{km("consumer1", "topic topic2 topic3 topic1", "", DefaultGeneration),
				km("consumer2", "topic topic2 topic3 topic1", "topic-0 topic2-0 topic1-0", 9),
				km("consumer3", "topic topic2 topic3 topic1", "topic3-2 topic2-2 topic1-1", 8),
				km("consumer4", "topic topic2 topic3 topic1", "topic3-1 topic-1 topic-2", 7)},
			map[string]int32{"topic": 3, "topic1": 3, "topic2": 3, "topic3": 3},
			map[string]string{"consumer1": "topic1-2 topic2-1 topic3-0"}, ""},
		{"testAssignmentUpdatedForDeletedTopic", []Member{km("consumer", "topic1 topic2 topic3", "", 0)}, map[string]int32{"topic1": 1, "topic3": 100},
			map[string]string{}, ""},
		{"testNoExceptionThrownWhenOnlySubscribedTopicDeleted", []Member{km("consumer", "topic", "topic-0 topic-1 topic-2", 1)}, map[string]int32{},
			map[string]string{"consumer": ""}, ""},
	}
	for _, c := range cases {
		c.run(t)
	}
}

// TestStickyAddRemoveTwoConsumersTwoTopics is Kafka's
// testAddRemoveTwoConsumersTwoTopics: two members, then four (the new ones
// take only revoked partitions), then the two new ones alone. NB: the
// expectations of the second and third step are those of Kafka 3.8+
// (KAFKA-16277, owned partitions kept in partition-then-topic order, so a
// member keeps topic1-0 and topic2-1 rather than topic1-0 and topic1-2);
// the stored Kafka test predates that change.
func TestStickyAddRemoveTwoConsumersTwoTopics(t *testing.T) {
	parts := map[string]int32{"topic1": 3, "topic2": 4}
	all := "topic1 topic2"
	a := stickyCase{"initial", []Member{km("consumer1", all, "", 0), km("consumer2", all, "", 0)}, parts,
		map[string]string{"consumer1": "topic1-0 topic1-2 topic2-1 topic2-3", "consumer2": "topic1-1 topic2-0 topic2-2"}, ""}.run(t)
	own := func(id string) string { return strings.Trim(fmt.Sprint(a[id]), "[]") }
	a = stickyCase{"add two",
		[]Member{km("consumer1", all, own("consumer1"), 1), km("consumer2", all, own("consumer2"), 1), km("consumer3", all, "", 1), km("consumer4", all, "", 1)}, parts,
		map[string]string{"consumer1": "topic1-0 topic2-1", "consumer2": "topic1-1 topic2-0", "consumer3": "topic1-2 topic2-3", "consumer4": "topic2-2"},
		"topic1-2:consumer3 topic2-2:consumer4 topic2-3:consumer3"}.run(t)
	stickyCase{"remove two",
		[]Member{km("consumer3", all, own("consumer3"), 1), km("consumer4", all, own("consumer4"), 1)}, parts,
		map[string]string{"consumer3": "topic1-2 topic2-3 topic1-0 topic2-1", "consumer4": "topic2-2 topic1-1 topic2-0"}, ""}.run(t)
}

// TestStickyAddRemoveConsumerOneTopic is Kafka's
// testAddRemoveConsumerOneTopic.
func TestStickyAddRemoveConsumerOneTopic(t *testing.T) {
	parts := map[string]int32{"topic": 3}
	stickyCase{"one", []Member{km("consumer1", "topic", "", 0)}, parts, map[string]string{"consumer1": "topic-0 topic-1 topic-2"}, ""}.run(t)
	stickyCase{"add", []Member{km("consumer1", "topic", "topic-0 topic-1 topic-2", 1), km("consumer2", "topic", "", 1)}, parts,
		map[string]string{"consumer1": "topic-0 topic-1", "consumer2": "topic-2"}, "topic-2:consumer2"}.run(t)
	stickyCase{"remove", []Member{km("consumer2", "topic", "topic-2", 1)}, parts, map[string]string{"consumer2": "topic-0 topic-1 topic-2"}, ""}.run(t)
}

// TestStickyAddRemoveTopicTwoConsumers is Kafka's
// testAddRemoveTopicTwoConsumers: adding a topic keeps both members'
// partitions; removing one keeps the rest.
func TestStickyAddRemoveTopicTwoConsumers(t *testing.T) {
	parts := map[string]int32{"topic": 3}
	a1 := stickyCase{"first", []Member{km("consumer1", "topic", "", 0), km("consumer2", "topic", "", 0)}, parts, nil, ""}.run(t)
	parts["topic2"] = 3
	own := func(a Assignment, id string) string { return strings.Trim(fmt.Sprint(a[id]), "[]") }
	a2 := stickyCase{"add topic2", []Member{km("consumer1", "topic topic2", own(a1, "consumer1"), 1), km("consumer2", "topic topic2", own(a1, "consumer2"), 1)},
		parts, nil, ""}.run(t)
	for _, id := range []string{"consumer1", "consumer2"} {
		if len(a2[id]) != 3 || !containsAll(a2[id], a1[id]) {
			t.Errorf("add topic2: %s had %v, now %v", id, a1[id], a2[id])
		}
	}
	delete(parts, "topic")
	a3 := stickyCase{"remove topic", []Member{km("consumer1", "topic2", own(a2, "consumer1"), 1), km("consumer2", "topic2", own(a2, "consumer2"), 1)},
		parts, nil, ""}.run(t)
	for _, id := range []string{"consumer1", "consumer2"} {
		if !containsAll(a2[id], a3[id]) {
			t.Errorf("remove topic: %s had %v, now %v", id, a2[id], a3[id])
		}
	}
}

func containsAll(l, sub []TopicPartition) bool {
	for _, tp := range sub {
		if !slices.Contains(l, tp) {
			return false
		}
	}
	return true
}

// TestStickyReassignmentAfterOneConsumerLeaves is Kafka's
// testReassignmentAfterOneConsumerLeaves (general path: member i
// subscribes to topics 1..i, topic i has i partitions), checked for
// validity, balance and that every survivor keeps what it had unless it
// now has more than its fair share.
func TestStickyReassignmentAfterOneConsumerLeaves(t *testing.T) {
	parts := map[string]int32{}
	var ms []Member
	for i := 1; i < 20; i++ {
		parts[fmt.Sprintf("topic%02d", i)] = int32(i)
	}
	for i := 1; i < 20; i++ {
		var ts []string
		for j := 1; j <= i; j++ {
			ts = append(ts, fmt.Sprintf("topic%02d", j))
		}
		ms = append(ms, Member{ID: fmt.Sprintf("consumer%02d", i), Topics: ts})
	}
	a := stickyUD(ms, parts)
	checkValidityAndBalance(t, "first", ms, parts, a)
	var next []Member
	for _, m := range ms {
		if m.ID != "consumer10" {
			next = append(next, Member{ID: m.ID, Topics: m.Topics, Owned: a[m.ID], Generation: 1})
		}
	}
	b := stickyUD(next, parts)
	checkValidityAndBalance(t, "second", next, parts, b)
	kept := 0
	for _, m := range next {
		for _, tp := range b[m.ID] {
			if slices.Contains(m.Owned, tp) {
				kept++
			}
		}
	}
	total := 0
	for _, m := range next {
		total += len(m.Owned)
	}
	// NB: Kafka's test asserts isSticky (no partition moved both ways
	// between two members); here, that most partitions stay put.
	if kept*10 < total*8 {
		t.Errorf("kept %d of %d owned partitions", kept, total)
	}
}

// TestStickyUserData: the eager assignor reads StickyAssignorUserData (v1
// with generation, v0 without), and it outranks Owned.
func TestStickyUserData(t *testing.T) {
	owned := tps("t-1 u-0 t-0")
	b := EncodeStickyUserData(owned, 7)
	got, gen, err := DecodeStickyUserData(b)
	if err != nil || gen != 7 || set(got) != set(owned) {
		t.Fatalf("v1: %v %d %v", got, gen, err)
	}
	got, gen, err = DecodeStickyUserData(b[:len(b)-4]) // v0: no generation
	if err != nil || gen != DefaultGeneration || set(got) != set(owned) {
		t.Fatalf("v0: %v %d %v", got, gen, err)
	}
	if _, _, err := DecodeStickyUserData(b[:7]); err == nil {
		t.Fatal("truncated user data decoded")
	}
	// Kafka's testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration
	// through user data: the claims of generation 10 beat those of 9.
	parts := map[string]int32{"topic": 3, "topic2": 3}
	claim := tps("topic-0 topic-2 topic2-1")
	ms := []Member{
		{ID: "consumer1", Topics: []string{"topic", "topic2"}, UserData: EncodeStickyUserData(claim, 10)},
		{ID: "consumer2", Topics: []string{"topic", "topic2"}, Owned: tps("topic-1"), UserData: EncodeStickyUserData(claim, 9)},
	}
	a := stickyUD(ms, parts)
	if set(a["consumer1"]) != set(claim) || set(a["consumer2"]) != set(tps("topic-1 topic2-0 topic2-2")) {
		t.Fatalf("user data: %s", render(a))
	}
	// Round trip through the subscription.
	m, err := DecodeSubscription("consumer1", EncodeMember(Member{Topics: ms[0].Topics, Owned: claim, Generation: 10, UserData: ms[0].UserData}))
	if err != nil || m.Generation != 10 || set(m.Owned) != set(claim) || string(m.UserData) != string(ms[0].UserData) {
		t.Fatalf("EncodeMember: %+v %v", m, err)
	}
}

// TestCooperativeStickyWithholdsTransfers: CooperativeStickyAssignor
// leaves a partition that changes owner out of the new owner's
// assignment (Kafka's CooperativeStickyAssignorTest shape).
func TestCooperativeStickyWithholdsTransfers(t *testing.T) {
	all := "topic1 topic2"
	parts := map[string]int32{"topic1": 3, "topic2": 4}
	ms := []Member{km("consumer1", all, "topic1-0 topic1-2 topic2-1 topic2-3", 1), km("consumer2", all, "topic1-1 topic2-0 topic2-2", 1),
		km("consumer3", all, "", 1), km("consumer4", all, "", 1)}
	a := CooperativeSticky{}.Assign(ms, parts)
	want := "consumer1:[topic1-0 topic2-1] consumer2:[topic1-1 topic2-0] consumer3:[] consumer4:[]"
	if got := render(a); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// The follow-up rebalance, after the revocation, hands them over.
	own := func(id string) string { return strings.Trim(fmt.Sprint(a[id]), "[]") }
	ms = []Member{km("consumer1", all, own("consumer1"), 2), km("consumer2", all, own("consumer2"), 2), km("consumer3", all, "", 2), km("consumer4", all, "", 2)}
	a = CooperativeSticky{}.Assign(ms, parts)
	want = "consumer1:[topic1-0 topic2-1] consumer2:[topic1-1 topic2-0] consumer3:[topic1-2 topic2-3] consumer4:[topic2-2]"
	if got := render(a); got != want {
		t.Fatalf("second round: got %s, want %s", got, want)
	}
	// General path: transfers computed from owned vs assigned.
	ms = []Member{km("c1", "topic1", "topic1-0 topic1-1 topic1-2", 1), km("c2", "topic1 topic2", "topic2-0 topic2-1 topic2-2 topic2-3", 1), km("c3", "topic1 topic2", "", 1)}
	st := stickyUD(ms, parts)
	co := CooperativeSticky{}.Assign(ms, parts)
	tr := TransferringOwnership(ms, st)
	if len(tr) == 0 {
		t.Fatalf("general: no transfers in %s", render(st))
	}
	for tp, id := range tr {
		if slices.Contains(co[id], tp) {
			t.Errorf("general: %v given to %s in the round it is revoked: %s", tp, id, render(co))
		}
	}
}

// TestJavaHashOrder pins String.hashCode and the HashMap order it gives.
func TestJavaHashOrder(t *testing.T) {
	if h := JavaStringHashCode("hello"); h != 99162322 {
		t.Errorf("hash(hello) = %d", h)
	}
	if h := JavaStringHashCode("Aa"); h != JavaStringHashCode("BB") || h != 2112 {
		t.Errorf("hash(Aa) = %d", h)
	}
	if h := JavaStringHashCode("polygenelubricants"); h != -2147483648 {
		t.Errorf("hash(polygenelubricants) = %d", h)
	}
	if javaTableSize(12) != 16 || javaTableSize(13) != 32 || javaTableSize(100) != 256 {
		t.Error("table sizes")
	}
}

// BenchmarkSticky: 100 members, 10 topics of 100 partitions; a fresh
// assignment, then a rebalance after one member leaves (constrained path),
// and the general path with one member on a single topic.
func BenchmarkSticky(b *testing.B) {
	parts := map[string]int32{}
	var topics []string
	for i := 0; i < 10; i++ {
		topics = append(topics, fmt.Sprintf("t%d", i))
		parts[topics[i]] = 100
	}
	var ms []Member
	for i := 0; i < 100; i++ {
		ms = append(ms, Member{ID: fmt.Sprintf("consumer-%03d", i), Topics: topics})
	}
	first := stickyUD(ms, parts)
	var leave []Member
	for _, m := range ms[1:] {
		leave = append(leave, Member{ID: m.ID, Topics: m.Topics, Owned: first[m.ID], Generation: 1})
	}
	general := slices.Clone(leave)
	general[0].Topics = topics[:1]
	for _, c := range []struct {
		name string
		ms   []Member
	}{{"fresh", ms}, {"one-left", leave}, {"general", general}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				stickyUD(c.ms, parts)
			}
		})
	}
}

// ud builds a member as StickyAssignorTest does: topics, and the previous
// assignment with its generation in StickyAssignorUserData.
func ud(id, topics, owned string, gen int32) Member {
	return Member{ID: id, Topics: strings.Fields(topics), UserData: EncodeStickyUserData(tps(owned), gen)}
}

// TestStickyConflictingPreviousGenerations is StickyAssignorTest's
// testAssignmentWithConflictingPreviousGenerations (both the equal and the
// unequal subscription variant): the claims of generation 2 beat those of
// generation 1, the result is balanced and generation-2 members keep only
// what they claimed.
func TestStickyConflictingPreviousGenerations(t *testing.T) {
	parts := map[string]int32{"topic": 4, "topic2": 4, "topic3": 4}
	all := "topic topic2 topic3"
	for _, equal := range []bool{true, false} {
		t1, t2 := all, all
		c1 := "topic-0 topic-1 topic-2 topic2-2 topic2-3 topic3-0"
		if !equal {
			t1, t2, c1 = "topic", "topic topic2", "topic-0 topic-1 topic-2 topic-3"
		}
		c2 := "topic-0 topic-1 topic2-0 topic2-1 topic2-2 topic2-3"
		c3 := "topic-2 topic-3 topic3-0 topic3-1 topic3-2 topic3-3"
		ms := []Member{ud("consumer1", t1, c1, 1), ud("consumer2", t2, c2, 2), ud("consumer3", all, c3, 2)}
		a := stickyUD(ms, parts)
		name := fmt.Sprintf("equal=%v", equal)
		checkValidityAndBalance(t, name, ms, parts, a)
		for _, id := range []string{"consumer1", "consumer2", "consumer3"} {
			if len(a[id]) != 4 {
				t.Errorf("%s: %s has %d partitions: %s", name, id, len(a[id]), render(a))
			}
		}
		if !containsAll(tps(c2), a["consumer2"]) || !containsAll(tps(c3), a["consumer3"]) {
			t.Errorf("%s: generation-2 members took partitions they did not claim: %s", name, render(a))
		}
	}
}

// TestStickySchemaBackwardCompatibility is Kafka's
// testSchemaBackwardCompatibility: one member's user data is v0 (no
// generation); both previous owners keep a partition they had.
func TestStickySchemaBackwardCompatibility(t *testing.T) {
	parts := map[string]int32{"topic": 3}
	v0 := EncodeStickyUserData(tps("topic-1"), 0)
	v0 = v0[:len(v0)-4]
	ms := []Member{ud("consumer1", "topic", "topic-0 topic-2", 1), {ID: "consumer2", Topics: []string{"topic"}, UserData: v0}, km("consumer3", "topic", "", 0)}
	a := stickyUD(ms, parts)
	checkValidityAndBalance(t, "v0", ms, parts, a)
	if len(a["consumer1"]) != 1 || !containsAll(tps("topic-0 topic-2"), a["consumer1"]) || set(a["consumer2"]) != set(tps("topic-1")) {
		t.Errorf("got %s", render(a))
	}
}

// TestStickyStickiness is Kafka's testStickiness: four members, three
// partitions; after the first member leaves, every member that had a
// partition keeps it.
func TestStickyStickiness(t *testing.T) {
	parts := map[string]int32{"topic1": 3}
	ms := []Member{km("consumer1", "topic1", "", 0), km("consumer2", "topic1", "", 0), km("consumer3", "topic1", "", 0), km("consumer4", "topic1", "", 0)}
	a := stickyUD(ms, parts)
	var next []Member
	for _, m := range ms[1:] {
		next = append(next, Member{ID: m.ID, Topics: m.Topics, Owned: a[m.ID], Generation: 1})
	}
	b := stickyUD(next, parts)
	for _, m := range next {
		if len(b[m.ID]) != 1 || !containsAll(b[m.ID], m.Owned) {
			t.Errorf("%s had %v, now %v", m.ID, m.Owned, b[m.ID])
		}
	}
}

// TestStickyLargeUniform is a scaled-down
// testLargeAssignmentAndGroupWithUniformSubscription (50 topics x 200
// partitions, 200 members): the rebalance after one member leaves moves
// only that member's partitions.
func TestStickyLargeUniform(t *testing.T) {
	parts := map[string]int32{}
	var topics []string
	for i := 0; i < 50; i++ {
		topics = append(topics, fmt.Sprintf("topic%02d", i))
		parts[topics[i]] = 200
	}
	var ms []Member
	for i := 0; i < 200; i++ {
		ms = append(ms, Member{ID: fmt.Sprintf("consumer%03d", i), Topics: topics})
	}
	a := stickyUD(ms, parts)
	checkValidityAndBalance(t, "fresh", ms, parts, a)
	var next []Member
	for _, m := range ms[1:] {
		next = append(next, Member{ID: m.ID, Topics: m.Topics, Owned: a[m.ID], Generation: 1})
	}
	b := stickyUD(next, parts)
	checkValidityAndBalance(t, "one left", next, parts, b)
	for _, m := range next {
		if !containsAll(b[m.ID], m.Owned) {
			t.Fatalf("%s lost partitions: had %d, has %d", m.ID, len(m.Owned), len(b[m.ID]))
		}
	}
}

// withUserData is Kafka's StickyAssignorTest.buildSubscriptionV2Above: a
// member's owned partitions and generation travel in its
// StickyAssignorUserData (as the consumer sends them to "sticky"); a
// member with neither, or with user data already, is left as it is.
func withUserData(ms []Member) []Member {
	out := slices.Clone(ms)
	for i, m := range out {
		if len(m.UserData) == 0 && (len(m.Owned) > 0 || m.Generation != 0) {
			out[i].UserData = EncodeStickyUserData(m.Owned, m.Generation)
		}
	}
	return out
}

// stickyUD is the eager sticky assignor over withUserData(ms).
func stickyUD(ms []Member, parts map[string]int32) Assignment {
	return Sticky{}.Assign(withUserData(ms), parts)
}

// TestStickyWithoutUserDataIgnoresOwned: StickyAssignor.memberData reads
// only the user data, so members without it (a first assignment, or
// members that upgraded from another assignor and carry their owned
// partitions and generation in the subscription only) are assigned as
// with no previous partitions at all, while CooperativeSticky, which reads
// the subscription's owned partitions, keeps them.
func TestStickyWithoutUserDataIgnoresOwned(t *testing.T) {
	parts := map[string]int32{"topic": 3}
	upgraded := []Member{km("consumer1", "topic", "topic-1 topic-2", 1), km("consumer2", "topic", "topic-0", 1)}
	fresh := []Member{km("consumer1", "topic", "", 0), km("consumer2", "topic", "", 0)}
	if got, want := render(Sticky{}.Assign(upgraded, parts)), "consumer1:[topic-0 topic-2] consumer2:[topic-1]"; got != want {
		t.Fatalf("sticky, owned without user data: %s, want %s", got, want)
	}
	if got, want := render(Sticky{}.Assign(upgraded, parts)), render(Sticky{}.Assign(fresh, parts)); got != want {
		t.Fatalf("sticky, owned without user data: %s, want the fresh assignment %s", got, want)
	}
	if got, want := render(CooperativeSticky{}.Assign(upgraded, parts)), "consumer1:[topic-1 topic-2] consumer2:[topic-0]"; got != want {
		t.Fatalf("cooperative-sticky keeps the subscription's owned partitions: %s, want %s", got, want)
	}
	if got, want := render(stickyUD(upgraded, parts)), "consumer1:[topic-1 topic-2] consumer2:[topic-0]"; got != want {
		t.Fatalf("sticky with the same partitions in user data: %s, want %s", got, want)
	}
}
