package coordinator

// This file serves SyncGroup (api key 14) and Heartbeat (12): Kafka's
// GroupCoordinator.handleSyncGroup and handleHeartbeat (2.x), with the
// checks in the order the reference (§4.7) gives them. The leader's
// assignment is stored in __consumer_offsets before anyone gets it: the
// group becomes Stable only once that record is committed.
//
// Versions: SyncGroup v0-v5 (v5, KIP-559: a protocol_type or
// protocol_name that is not the group's is INCONSISTENT_GROUP_PROTOCOL,
// and a successful answer names the group's) and Heartbeat v0-v4. A
// group.instance.id (SyncGroup v3+, Heartbeat v3+) is checked as Kafka's
// validateCurrentMember does (group.validateMember): another member id
// for the instance is FENCED_INSTANCE_ID (KIP-345).

import (
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncGroup handles a SyncGroup request; reply runs once, now or when the
// leader's assignment is stored.
func (c *Coordinator) SyncGroup(now sim.Time, req *kmsg.SyncGroupRequest, reply func(*kmsg.SyncGroupResponse)) {
	fail := func(err *kerr.Error) { reply(&kmsg.SyncGroupResponse{ErrorCode: err.Code}) }
	if err := c.checkGroup(req.Group); err != nil {
		fail(err)
		return
	}
	if cg := c.cgroups[req.Group]; cg != nil && len(cg.members) > 0 {
		reply(c.classicSyncToConsumerGroup(now, cg, req))
		return
	}
	g := c.groups[req.Group]
	switch {
	case g == nil:
		fail(kerr.UnknownMemberID)
		return
	case g.state == Dead:
		fail(kerr.CoordinatorNotAvailable)
		return
	}
	if err := c.checkMember(g, req.Version >= 3, req.MemberID, req.InstanceID, "SyncGroup"); err != nil {
		fail(err)
		return
	}
	switch {
	case req.Generation != g.generation:
		fail(kerr.IllegalGeneration)
		return
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType,
		req.Protocol != nil && *req.Protocol != g.protocol:
		fail(kerr.InconsistentGroupProtocol)
		return
	}
	m := g.members[req.MemberID]
	switch g.state {
	case Empty:
		fail(kerr.UnknownMemberID)
	case PreparingRebalance:
		fail(kerr.RebalanceInProgress)
	case Stable:
		m.lastHeartbeat = now
		reply(g.syncResponse(m.assignment))
	case CompletingRebalance:
		if m.syncReply != nil {
			m.syncReply(&kmsg.SyncGroupResponse{ErrorCode: kerr.RebalanceInProgress.Code})
		}
		m.syncReply = reply
		m.lastHeartbeat = now
		if m.id != g.leader {
			return
		}
		assignments := map[string][]byte{}
		for _, a := range req.GroupAssignment {
			if g.members[a.MemberID] != nil {
				assignments[a.MemberID] = a.MemberAssignment
			}
		}
		gen := g.generation
		c.store(now, g, assignments, func(now sim.Time, err *kerr.Error) {
			if c.groups[g.id] != g || g.state != CompletingRebalance || g.generation != gen {
				return // the group moved on meanwhile
			}
			if err != nil {
				c.env.Log("group-store-failed", sim.S("group", g.describe()), sim.S("error", err.Message))
				c.propagateSyncError(g, err)
				c.prepareRebalance(now, g, "storing the assignment failed")
				return
			}
			for _, id := range g.memberIDs() {
				mm := g.members[id]
				mm.assignment = assignments[id] // nil (empty) for members the leader left out
				if mm.syncReply != nil {
					mm.syncReply(g.syncResponse(mm.assignment))
					mm.syncReply = nil
				}
				mm.lastHeartbeat = now
			}
			g.state = Stable
			c.env.Log("group-stable", sim.S("group", g.describe()), sim.S("leader", g.leader))
		})
	}
}

// Heartbeat handles a Heartbeat request.
func (c *Coordinator) Heartbeat(now sim.Time, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := kmsg.NewPtrHeartbeatResponse()
	code := func(err *kerr.Error) *kmsg.HeartbeatResponse { resp.ErrorCode = err.Code; return resp }
	if err := c.checkGroup(req.Group); err != nil {
		return code(err)
	}
	if cg := c.cgroups[req.Group]; cg != nil && len(cg.members) > 0 {
		return c.classicHeartbeatToConsumerGroup(now, cg, req)
	}
	g := c.groups[req.Group]
	switch {
	case g == nil:
		return code(kerr.UnknownMemberID)
	case g.state == Dead:
		return code(kerr.CoordinatorNotAvailable)
	}
	if err := c.checkMember(g, req.Version >= 3, req.MemberID, req.InstanceID, "Heartbeat"); err != nil {
		return code(err)
	}
	if req.Generation != g.generation {
		return code(kerr.IllegalGeneration)
	}
	m := g.members[req.MemberID]
	switch g.state {
	case Empty:
		return code(kerr.UnknownMemberID)
	case PreparingRebalance:
		m.lastHeartbeat = now
		return code(kerr.RebalanceInProgress)
	}
	m.lastHeartbeat = now
	return resp
}

// checkMember is group.validateMember for a request that carries a
// group.instance.id from some version on (hasInstance), tracing a fence.
func (c *Coordinator) checkMember(g *group, hasInstance bool, memberID string, instanceID *string, api string) *kerr.Error {
	instance := ""
	if hasInstance {
		instance = instanceOf(instanceID)
	}
	err := g.validateMember(memberID, instance)
	if err == kerr.FencedInstanceID {
		c.logFenced(g, memberID, instance, api)
	}
	return err
}

// store appends the group's metadata (with these assignments) to its
// partition; done runs with the outcome, mapped as Kafka's
// GroupMetadataManager maps append errors.
func (c *Coordinator) store(now sim.Time, g *group, assignments map[string][]byte, done func(sim.Time, *kerr.Error)) {
	rec := GroupRecord(g.id, g.metadataValue(now, assignments), ms(now))
	c.env.Append(g.partition, []storage.Record{rec}, func(now sim.Time, err *kerr.Error) { done(now, mapAppendError(err)) })
}

// mapAppendError maps an append error to what a group client is told.
func mapAppendError(err *kerr.Error) *kerr.Error {
	switch err {
	case nil:
		return nil
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError, kerr.FencedLeaderEpoch:
		return kerr.NotCoordinator
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return kerr.InvalidCommitOffsetSize
	}
	return kerr.UnknownServerError
}

// syncResponse is a successful SyncGroup answer: the assignment and (v5+)
// the group's protocol type and name.
func (g *group) syncResponse(assignment []byte) *kmsg.SyncGroupResponse {
	pt, p := g.protocolType, g.protocol
	return &kmsg.SyncGroupResponse{MemberAssignment: assignment, ProtocolType: &pt, Protocol: &p}
}
