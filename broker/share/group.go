package share

// This file is the share group part of Kafka's group coordinator
// (GroupMetadataManager.shareGroupHeartbeat, ShareGroup, ShareGroupMember
// at Kafka 4.2): ShareGroupHeartbeat (api key 76, v1) and
// ShareGroupDescribe (77, v1).
//
// A member joins with epoch 0 and its own member id (v1: the client
// generates it, a UUID), heartbeats at its epoch and leaves with -1. A
// change of membership, of a member's subscribed topics or of the
// subscribed topics' metadata bumps the group epoch; the target
// assignment is computed at once (assign.go) and, as share groups need no
// revocation (ShareGroupAssignmentBuilder), every member moves to the
// group epoch and its target on its next heartbeat. A heartbeat at any
// other epoch than the member's gets FENCED_MEMBER_EPOCH; an unknown
// member id UNKNOWN_MEMBER_ID; a member silent for
// group.share.session.timeout.ms (or the group's share.session.timeout.ms)
// is removed.
//
// Simplifications: the group's records (ShareGroupMetadata,
// ShareGroupMemberMetadata, target assignment, ...) are not written to
// __consumer_offsets, so a coordinator elected after a fail-over starts
// without the group and its members rejoin (UNKNOWN_MEMBER_ID, then epoch
// 0): the members' records are held by the share-partitions on the
// partition leaders, not here, so nothing a member acquired is lost by it.
// The group coordinator does not send InitializeShareGroupState for newly
// assigned partitions: a share-partition initializes itself on its first
// ShareFetch (server/share_fetch.go).

