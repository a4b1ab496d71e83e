package share

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func testCoordinator(cfg Config) *Coordinator {
	return NewCoordinator(cfg, Env{
		Topics: func() []assignor.ServerTopic {
			return []assignor.ServerTopic{{Name: "t", ID: assignor.TopicID{1}, Partitions: 2}}
		},
		Check: func(string) *kerr.Error { return nil },
	})
}

func ts(sec int64) sim.Time { return sim.Time(0).Add(sim.Duration(sec) * sim.Second) }

func heartbeat(c *Coordinator, now sim.Time, member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version, req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = 1, "g", member, epoch, topics
	return c.Heartbeat(now, req, "", "")
}

// TestShareGroupEpochsKIP932: each join bumps the group epoch and every
// member moves to it on its next heartbeat (no revocation round); a
// member silent past group.share.session.timeout.ms is removed and the
// epoch bumps again; a leave answers epoch -1; group.share.max.size
// refuses one member too many; an empty subscription at join is
// INVALID_REQUEST.
func TestShareGroupEpochsKIP932(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxSize = 2
	c := testCoordinator(cfg)
	if r := heartbeat(c, 0, "a", 0); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("join without topics: %d", r.ErrorCode)
	}
	if r := heartbeat(c, 0, "a", 0, "t"); r.ErrorCode != 0 || r.MemberEpoch != 1 || len(r.Assignment.TopicPartitions[0].Partitions) != 2 {
		t.Fatalf("a joins: %+v", r)
	}
	if r := heartbeat(c, ts(1), "b", 0, "t"); r.MemberEpoch != 2 || len(r.Assignment.TopicPartitions[0].Partitions) != 1 {
		t.Fatalf("b joins: %+v", r)
	}
	if r := heartbeat(c, ts(2), "a", 1); r.ErrorCode != 0 || r.MemberEpoch != 2 || r.Assignment == nil || len(r.Assignment.TopicPartitions[0].Partitions) != 1 {
		t.Fatalf("a moves to epoch 2: %+v", r)
	}
	if r := heartbeat(c, ts(2), "z", 0, "t"); r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("a third member in a group of at most 2: %d", r.ErrorCode)
	}
	at, ok := c.NextDeadline()
	if !ok || at != sim.Time(0).Add(sim.Second+45*sim.Second) {
		t.Fatalf("next deadline %v %v", at, ok)
	}
	heartbeat(c, ts(40), "a", 2)
	c.Tick(at) // b expires
	if r := heartbeat(c, ts(47), "a", 2); r.MemberEpoch != 3 || len(r.Assignment.TopicPartitions[0].Partitions) != 2 {
		t.Fatalf("after b's session timeout: %+v", r)
	}
	if r := heartbeat(c, ts(47), "b", 2); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("b after its removal: %d", r.ErrorCode)
	}
	if r := heartbeat(c, ts(48), "a", -1); r.ErrorCode != 0 || r.MemberEpoch != -1 {
		t.Fatalf("leave: %+v", r)
	}
	if gs := c.Groups(); len(gs) != 1 || gs[0].State != "Empty" {
		t.Fatalf("groups: %+v", gs)
	}
	if err := c.Delete("g"); err != nil || c.Has("g") {
		t.Fatalf("delete: %v", err)
	}
}
