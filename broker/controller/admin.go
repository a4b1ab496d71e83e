package controller

// This file serves the two admin requests that move or remove replicas
// (KafkaController's partition reassignment and TopicDeletionManager, 0.11
// to 2.3, before KIP-455):
//   - /admin/reassign_partitions: the assignment becomes old ∪ new, the
//     new replicas start as followers (a LeaderAndIsr with a bumped epoch),
//     and once every new replica is in the ISR the leader moves into the new
//     set if needed, the old-only replicas leave the ISR and get StopReplica
//     with deletion, and the assignment becomes the new set.
//   - /admin/delete_topics/<topic>: every replica gets StopReplica with
//     deletion, the topic's znodes are removed, and the request is deleted.
// Simplifications: a reassignment completes when the ISR next changes
// (Kafka also checks on every LeaderAndIsr response); a topic is deleted
// at once, without waiting for its replicas on dead brokers (Kafka marks
// it ineligible and retries when they come back: their logs stay on disk).

import (
	"slices"
	"sort"

	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// onReassign starts the reassignments listed in /admin/reassign_partitions.
func (c *Controller) onReassign(done func()) {
	c.env.ZK.GetData(c.ctx, zk.ReassignPartitionsPath, true, c.guard(func(r *zk.Response) {
		if r.Code != zk.Ok {
			c.env.ZK.Exists(c.ctx, zk.ReassignPartitionsPath, true, c.guard(func(*zk.Response) {}))
			done()
			return
		}
		var req zk.ReassignPartitions
		if err := zk.Decode(r.Data, &req); err != nil {
			c.log("bad-reassignment", sim.S("error", err.Error()))
			done()
			return
		}
		if c.reassigning == nil {
			c.reassigning = map[TP][]int32{}
		}
		var ds []decision
		var topics []string
		for _, pr := range req.Partitions {
			tp := TP{pr.Topic, pr.Partition}
			p, ok := c.partitions[tp]
			if !ok || len(pr.Replicas) == 0 || slices.Equal(p.replicas, pr.Replicas) {
				continue
			}
			c.reassigning[tp] = slices.Clone(pr.Replicas)
			union := slices.Clone(p.replicas)
			for _, id := range pr.Replicas {
				if !slices.Contains(union, id) {
					union = append(union, id)
				}
			}
			p.replicas = union
			topics = appendUnique(topics, tp.Topic)
			if p.hasState {
				ds = append(ds, decision{tp: tp, why: "reassign-start", state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: p.state.Leader, Version: 1, LeaderEpoch: p.state.LeaderEpoch + 1, ISR: p.state.ISR}})
			}
			c.log("reassign-start", sim.S("partition", tp.Topic+"-"+itoa(tp.Partition)), sim.S("replicas", ids(pr.Replicas)), sim.S("during", ids(union)))
		}
		c.writeAssignments(topics, func() {
			c.writeDecisions(ds, func() {
				c.announce(decided(ds))
				c.completeReassignments(done)
			})
		})
	}))
}

// completeReassignments finishes every reassignment whose new replicas are
// all in the ISR.
func (c *Controller) completeReassignments(done func()) {
	var ds []decision
	var topics []string
	type removal struct {
		tp      TP
		brokers []int32
	}
	var removals []removal
	for _, tp := range c.sortedReassigning() {
		target := c.reassigning[tp]
		p := c.partitions[tp]
		if !p.hasState || !subset(target, p.state.ISR) {
			continue
		}
		leader := p.state.Leader
		if !slices.Contains(target, leader) || !c.isLive(leader) {
			leader = -1
			for _, id := range target {
				if c.isLive(id) && slices.Contains(p.state.ISR, id) {
					leader = id
					break
				}
			}
		}
		isr := slices.DeleteFunc(slices.Clone(p.state.ISR), func(id int32) bool { return !slices.Contains(target, id) })
		var gone []int32
		for _, id := range p.replicas {
			if !slices.Contains(target, id) {
				gone = append(gone, id)
			}
		}
		ds = append(ds, decision{tp: tp, why: "reassign-complete", state: zk.PartitionState{ControllerEpoch: c.epoch, Leader: leader, Version: 1, LeaderEpoch: p.state.LeaderEpoch + 1, ISR: isr}})
		p.replicas = slices.Clone(target)
		delete(c.reassigning, tp)
		topics = appendUnique(topics, tp.Topic)
		removals = append(removals, removal{tp, gone})
		c.log("reassign-complete", sim.S("partition", tp.Topic+"-"+itoa(tp.Partition)), sim.S("replicas", ids(target)), sim.S("removed", ids(gone)))
	}
	if len(ds) == 0 {
		done()
		return
	}
	c.writeDecisions(ds, func() {
		c.writeAssignments(topics, func() {
			c.sendUpdateMetadata(c.live)
			for _, d := range ds {
				for _, b := range c.partitions[d.tp].replicas {
					c.sendLeaderAndISR(b, []TP{d.tp})
				}
			}
			for _, rm := range removals {
				for _, b := range rm.brokers {
					c.sendStopReplica(b, []TP{rm.tp}, true)
				}
			}
			if len(c.reassigning) > 0 {
				done()
				return
			}
			c.env.ZK.Delete(c.ctx, zk.ReassignPartitionsPath, zk.AnyVersion, c.guard(func(*zk.Response) {
				c.env.ZK.Exists(c.ctx, zk.ReassignPartitionsPath, true, c.guard(func(*zk.Response) {}))
				done()
			}))
		})
	})
}

