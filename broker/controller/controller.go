// Package controller is Kafka's ZooKeeper-era controller (KafkaController,
// 0.11 to 2.x), run inside a broker: it is elected through /controller,
// counts controller changes in /controller_epoch, watches brokers, topics
// and ISR changes, elects partition leaders (from the ISR, or unclean from
// outside it when allowed, or the preferred replica), writes partition
// state to ZooKeeper with the controller epoch's zkVersion as a fence, and
// sends LeaderAndIsr and UpdateMetadata to the brokers.
//
// Like Kafka's, it handles one event at a time (ControllerEventManager): an
// event's ZooKeeper reads and writes all finish before the next event
// starts, so its view never interleaves.
//
// Simplifications vs Kafka, and why:
//   - Requests to a broker are retried until answered or the broker dies,
//     one at a time per broker (ControllerChannelManager), with no batching
//     across events.
//   - The ISR-change notifications are read as they appear (Kafka batches
//     them for 5 seconds on the leader side).
package controller

import (
	"sort"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TP names a partition.
type TP struct {
	Topic     string
	Partition int32
}

func lessTP(a, b TP) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

// partition is the controller's view of one partition.
type partition struct {
	replicas  []int32
	state     zk.PartitionState
	zkVersion int32
	hasState  bool // the state znode exists
}

// Env is what the controller needs from the broker it runs in.
type Env struct {
	// Mutants are the planted bugs switched on (package mutant; none is Kafka).
	Mutants mutant.Set
	// ID is the broker's id.
	ID int32
	// ZK is the broker's ZooKeeper client.
	ZK *zk.Client
	// Send sends a request to a broker and calls cb with its answer or an
	// error (a timeout), exactly once.
	Send func(to int32, req kmsg.Request, cb func(kmsg.Response, error))
	// Unclean reports whether unclean.leader.election.enable is on for topic.
	Unclean func(topic string) bool
	// AutoRebalance is auto.leader.rebalance.enable, checked every
	// RebalanceInterval (leader.imbalance.check.interval.seconds) against
	// leader.imbalance.per.broker.percentage.
	AutoRebalance      bool
	RebalanceInterval  sim.Duration
	ImbalancePercent   int
	RetryBackoff       sim.Duration
	OnBecomeController func()
}

// Controller is the controller logic of one broker. It is active only
// while this broker holds /controller.
type Controller struct {
	env Env
	ctx *sim.Context

	active         bool
	gen            int // bumped on resign; stale callbacks check it
	epoch          int32
	epochZkVersion int32

	live  []int32 // sorted
	racks map[int32]string
	// epochs are the live brokers' broker epochs: the czxid of their
	// registration znode (KIP-380), which tells a bounced broker apart.
	epochs     map[int32]int64
	partitions map[TP]*partition
	channels   map[int32]*channel
	// reassigning maps partitions being reassigned to their target replicas.
	reassigning map[TP][]int32

	queue   []event
	running bool

	rebalanceTimer sim.TimerID
}

// event is one unit of controller work; it calls done when finished.
type event struct {
	name string
	run  func(done func())
}

// New returns an inactive controller.
func New(env Env) *Controller {
	return &Controller{env: env, epoch: -1}
}

// Active reports whether this broker is the controller.
func (c *Controller) Active() bool { return c.active }

// Epoch returns the controller epoch this controller holds (or last held).
func (c *Controller) Epoch() int32 { return c.epoch }

// LiveBrokers returns the brokers the controller knows alive, sorted.
func (c *Controller) LiveBrokers() []int32 { return append([]int32(nil), c.live...) }

// PartitionState returns the controller's view of a partition.
func (c *Controller) PartitionState(tp TP) (zk.PartitionState, []int32, bool) {
	p, ok := c.partitions[tp]
	if !ok {
		return zk.PartitionState{}, nil, false
	}
	return p.state, append([]int32(nil), p.replicas...), true
}

func (c *Controller) log(kind string, fields ...sim.Field) { c.ctx.Log("controller-"+kind, fields...) }

// enqueue adds an event; events run one at a time, in order.
func (c *Controller) enqueue(name string, run func(done func())) {
	c.queue = append(c.queue, event{name, run})
	c.pump()
}

func (c *Controller) pump() {
	if c.running || len(c.queue) == 0 {
		return
	}
	ev := c.queue[0]
	c.queue = c.queue[1:]
	c.running = true
	gen := c.gen
	ev.run(func() {
		if gen != c.gen {
			return // a resign cut the event short
		}
		c.running = false
		c.pump()
	})
}

// guard wraps a ZooKeeper callback so it is ignored after a resign.
func (c *Controller) guard(cb func(r *zk.Response)) zk.Callback {
	gen := c.gen
	return func(ctx *sim.Context, r *zk.Response) {
		c.ctx = ctx
		if gen != c.gen {
			return
		}
		cb(r)
	}
}

// barrier runs then after n calls of the function it returns.
func barrier(n int, then func()) func() {
	if n == 0 {
		then()
		return func() {}
	}
	return func() {
		n--
		if n == 0 {
			then()
		}
	}
}

// Elect tries to become the controller: create /controller, or watch it.
// The broker calls it once connected (and registered) in a new session.
func (c *Controller) Elect(ctx *sim.Context) {
	c.ctx = ctx
	data := zk.Encode(zk.NewControllerZNode(c.env.ID, ctx.Now()))
	c.env.ZK.Create(ctx, zk.ControllerPath, data, zk.Ephemeral, c.guard(func(r *zk.Response) {
		switch r.Code {
		case zk.Ok:
			c.onControllerFailover()
		case zk.NodeExists:
			c.watchController()
		default:
			c.log("election-error", sim.S("code", r.Code.String()))
		}
	}))
}

// watchController sets an exists-watch on /controller so its deletion
// triggers a new election; if it vanished meanwhile, elect at once.
func (c *Controller) watchController() {
	c.env.ZK.Exists(c.ctx, zk.ControllerPath, true, c.guard(func(r *zk.Response) {
		if r.Code == zk.NoNode {
			c.Elect(c.ctx)
		}
	}))
}

// Resign stops acting as controller (its session expired, or another
// controller fenced it).
func (c *Controller) Resign(ctx *sim.Context, why string) {
	c.ctx = ctx
	if !c.active {
		return
	}
	c.log("resign", sim.S("reason", why), sim.I("epoch", int64(c.epoch)))
	c.active = false
	c.gen++
	c.queue = nil
	c.running = false
	c.channels = nil
	if c.rebalanceTimer != 0 {
		ctx.CancelTimer(c.rebalanceTimer)
		c.rebalanceTimer = 0
	}
}

// OnWatch handles a ZooKeeper watch event; the broker forwards all of them.
func (c *Controller) OnWatch(ctx *sim.Context, ev zk.WatchEvent) {
	c.ctx = ctx
	if ev.Path == zk.ControllerPath {
		switch {
		case ev.Type == zk.EventNodeDeleted && !c.active:
			c.Elect(ctx)
		case ev.Type == zk.EventNodeDeleted && c.active:
			c.Resign(ctx, "/controller deleted")
			c.Elect(ctx)
		default:
			if !c.active {
				c.watchController()
			}
		}
		return
	}
	if !c.active {
		return
	}
	switch ev.Path {
	case zk.BrokerIDsPath:
		c.enqueue("broker-change", c.onBrokerChange)
	case zk.BrokerTopicsPath:
		c.enqueue("topic-change", c.onTopicChange)
	case zk.IsrChangeNotificationPath:
		c.enqueue("isr-change", c.onIsrChange)
	case zk.PreferredReplicaElectionPath:
		c.enqueue("preferred-election", c.onPreferredElection)
	case zk.ReassignPartitionsPath:
		c.enqueue("reassign", c.onReassign)
	case zk.DeleteTopicsPath:
		c.enqueue("delete-topics", c.onDeleteTopics)
	}
}

// TimerName is the controller's timer (auto leader rebalance); the broker
// routes it to HandleTimer.
const TimerName = "controller-rebalance"

// HandleTimer handles the controller's timers and reports whether id was one.
func (c *Controller) HandleTimer(ctx *sim.Context, id sim.TimerID) bool {
	c.ctx = ctx
	if id != 0 && id == c.rebalanceTimer {
		c.rebalanceTimer = 0
		if c.active {
			c.enqueue("auto-rebalance", c.onAutoRebalance)
		}
		return true
	}
	for _, b := range c.channelIDs() {
		if ch := c.channels[b]; ch.retry == id && id != 0 {
			ch.retry = 0
			c.sendNext(b)
			return true
		}
	}
	return false
}

func (c *Controller) sortedTPs() []TP {
	out := make([]TP, 0, len(c.partitions))
	for tp := range c.partitions {
		out = append(out, tp)
	}
	sort.Slice(out, func(i, j int) bool { return lessTP(out[i], out[j]) })
	return out
}

func (c *Controller) isLive(id int32) bool {
	i := sort.Search(len(c.live), func(i int) bool { return c.live[i] >= id })
	return i < len(c.live) && c.live[i] == id
}
