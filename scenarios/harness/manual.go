package harness

// This file is the manual controller of 'controller manual' scripts: a node
// that sends the LeaderAndIsr and UpdateMetadata requests a script's
// leader-and-isr steps dictate, so that a published trace can be replayed
// with the controller's decisions as given steps (as the TLA+ models take
// them). Answers are ignored.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// manualControllerEpoch is the controller epoch of the manual controller.
const manualControllerEpoch = 1

// ManualController is the node of 'controller manual' (a workload acts
// from one too): it sends the LeaderAndIsr and UpdateMetadata requests a
// step decides, and elects nobody itself.
type ManualController struct {
	enc  wire.Encoder
	corr int32
}

func (m *ManualController) Start(*sim.Context)                            {}
func (m *ManualController) Receive(*sim.Context, sim.NodeID, sim.Message) {}
func (m *ManualController) Timer(*sim.Context, sim.TimerID, string)       {}
func (m *ManualController) send(ctx *sim.Context, to sim.NodeID, req kmsg.Request) {
	m.corr++
	ctx.Send(to, m.enc.Request(m.corr, req))
}

// brokerList parses "b0,b1" into ids.
func (r *Runner) brokerList(s string) ([]int32, error) {
	out := make([]int32, 0, strings.Count(s, ",")+1)
	for n := range strings.SplitSeq(s, ",") {
		_, id, err := r.broker(n)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// LeaderAndISR executes a leader-and-isr step.
func (r *Runner) LeaderAndISR(st scenarios.Step) error {
	if !r.s.Manual {
		return fmt.Errorf("leader-and-isr needs 'controller manual' in the header")
	}
	topic, ps, _ := strings.Cut(st.Args[0], "/")
	p, err := strconv.Atoi(ps)
	if err != nil || !r.hasPartition(topic, int32(p)) {
		return fmt.Errorf("%q is not a partition of this scenario", st.Args[0])
	}
	tp := storage.TopicPartition{Topic: topic, Partition: int32(p)}
	_, leader, err := r.broker(st.KV["leader"])
	if err != nil {
		return err
	}
	epoch, err := strconv.Atoi(st.KV["epoch"])
	if err != nil || epoch < 0 {
		return fmt.Errorf("epoch=%q: want a number >= 0", st.KV["epoch"])
	}
	isr, err := r.brokerList(st.KV["isr"])
	if err != nil {
		return err
	}
	replicas := r.Observer.Replicas[tp]
	to := replicas
	if t, ok := st.KV["to"]; ok {
		if to, err = r.brokerList(t); err != nil {
			return err
		}
	}
	if prev, ok := r.manual[tp]; ok && prev[0] != leader {
		// The controller moved leadership: as far as the cluster is
		// concerned, the old leader failed (its session expired), which is
		// what permits the loss of its acks=1 writes.
		now := r.World.Now()
		r.Observer.Facts.Failures = append(r.Observer.Facts.Failures, checkers.Failure{Broker: prev[0], Kind: checkers.Isolated, Time: now, End: now + 1})
	}
	r.manual[tp] = [2]int32{leader, int32(epoch)}
	r.Observer.Facts.ISRChanges = append(r.Observer.Facts.ISRChanges, checkers.ISRChange{Topic: topic, Partition: int32(p), Time: r.World.Now(), ISR: isr, Leader: leader, LeaderEpoch: int32(epoch)})
	if r.manualSteps == nil {
		r.manualSteps = map[storage.TopicPartition]scenarios.Step{}
	}
	r.manualSteps[tp] = st
	lai := kmsg.NewPtrLeaderAndISRRequest()
	lai.Version = 1
	lai.ControllerEpoch = manualControllerEpoch
	lai.PartitionStates = []kmsg.LeaderAndISRRequestTopicPartition{{Topic: topic, Partition: int32(p), ControllerEpoch: manualControllerEpoch,
		Leader: leader, LeaderEpoch: int32(epoch), ISR: isr, Replicas: replicas}}
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version = 4
	um.ControllerEpoch = manualControllerEpoch
	um.LiveBrokers = make([]kmsg.UpdateMetadataRequestLiveBroker, 0, len(r.Cluster.Brokers))
	for i := range r.Cluster.Brokers {
		um.LiveBrokers = append(um.LiveBrokers, kmsg.UpdateMetadataRequestLiveBroker{ID: int32(i), Host: "b" + strconv.Itoa(i), Port: 9092})
	}
	um.PartitionStates = []kmsg.UpdateMetadataRequestTopicPartition{{Topic: topic, Partition: int32(p), ControllerEpoch: manualControllerEpoch,
		Leader: leader, LeaderEpoch: int32(epoch), ISR: isr, Replicas: replicas}}
	return r.World.Act(r.Controller, func(ctx *sim.Context) {
		for _, b := range to {
			if r.World.Up(r.Cluster.Brokers[b]) {
				r.ctlNode.send(ctx, r.Cluster.Brokers[b], lai)
			}
		}
		for _, b := range r.Cluster.Brokers {
			if r.World.Up(b) {
				r.ctlNode.send(ctx, b, um)
			}
		}
	})
}