// onDeleteTopics deletes the topics listed under /admin/delete_topics
// (TopicDeletionManager.onTopicDeletion): every live broker first learns
// that their partitions are going (UpdateMetadata naming the leader
// LeaderDuringDelete, so its metadata cache drops them), then every
// replica gets StopReplica with deletion, and the znodes go.
func (c *Controller) onDeleteTopics(done func()) {
	c.env.ZK.GetChildren(c.ctx, zk.DeleteTopicsPath, true, c.guard(func(r *zk.Response) {
		topics := r.Children
		byTopic := map[string][]TP{}
		var deleting []TP
		for _, tp := range c.sortedTPs() {
			if slices.Contains(topics, tp.Topic) {
				byTopic[tp.Topic] = append(byTopic[tp.Topic], tp)
				deleting = append(deleting, tp)
				c.partitions[tp].state.Leader = LeaderDuringDelete
			}
		}
		if len(deleting) > 0 {
			c.sendUpdateMetadata(c.live)
		}
		next := barrier(len(topics), done)
		for _, t := range topics {
			tps := byTopic[t]
			for _, b := range c.live {
				var mine []TP
				for _, tp := range tps {
					if slices.Contains(c.partitions[tp].replicas, b) {
						mine = append(mine, tp)
					}
				}
				c.sendStopReplica(b, mine, true)
			}
			var paths []string
			for _, tp := range tps {
				paths = append(paths, zk.TopicPartitionStatePath(t, tp.Partition), zk.TopicPartitionPath(t, tp.Partition))
				delete(c.partitions, tp)
				delete(c.reassigning, tp)
			}
			paths = append(paths, zk.TopicPartitionsPath(t), zk.TopicPath(t), zk.DeleteTopicPath(t))
			c.log("delete-topic", sim.S("topic", t), sim.I("partitions", int64(len(tps))))
			c.deleteAll(paths, next)
		}
	}))
}

// LeaderDuringDelete is LeaderAndIsr.LeaderDuringDelete: the leader an
// UpdateMetadata names for a partition of a topic being deleted.
const LeaderDuringDelete int32 = -2

// deleteAll deletes paths one after the other (children before parents).
func (c *Controller) deleteAll(paths []string, done func()) {
	if len(paths) == 0 {
		done()
		return
	}
	c.env.ZK.Delete(c.ctx, paths[0], zk.AnyVersion, c.guard(func(*zk.Response) {
		c.deleteAll(paths[1:], done)
	}))
}

// writeAssignments writes the cached assignment of each topic to
// /brokers/topics/<topic>.
func (c *Controller) writeAssignments(topics []string, then func()) {
	next := barrier(len(topics), then)
	for _, t := range topics {
		ra := zk.ReplicaAssignment{}
		for _, tp := range c.sortedTPs() {
			if tp.Topic == t {
				ra[tp.Partition] = slices.Clone(c.partitions[tp].replicas)
			}
		}
		c.env.ZK.SetData(c.ctx, zk.TopicPath(t), zk.Encode(zk.NewTopicAssignment(ra)), zk.AnyVersion, c.guard(func(*zk.Response) { next() }))
	}
}

// sendStopReplica tells broker b to stop replicating tps (and delete them).
func (c *Controller) sendStopReplica(b int32, tps []TP, deletePartitions bool) {
	if len(tps) == 0 || !c.isLive(b) {
		return
	}
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = 0
	req.ControllerID = c.env.ID
	req.ControllerEpoch = c.epoch
	req.DeletePartitions = deletePartitions
	for _, tp := range tps {
		req.Topics = append(req.Topics, kmsg.StopReplicaRequestTopic{Topic: tp.Topic, Partition: tp.Partition})
	}
	c.enqueueRequest(b, req)
}

func (c *Controller) sortedReassigning() []TP {
	out := make([]TP, 0, len(c.reassigning))
	for tp := range c.reassigning {
		out = append(out, tp)
	}
	sort.Slice(out, func(i, j int) bool { return lessTP(out[i], out[j]) })
	return out
}

func subset(xs, of []int32) bool {
	for _, x := range xs {
		if !slices.Contains(of, x) {
			return false
		}
	}
	return true
}

func appendUnique(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}