import (
	"maps"
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Env is what the share group coordinator asks of its host.
type Env struct {
	// Topics returns the cluster's topics (name, id, partition count).
	Topics func() []assignor.ServerTopic
	// Check returns nil when this broker coordinates group and has loaded
	// its partition, else NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS.
	Check func(group string) *kerr.Error
	// OtherType reports whether group exists as a classic or consumer
	// group (a share heartbeat for it gets GROUP_ID_NOT_FOUND).
	OtherType func(group string) bool
	// GroupConfig returns a group's dynamic config (share.*), "" when the
	// group does not set it.
	GroupConfig func(group, name string) string
	// Log writes a transition to the trace; nil logs nothing.
	Log func(kind string, fields ...sim.Field)
}

type member struct {
	id, rack, clientID, clientHost string
	epoch                          int32
	subscribed                     []string
	assigned                       []TopicPartition
	deadline                       sim.Time
}

type group struct {
	id              string
	epoch           int32 // group epoch
	assignmentEpoch int32
	members         map[string]*member
	target          map[string][]TopicPartition
	metadataKey     string // the subscribed topics' names and sizes when the target was computed
	// initialized are the share-partitions with persisted state, sorted.
	initialized []TopicPartition
}

// Coordinator is the share group coordinator of one broker.
type Coordinator struct {
	cfg    Config
	env    Env
	groups map[string]*group
}

// NewCoordinator returns a coordinator with no groups. It panics on an
// invalid configuration.
func NewCoordinator(cfg Config, env Env) *Coordinator {
	if err := cfg.Validate(); err != nil {
		panic("share.NewCoordinator: " + err.Error())
	}
	if env.Log == nil {
		env.Log = func(string, ...sim.Field) {}
	}
	if env.OtherType == nil {
		env.OtherType = func(string) bool { return false }
	}
	if env.GroupConfig == nil {
		env.GroupConfig = func(string, string) string { return "" }
	}
	return &Coordinator{cfg: cfg, env: env, groups: map[string]*group{}}
}

func (c *Coordinator) groupMs(g, name string, def sim.Duration) sim.Duration {
	if v := c.env.GroupConfig(g, name); v != "" {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil && n > 0 {
			return sim.Ms(n)
		}
	}
	return def
}

// Heartbeat serves ShareGroupHeartbeat. clientID and clientHost are the
// request header's client id and the connection's host, for Describe.
func (c *Coordinator) Heartbeat(now sim.Time, req *kmsg.ShareGroupHeartbeatRequest, clientID, clientHost string) *kmsg.ShareGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	fail := func(err *kerr.Error, msg string) *kmsg.ShareGroupHeartbeatResponse {
		resp.ErrorCode = err.Code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp
	}
	switch {
	case req.GroupID == "":
		return fail(kerr.InvalidRequest, "GroupId can't be empty.")
	case req.MemberID == "":
		return fail(kerr.InvalidRequest, "MemberId can't be empty.")
	case req.MemberEpoch < -1:
		return fail(kerr.InvalidRequest, "MemberEpoch is invalid.")
	case req.MemberEpoch == 0 && len(req.SubscribedTopicNames) == 0:
		return fail(kerr.InvalidRequest, "SubscribedTopicNames must be set in first request.")
	}
	if err := c.env.Check(req.GroupID); err != nil {
		return fail(err, "")
	}
	if c.env.OtherType(req.GroupID) {
		return fail(kerr.GroupIDNotFound, "Group "+req.GroupID+" is not a share group.")
	}
	g := c.groups[req.GroupID]
	if req.MemberEpoch == -1 {
		resp.MemberID, resp.MemberEpoch = &req.MemberID, -1
		if g == nil || g.members[req.MemberID] == nil {
			return fail(kerr.UnknownMemberID, "")
		}
		c.remove(now, g, g.members[req.MemberID], "leave")
		return resp
	}
	if g == nil {
		if req.MemberEpoch != 0 {
			return fail(kerr.UnknownMemberID, "")
		}
		g = &group{id: req.GroupID, members: map[string]*member{}}
		c.groups[req.GroupID] = g
	}
	m := g.members[req.MemberID]
	switch {
	case m == nil && req.MemberEpoch != 0:
		return fail(kerr.UnknownMemberID, "Member "+req.MemberID+" is not a member of group "+req.GroupID+".")
	case m == nil && len(g.members) >= c.cfg.MaxSize:
		return fail(kerr.GroupMaxSizeReached, "The share group has reached its maximum capacity of "+strconv.Itoa(c.cfg.MaxSize)+" members.")
	case m != nil && req.MemberEpoch != 0 && req.MemberEpoch != m.epoch:
		return fail(kerr.FencedMemberEpoch, "The share group member has a smaller member epoch ("+strconv.Itoa(int(req.MemberEpoch))+
			") than the one known by the group coordinator ("+strconv.Itoa(int(m.epoch))+").")
	}
	changed := false
	if m == nil {
		m = &member{id: req.MemberID}
		g.members[m.id] = m
		changed = true
		c.env.Log("share-member-joined", sim.S("group", g.id), sim.S("member", m.id))
	}
	m.clientID, m.clientHost = clientID, clientHost
	if req.RackID != nil {
		m.rack = *req.RackID
	}
	if req.SubscribedTopicNames != nil {
		subs := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(subs)
		subs = slices.Compact(subs)
		if !slices.Equal(subs, m.subscribed) {
			m.subscribed, changed = subs, true
		}
	}
	m.deadline = now.Add(c.groupMs(g.id, GroupSessionTimeout, c.cfg.SessionTimeout))
	if key := c.metadataKey(g); changed || key != g.metadataKey {
		c.recompute(g, key)
	}
	prevEpoch, prev := m.epoch, m.assigned
	m.epoch, m.assigned = g.epoch, g.target[m.id]
	resp.MemberID, resp.MemberEpoch = &m.id, m.epoch
	resp.HeartbeatIntervalMillis = int32(c.groupMs(g.id, GroupHeartbeatInterval, c.cfg.HeartbeatInterval).Milliseconds())
	if req.MemberEpoch == 0 || prevEpoch != m.epoch || !slices.Equal(prev, m.assigned) {
		a := kmsg.NewShareGroupHeartbeatResponseAssignment()
		a.TopicPartitions = toResponse(m.assigned)
		resp.Assignment = &a
	}
	return resp
}

