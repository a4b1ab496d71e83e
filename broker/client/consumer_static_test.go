package client

import (
	"errors"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// staticCoordinator is fakeCoordinator recording what a static member
// sends: the instance ids its group requests carry, its LeaveGroups, and
// (fence set) answering its heartbeats FENCED_INSTANCE_ID.
type staticCoordinator struct {
	fakeCoordinator
	instances map[string][]string // api -> group.instance.id sent ("" for none)
	leaves    int
	fence     bool
}

func (f *staticCoordinator) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	if r, ok := m.(*wire.Request); ok {
		inst := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		switch body := r.Body.(type) {
		case *kmsg.JoinGroupRequest:
			f.instances["JoinGroup"] = append(f.instances["JoinGroup"], inst(body.InstanceID))
		case *kmsg.SyncGroupRequest:
			f.instances["SyncGroup"] = append(f.instances["SyncGroup"], inst(body.InstanceID))
		case *kmsg.OffsetCommitRequest:
			f.instances["OffsetCommit"] = append(f.instances["OffsetCommit"], inst(body.InstanceID))
		case *kmsg.LeaveGroupRequest:
			f.leaves++
			return
		case *kmsg.HeartbeatRequest:
			f.instances["Heartbeat"] = append(f.instances["Heartbeat"], inst(body.InstanceID))
			if f.fence {
				resp := kmsg.NewPtrHeartbeatResponse()
				resp.ErrorCode = kerr.FencedInstanceID.Code
				f.answer(ctx, from, r, resp)
				return
			}
		}
	}
	f.fakeCoordinator.Receive(ctx, from, m)
}

// TestStaticConsumerFencedAndNoLeave (KIP-345): a consumer with
// group.instance.id sends it in JoinGroup (v5), SyncGroup, Heartbeat and
// OffsetCommit; FENCED_INSTANCE_ID is fatal (its partitions are lost,
// every Poll returns the error, it never joins again); and it sends no
// LeaveGroup when it closes (AbstractCoordinator.maybeLeaveGroup sends it
// only for a dynamic member).
func TestStaticConsumerFencedAndNoLeave(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		w, err := sim.New(sim.Config{Seed: 1})
		must(t, err)
		f := &staticCoordinator{instances: map[string][]string{}}
		b0, err := w.AddNode("b0", func() sim.Node { return f }, sim.NodeOptions{})
		must(t, err)
		cfg, err := config.ParseConsumer(map[string]string{"group.id": "g", "group.instance.id": "host-1", "client.id": "c1",
			"enable.auto.commit": "false", "session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "auto.offset.reset": "earliest"})
		must(t, err)
		a := &consumerApp{cfg: cfg, brokers: []int32{0}}
		c1, err := w.AddNode("c1", func() sim.Node { return a }, sim.NodeOptions{})
		must(t, err)
		must(t, w.Inject(sim.Start{Node: b0}))
		must(t, w.Inject(sim.Start{Node: c1}))
		run(t, w, 2*sim.Second)
		must(t, w.Act(c1, func(ctx *sim.Context) {
			must(t, a.c.CommitAsync(ctx, []TopicPartitionOffset{{TopicPartition: TopicPartition{Topic: "t"}, Offset: 0}}, nil))
		}))
		run(t, w, sim.Second)
		for _, api := range []string{"JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit"} {
			if got := f.instances[api]; len(got) == 0 || got[0] != "host-1" {
				t.Fatalf("%s carried group.instance.id %q, want host-1", api, got)
			}
		}
		if !fenced {
			must(t, w.Act(c1, func(ctx *sim.Context) { a.c.Close(ctx) }))
			run(t, w, sim.Second)
			if f.leaves != 0 {
				t.Fatalf("a static member sent %d LeaveGroup on close, want none", f.leaves)
			}
			continue
		}
		joins := len(f.joins)
		f.fence = true
		run(t, w, 2*sim.Second)
		if len(a.owned) != 0 {
			t.Fatalf("after FENCED_INSTANCE_ID it still owns %v", a.owned)
		}
		for i := 0; i < 2; i++ {
			must(t, w.Act(c1, func(ctx *sim.Context) {
				if _, err := a.c.Poll(ctx); !errors.Is(err, kerr.FencedInstanceID) {
					t.Errorf("Poll %d after the fence: %v, want FENCED_INSTANCE_ID", i, err)
				}
			}))
		}
		run(t, w, 3*sim.Second)
		if len(f.joins) != joins {
			t.Fatalf("the fenced member joined again (%d joins, %d before the fence)", len(f.joins), joins)
		}
	}
}
