package cluster

// The harness of the API version tests (api_*_test.go): a cluster and a
// client node that sends any request to any broker the way a real client
// behind kafkasim serve's socket does: the request is encoded at its
// version and decoded again into a fresh value (kmsg.RequestForKey +
// ReadFrom), and the broker's response is encoded at the request's
// version and decoded again, so a field a version cannot carry is lost
// exactly as on the wire.

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiClient is the client node: it keeps every response by correlation id.
type apiClient struct {
	enc     wire.Encoder
	got     map[int32]*wire.Response
	refused map[sim.NodeID]bool
}

func (a *apiClient) Start(ctx *sim.Context) {
	a.enc.Connection = ctx.Incarnation()
	a.got = map[int32]*wire.Response{}
	a.refused = map[sim.NodeID]bool{}
}

func (a *apiClient) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	if r, ok := m.(*wire.Response); ok {
		a.got[r.CorrelationID] = r
	}
}

func (a *apiClient) Timer(*sim.Context, sim.TimerID, string) {}

func (a *apiClient) Disconnected(ctx *sim.Context, peer sim.NodeID) { a.refused[peer] = true }

// apiCluster is a running cluster with the client node.
type apiCluster struct {
	t    *testing.T
	c    *Cluster
	cl   *apiClient
	node sim.NodeID
	corr int32
}

// newAPICluster builds 3 brokers with topic t (3 partitions, replication
// factor 3), the given properties and spec changes, and runs it until
// every broker serves.
func newAPICluster(t *testing.T, props map[string]string, mod func(*Spec)) *apiCluster {
	t.Helper()
	cfg, err := config.Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.New(sim.Config{Seed: 1, KeepTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Brokers: 3, Topics: []Topic{{Name: "t", Partitions: 3, ReplicationFactor: 3}}, Config: cfg}
	if mod != nil {
		mod(&spec)
	}
	c, err := Build(w, spec)
	if err != nil {
		t.Fatal(err)
	}
	a := &apiCluster{t: t, c: c, cl: &apiClient{}}
	a.node, err = w.AddNode("client", func() sim.Node { return a.cl }, sim.NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Inject(sim.Start{Node: a.node}); err != nil {
		t.Fatal(err)
	}
	run(t, c, 10*sim.Second)
	a.waitLeaders("t", 3)
	return a
}

// roundTrip encodes req at its version and decodes it into a fresh value.
func roundTripRequest(t *testing.T, req kmsg.Request) kmsg.Request {
	t.Helper()
	raw := req.AppendTo(nil)
	fresh := kmsg.RequestForKey(req.Key())
	fresh.SetVersion(req.GetVersion())
	if err := fresh.ReadFrom(raw); err != nil {
		t.Fatalf("%s v%d: decoding the request: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return fresh
}

// call sends req (with its version set) to broker i and returns the
// response as a client decodes it at the request's version.
func (a *apiCluster) call(i int, req kmsg.Request) kmsg.Response {
	a.t.Helper()
	r := a.send(i, req)
	return a.await(r, req)
}

// send sends req to broker i without waiting; await collects the answer.
func (a *apiCluster) send(i int, req kmsg.Request) int32 {
	a.t.Helper()
	fresh := roundTripRequest(a.t, req)
	a.corr++
	corr := a.corr
	err := a.c.World.Act(a.node, func(ctx *sim.Context) {
		ctx.Send(a.c.Brokers[i], a.cl.enc.Request(corr, fresh))
	})
	if err != nil {
		a.t.Fatal(err)
	}
	return corr
}

func (a *apiCluster) await(corr int32, req kmsg.Request) kmsg.Response {
	a.t.Helper()
	name := kmsg.NameForKey(req.Key())
	limit := a.c.World.Now().Add(120 * sim.Second)
	for a.cl.got[corr] == nil {
		res, ok := a.c.World.Step()
		if !ok || res.Reason == sim.Panicked {
			a.t.Fatalf("%s v%d: the run ended: %v %v", name, req.GetVersion(), res.Reason, res.Panic)
		}
		if a.c.World.Now() > limit {
			a.t.Fatalf("%s v%d: no answer within 120s", name, req.GetVersion())
		}
	}
	body := a.cl.got[corr].Body
	delete(a.cl.got, corr)
	want := req.GetVersion()
	if _, ok := req.(*kmsg.ApiVersionsRequest); ok && body.(*kmsg.ApiVersionsResponse).ErrorCode == kerr.UnsupportedVersion.Code {
		want = 0 // KIP-511
	}
	if body.GetVersion() != want {
		a.t.Fatalf("%s v%d: answered at version %d", name, req.GetVersion(), body.GetVersion())
	}
	raw := body.AppendTo(nil)
	fresh := req.ResponseKind()
	fresh.SetVersion(want)
	if err := fresh.ReadFrom(raw); err != nil {
		a.t.Fatalf("%s v%d: decoding the response: %v", name, req.GetVersion(), err)
	}
	return fresh
}

// run advances the world by d.
func (a *apiCluster) run(d sim.Duration) { run(a.t, a.c, d) }

// versions returns the broker's advertised range of key.
func (a *apiCluster) versions(key int16) (int16, int16) {
	a.t.Helper()
	for _, r := range a.c.Broker(0).SupportedAPIs() {
		if r.Key == key {
			return r.Min, r.Max
		}
	}
	a.t.Fatalf("%s is not advertised", kmsg.NameForKey(key))
	return 0, 0
}

// leader returns the broker index leading topic-partition p, or -1.
func (a *apiCluster) leader(topic string, p int32) int {
	for i := range a.c.Brokers {
		b := a.c.Broker(i)
		if b == nil {
			continue
		}
		if part, ok := b.Partition(storage.TopicPartition{Topic: topic, Partition: p}); ok && part.Role() == server.Leader {
			return i
		}
	}
	return -1
}

// waitLeaders runs until partitions 0..n-1 of topic have leaders.
func (a *apiCluster) waitLeaders(topic string, n int32) {
	a.t.Helper()
	for range 600 {
		all := true
		for p := range n {
			if a.leader(topic, p) < 0 {
				all = false
			}
		}
		if all {
			return
		}
		a.run(100 * sim.Millisecond)
	}
	a.t.Fatalf("topic %s: partitions without a leader after 60s", topic)
}

// metadata answers a Metadata v7 for topics on broker i.
func (a *apiCluster) metadata(i int, topics ...string) *kmsg.MetadataResponse {
	req := kmsg.NewPtrMetadataRequest()
	req.Version, req.AllowAutoTopicCreation = 7, false
	for _, t := range topics {
		n := t
		req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: &n})
	}
	return a.call(i, req).(*kmsg.MetadataResponse)
}

// controller returns the index of the broker the Metadata names as
// controller.
func (a *apiCluster) controller() int {
	return int(a.metadata(0).ControllerID)
}

// produce sends one record batch of values to topic-p on its leader with
// acks=-1 at version v and returns the partition's answer.
func (a *apiCluster) produce(topic string, p int32, v int16, values ...string) kmsg.ProduceResponseTopicPartition {
	a.t.Helper()
	var recs []storage.Record
	for _, s := range values {
		recs = append(recs, storage.Record{Value: []byte(s)})
	}
	batch := storage.NewBatch(0, recs)
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = v, -1, 10000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: p, Records: batch.AppendTo(nil)}}}}
	l := a.leader(topic, p)
	if l < 0 {
		a.t.Fatalf("%s-%d has no leader", topic, p)
	}
	resp := a.call(l, req).(*kmsg.ProduceResponse)
	return resp.Topics[0].Partitions[0]
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}
