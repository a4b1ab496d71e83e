// Package simtest holds workloads that exercise the kernel on their own,
// without Kafka: the determinism tests, the replay tests, the benchmarks and
// `kafkasim kernel` use them.
package simtest

import (
	"fmt"

	"github.com/kafkasim/kafkasim/sim"
)

// chatter is a node that exercises everything a node can do: timers, sends
// to peers chosen through the chooser, disk writes and syncs, its own random
// stream and trace logging. On start it recovers a byte count from disk.
type chatter struct {
	peers     []sim.NodeID
	counter   int64
	recovered int64
	tick      sim.TimerID
}

// Note is the message chatters exchange.
type Note struct {
	From string
	N    int64
}

// Kind implements sim.Message.
func (m *Note) Kind() string { return "note" }

// Size implements sim.Message.
func (m *Note) Size() int { return 16 + len(m.From) }

func (c *chatter) Start(ctx *sim.Context) {
	if b, err := ctx.Disk().ReadFile("data/log"); err == nil {
		c.recovered = int64(len(b))
	}
	if !ctx.Disk().Exists("data/log") {
		if err := ctx.Disk().Create("data/log"); err != nil {
			panic(err)
		}
	}
	ctx.Log("recovered", sim.I("bytes", c.recovered))
	c.tick = ctx.SetTimer(sim.Duration(1+ctx.Rand().IntN(5))*sim.Millisecond, "tick")
}

func (c *chatter) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	n := m.(*Note)
	ctx.Log("got", sim.S("from", n.From), sim.I("n", n.N))
	if err := ctx.Disk().Append("data/log", fmt.Appendf(nil, "%s:%d;", n.From, n.N)); err != nil {
		panic(err)
	}
	if n.N%3 == 0 {
		ctx.Send(from, &Note{From: ctx.Name(), N: n.N + 1})
	}
}

func (c *chatter) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	c.counter++
	to := c.peers[ctx.Choose(len(c.peers))]
	if to != ctx.ID() {
		ctx.Send(to, &Note{From: ctx.Name(), N: c.counter})
	}
	if ctx.Chance(0.3) {
		if err := ctx.Disk().Sync("data/log"); err != nil {
			panic(err)
		}
	}
	c.tick = ctx.SetTimer(sim.Duration(1+ctx.Rand().IntN(5))*sim.Millisecond, "tick")
	if c.counter%7 == 0 {
		ctx.CancelTimer(c.tick)
		c.tick = ctx.SetTimer(2*sim.Millisecond, "tick")
	}
}

// ChaosOptions configure Chaos.
type ChaosOptions struct {
	Nodes         int // default 5
	Chooser       sim.Chooser
	RecordChoices bool
	KeepTrace     bool
}

// Chaos builds a world of chatter nodes under every fault type: lossy,
// duplicating, reordering, delaying links; clock skew and drift; torn
// writes and read corruption; and every 50ms of the first second a fault
// drawn through the chooser (crash, power loss, restart, pause, partition,
// one-way cut, heal). At 1s everything heals and restarts; at 1.5s the run
// stops. Run it with World.Run; it ends Stopped unless something broke.
func Chaos(seed uint64, o ChaosOptions) (*sim.World, error) {
	if o.Nodes == 0 {
		o.Nodes = 5
	}
	if o.Nodes < 2 {
		return nil, fmt.Errorf("chaos nodes %d: must be >= 2", o.Nodes)
	}
	w, err := sim.New(sim.Config{
		Seed: seed, Chooser: o.Chooser, RecordChoices: o.RecordChoices, KeepTrace: o.KeepTrace,
		MaxTime: sim.Time(2 * sim.Second),
		Link: sim.LinkConfig{
			MinLatency: 100 * sim.Microsecond, MaxLatency: 2 * sim.Millisecond,
			DropProbability: 0.05, DuplicateProbability: 0.05, ReorderProbability: 0.1,
			DelayProbability: 0.05, Delay: 10 * sim.Millisecond,
		},
	})
	if err != nil {
		return nil, err
	}
	var ids []sim.NodeID
	for i := 0; i < o.Nodes; i++ {
		opts := sim.NodeOptions{Skew: sim.Duration(i) * sim.Millisecond, DriftPPM: int64(i * 100),
			Disk: sim.DiskConfig{TearProbability: 0.5, ReadCorruptProbability: 0.01, WriteLatency: sim.Microsecond}}
		id, err := w.AddNode(fmt.Sprintf("n%d", i), func() sim.Node { return &chatter{peers: ids} }, opts)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if err := w.Inject(sim.Start{Node: id}); err != nil {
			return nil, err
		}
	}
	for at := sim.Time(50 * sim.Millisecond); at < sim.Time(sim.Second); at += sim.Time(50 * sim.Millisecond) {
		w.At(at, "chaos", func(w *sim.World) {
			if f := drawFault(w, ids); f != nil {
				if err := w.Inject(f); err != nil {
					panic(err)
				}
			}
		})
	}
	w.At(sim.Time(sim.Second), "heal-all", func(w *sim.World) {
		w.Inject(sim.Heal{})
		for _, id := range ids {
			if !w.Up(id) {
				w.Inject(sim.Restart{Node: id})
			}
		}
	})
	w.At(sim.Time(1500*sim.Millisecond), "stop", func(w *sim.World) { w.Stop() })
	return w, nil
}

// drawFault picks a fault that fits the world's state, through the
// chooser, so the schedule replays with the run.
func drawFault(w *sim.World, ids []sim.NodeID) sim.Fault {
	node := ids[w.Choose(sim.KindFault, len(ids))]
	switch w.Choose(sim.KindFault, 6) {
	case 0:
		if w.Up(node) {
			return sim.Crash{Node: node, LoseUnsynced: w.Choose(sim.KindFault, 2) == 1}
		}
		return sim.Restart{Node: node}
	case 1:
		if w.Up(node) {
			return sim.Pause{Node: node, For: 20 * sim.Millisecond}
		}
	case 2:
		half := len(ids) / 2
		return sim.Partition{Groups: [][]sim.NodeID{ids[:half], ids[half:]}}
	case 3:
		other := ids[(int(node)+1)%len(ids)]
		return sim.Cut{From: node, To: other}
	case 4:
		return sim.Heal{}
	}
	return nil
}
