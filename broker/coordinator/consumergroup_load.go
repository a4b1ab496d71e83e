package coordinator

// This file replays the consumer group records of a __consumer_offsets
// partition when its new leader loads it after a fail-over (Kafka's
// GroupMetadataManager.replay for the ConsumerGroup* records): the latest
// record of each key wins and a tombstone deletes. A loaded member keeps
// its epochs, state and partitions; its session (and any revocation it
// owes) restarts from the load, as Kafka's scheduleConsumerGroupSessionTimeout
// does on onLoaded.

import (
	"encoding/binary"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"slices"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// isConsumerRecord reports whether r is a consumer group record (key
// version 3-8).
func isConsumerRecord(r storage.Record) bool {
	if len(r.Key) < 2 {
		return false
	}
	v := int16(binary.BigEndian.Uint16(r.Key))
	return v >= cgMetadataKey && v <= cgCurrentAssignmentKy
}

type loadedMember struct {
	meta, target, current *ConsumerRecord
}

func (c *Coordinator) loadConsumerGroups(now sim.Time, partition int32, recs []ConsumerRecord) {
	type loaded struct {
		epoch, assignmentEpoch *ConsumerRecord
		topics                 *ConsumerRecord
		members                map[string]*loadedMember
	}
	groups := map[string]*loaded{}
	var order []string
	for i := range recs {
		r := &recs[i]
		l := groups[r.Group]
		if l == nil {
			l = &loaded{members: map[string]*loadedMember{}}
			groups[r.Group] = l
			order = append(order, r.Group)
		}
		keep := r
		if r.Tombstone {
			keep = nil
		}
		lm := l.members[r.Member]
		if lm == nil && r.Member != "" {
			lm = &loadedMember{}
			l.members[r.Member] = lm
		}
		switch r.Type {
		case cgMetadataKey:
			l.epoch = keep
		case cgTargetMetadata:
			l.assignmentEpoch = keep
		case cgPartitionMetadata:
			l.topics = keep
		case cgMemberMetadata:
			lm.meta = keep
		case cgTargetMember:
			lm.target = keep
		case cgCurrentAssignmentKy:
			lm.current = keep
		}
	}
	slices.Sort(order)
	for _, id := range order {
		l := groups[id]
		if l.epoch == nil {
			continue // the group was deleted
		}
		g := newConsumerGroup(id, partition)
		g.assignBeforeRevoke = c.cfg.Mutants.On(mutant.AssignBeforeRevoke)
		g.epoch = l.epoch.Epoch
		if l.assignmentEpoch != nil {
			g.assignmentEpoch = l.assignmentEpoch.Epoch
		}
		names := map[assignor.TopicID]string{}
		if l.topics != nil {
			g.topics = l.topics.Topics
		}
		if c.env.Topics != nil {
			for _, t := range c.env.Topics() {
				names[t.ID] = t.Name
			}
		}
		for _, t := range g.topics {
			names[t.ID] = t.Name
		}
		mids := make([]string, 0, len(l.members))
		for mid := range l.members {
			mids = append(mids, mid)
		}
		slices.Sort(mids)
		for _, mid := range mids {
			lm := l.members[mid]
			if lm.meta == nil {
				continue
			}
			m := &cgMember{id: mid, clientID: lm.meta.ClientID, names: lm.meta.Subscribed,
				rebalanceTimeout: sim.Ms(int64(lm.meta.RebalanceMillis)), sessionDeadline: now.Add(c.cfg.Consumer.SessionTimeout)}
			if lm.meta.InstanceID != nil {
				m.instanceID = *lm.meta.InstanceID
			}
			if lm.meta.RackID != nil {
				m.rackID = *lm.meta.RackID
			}
			if lm.meta.SubscribedRegex != nil {
				m.regex = *lm.meta.SubscribedRegex
			}
			m.topics = c.resolveSubscription(m.names, m.regex)
			if lm.meta.ServerAssignor != nil {
				m.serverAssignor = *lm.meta.ServerAssignor
			}
			if lm.target != nil {
				m.target = fromIDPartitions(lm.target.Assigned, names)
			}
			if cur := lm.current; cur != nil {
				m.epoch, m.previousEpoch, m.state = cur.Epoch, cur.PreviousEpoch, MemberState(cur.State)
				m.assigned, m.pending = fromIDPartitions(cur.Assigned, names), fromIDPartitions(cur.Pending, names)
			}
			if cm := lm.meta.Classic; cm != nil {
				m.classic = &classicMeta{sessionTimeout: sim.Ms(int64(cm.SessionTimeoutMillis)), protocols: cm.Protocols}
				m.sessionDeadline = now.Add(m.classic.sessionTimeout)
			}
			if m.state == MemberUnrevokedPartitions {
				m.rebalanceDeadline = now.Add(m.rebalanceTimeout)
			}
			g.members[mid] = m
			g.hold(m)
		}
		c.cgroups[id] = g
		c.env.Log("consumer-group-loaded", sim.S("group", id), sim.I("epoch", int64(g.epoch)),
			sim.I("assignment-epoch", int64(g.assignmentEpoch)), sim.I("members", int64(len(g.members))))
	}
}

func (c *Coordinator) unloadConsumerGroups(partition int32) {
	for id, g := range c.cgroups { // NB: deleting only; order does not matter
		if g.partition == partition {
			delete(c.cgroups, id)
		}
	}
}
