package cluster

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/controller"
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

// CreateTopics creates topics in a running cluster, as kafka-topics.sh
// --create does (or Kafka's auto-creation of __consumer_offsets on the
// first FindCoordinator): a new admin node writes them to ZooKeeper and the
// controller's watch makes their replicas (in KRaft mode it sends
// CreateTopics to the controllers). Names already created are refused.
func (c *Cluster) CreateTopics(topics ...Topic) error {
	if c.Spec.ManualController {
		return fmt.Errorf("cluster: CreateTopics needs the ZooKeeper controller")
	}
	var brokers []controller.Broker
	for i := 0; i < c.Spec.Brokers; i++ {
		rack := ""
		if len(c.Spec.Racks) > 0 {
			rack = c.Spec.Racks[i]
		}
		brokers = append(brokers, controller.Broker{ID: int32(i), Rack: rack})
	}
	for _, t := range topics {
		if _, ok := c.Assignments[t.Name]; ok {
			return fmt.Errorf("cluster: topic %s exists already", t.Name)
		}
		if t.Partitions < 1 || t.ReplicationFactor < 1 || t.ReplicationFactor > c.Spec.Brokers {
			return fmt.Errorf("cluster: topic %s: partitions %d, replication factor %d: want >= 1 and at most %d brokers", t.Name, t.Partitions, t.ReplicationFactor, c.Spec.Brokers)
		}
	}
	tas, err := assignments(topics, brokers)
	if err != nil {
		return err
	}
	for _, t := range tas {
		a := make([][]int32, len(t.assignment))
		for p, rs := range t.assignment {
			a[p] = rs
		}
		c.Assignments[t.name] = a
	}
	c.admins++
	factory := func() sim.Node { return &admin{topics: tas, session: c.Spec.Config.Broker.ZookeeperSessionTimeout} }
	if c.Spec.KRaft() {
		voters, _ := c.Spec.voters()
		factory = func() sim.Node { return &kraftAdmin{topics: tas, voters: voters} }
	}
	id, err := c.World.AddNode(fmt.Sprintf("admin%d", c.admins), factory, sim.NodeOptions{})
	if err != nil {
		return err
	}
	return c.World.Inject(sim.Start{Node: id})
}
