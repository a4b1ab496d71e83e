package coordinator

// This file serves JoinGroup (api key 11) and LeaveGroup (13) and runs the
// rebalance: Kafka's GroupCoordinator.handleJoinGroup, prepareRebalance,
// onCompleteJoin and removeMemberAndUpdateGroup (2.x).
//
// Versions: JoinGroup v4+ behaviour (KIP-394): a member joining without an
// id gets MEMBER_ID_REQUIRED with one and must join again with it; v0-v3
// joins are admitted at once. v5+ carry group.instance.id (KIP-345 static
// membership, static.go): a static member joining without an id is
// admitted at once, or takes over its instance's member. v8's reason is
// not kept; v9's SkipAssignment is static.go's. LeaveGroup v0-v2 (one
// member) and v3+ (a list; a pending MEMBER_ID_REQUIRED id leaves without
// error; a member named by group.instance.id alone is removed, as the
// admin client's removeMembersFromConsumerGroup does).
// Simplifications: no reason strings, no group.max.size.

import (
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func joinError(err *kerr.Error, memberID string) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.ErrorCode, r.Generation, r.MemberID = err.Code, -1, memberID
	return r
}

// JoinGroup handles a JoinGroup request; reply runs once, now or when the
// rebalance completes.
func (c *Coordinator) JoinGroup(now sim.Time, req *kmsg.JoinGroupRequest, reply func(*kmsg.JoinGroupResponse)) {
	if err := c.checkGroup(req.Group); err != nil {
		reply(joinError(err, req.MemberID))
		return
	}
	session := sim.Ms(int64(req.SessionTimeoutMillis))
	if session < c.cfg.MinSessionTimeout || session > c.cfg.MaxSessionTimeout {
		reply(joinError(kerr.InvalidSessionTimeout, req.MemberID))
		return
	}
	if cg := c.cgroups[req.Group]; cg != nil {
		if len(cg.members) > 0 {
			// A classic member of a consumer group (KIP-848's online
			// migration, consumergroup_migrate.go).
			rebalance := sim.Ms(int64(req.RebalanceTimeoutMillis))
			if req.Version == 0 || rebalance <= 0 {
				rebalance = session
			}
			c.classicJoinToConsumerGroup(now, cg, req, session, rebalance, reply)
			return
		}
		c.deleteEmptyConsumerGroup(cg)
	}
	g := c.groups[req.Group]
	if g == nil {
		if req.MemberID != "" {
			reply(joinError(kerr.UnknownMemberID, req.MemberID))
			return
		}
		g = newGroup(req.Group, c.PartitionFor(req.Group))
		c.groups[req.Group] = g
	}
	rebalance := sim.Ms(int64(req.RebalanceTimeoutMillis))
	if req.Version == 0 || rebalance <= 0 {
		rebalance = session
	}
	if g.state == Dead {
		reply(joinError(kerr.CoordinatorNotAvailable, req.MemberID))
		return
	}
	if !g.supportsProtocols(req.ProtocolType, req.Protocols) {
		reply(joinError(kerr.InconsistentGroupProtocol, req.MemberID))
		return
	}
	instance := ""
	if req.Version >= 5 {
		instance = instanceOf(req.InstanceID)
	}
	if req.MemberID == "" {
		id := c.newMemberID(req.Group+"-member", now)
		if instance != "" {
			c.staticJoin(now, g, id, instance, req, session, rebalance, reply)
			return
		}
		if req.Version >= 4 {
			g.pending[id] = now.Add(session)
			c.env.Log("member-id-required", sim.S("group", g.id), sim.S("member", id))
			reply(joinError(kerr.MemberIDRequired, id))
			return
		}
		c.addMemberAndRebalance(now, g, id, "", req, session, rebalance, reply)
		return
	}
	if _, ok := g.pending[req.MemberID]; ok {
		if instance != "" {
			// Kafka throws IllegalStateException: a pending id is only
			// ever handed to a dynamic member.
			reply(joinError(kerr.UnknownServerError, req.MemberID))
			return
		}
		delete(g.pending, req.MemberID)
		c.addMemberAndRebalance(now, g, req.MemberID, "", req, session, rebalance, reply)
		return
	}
	if err := g.validateMember(req.MemberID, instance); err != nil {
		if err == kerr.FencedInstanceID {
			c.logFenced(g, req.MemberID, instance, "JoinGroup")
		}
		reply(joinError(err, req.MemberID))
		return
	}
	m := g.members[req.MemberID]
	switch g.state {
	case PreparingRebalance:
		c.updateMemberAndRebalance(now, g, m, req, reply)
	case CompletingRebalance, Stable:
		if g.state == CompletingRebalance && sameProtocols(m.protocols, req.Protocols) || g.state == Stable && m.id != g.leader && sameProtocols(m.protocols, req.Protocols) {
			// A retried join of the current generation: answer it again.
			m.lastHeartbeat = now
			reply(c.joinResponse(g, m))
			return
		}
		c.updateMemberAndRebalance(now, g, m, req, reply)
	default: // Empty, Dead
		reply(joinError(kerr.UnknownMemberID, req.MemberID))
	}
}