// toResponse groups an assignment by topic, topics in name order.
func toResponse(tps []TopicPartition) []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition {
	out := []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}
	for _, tp := range tps {
		if n := len(out); n > 0 && out[n-1].TopicID == tp.ID {
			out[n-1].Partitions = append(out[n-1].Partitions, tp.Partition)
			continue
		}
		out = append(out, kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{TopicID: tp.ID, Partitions: []int32{tp.Partition}})
	}
	return out
}

// metadataKey describes the subscribed topics' ids and sizes: a change
// (a topic created, deleted, grown) bumps the group epoch.
func (c *Coordinator) metadataKey(g *group) string {
	subs := map[string]bool{}
	for _, m := range g.members {
		for _, t := range m.subscribed {
			subs[t] = true
		}
	}
	key := ""
	for _, t := range c.env.Topics() {
		if subs[t.Name] {
			key += t.Name + "/" + string(t.ID[:]) + "/" + strconv.Itoa(int(t.Partitions)) + ";"
		}
	}
	return key
}

// recompute bumps the group epoch and computes the target assignment.
func (c *Coordinator) recompute(g *group, key string) {
	g.epoch++
	g.metadataKey = key
	subs := map[string][]string{}
	for id, m := range g.members {
		subs[id] = m.subscribed
	}
	g.target = Assign(subs, c.env.Topics())
	g.assignmentEpoch = g.epoch
	for _, id := range g.memberIDs() {
		c.MarkInitialized(g.id, g.target[id])
	}
	c.env.Log("share-group-epoch", sim.S("group", g.id), sim.I("epoch", int64(g.epoch)), sim.I("members", int64(len(g.members))))
}

func (c *Coordinator) remove(now sim.Time, g *group, m *member, why string) {
	delete(g.members, m.id)
	c.env.Log("share-member-removed", sim.S("group", g.id), sim.S("member", m.id), sim.S("why", why))
	c.recompute(g, c.metadataKey(g))
}

// NextDeadline returns the earliest member session deadline.
func (c *Coordinator) NextDeadline() (sim.Time, bool) {
	var at sim.Time
	ok := false
	for _, g := range c.groups {
		for _, m := range g.members {
			if !ok || m.deadline < at {
				at, ok = m.deadline, true
			}
		}
	}
	return at, ok
}

// Tick removes the members whose session expired by now.
func (c *Coordinator) Tick(now sim.Time) {
	for _, gid := range c.groupIDs() {
		g := c.groups[gid]
		for _, id := range g.memberIDs() {
			if m := g.members[id]; m.deadline <= now {
				c.remove(now, g, m, "session-timeout")
			}
		}
	}
}

func (c *Coordinator) groupIDs() []string { return slices.Sorted(maps.Keys(c.groups)) }

func (g *group) memberIDs() []string { return slices.Sorted(maps.Keys(g.members)) }

func (g *group) state() string {
	if len(g.members) == 0 {
		return "Empty"
	}
	return "Stable"
}

