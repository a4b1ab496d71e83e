package coordinator

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tps parses "t1:1,2,3 t2:4" into sorted partitions.
func tps(s string) []TopicPartition {
	var out []TopicPartition
	for _, f := range strings.Fields(s) {
		topic, ps, _ := strings.Cut(f, ":")
		for _, p := range strings.Split(ps, ",") {
			n, _ := strconv.Atoi(p)
			out = append(out, TopicPartition{topic, int32(n)})
		}
	}
	sortTPs(out)
	return out
}

// TestCurrentAssignmentBuilderKafkaVectors runs Kafka's
// CurrentAssignmentBuilderTest (group-coordinator, modern/consumer; trunk of
// October 2024 = 4.0) through consumerGroup.reconcile. Kafka's
// currentPartitionEpoch lambda becomes held: the partitions another member
// holds ("all": every partition the member does not hold itself). Not
// transcribed: testUnknownState (MemberState UNKNOWN, a downgrade guard, is
// not modelled).
func TestCurrentAssignmentBuilderKafkaVectors(t *testing.T) {
	type state struct {
		st            MemberState
		epoch, prev   int32
		assigned, rev string
	}
	cases := []struct {
		name        string
		member      state
		targetEpoch int32
		target      string
		held        string // "all", "", or partitions
		owned       string // "-" for null (not sent)
		want        state
	}{
		{"testStableToStable", state{MemberStable, 10, 10, "t1:1,2,3 t2:4,5,6", ""}, 11, "t1:1,2,3 t2:4,5,6", "all", "-",
			state{MemberStable, 11, 10, "t1:1,2,3 t2:4,5,6", ""}},
		{"testStableToStableWithNewPartitions", state{MemberStable, 10, 10, "t1:1,2,3 t2:4,5,6", ""}, 11, "t1:1,2,3,4 t2:4,5,6,7", "", "-",
			state{MemberStable, 11, 10, "t1:1,2,3,4 t2:4,5,6,7", ""}},
		{"testStableToUnrevokedPartitions", state{MemberStable, 10, 10, "t1:1,2,3 t2:4,5,6", ""}, 11, "t1:2,3,4 t2:5,6,7", "", "-",
			state{MemberUnrevokedPartitions, 10, 10, "t1:2,3 t2:5,6", "t1:1 t2:4"}},
		{"testStableToUnreleasedPartitions", state{MemberStable, 10, 10, "t1:1,2,3 t2:4,5,6", ""}, 11, "t1:1,2,3,4 t2:4,5,6,7", "all", "-",
			state{MemberUnreleasedPartitions, 11, 10, "t1:1,2,3 t2:4,5,6", ""}},
		{"testStableToUnreleasedPartitionsWithOwnedPartitionsNotHavingRevokedPartitions", state{MemberStable, 10, 10, "t1:1,2,3 t2:4,5,6", ""},
			11, "t1:1,2,3 t2:4,5,7", "t2:7", "", state{MemberUnreleasedPartitions, 11, 10, "t1:1,2,3 t2:4,5", ""}},
		{"testUnrevokedPartitionsToStable", state{MemberUnrevokedPartitions, 10, 10, "t1:2,3 t2:5,6", "t1:1 t2:4"}, 11, "t1:2,3 t2:5,6", "", "t1:2,3 t2:5,6",
			state{MemberStable, 11, 10, "t1:2,3 t2:5,6", ""}},
		{"testRemainsInUnrevokedPartitions/null", state{MemberUnrevokedPartitions, 10, 10, "t1:2,3 t2:5,6", "t1:1 t2:4"}, 12, "t1:3 t2:6", "", "-",
			state{MemberUnrevokedPartitions, 10, 10, "t1:2,3 t2:5,6", "t1:1 t2:4"}},
		{"testRemainsInUnrevokedPartitions/owns-t1-1", state{MemberUnrevokedPartitions, 10, 10, "t1:2,3 t2:5,6", "t1:1 t2:4"}, 12, "t1:3 t2:6", "", "t1:1,2,3 t2:5,6",
			state{MemberUnrevokedPartitions, 10, 10, "t1:2,3 t2:5,6", "t1:1 t2:4"}},
		{"testRemainsInUnrevokedPartitions/owns-t2-4", state{MemberUnrevokedPartitions, 10, 10, "t1:2,3 t2:5,6", "t1:1 t2:4"}, 12, "t1:3 t2:6", "", "t1:2,3 t2:4,5,6",
			state{MemberUnrevokedPartitions, 10, 10, "t1:2,3 t2:5,6", "t1:1 t2:4"}},
		{"testUnrevokedPartitionsToUnrevokedPartitions", state{MemberUnrevokedPartitions, 10, 10, "t1:2,3 t2:5,6", "t1:1 t2:4"}, 12, "t1:3 t2:6", "", "t1:2,3 t2:5,6",
			state{MemberUnrevokedPartitions, 11, 10, "t1:3 t2:6", "t1:2 t2:5"}},
		{"testUnrevokedPartitionsToUnreleasedPartitions", state{MemberUnrevokedPartitions, 11, 10, "t1:2,3 t2:5,6", ""}, 11, "t1:2,3,4 t2:5,6,7", "all", "t1:2,3 t2:5,6",
			state{MemberUnreleasedPartitions, 11, 11, "t1:2,3 t2:5,6", ""}},
		{"testUnreleasedPartitionsToStable", state{MemberUnreleasedPartitions, 11, 11, "t1:2,3 t2:5,6", ""}, 12, "t1:2,3 t2:5,6", "all", "-",
			state{MemberStable, 12, 11, "t1:2,3 t2:5,6", ""}},
		{"testUnreleasedPartitionsToStableWithNewPartitions", state{MemberUnreleasedPartitions, 11, 11, "t1:2,3 t2:5,6", ""}, 11, "t1:2,3,4 t2:5,6,7", "", "-",
			state{MemberStable, 11, 11, "t1:2,3,4 t2:5,6,7", ""}},
		{"testUnreleasedPartitionsToUnreleasedPartitions", state{MemberUnreleasedPartitions, 11, 11, "t1:2,3 t2:5,6", ""}, 11, "t1:2,3,4 t2:5,6,7", "all", "-",
			state{MemberUnreleasedPartitions, 11, 11, "t1:2,3 t2:5,6", ""}},
		{"testUnreleasedPartitionsToUnrevokedPartitions", state{MemberUnreleasedPartitions, 11, 11, "t1:2,3 t2:5,6", ""}, 12, "t1:3 t2:6", "all", "-",
			state{MemberUnrevokedPartitions, 11, 11, "t1:3 t2:6", "t1:2 t2:5"}},
	}
	for _, c := range cases {
		g := newConsumerGroup("g", 0)
		m := &cgMember{id: "member", state: c.member.st, epoch: c.member.epoch, previousEpoch: c.member.prev,
			assigned: tps(c.member.assigned), pending: tps(c.member.rev), target: tps(c.target)}
		g.members["member"], g.assignmentEpoch = m, c.targetEpoch
		g.hold(m)
		mine := append(slices.Clone(m.assigned), m.pending...)
		var held []TopicPartition
		if c.held == "all" {
			for _, topic := range []string{"t1", "t2"} {
				for p := int32(0); p < 10; p++ {
					held = append(held, TopicPartition{topic, p})
				}
			}
		} else {
			held = tps(c.held)
		}
		for _, tp := range held {
			if !slices.Contains(mine, tp) {
				g.owner[tp] = "other"
			}
		}
		var owned []TopicPartition
		if c.owned != "-" {
			owned = tps(c.owned)
		}
		g.reconcile(m, owned, c.owned != "-")
		got := fmt.Sprintf("%v %d/%d %v %v", m.state, m.epoch, m.previousEpoch, m.assigned, m.pending)
		want := fmt.Sprintf("%v %d/%d %v %v", c.want.st, c.want.epoch, c.want.prev, tps(c.want.assigned), tps(c.want.rev))
		if got != want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, got, want)
		}
	}
}
