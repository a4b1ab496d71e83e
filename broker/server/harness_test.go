package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// driver plays the controller and the producer in scripted tests: it sends
// requests and keeps the responses.
type driver struct {
	corr    int32
	pending map[int32]func(kmsg.Response)
}

func (d *driver) Start(*sim.Context) { d.pending = map[int32]func(kmsg.Response){} }
func (d *driver) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	r := m.(*wire.Response)
	if cb := d.pending[r.CorrelationID]; cb != nil {
		delete(d.pending, r.CorrelationID)
		cb(r.Body)
	}
}
func (d *driver) Timer(*sim.Context, sim.TimerID, string) {}

type cluster struct {
	t       *testing.T
	w       *sim.World
	brokers []sim.NodeID
	drv     sim.NodeID
	d       *driver
	cEpoch  int32
}

// configHook, when set, changes every broker's configuration after the
// test's own changes (withConfig sets it for one test body; server tests
// do not run in parallel).
var configHook func(*Config)

// withConfig runs body with configHook set to hook.
func withConfig(hook func(*Config), body func()) {
	configHook = hook
	defer func() { configHook = nil }()
	body()
}

func newCluster(t *testing.T, n int, mod func(*Config)) *cluster {
	w, err := sim.New(sim.Config{Seed: 1, Chooser: &sim.Prefix{}, KeepTrace: true, Link: sim.LinkConfig{MinLatency: sim.Millisecond, MaxLatency: sim.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, w: w, cEpoch: 1}
	for i := 0; i < n; i++ {
		cfg := DefaultConfig(int32(i))
		cfg.Storage.LogDirs = []string{"/kafka-logs"}
		if mod != nil {
			mod(&cfg)
		}
		if configHook != nil {
			configHook(&cfg)
		}
		f, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		id, err := w.AddNode(NodeName(int32(i)), f, sim.NodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.brokers = append(c.brokers, id)
		c.must(w.Inject(sim.Start{Node: id}))
	}
	c.d = &driver{}
	c.drv, err = w.AddNode("driver", func() sim.Node { return c.d }, sim.NodeOptions{})
	c.must(err)
	c.must(w.Inject(sim.Start{Node: c.drv}))
	return c
}

func (c *cluster) must(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) call(to int, req kmsg.Request, cb func(kmsg.Response)) {
	c.must(c.w.Act(c.drv, func(ctx *sim.Context) {
		c.d.corr++
		c.d.pending[c.d.corr] = cb
		ctx.Send(c.brokers[to], wire.NewRequest(c.d.corr, req))
	}))
}

// leaderAndISR sends the controller's command for t-0 to broker `to`.
func (c *cluster) leaderAndISR(to int, leader, epoch int32, isr, replicas []int32) {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = 1
	req.ControllerEpoch = c.cEpoch
	req.PartitionStates = []kmsg.LeaderAndISRRequestTopicPartition{{Topic: "t", Partition: 0, ControllerEpoch: c.cEpoch, Leader: leader, LeaderEpoch: epoch, ISR: isr, Replicas: replicas}}
	c.call(to, req, func(kmsg.Response) {})
}

// produce sends value to t-0 on broker `to` and returns a pointer to the
// outcome: "" until answered, then "ok@<offset>" or the error name.
func (c *cluster) produce(to int, acks int16, value string) *string {
	out := new(string)
	b := storage.NewBatch(0, []storage.Record{{Value: []byte(value)}})
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = acks
	req.TimeoutMillis = 30000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: b.AppendTo(nil)}}}}
	c.call(to, req, func(r kmsg.Response) {
		p := r.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			*out = fmt.Sprint(p.ErrorCode)
		} else {
			*out = fmt.Sprintf("ok@%d", p.BaseOffset)
		}
	})
	return out
}

func (c *cluster) broker(i int) *Broker { return c.w.Node(c.brokers[i]).(*Broker) }

// values returns the record values of broker i's log of t-0, in order.
func (c *cluster) values(i int) []string {
	p, ok := c.broker(i).Partition(storage.TopicPartition{Topic: "t", Partition: 0})
	if !ok {
		return nil
	}
	data, err := p.Log().Read(p.Log().LogStartOffset(), 1<<30, p.LogEndOffset())
	c.must(err)
	batches, err := storage.DecodeBatches(data)
	c.must(err)
	var out []string
	for _, b := range batches {
		for _, r := range b.Records {
			out = append(out, string(r.Value))
		}
	}
	return out
}

func (c *cluster) run(d sim.Duration) {
	c.t.Helper()
	if res := c.w.RunFor(d); res.Reason == sim.Panicked {
		c.t.Fatalf("run failed: %v\n%s", res.Panic, res.Panic.Stack)
	}
}

// runUntil steps the world until cond holds (or fails the test after max events).
func (c *cluster) runUntil(what string, cond func() bool) {
	c.t.Helper()
	for i := 0; i < 100000; i++ {
		if cond() {
			return
		}
		res, ok := c.w.Step()
		if !ok {
			c.t.Fatalf("waiting for %s: run ended %v %v", what, res.Reason, res.Panic)
		}
	}
	c.t.Fatalf("waiting for %s: never happened", what)
}

func (c *cluster) timeline() string {
	var b strings.Builder
	sim.WriteTimeline(&b, c.w.Trace().Records())
	return b.String()
}

func (c *cluster) crash(i int, loseUnsynced bool) {
	c.must(c.w.Inject(sim.Crash{Node: c.brokers[i], LoseUnsynced: loseUnsynced}))
}

func (c *cluster) restart(i int) { c.must(c.w.Inject(sim.Restart{Node: c.brokers[i]})) }

func (c *cluster) cut(from, to int) {
	c.must(c.w.Inject(sim.Cut{From: c.brokers[from], To: c.brokers[to]}))
}

func (c *cluster) heal() { c.must(c.w.Inject(sim.Heal{})) }

// expectAck checks a produce outcome.
func (c *cluster) expectAck(what string, got *string, want string) {
	c.t.Helper()
	if *got != want {
		c.t.Fatalf("%s: produce answered %q, want %q\n%s", what, *got, want, c.timeline())
	}
}

var tp0 = storage.TopicPartition{Topic: "t", Partition: 0}

// produceAndWait produces and runs the world for d.
func (c *cluster) produceAndWait(to int, acks int16, value string, d sim.Duration) *string {
	out := c.produce(to, acks, value)
	c.run(d)
	return out
}
