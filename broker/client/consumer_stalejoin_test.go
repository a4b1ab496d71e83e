package client

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeCoordinator is broker b0 answering a consumer as a scripted group
// coordinator would: it holds the second JoinGroup until told to answer,
// and refuses commits with ILLEGAL_GENERATION while it holds it.
type fakeCoordinator struct {
	enc       wire.Encoder
	joins     []string // member ids JoinGroup came with
	held      *wire.Request
	heldFrom  sim.NodeID
	rebalance bool
}

func (f *fakeCoordinator) Start(*sim.Context)                      {}
func (f *fakeCoordinator) Timer(*sim.Context, sim.TimerID, string) {}
func (f *fakeCoordinator) answer(ctx *sim.Context, to sim.NodeID, req *wire.Request, resp kmsg.Response) {
	resp.SetVersion(req.Body.GetVersion())
	ctx.Send(to, f.enc.Response(req.CorrelationID, resp))
}

func (f *fakeCoordinator) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	req, ok := m.(*wire.Request)
	if !ok {
		return
	}
	switch body := req.Body.(type) {
	case *kmsg.MetadataRequest:
		r := kmsg.NewPtrMetadataResponse()
		r.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: "b0", Port: 9092}}
		name := "t"
		r.Topics = []kmsg.MetadataResponseTopic{{Topic: &name, Partitions: []kmsg.MetadataResponseTopicPartition{{Partition: 0, Leader: 0, Replicas: []int32{0}, ISR: []int32{0}}}}}
		f.answer(ctx, from, req, r)
	case *kmsg.FindCoordinatorRequest:
		r := kmsg.NewPtrFindCoordinatorResponse()
		r.NodeID, r.Host, r.Port = 0, "b0", 9092
		f.answer(ctx, from, req, r)
	case *kmsg.JoinGroupRequest:
		f.joins = append(f.joins, body.MemberID)
		if len(f.joins) == 2 {
			f.held, f.heldFrom = req, from // the rejoin: answered later
			return
		}
		f.answer(ctx, from, req, f.joinResponse(body, 1))
	case *kmsg.SyncGroupRequest:
		r := kmsg.NewPtrSyncGroupResponse()
		r.MemberAssignment = assignor.EncodeAssignment([]TopicPartition{{Topic: "t", Partition: 0}})
		f.answer(ctx, from, req, r)
	case *kmsg.HeartbeatRequest:
		r := kmsg.NewPtrHeartbeatResponse()
		if f.rebalance {
			r.ErrorCode = kerr.RebalanceInProgress.Code
		}
		f.answer(ctx, from, req, r)
	case *kmsg.OffsetCommitRequest:
		r := kmsg.NewPtrOffsetCommitResponse()
		for _, t := range body.Topics {
			rt := kmsg.OffsetCommitResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				code := int16(0)
				if f.held != nil { // the group moved on while the rejoin is held
					code = kerr.IllegalGeneration.Code
				}
				rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
			}
			r.Topics = append(r.Topics, rt)
		}
		f.answer(ctx, from, req, r)
	case *kmsg.OffsetFetchRequest:
		r := kmsg.NewPtrOffsetFetchResponse()
		r.Topics = []kmsg.OffsetFetchResponseTopic{{Topic: "t", Partitions: []kmsg.OffsetFetchResponseTopicPartition{{Partition: 0, Offset: -1, LeaderEpoch: -1}}}}
		f.answer(ctx, from, req, r)
	case *kmsg.ListOffsetsRequest:
		r := kmsg.NewPtrListOffsetsResponse()
		r.Topics = []kmsg.ListOffsetsResponseTopic{{Topic: "t", Partitions: []kmsg.ListOffsetsResponseTopicPartition{{Partition: 0, Offset: 0, LeaderEpoch: -1}}}}
		f.answer(ctx, from, req, r)
	case *kmsg.FetchRequest:
		f.answer(ctx, from, req, kmsg.NewPtrFetchResponse())
	}
}

func (f *fakeCoordinator) joinResponse(body *kmsg.JoinGroupRequest, gen int32) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	proto := body.Protocols[0].Name
	r.Generation, r.Protocol, r.LeaderID, r.MemberID = gen, &proto, "m1", "m1"
	r.Members = []kmsg.JoinGroupResponseMember{{MemberID: "m1", ProtocolMetadata: body.Protocols[0].Metadata}}
	return r
}

// TestConsumerDropsJoinAnsweredAfterFencing: a member rejoining a group is
// fenced (a commit answered ILLEGAL_GENERATION) while its JoinGroup is
// out; the JoinGroup answered afterwards belongs to the member it no
// longer is, and must not make it that member again (Kafka's coordinator
// drops a JoinGroup response once the member is no longer
// PREPARING_REBALANCE). It joins afresh, with no member id.
func TestConsumerDropsJoinAnsweredAfterFencing(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 1})
	must(t, err)
	f := &fakeCoordinator{}
	b0, err := w.AddNode("b0", func() sim.Node { return f }, sim.NodeOptions{})
	must(t, err)
	cfg, err := config.ParseConsumer(map[string]string{"group.id": "g", "client.id": "c1", "enable.auto.commit": "false",
		"session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "auto.offset.reset": "earliest"})
	must(t, err)
	a := &consumerApp{cfg: cfg, brokers: []int32{0}}
	c1, err := w.AddNode("c1", func() sim.Node { return a }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: b0}))
	must(t, w.Inject(sim.Start{Node: c1}))
	run(t, w, 2*sim.Second)
	if len(f.joins) != 1 || len(a.assigned) != 1 {
		t.Fatalf("joins %q, assignments %v: want one of each", f.joins, a.assigned)
	}
	f.rebalance = true
	run(t, w, 2*sim.Second) // the heartbeat says rebalance; the member rejoins as m1
	if len(f.joins) != 2 || f.joins[1] != "m1" || f.held == nil {
		t.Fatalf("joins %q: want a held rejoin as m1", f.joins)
	}
	must(t, w.Act(c1, func(ctx *sim.Context) {
		must(t, a.c.CommitAsync(ctx, []TopicPartitionOffset{{TopicPartition: TopicPartition{Topic: "t"}, Offset: 0}}, nil))
	}))
	run(t, w, 100*sim.Millisecond) // ILLEGAL_GENERATION: fenced
	if gen, member := a.c.Generation(); gen != -1 || member != "" {
		t.Fatalf("after ILLEGAL_GENERATION: generation %d member %q, want -1 and none", gen, member)
	}
	f.rebalance = false
	must(t, w.Act(b0, func(ctx *sim.Context) {
		f.answer(ctx, f.heldFrom, f.held, f.joinResponse(f.held.Body.(*kmsg.JoinGroupRequest), 2))
	}))
	run(t, w, 2*sim.Second)
	if len(f.joins) < 3 || f.joins[2] != "" {
		t.Fatalf("joins %q: after the stale answer the member must join afresh (no member id)", f.joins)
	}
}