func sameProtocols(a, b []kmsg.JoinGroupRequestProtocol) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || string(a[i].Metadata) != string(b[i].Metadata) {
			return false
		}
	}
	return true
}

func (c *Coordinator) addMemberAndRebalance(now sim.Time, g *group, id, instance string, req *kmsg.JoinGroupRequest, session, rebalance sim.Duration, reply func(*kmsg.JoinGroupResponse)) {
	m := &member{id: id, instanceID: instance, clientID: req.Group, sessionTimeout: session, rebalanceTimeout: rebalance,
		protocols: req.Protocols, lastHeartbeat: now, joinReply: reply}
	if len(g.members) == 0 {
		g.protocolType = req.ProtocolType
	}
	g.addMember(m)
	if g.leader == "" {
		g.leader = id
	}
	if instance != "" {
		c.env.Log("member-joined", sim.S("group", g.id), sim.S("member", id), sim.S("instance", instance))
	} else {
		c.env.Log("member-joined", sim.S("group", g.id), sim.S("member", id))
	}
	if g.state == PreparingRebalance && g.initialDelay {
		// InitialDelayedJoin: every new member extends the wait.
		g.joinDeadline = min(now.Add(c.cfg.InitialRebalanceDelay), g.delayLimit)
	}
	c.maybePrepareRebalance(now, g, "member "+id+" joined")
}

func (c *Coordinator) updateMemberAndRebalance(now sim.Time, g *group, m *member, req *kmsg.JoinGroupRequest, reply func(*kmsg.JoinGroupResponse)) {
	m.protocols = req.Protocols
	if m.joinReply != nil {
		m.joinReply(joinError(kerr.UnknownMemberID, m.id)) // superseded by this join
	}
	m.joinReply = reply
	m.lastHeartbeat = now
	c.maybePrepareRebalance(now, g, "member "+m.id+" rejoined")
}

// maybePrepareRebalance moves the group to PreparingRebalance (from Empty,
// CompletingRebalance or Stable) or, already there, completes the join if
// every member is in.
func (c *Coordinator) maybePrepareRebalance(now sim.Time, g *group, reason string) {
	switch g.state {
	case Empty, Stable, CompletingRebalance:
		c.prepareRebalance(now, g, reason)
	case PreparingRebalance:
		if !g.initialDelay && g.allJoined() {
			c.completeJoin(now, g)
		}
	}
}

func (c *Coordinator) prepareRebalance(now sim.Time, g *group, reason string) {
	if g.state == CompletingRebalance {
		c.propagateSyncError(g, kerr.RebalanceInProgress)
	}
	timeout := g.rebalanceTimeout()
	g.initialDelay = g.state == Empty && c.cfg.InitialRebalanceDelay > 0
	if g.initialDelay {
		g.delayLimit = now.Add(timeout)
		g.joinDeadline = min(now.Add(c.cfg.InitialRebalanceDelay), g.delayLimit)
	} else {
		g.joinDeadline = now.Add(timeout)
	}
	g.state = PreparingRebalance
	c.env.Log("group-preparing-rebalance", sim.S("group", g.describe()), sim.S("reason", reason))
	if !g.initialDelay && g.allJoined() {
		c.completeJoin(now, g)
	}
}

// propagateSyncError answers every parked SyncGroup with err and clears the
// assignments (Kafka's resetAndPropagateAssignmentError).
func (c *Coordinator) propagateSyncError(g *group, err *kerr.Error) {
	for _, id := range g.memberIDs() {
		m := g.members[id]
		m.assignment = nil
		if m.syncReply != nil {
			m.syncReply(&kmsg.SyncGroupResponse{ErrorCode: err.Code})
			m.syncReply = nil
		}
	}
}

