package coordinator

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKIP848RegexBrokerResolves: a member subscribed by regular
// expression (ConsumerGroupHeartbeat v1) gets the partitions of the topics
// whose whole name matches, internal topics excepted; a topic created
// later that matches bumps the group epoch and is assigned; the expression
// survives a fail-over; an expression that does not compile is refused
// with INVALID_REGULAR_EXPRESSION.
func TestKIP848RegexBrokerResolves(t *testing.T) {
	topics := []assignor.ServerTopic{
		{Name: "orders", ID: assignor.TopicID{1: 1}, Partitions: 2},
		{Name: "orders-eu", ID: assignor.TopicID{1: 2}, Partitions: 1},
		{Name: "payments", ID: assignor.TopicID{1: 3}, Partitions: 2},
		{Name: OffsetsTopic, ID: assignor.TopicID{1: 4}, Partitions: 1},
	}
	h, _ := newConsumerHarness(t, nil)
	h.c.env.Topics = func() []assignor.ServerTopic { return topics }
	beat := func(member string, epoch int32, regex *string) *kmsg.ConsumerGroupHeartbeatResponse {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.MemberEpoch, req.SubscribedTopicRegex = 1, "g", member, epoch, regex
		if epoch == 0 {
			req.RebalanceTimeoutMillis = 30000
		} else {
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		var resp *kmsg.ConsumerGroupHeartbeatResponse
		h.c.ConsumerGroupHeartbeat(h.now, req, func(r *kmsg.ConsumerGroupHeartbeatResponse) { resp = r })
		return resp
	}
	count := func(r *kmsg.ConsumerGroupHeartbeatResponse) int {
		n := 0
		if r.Assignment != nil {
			for _, tp := range r.Assignment.Topics {
				n += len(tp.Partitions)
			}
		}
		return n
	}
	bad := "orders("
	if r := beat("A", 0, &bad); r.ErrorCode != kerr.InvalidRegularExpression.Code {
		t.Fatalf("regex %q: error %d, want INVALID_REGULAR_EXPRESSION", bad, r.ErrorCode)
	}
	re := "orders.*|__consumer_offsets" // an internal topic is matched too, as Kafka 4.x does (kgo's Test848RegexBrokerResolves)
	r := beat("A", 0, &re)
	if r.ErrorCode != 0 || count(r) != 4 {
		t.Fatalf("A by %q: %+v (%d partitions), want __consumer_offsets, orders and orders-eu (4 partitions)", re, r, count(r))
	}
	_, _, _, members, _ := h.c.ConsumerGroupState("g")
	if !slices.Equal(members[0].Subscribed, []string{OffsetsTopic, "orders", "orders-eu"}) {
		t.Fatalf("A subscribes %v, want [__consumer_offsets orders orders-eu]", members[0].Subscribed)
	}
	topics = append(topics, assignor.ServerTopic{Name: "orders-us", ID: assignor.TopicID{1: 5}, Partitions: 1})
	r = beat("A", r.MemberEpoch, nil)
	if count(r) != 5 || r.MemberEpoch != 2 {
		t.Fatalf("after orders-us appeared: epoch %d, %d partitions; want epoch 2 and 5 partitions", r.MemberEpoch, count(r))
	}
	h2 := newHarness(t, h.c.cfg)
	h2.c.env.Topics = h.c.env.Topics
	h2.log = h.log
	h2.lead(0)
	_, _, _, members, _ = h2.c.ConsumerGroupState("g")
	if len(members) != 1 || !slices.Equal(members[0].Subscribed, []string{OffsetsTopic, "orders", "orders-eu", "orders-us"}) {
		t.Fatalf("after fail-over: %+v, want A subscribed by its expression to __consumer_offsets and the three orders topics", members)
	}
}