// Describe serves ShareGroupDescribe.
func (c *Coordinator) Describe(req *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	for _, id := range req.GroupIDs {
		rg := kmsg.NewShareGroupDescribeResponseGroup()
		rg.GroupID, rg.AuthorizedOperations = id, -2147483648
		g := c.groups[id]
		if err := c.env.Check(id); err != nil {
			rg.ErrorCode = err.Code
		} else if g == nil {
			rg.ErrorCode = kerr.GroupIDNotFound.Code
			msg := "Group " + id + " not found."
			if c.env.OtherType(id) {
				msg = "Group " + id + " is not a share group."
			}
			rg.ErrorMessage = &msg
		} else {
			rg.GroupState, rg.GroupEpoch, rg.AssignmentEpoch, rg.Assignor = g.state(), g.epoch, g.assignmentEpoch, "simple"
			for _, mid := range g.memberIDs() {
				m := g.members[mid]
				rm := kmsg.NewShareGroupDescribeResponseGroupMember()
				rm.MemberID, rm.MemberEpoch, rm.ClientID, rm.ClientHost = m.id, m.epoch, m.clientID, m.clientHost
				if m.rack != "" {
					rm.RackID = &m.rack
				}
				rm.SubscribedTopicNames = slices.Clone(m.subscribed)
				for _, tp := range m.assigned {
					ts := rm.Assignment.TopicPartitions
					if n := len(ts); n > 0 && ts[n-1].TopicID == tp.ID {
						ts[n-1].Partitions = append(ts[n-1].Partitions, tp.Partition)
						continue
					}
					rm.Assignment.TopicPartitions = append(ts, kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition{
						TopicID: tp.ID, Topic: tp.Topic, Partitions: []int32{tp.Partition}})
				}
				rg.Members = append(rg.Members, rm)
			}
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// Group is a share group as ListGroups and DescribeGroups show it.
type Group struct {
	ID, State string
	Members   []string
}

// Groups returns the share groups, sorted by id.
func (c *Coordinator) Groups() []Group {
	var out []Group
	for _, id := range c.groupIDs() {
		g := c.groups[id]
		out = append(out, Group{ID: id, State: g.state(), Members: g.memberIDs()})
	}
	return out
}

// Has reports whether group is a share group here.
func (c *Coordinator) Has(group string) bool { return c.groups[group] != nil }

// Delete deletes an empty share group: NON_EMPTY_GROUP if it has members,
// GROUP_ID_NOT_FOUND if there is none.
func (c *Coordinator) Delete(group string) *kerr.Error {
	g := c.groups[group]
	switch {
	case g == nil:
		return kerr.GroupIDNotFound
	case len(g.members) > 0:
		return kerr.NonEmptyGroup
	}
	delete(c.groups, group)
	c.env.Log("share-group-deleted", sim.S("group", group))
	return nil
}

// Unload drops the groups for which keep is false (the host resigned
// their __consumer_offsets partition).
func (c *Coordinator) Unload(keep func(group string) bool) {
	for _, id := range c.groupIDs() {
		if !keep(id) {
			delete(c.groups, id)
		}
	}
}

// Ensure creates group as an empty share group if it does not exist
// (AlterShareGroupOffsets on a new group, KIP-932).
func (c *Coordinator) Ensure(id string) {
	if c.groups[id] == nil {
		c.groups[id] = &group{id: id, members: map[string]*member{}}
	}
}

// Members returns the number of members of group.
func (c *Coordinator) Members(group string) int {
	if g := c.groups[group]; g != nil {
		return len(g.members)
	}
	return 0
}

// MarkInitialized records that group has persisted state for tps (its
// share-partitions were assigned or altered), for
// DescribeShareGroupOffsets without topics.
func (c *Coordinator) MarkInitialized(group string, tps []TopicPartition) {
	g := c.groups[group]
	if g == nil {
		return
	}
	for _, tp := range tps {
		if !slices.ContainsFunc(g.initialized, func(x TopicPartition) bool { return x.ID == tp.ID && x.Partition == tp.Partition }) {
			g.initialized = append(g.initialized, tp)
		}
	}
	slices.SortFunc(g.initialized, compareTP)
}

// ForgetInitialized drops topic id's partitions from group's initialized
// ones (DeleteShareGroupOffsets).
func (c *Coordinator) ForgetInitialized(group string, id [16]byte) {
	if g := c.groups[group]; g != nil {
		g.initialized = slices.DeleteFunc(g.initialized, func(x TopicPartition) bool { return x.ID == id })
	}
}

// Initialized returns group's initialized share-partitions, sorted.
func (c *Coordinator) Initialized(group string) []TopicPartition {
	if g := c.groups[group]; g != nil {
		return slices.Clone(g.initialized)
	}
	return nil
}
