package assignor

// This file is the consumer group protocol's server-side range assignor:
// Kafka's RangeAssignor in group-coordinator (4.0), not the client-side
// RangeAssignor of the classic protocol (assignor.go). It is not sticky:
// the ranges follow the member order alone.

import (
	"fmt"
	"slices"
	"strings"
)

// ServerRange is Kafka's server-side RangeAssignor ("range"): per topic,
// its subscribers (static members first by instance id, then by member id)
// each get a contiguous range, the first P%N one partition more; with every
// member subscribed to the same topics the members' ranges line up across
// topics (co-partitioning).
type ServerRange struct{}

// Name implements ServerAssignor.
func (ServerRange) Name() string { return "range" }

// Assign implements ServerAssignor.
func (ServerRange) Assign(members []ServerMember, topics []ServerTopic) (Assignment, error) {
	byName := map[string]ServerTopic{}
	for _, t := range topics {
		byName[t.Name] = t
	}
	ms := slices.Clone(members)
	slices.SortStableFunc(ms, func(a, b ServerMember) int {
		switch {
		case a.InstanceID != "" && b.InstanceID != "":
			return strings.Compare(a.InstanceID, b.InstanceID)
		case a.InstanceID != "":
			return -1
		case b.InstanceID != "":
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	type state struct{ n, members, minQuota, extra, next int }
	st := map[string]*state{}
	for _, m := range ms {
		for _, t := range m.Topics {
			ti, ok := byName[t]
			if !ok {
				return nil, fmt.Errorf("range: member %s subscribes to topic %q which doesn't exist in the topic metadata", m.ID, t)
			}
			if st[t] == nil {
				st[t] = &state{n: int(ti.Partitions), minQuota: -1}
			}
			st[t].members++
		}
	}
	out := Assignment{}
	for _, m := range ms {
		out[m.ID] = []TopicPartition{}
		for _, t := range m.Topics {
			s := st[t]
			if s.minQuota < 0 {
				s.minQuota, s.extra = s.n/s.members, s.n%s.members
			}
			quota := s.minQuota
			if s.extra > 0 {
				quota++
				s.extra--
			}
			end := min(s.next+quota, s.n)
			for p := s.next; p < end; p++ {
				out[m.ID] = append(out[m.ID], TopicPartition{t, int32(p)})
			}
			s.next = max(s.next, end)
		}
	}
	return out.sort(), nil
}
