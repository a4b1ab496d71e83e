package harness

// This file reads the controller's committed state of a partition for the
// invariants monitor's Replication Quorum Superset check: in ZooKeeper
// mode the partition state znode as the ZooKeeper server holds it (the
// leader's and the controller's writes both land there), in KRaft mode the
// active quorum controller's committed image. Nil when there is none (no
// ZooKeeper node, no active controller, the znode not written yet).

import (
	"encoding/json"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/checkers"
)

// zkView caches a partition state znode's decoding by its Mzxid.
type zkView struct {
	path  string // the partition's state znode
	mzxid int64
	view  *checkers.ControllerView
}

// controllerSource is where this observation reads the controller's
// state: found once per observation, not per partition.
type controllerSource struct {
	kraft *server.Broker // the active quorum controller's node (KRaft)
	zk    *zk.Server     // ZooKeeper mode
}

func (o *Observer) controllerSource() controllerSource {
	if o.c.Spec.KRaft() {
		if b := o.c.ActiveQuorumBroker(); b != nil && b.QuorumController() != nil {
			return controllerSource{kraft: b}
		}
		return controllerSource{}
	}
	if o.c.ZK < 0 {
		return controllerSource{}
	}
	s, _ := o.c.World.Node(o.c.ZK).(*zk.Server)
	return controllerSource{zk: s}
}

// controllerView returns the controller's committed leader, epoch and ISR
// of partition k (tp). A ZooKeeper znode is decoded again only when its
// Mzxid changed.
func (o *Observer) controllerView(src controllerSource, k int, tp storage.TopicPartition) *checkers.ControllerView {
	if src.kraft != nil {
		p, ok := src.kraft.QuorumController().Image().Partition(tp.Topic, tp.Partition)
		if !ok {
			return nil
		}
		// One view per partition, reused: the monitor reads it only
		// during the observation.
		if o.kraftViews == nil {
			o.kraftViews = make([]checkers.ControllerView, len(o.Partitions))
		}
		o.kraftViews[k] = checkers.ControllerView{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, ISR: p.ISR}
		return &o.kraftViews[k]
	}
	if src.zk == nil {
		return nil
	}
	if o.zkViews == nil {
		o.zkViews = make([]zkView, len(o.Partitions))
	}
	c := &o.zkViews[k]
	if c.path == "" {
		c.path = "/brokers/topics/" + tp.Topic + "/partitions/" + strconv.Itoa(int(tp.Partition)) + "/state"
	}
	path := c.path
	stat, ok := src.zk.Stat(path)
	if !ok {
		return nil
	}
	if c.view != nil && c.mzxid == stat.Mzxid {
		return c.view
	}
	data, _, _ := src.zk.Get(path)
	var st struct {
		Leader      int32   `json:"leader"`
		LeaderEpoch int32   `json:"leader_epoch"`
		ISR         []int32 `json:"isr"`
	}
	if json.Unmarshal(data, &st) != nil {
		return nil
	}
	v := &checkers.ControllerView{Leader: st.Leader, LeaderEpoch: st.LeaderEpoch, ISR: st.ISR}
	c.mzxid, c.view = stat.Mzxid, v
	return v
}
