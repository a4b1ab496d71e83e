package client

// This file is what the rebalance protocol changes in the consumer (Kafka
// 2.4+ ConsumerCoordinator, KIP-429). The protocol is COOPERATIVE when
// every assignor in partition.assignment.strategy supports it — here only
// cooperative-sticky does — and EAGER otherwise:
//   - EAGER: before rejoining, the member revokes its whole assignment
//     (OnRevoked with everything) and joins owning nothing;
//   - COOPERATIVE: it keeps its partitions and goes on consuming them
//     through the rebalance, joining with them as its owned partitions.
//     After SyncGroup it revokes only what it lost (OnRevoked with those)
//     and, if it lost any, rejoins at once, so that the partitions, held
//     back from their new owners by the assignor for this round, are
//     handed over in the next one; OnAssigned gets only the added ones.
//
// The subscription carries what the assignors need to be sticky
// (ConsumerProtocol v2: owned partitions and generation; "sticky" also
// gets StickyAssignorUserData with the member's last assignment, as
// Kafka's StickyAssignor.subscriptionUserData sends).
// Simplification: the subscription never changes in a consumer's life, so
// onJoinPrepare's "revoke partitions no longer subscribed" has nothing to
// do.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/sim"
)

// cooperative reports whether the consumer runs the COOPERATIVE protocol.
func (c *Consumer) cooperative() bool {
	for _, a := range c.cfg.PartitionAssignmentStrategy {
		if a != config.AssignorCooperativeSticky {
			return false
		}
	}
	return len(c.cfg.PartitionAssignmentStrategy) > 0
}

// subscription is the JoinGroup metadata for protocol name.
func (c *Consumer) subscription(name string) []byte {
	g := &c.group
	m := assignor.Member{Topics: c.topics, Owned: c.Assignment(), Generation: g.generation}
	if name == string(config.AssignorSticky) && g.lastAssigned != nil {
		m.UserData = assignor.EncodeStickyUserData(g.lastAssigned, g.lastGeneration)
	}
	return assignor.EncodeMember(m)
}

// installAssignment takes the assignment SyncGroup gave: all of it in
// place of nothing (EAGER), or the difference with what the member owns
// (COOPERATIVE), with the listener's callbacks. It reports whether the
// member must rejoin at once (it revoked partitions cooperatively).
func (c *Consumer) installAssignment(ctx *sim.Context, tps []TopicPartition) (rejoin bool) {
	g := &c.group
	g.lastAssigned, g.lastGeneration = slices.Clone(tps), g.generation
	if g.lastAssigned == nil {
		g.lastAssigned = []TopicPartition{}
	}
	if !c.cooperative() {
		c.setAssignment(tps)
		if c.listener.OnAssigned != nil {
			c.listener.OnAssigned(ctx, tps)
		}
		return false
	}
	owned := c.Assignment()
	var revoked, added []TopicPartition
	for _, tp := range owned {
		if !slices.Contains(tps, tp) {
			revoked = append(revoked, tp)
		}
	}
	for _, tp := range tps {
		if !slices.Contains(owned, tp) {
			added = append(added, tp)
		}
	}
	if len(revoked) > 0 {
		ctx.Log("consumer-revoke", sim.S("client-id", c.cfg.ClientID), sim.I("partitions", int64(len(revoked))), sim.S("lost", "false"), sim.S("protocol", "cooperative"))
		if c.listener.OnRevoked != nil {
			c.listener.OnRevoked(ctx, revoked) // the place to commit them: positions are still there
		}
	}
	c.setAssignment(tps)
	if c.listener.OnAssigned != nil {
		c.listener.OnAssigned(ctx, added)
	}
	return len(revoked) > 0
}
