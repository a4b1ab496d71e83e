package kraft

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeQuorum is a one-node quorum: Append commits at once when auto is
// set, else when the test calls commit.
type fakeQuorum struct {
	c      *Controller
	log    [][]byte
	epochs []int32
	hw     int64 // offset after the last committed record
	auto   bool
	leader raft.LeaderAndEpoch
}

func (q *fakeQuorum) Append(ctx *sim.Context, recs [][]byte) (int64, error) {
	q.log = append(q.log, recs...)
	for range recs {
		q.epochs = append(q.epochs, q.leader.Epoch)
	}
	last := int64(len(q.log)) - 1
	if q.auto {
		q.commit(ctx)
	}
	return last, nil
}

func (q *fakeQuorum) Leader() raft.LeaderAndEpoch { return q.leader }
func (q *fakeQuorum) HighWatermark() int64        { return q.hw }
func (q *fakeQuorum) LogEndOffset() int64         { return int64(len(q.log)) }

func (q *fakeQuorum) commit(ctx *sim.Context) {
	if q.hw == int64(len(q.log)) {
		return
	}
	b := raft.Batch{BaseOffset: q.hw, Epoch: q.epochs[q.hw], Records: q.log[q.hw:]}
	q.hw = int64(len(q.log))
	q.c.HandleCommit(ctx, b)
}

// truncate drops uncommitted records (a new leader's log wins).
func (q *fakeQuorum) truncate() { q.log, q.epochs = q.log[:q.hw], q.epochs[:q.hw] }

type host struct{ c *Controller }

func (h *host) Start(ctx *sim.Context)                              { h.c.Start(ctx) }
func (h *host) Receive(*sim.Context, sim.NodeID, sim.Message)       {}
func (h *host) Timer(ctx *sim.Context, id sim.TimerID, name string) { h.c.Timer(ctx, id, name) }

type harness struct {
	t    *testing.T
	w    *sim.World
	node sim.NodeID
	q    *fakeQuorum
	c    *Controller
}

func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 7, Chooser: &sim.Prefix{}, KeepTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(0)
	if mod != nil {
		mod(&cfg)
	}
	q := &fakeQuorum{auto: true, leader: raft.LeaderAndEpoch{Leader: 0, Epoch: 1}}
	c, err := New(cfg, q)
	if err != nil {
		t.Fatal(err)
	}
	q.c = c
	h := &harness{t: t, w: w, q: q, c: c}
	h.node, err = w.AddNode("controller-0", func() sim.Node { return &host{c: c} }, sim.NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.must(w.Inject(sim.Start{Node: h.node}))
	h.w.RunFor(sim.Millisecond)
	h.act(func(ctx *sim.Context) { c.HandleLeaderChange(ctx, q.leader) })
	if !c.Active() {
		t.Fatal("not active after HandleLeaderChange(self)")
	}
	return h
}

func (h *harness) must(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) act(fn func(*sim.Context)) { h.t.Helper(); h.must(h.w.Act(h.node, fn)) }

// call sends req and returns the reply if it came at once (nil if not).
func (h *harness) call(req kmsg.Request) kmsg.Response {
	h.t.Helper()
	var got kmsg.Response
	h.act(func(ctx *sim.Context) {
		if !h.c.Handle(ctx, 1, req, func(r kmsg.Response) { got = r }) {
			h.t.Fatalf("%T not handled", req)
		}
	})
	return got
}

func incarnation(id int32, n byte) [16]byte { return [16]byte{byte(id), n} }

func (h *harness) register(id int32, inc byte, rack string) *kmsg.BrokerRegistrationResponse {
	h.t.Helper()
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.Version = 4
	req.BrokerID, req.IncarnationID = id, incarnation(id, inc)
	if rack != "" {
		req.Rack = &rack
	}
	req.PreviousBrokerEpoch = -1
	r, _ := h.call(req).(*kmsg.BrokerRegistrationResponse)
	return r
}

func (h *harness) heartbeat(id int32, epoch, offset int64, wantFence, wantShutdown bool) *kmsg.BrokerHeartbeatResponse {
	h.t.Helper()
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.BrokerID, req.BrokerEpoch, req.CurrentMetadataOffset = id, epoch, offset
	req.WantFence, req.WantShutdown = wantFence, wantShutdown
	r, _ := h.call(req).(*kmsg.BrokerHeartbeatResponse)
	return r
}

// up registers and unfences brokers; it returns their epochs.
func (h *harness) up(ids ...int32) map[int32]int64 {
	h.t.Helper()
	epochs := map[int32]int64{}
	for _, id := range ids {
		r := h.register(id, 1, "")
		if r == nil || r.ErrorCode != 0 {
			h.t.Fatalf("register %d: %+v", id, r)
		}
		epochs[id] = r.BrokerEpoch
	}
	for _, id := range ids {
		if r := h.heartbeat(id, epochs[id], h.q.hw, false, false); r == nil || r.IsFenced {
			h.t.Fatalf("broker %d not unfenced: %+v", id, r)
		}
	}
	return epochs
}

func (h *harness) createTopic(name string, assignment ...[]int32) *kmsg.CreateTopicsResponseTopic {
	h.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, -1, -1
	for p, rs := range assignment {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), rs
		t.ReplicaAssignment = append(t.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, t)
	r, _ := h.call(req).(*kmsg.CreateTopicsResponse)
	if r == nil {
		h.t.Fatal("CreateTopics: no reply")
	}
	return &r.Topics[0]
}

func (h *harness) partition(topic string, p int32) metadata.PartitionState {
	h.t.Helper()
	s, ok := h.c.Image().Partition(topic, p)
	if !ok {
		h.t.Fatalf("no partition %s-%d", topic, p)
	}
	return s
}
