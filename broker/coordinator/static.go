package coordinator

// This file is static membership (KIP-345, Kafka 2.3+): a member that
// names a group.instance.id in JoinGroup v5+ is static. The group maps each
// instance id to its current member id (group.static). A static member
// joining without a member id — a restarted process — takes over the
// member of its instance: the old member id is replaced by a new one, and
// anything the old one was waiting for is answered FENCED_INSTANCE_ID.
// In a Stable group whose selected protocol the join does not change, that
// is all: the group's metadata is stored with the new member id and the
// member gets the current generation back (and, through SyncGroup, its
// old assignment) without a rebalance. Any request naming the instance
// with another member id — the old process, a zombie — is answered
// FENCED_INSTANCE_ID (group.validateMember). Static members that did not
// rejoin a rebalance stay in the group until their session expires
// (join.go's completeJoin), so a restart within session.timeout.ms moves
// no partition.
//
// Follows GroupCoordinator.doStaticNewMemberJoinGroup and
// updateStaticMemberAndRebalance, and GroupMetadata.replaceStaticMember
// (Kafka 3.x). JoinGroup v9 (KIP-814): a static leader that takes over in
// a Stable group is told it leads, with the members, and SkipAssignment;
// before v9 the answer names the old leader id, so the restarted leader
// does not compute an assignment a Stable group would ignore.
// Simplifications: member ids are not "<group.instance.id>-<uuid>" but the
// coordinator's deterministic ids (doc.go).

import (
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// staticJoin handles a JoinGroup of a static member without a member id:
// a new static member joins as a dynamic one would (without
// MEMBER_ID_REQUIRED); a known instance takes over its member.
func (c *Coordinator) staticJoin(now sim.Time, g *group, newID, instance string, req *kmsg.JoinGroupRequest, session, rebalance sim.Duration, reply func(*kmsg.JoinGroupResponse)) {
	old, known := g.static[instance]
	if !known {
		c.addMemberAndRebalance(now, g, newID, instance, req, session, rebalance, reply)
		return
	}
	currentLeader := g.leader
	m := c.replaceStaticMember(g, instance, old, newID)
	oldProtocols, oldSession, oldRebalance := m.protocols, m.sessionTimeout, m.rebalanceTimeout
	m.protocols, m.sessionTimeout, m.rebalanceTimeout = req.Protocols, session, rebalance
	m.joinReply, m.lastHeartbeat = reply, now
	switch g.state {
	case Stable:
		if g.selectProtocol() != g.protocol {
			c.prepareRebalance(now, g, "static member "+newID+" (instance "+instance+") changes the group's protocol")
			return
		}
		assignments := map[string][]byte{}
		for _, id := range g.memberIDs() {
			assignments[id] = g.members[id].assignment
		}
		c.env.Log("static-member-replaced", sim.S("group", g.describe()), sim.S("instance", instance), sim.S("old", old), sim.S("member", newID))
		c.store(now, g, assignments, func(now sim.Time, err *kerr.Error) {
			if m.joinReply == nil || g.members[newID] != m {
				return // answered meanwhile: a rebalance, a fence or a resignation
			}
			answer := m.joinReply
			m.joinReply, m.lastHeartbeat = nil, now
			if err != nil {
				// Storing the new member id failed: the old one is
				// the instance's member again.
				c.env.Log("static-member-store-failed", sim.S("group", g.id), sim.S("instance", instance), sim.S("error", err.Message))
				m.protocols, m.sessionTimeout, m.rebalanceTimeout = oldProtocols, oldSession, oldRebalance
				c.replaceStaticMember(g, instance, newID, old)
				r := joinError(err, "")
				r.Generation, r.LeaderID = g.generation, currentLeader
				answer(r)
				return
			}
			r := c.joinResponse(g, m)
			if req.Version >= 9 && g.leader == newID {
				r.SkipAssignment = true
			} else {
				r.LeaderID, r.Members = currentLeader, nil
			}
			answer(r)
		})
	case CompletingRebalance:
		// The leader may already have assigned to the old member id:
		// rebalance so that the new id gets an assignment.
		c.prepareRebalance(now, g, "static member "+newID+" (instance "+instance+") rejoined while the group awaited its assignment")
	case PreparingRebalance:
		if !g.initialDelay && g.allJoined() {
			c.completeJoin(now, g)
		}
	}
}

// replaceStaticMember gives instance's member the id newID in place of
// old, answering FENCED_INSTANCE_ID to whatever the old id was waiting
// for (GroupMetadata.replaceStaticMember).
func (c *Coordinator) replaceStaticMember(g *group, instance, old, newID string) *member {
	m := g.members[old]
	if m.joinReply != nil {
		m.joinReply(joinError(kerr.FencedInstanceID, old))
		m.joinReply = nil
	}
	if m.syncReply != nil {
		m.syncReply(&kmsg.SyncGroupResponse{ErrorCode: kerr.FencedInstanceID.Code})
		m.syncReply = nil
	}
	delete(g.members, old)
	m.id = newID
	g.members[newID] = m
	g.static[instance] = newID
	if g.leader == old {
		g.leader = newID
	}
	return m
}

// joinMember is member id as the leader's JoinGroup answer lists it.
func (g *group) joinMember(id string) kmsg.JoinGroupResponseMember {
	m := g.members[id]
	jm := kmsg.JoinGroupResponseMember{MemberID: id, ProtocolMetadata: m.metadataFor(g.protocol)}
	if m.instanceID != "" {
		inst := m.instanceID
		jm.InstanceID = &inst
	}
	return jm
}

// logFenced writes a FENCED_INSTANCE_ID answer to the trace.
func (c *Coordinator) logFenced(g *group, memberID, instance, api string) {
	c.env.Log("member-fenced-instance", sim.S("group", g.id), sim.S("member", memberID), sim.S("instance", instance),
		sim.S("current", g.static[instance]), sim.S("api", api))
}
