package share

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
)

func renderAssign(a map[string][]TopicPartition, members ...string) string {
	s := ""
	for _, m := range members {
		s += m + ":"
		for _, tp := range a[m] {
			s += fmt.Sprintf("%s%d", tp.Topic, tp.Partition)
		}
		s += " "
	}
	return s
}

// TestSimpleAssignorKIP932: members share partitions when there are more
// members than partitions, split them otherwise; heterogeneous
// subscriptions are balanced topic by topic; unknown topics are skipped.
func TestSimpleAssignorKIP932(t *testing.T) {
	topics := []assignor.ServerTopic{{Name: "a", Partitions: 3}, {Name: "b", Partitions: 1}}
	cases := []struct {
		subs map[string][]string
		want string
	}{
		{map[string][]string{"m1": {"a"}}, "m1:a0a1a2 "},
		{map[string][]string{"m1": {"a"}, "m2": {"a"}}, "m1:a0a2 m2:a1 "},
		{map[string][]string{"m1": {"b"}, "m2": {"b"}, "m3": {"b"}}, "m1:b0 m2:b0 m3:b0 "},
		{map[string][]string{"m1": {"a", "b"}, "m2": {"a", "b"}}, "m1:a0a2 m2:a1b0 "},
		{map[string][]string{"m1": {"a"}, "m2": {"b"}}, "m1:a0a1a2 m2:b0 "},
		{map[string][]string{"m1": {"a", "x"}, "m2": {"a", "x"}, "m3": {"a", "x"}, "m4": {"a", "x"}}, "m1:a0 m2:a1 m3:a2 m4:a0 "},
	}
	for _, c := range cases {
		var ms []string
		for i := 1; i <= len(c.subs); i++ {
			ms = append(ms, fmt.Sprintf("m%d", i))
		}
		if got := renderAssign(Assign(c.subs, topics), ms...); got != c.want {
			t.Errorf("%v: got %q, want %q", c.subs, got, c.want)
		}
	}
}
