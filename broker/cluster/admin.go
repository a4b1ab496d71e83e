package cluster

import (
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

type topicAssignment struct {
	name       string
	assignment zk.ReplicaAssignment
}

// admin is the tool node that creates topics: it writes
// /brokers/topics/<topic> with the assignment (AdminZkClient.createTopic)
// and closes its session.
type admin struct {
	topics  []topicAssignment
	session sim.Duration
	zk      *zk.Client
}

func (a *admin) Start(ctx *sim.Context) {
	server, _ := ctx.Lookup(ZKName)
	a.zk = zk.NewClient(server, a.session)
	started := false
	a.zk.OnSession = func(ctx *sim.Context, ev zk.SessionEvent) {
		if ev.State != zk.SyncConnected || started {
			return
		}
		started = true
		next := len(a.topics)
		for _, t := range a.topics {
			t := t
			a.zk.CreateRecursive(ctx, zk.TopicPath(t.name), zk.Encode(zk.NewTopicAssignment(t.assignment)), func(ctx *sim.Context, r *zk.Response) {
				ctx.Log("create-topic", sim.S("topic", t.name), sim.S("result", r.Code.String()))
				next--
				if next == 0 {
					a.zk.Close(ctx)
				}
			})
		}
	}
	a.zk.Start(ctx)
}

func (a *admin) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	a.zk.HandleMessage(ctx, from, m)
}

func (a *admin) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	a.zk.HandleTimer(ctx, id, name)
}
