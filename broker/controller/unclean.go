package controller

// This file is KafkaController's TopicUncleanLeaderElectionEnable event
// (2.1+, KAFKA-4362's follow-up in ConfigHandler): when a topic's
// unclean.leader.election.enable is changed to true, the broker that holds
// the active controller enqueues an election of the topic's offline
// partitions, which now may take a replica outside the ISR. Before 2.1 the
// new value waits for the next election (a broker coming or going), which
// reads it then (OfflinePartitionLeaderSelector read the topic's config from
// ZooKeeper on each election); Env.Unclean is read at election time here
// too, so both behaviours follow from the caller choosing whether to call.

import (
	"github.com/kafkasim/kafkasim/sim"
)

// EnableTopicUncleanLeaderElection elects leaders for topic's partitions
// that have none, now that unclean election is allowed for it. It does
// nothing on an inactive controller.
func (c *Controller) EnableTopicUncleanLeaderElection(ctx *sim.Context, topic string) {
	if !c.active {
		return
	}
	c.ctx = ctx
	c.enqueue("topic-unclean-leader-election-enable", func(done func()) {
		var ds []decision
		for _, tp := range c.sortedTPs() {
			p := c.partitions[tp]
			if tp.Topic != topic || !p.hasState || (p.state.Leader >= 0 && c.isLive(p.state.Leader)) {
				continue
			}
			if d, ok := c.electOffline(tp, p); ok {
				ds = append(ds, d)
			}
		}
		c.log("topic-unclean-enable", sim.S("topic", topic), sim.I("elections", int64(len(ds))))
		c.writeDecisions(ds, func() {
			if len(ds) > 0 {
				c.announce(decided(ds))
			}
			done()
		})
	})
}
