package harness

// This file answers what serve mode asks of a running world between
// events: every partition's leader, epoch, ISR and high watermark (its
// `status` command), and whether the cluster is ready for clients.

import (
	"github.com/kafkasim/kafkasim/broker/controller"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// PartitionStatus is one partition as the controller and its leader see
// it now.
type PartitionStatus struct {
	Topic     string
	Partition int32
	// Leader and Epoch are the controller's (-1 without a leader); ISR is
	// the controller's committed ISR.
	Leader, Epoch int32
	ISR           []int32
	// HW is the leader's high watermark, -1 when the leader is down or
	// does not lead the partition yet.
	HW int64
	// Why says what is missing when there is no leader.
	Why string
	// Offline is set when no live replica leads the partition now but one
	// did: LastHW is that leader's last high watermark, OfflineSince when
	// it was last seen leading (simulated time).
	Offline      bool
	LastHW       int64
	OfflineSince sim.Time
}

// Status returns the scenario's partitions, in the script's topic order,
// then those of the topics clients created that the run observes
// (client_topics.go), in the order observed.
func (r *Runner) Status() []PartitionStatus {
	var out []PartitionStatus
	for k, tp := range r.Observer.Partitions {
		st := PartitionStatus{Topic: tp.Topic, Partition: tp.Partition, HW: -1}
		st.Leader, st.Epoch, st.Why = r.leaderOf(tp)
		st.ISR = r.isrOf(tp)
		if lp := r.leaderPartition(st.Leader, tp); lp != nil {
			st.HW = lp.HighWatermark()
		} else if ls := r.Observer.leaders; k < len(ls) && ls[k].seen {
			st.Offline, st.LastHW, st.OfflineSince = true, ls[k].hw, ls[k].since
			if !ls[k].offline {
				st.OfflineSince = r.World.Now() // a crash this instant, not observed yet
			}
		}
		out = append(out, st)
	}
	return out
}

// Ready reports whether every partition of the scenario has a leader that
// the leader itself knows of: the moment clients can produce.
func (r *Runner) Ready() bool {
	for _, t := range r.s.Topics {
		for p := 0; p < t.Partitions; p++ {
			tp := storage.TopicPartition{Topic: t.Name, Partition: int32(p)}
			leader, _, why := r.leaderOf(tp)
			if why != "" || r.leaderPartition(leader, tp) == nil {
				return false
			}
		}
	}
	return true
}

// leaderPartition returns broker leader's replica of tp if the broker is
// up and leads it, else nil.
func (r *Runner) leaderPartition(leader int32, tp storage.TopicPartition) *server.Partition {
	if leader < 0 || int(leader) >= len(r.Cluster.Brokers) || !r.World.Up(r.Cluster.Brokers[leader]) {
		return nil
	}
	b := r.Cluster.Broker(int(leader))
	if b == nil {
		return nil
	}
	p, ok := b.Partition(tp)
	if !ok || p.Role() != server.Leader {
		return nil
	}
	return p
}

// isrOf returns tp's committed ISR as the controller has it (nil when
// there is no controller or no state).
func (r *Runner) isrOf(tp storage.TopicPartition) []int32 {
	if !r.Cluster.Spec.KRaft() {
		ctrl := r.activeController()
		if ctrl == nil {
			return nil
		}
		if st, _, ok := ctrl.PartitionState(controller.TP{Topic: tp.Topic, Partition: tp.Partition}); ok {
			return st.ISR
		}
		return nil
	}
	if _, img := r.activeQuorumImage(); img != nil {
		if p, ok := img.Partition(tp.Topic, tp.Partition); ok {
			return p.ISR
		}
	}
	return nil
}

// ServesTransactions tells the runner that clients from outside the
// script (serve mode) wrote transactions: the run is then judged as a
// transactional one, its partitions holding transactions left to the
// transactions checker rather than linearizability (Judge).
func (r *Runner) ServesTransactions() { r.txn.used = true }