// completeJoin ends the join phase: dynamic members that did not rejoin
// are removed (static ones stay until their session expires: KIP-345), the
// leader becomes a member that rejoined, the generation increments, and
// every member that rejoined gets its JoinGroup answer (the leader with
// all members' subscriptions). If members remain and none rejoined (all
// static), the join phase waits another rebalance timeout
// (GroupCoordinator.onCompleteJoin's maybeElectNewJoinedLeader).
func (c *Coordinator) completeJoin(now sim.Time, g *group) {
	for _, id := range g.memberIDs() {
		if m := g.members[id]; !m.awaitingJoin() && m.instanceID == "" {
			c.env.Log("member-removed", sim.S("group", g.id), sim.S("member", id), sim.S("reason", "did not rejoin"))
			g.removeMember(id)
		}
	}
	g.pending = map[string]sim.Time{}
	if m, ok := g.members[g.leader]; !ok || !m.awaitingJoin() {
		joined := ""
		for _, id := range g.memberIDs() {
			if g.members[id].awaitingJoin() {
				joined = id
				break
			}
		}
		switch {
		case joined != "":
			g.leader = joined
		case len(g.members) > 0:
			if !ok {
				g.leader = g.memberIDs()[0]
			}
			g.joinDeadline = now.Add(g.rebalanceTimeout())
			c.env.Log("group-join-no-member-rejoined", sim.S("group", g.describe()))
			return
		default:
			g.leader = ""
		}
	}
	g.generation++
	g.initialDelay = false
	if len(g.members) == 0 {
		g.protocol, g.state = "", Empty
		c.env.Log("group-empty", sim.S("group", g.describe()))
		c.store(now, g, nil, func(sim.Time, *kerr.Error) {})
		return
	}
	g.protocol, g.state = g.selectProtocol(), CompletingRebalance
	c.env.Log("group-join-complete", sim.S("group", g.describe()), sim.S("leader", g.leader), sim.S("protocol", g.protocol))
	for _, id := range g.memberIDs() {
		m := g.members[id]
		reply := m.joinReply
		if reply == nil {
			continue // a static member that did not rejoin
		}
		m.joinReply, m.lastHeartbeat = nil, now
		reply(c.joinResponse(g, m))
	}
}

func (c *Coordinator) joinResponse(g *group, m *member) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.Generation, r.LeaderID, r.MemberID = g.generation, g.leader, m.id
	p, pt := g.protocol, g.protocolType
	r.Protocol, r.ProtocolType = &p, &pt
	if m.id == g.leader {
		for _, id := range g.memberIDs() {
			r.Members = append(r.Members, g.joinMember(id))
		}
	}
	return r
}

// removeMember drops a member (left, or its session expired) and
// rebalances what is left.
func (c *Coordinator) removeMember(now sim.Time, g *group, id string) {
	m := g.members[id]
	if m == nil {
		return
	}
	if m.joinReply != nil {
		m.joinReply(joinError(kerr.UnknownMemberID, id))
	}
	if m.syncReply != nil {
		m.syncReply(&kmsg.SyncGroupResponse{ErrorCode: kerr.UnknownMemberID.Code})
	}
	g.removeMember(id)
	if g.leader == id {
		g.leader = ""
		if ids := g.memberIDs(); len(ids) > 0 {
			g.leader = ids[0]
		}
	}
	switch g.state {
	case Stable, CompletingRebalance:
		c.prepareRebalance(now, g, "member "+id+" left")
	case PreparingRebalance:
		if !g.initialDelay && g.allJoined() {
			c.completeJoin(now, g)
		}
	}
}

// LeaveGroup handles a LeaveGroup request.
func (c *Coordinator) LeaveGroup(now sim.Time, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := kmsg.NewPtrLeaveGroupResponse()
	if err := c.checkGroup(req.Group); err != nil {
		resp.ErrorCode = err.Code
		return resp
	}
	if cg := c.cgroups[req.Group]; cg != nil && len(cg.members) > 0 {
		return c.classicLeaveToConsumerGroup(now, cg, req)
	}
	members := []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	if req.Version >= 3 {
		members = req.Members
	}
	g := c.groups[req.Group]
	if g != nil && g.state == Dead {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	for _, lm := range members {
		id, instance := lm.MemberID, instanceOf(lm.InstanceID)
		code := int16(0)
		pending := false
		if g != nil {
			_, pending = g.pending[id]
		}
		switch {
		case g == nil:
			code = kerr.UnknownMemberID.Code
		case id == "" && instance != "":
			// Removal by group.instance.id alone (KIP-345's admin path).
			if cur, ok := g.static[instance]; ok {
				c.env.Log("member-left", sim.S("group", g.id), sim.S("member", cur), sim.S("instance", instance))
				c.removeMember(now, g, cur)
			} else {
				code = kerr.UnknownMemberID.Code
			}
		case pending:
			// A MEMBER_ID_REQUIRED id never used to join (KIP-394):
			// forgotten, as removePendingMemberAndUpdateGroup does.
			delete(g.pending, id)
			c.env.Log("member-left", sim.S("group", g.id), sim.S("member", id))
		default:
			if err := g.validateMember(id, instance); err != nil {
				if err == kerr.FencedInstanceID {
					c.logFenced(g, id, instance, "LeaveGroup")
				}
				code = err.Code
				break
			}
			c.env.Log("member-left", sim.S("group", g.id), sim.S("member", id))
			c.removeMember(now, g, id)
		}
		if req.Version >= 3 {
			resp.Members = append(resp.Members, kmsg.LeaveGroupResponseMember{MemberID: id, InstanceID: lm.InstanceID, ErrorCode: code})
		} else {
			resp.ErrorCode = code
		}
	}
	return resp
}
