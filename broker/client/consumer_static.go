package client

// This file is the consumer's side of static membership (KIP-345, Kafka
// 2.3+): a consumer with group.instance.id sends it in JoinGroup (v5+),
// SyncGroup, Heartbeat and OffsetCommit, and sends no LeaveGroup when it
// closes or passes max.poll.interval.ms (AbstractCoordinator.maybeLeaveGroup
// sends it only for a dynamic member; consumer_group.go's leave): only
// its session expiry removes it, so a restart within session.timeout.ms
// finds its member and assignment.
//
// FENCED_INSTANCE_ID (error 82: a newer process of the same instance took
// the member over) is fatal: the partitions are lost and the consumer
// takes no further part in the group; every Poll returns the error
// (Kafka's FencedInstanceIdException: the application must close it).
// UNSUPPORTED_VERSION on JoinGroup (brokers before 2.3, which have no
// JoinGroup v5) is fatal once, as the other bad-configuration errors.

import "github.com/kafkasim/kafkasim/sim"

// fencedInstance handles FENCED_INSTANCE_ID: another process with this
// group.instance.id owns the member now, so this one is a zombie. Its
// partitions are lost, and it takes no further part in the group.
func (c *Consumer) fencedInstance(ctx *sim.Context, api string) {
	g := &c.group
	if g.instanceFenced {
		return
	}
	ctx.Log("consumer-fenced-instance", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID),
		sim.S("instance", c.cfg.GroupInstanceID), sim.I("generation", int64(g.generation)), sim.S("api", api))
	c.revoke(ctx, true)
	c.setAssignment(nil)
	g.instanceFenced, g.synced, g.needRejoin = true, false, false
	g.memberID, g.generation = "", -1
	g.resets++
	g.pendingAssign, g.hasPendingAssign = nil, false
}

// instanceID is the group.instance.id requests carry: nil for a dynamic
// member.
func (c *Consumer) instanceID() *string {
	if !c.cfg.Static() {
		return nil
	}
	id := c.cfg.GroupInstanceID
	return &id
}
