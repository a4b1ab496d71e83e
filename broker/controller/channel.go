package controller

// This file is the controller's channel to the brokers
// (ControllerChannelManager): a queue per broker, one request in flight,
// retried after a backoff until the broker answers or dies, and the
// LeaderAndIsr (v1) and UpdateMetadata (v4) requests built from the
// controller's cache.

import (
	"slices"
	"sort"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type channel struct {
	queue    []kmsg.Request
	inflight bool
	retry    sim.TimerID
}

func (c *Controller) channelIDs() []int32 {
	out := make([]int32, 0, len(c.channels))
	for id := range c.channels {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (c *Controller) enqueueRequest(b int32, req kmsg.Request) {
	ch := c.channels[b]
	if ch == nil {
		ch = &channel{}
		c.channels[b] = ch
	}
	ch.queue = append(ch.queue, req)
	c.sendNext(b)
}

func (c *Controller) sendNext(b int32) {
	ch := c.channels[b]
	if ch == nil || ch.inflight || ch.retry != 0 || len(ch.queue) == 0 {
		return
	}
	ch.inflight = true
	gen := c.gen
	c.env.Send(b, ch.queue[0], func(_ kmsg.Response, err error) {
		if gen != c.gen || c.channels[b] != ch {
			return // resigned, or the broker died or restarted meanwhile
		}
		ch.inflight = false
		if err != nil {
			ch.retry = c.ctx.SetTimer(c.env.RetryBackoff, TimerName)
			return
		}
		ch.queue = ch.queue[1:]
		c.sendNext(b)
	})
}

// sendLeaderAndISR tells broker b the state of tps.
func (c *Controller) sendLeaderAndISR(b int32, tps []TP) {
	if len(tps) == 0 || !c.isLive(b) {
		return
	}
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = 1
	req.ControllerID = c.env.ID
	req.ControllerEpoch = c.epoch
	leaders := map[int32]bool{}
	for _, tp := range tps {
		p := c.partitions[tp]
		if !p.hasState {
			continue
		}
		req.PartitionStates = append(req.PartitionStates, kmsg.LeaderAndISRRequestTopicPartition{
			Topic: tp.Topic, Partition: tp.Partition, ControllerEpoch: p.state.ControllerEpoch,
			Leader: p.state.Leader, LeaderEpoch: p.state.LeaderEpoch, ISR: append([]int32(nil), p.state.ISR...),
			ZKVersion: p.zkVersion, Replicas: append([]int32(nil), p.replicas...),
		})
		if p.state.Leader >= 0 {
			leaders[p.state.Leader] = true
		}
	}
	if len(req.PartitionStates) == 0 {
		return
	}
	for _, id := range c.live {
		if leaders[id] {
			req.LiveLeaders = append(req.LiveLeaders, kmsg.LeaderAndISRRequestLiveLeader{BrokerID: id, Host: "b" + itoa(id), Port: 9092})
		}
	}
	c.enqueueRequest(b, req)
}

// sendUpdateMetadata sends every partition's state and the live brokers to
// each of brokers.
func (c *Controller) sendUpdateMetadata(brokers []int32) {
	for _, b := range brokers {
		req := kmsg.NewPtrUpdateMetadataRequest()
		req.Version = 4
		req.ControllerID = c.env.ID
		req.ControllerEpoch = c.epoch
		for _, id := range c.live {
			lb := kmsg.UpdateMetadataRequestLiveBroker{ID: id, Host: "b" + itoa(id), Port: 9092}
			lb.Endpoints = []kmsg.UpdateMetadataRequestLiveBrokerEndpoint{{Port: 9092, Host: "b" + itoa(id), ListenerName: "PLAINTEXT"}}
			if r := c.racks[id]; r != "" {
				rack := r
				lb.Rack = &rack
			}
			req.LiveBrokers = append(req.LiveBrokers, lb)
		}
		for _, tp := range c.sortedTPs() {
			p := c.partitions[tp]
			if !p.hasState {
				continue
			}
			var offline []int32
			for _, r := range p.replicas {
				if !c.isLive(r) {
					offline = append(offline, r)
				}
			}
			req.PartitionStates = append(req.PartitionStates, kmsg.UpdateMetadataRequestTopicPartition{
				Topic: tp.Topic, Partition: tp.Partition, ControllerEpoch: p.state.ControllerEpoch,
				Leader: p.state.Leader, LeaderEpoch: p.state.LeaderEpoch, ISR: append([]int32(nil), p.state.ISR...),
				ZKVersion: p.zkVersion, Replicas: append([]int32(nil), p.replicas...), OfflineReplicas: offline,
			})
		}
		c.enqueueRequest(b, req)
	}
}

// announce sends UpdateMetadata to every live broker and each live broker
// the LeaderAndIsr of those of tps it hosts (after the partitions' states
// changed).
func (c *Controller) announce(tps []TP) {
	c.sendUpdateMetadata(c.live)
	for _, b := range c.live {
		var mine []TP
		for _, tp := range tps {
			if slices.Contains(c.partitions[tp].replicas, b) {
				mine = append(mine, tp)
			}
		}
		c.sendLeaderAndISR(b, mine)
	}
}

// decided returns the partitions of decisions.
func decided(ds []decision) []TP {
	out := make([]TP, len(ds))
	for i, d := range ds {
		out[i] = d.tp
	}
	return out
}
