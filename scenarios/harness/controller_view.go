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
	mzxid int64
	view  *checkers.ControllerView
}

// controllerView returns the controller's committed leader, epoch and ISR
// of partition k (tp).
func (o *Observer) controllerView(k int, tp storage.TopicPartition) *checkers.ControllerView {
	w := o.c.World
	if o.c.Spec.KRaft() {
		name := o.c.ActiveQuorumController()
		if name == "" {
			return nil
		}
		id, _ := w.Lookup(name)
		b, _ := w.Node(id).(*server.Broker)
		if b == nil || b.QuorumController() == nil {
			return nil
		}
		p, ok := b.QuorumController().Image().Partition(tp.Topic, tp.Partition)
		if !ok {
			return nil
		}
		return &checkers.ControllerView{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, ISR: p.ISR}
	}
	if o.c.ZK < 0 {
		return nil
	}
	s, _ := w.Node(o.c.ZK).(*zk.Server)
	if s == nil {
		return nil
	}
	data, stat, ok := s.Get("/brokers/topics/" + tp.Topic + "/partitions/" + strconv.Itoa(int(tp.Partition)) + "/state")
	if !ok {
		return nil
	}
	if o.zkViews == nil {
		o.zkViews = make([]zkView, len(o.Partitions))
	}
	if c := &o.zkViews[k]; c.view != nil && c.mzxid == stat.Mzxid {
		return c.view
	}
	var st struct {
		Leader      int32   `json:"leader"`
		LeaderEpoch int32   `json:"leader_epoch"`
		ISR         []int32 `json:"isr"`
	}
	if json.Unmarshal(data, &st) != nil {
		return nil
	}
	v := &checkers.ControllerView{Leader: st.Leader, LeaderEpoch: st.LeaderEpoch, ISR: st.ISR}
	o.zkViews[k] = zkView{stat.Mzxid, v}
	return v
}
