package controller

// This file adds partitions to a topic (CreatePartitions in ZooKeeper
// mode): the new assignment is written to /brokers/topics/<t> and the new
// partitions are brought online as new ones are (leader the first live
// replica, ISR the live replicas), then announced (KafkaController's
// PartitionModifications event and onNewPartitionCreation).
//
// Simplified: the request handler runs on the active controller and hands
// it the new partitions directly; Kafka's handler writes the znode and the
// controller learns of it through its data watch on the topic's znode.

import (
	"slices"

	"github.com/kafkasim/kafkasim/sim"
)

// Assignment returns topic's replica assignment as the controller holds
// it, by partition (nil for a topic it does not know).
func (c *Controller) Assignment(topic string) [][]int32 {
	var out [][]int32
	for _, tp := range c.sortedTPs() {
		if tp.Topic == topic {
			out = append(out, slices.Clone(c.partitions[tp].replicas))
		}
	}
	return out
}

// AddPartitions adds partitions to topic, numbered from its current
// count, with the replicas of added, and calls done with "" once they are
// written and announced, or with why they were not (the controller
// resigned, the topic changed meanwhile).
func (c *Controller) AddPartitions(ctx *sim.Context, topic string, added [][]int32, done func(why string)) {
	c.ctx = ctx
	if !c.active {
		done("not the active controller")
		return
	}
	first := int32(len(c.Assignment(topic)))
	gen := c.gen
	c.enqueue("partition-modifications", func(next func()) {
		if now := int32(len(c.Assignment(topic))); now == 0 || now != first {
			next()
			done("the topic changed meanwhile")
			return
		}
		var tps []TP
		for i, rs := range added {
			tp := TP{topic, first + int32(i)}
			c.partitions[tp] = &partition{replicas: slices.Clone(rs)}
			tps = append(tps, tp)
		}
		c.log("add-partitions", sim.S("topic", topic), sim.I("from", int64(first)), sim.I("count", int64(len(added))))
		c.writeAssignments([]string{topic}, func() {
			c.bringOnline(tps, func() {
				c.announce(tps)
				next()
				if gen == c.gen {
					done("")
				}
			})
		})
	})
}
