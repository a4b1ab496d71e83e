package coordinator

// This file serves DescribeGroups (api key 15) and ListGroups (16), as
// Kafka's GroupCoordinator.handleDescribeGroup / handleListGroups (2.x):
// a group of a partition this coordinator does not lead is
// NOT_COORDINATOR, of one still loading COORDINATOR_LOAD_IN_PROGRESS; an
// unknown group is described as Dead with no error; a Stable group lists
// its protocol and each member's metadata and assignment, any other state
// its members without them (GroupMetadata.summary). ListGroups lists the
// groups of the partitions led here, or COORDINATOR_LOAD_IN_PROGRESS (and
// none) while one loads; v4's states filter matches state names
// case-insensitively (KIP-518).
//
// Versions: DescribeGroups v0-v5 (v3 authorized operations: every group
// operation, as without an authorizer; v4 group.instance.id, null for a
// dynamic member), ListGroups v0-v4.
// Simplifications: a member's client id is its group's id and its host
// "/" + that (the coordinator does not see the request header; the same
// values go to __consumer_offsets); state names are 2.0's
// (CompletingRebalance, AwaitingSync before).

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupAuthorizedOps is every operation Kafka supports on a group (READ,
// DELETE, DESCRIBE), as a bit field of AclOperation codes.
const groupAuthorizedOps = 1<<3 | 1<<6 | 1<<8

// DescribeGroup answers one group of a DescribeGroups request.
func (c *Coordinator) DescribeGroup(id string, includeOps bool) kmsg.DescribeGroupsResponseGroup {
	rg := kmsg.NewDescribeGroupsResponseGroup()
	rg.Group = id
	switch loaded, ok := c.owned[c.PartitionFor(id)]; {
	case !ok:
		rg.ErrorCode = kerr.NotCoordinator.Code
		return rg
	case !loaded:
		rg.ErrorCode = kerr.CoordinatorLoadInProgress.Code
		return rg
	}
	if includeOps {
		rg.AuthorizedOperations = groupAuthorizedOps
	}
	g := c.groups[id]
	if g == nil || g.state == Dead {
		rg.State = Dead.String()
		return rg
	}
	rg.State, rg.ProtocolType = g.state.String(), g.protocolType
	stable := g.state == Stable
	if stable {
		rg.Protocol = g.protocol
	}
	for _, mid := range g.memberIDs() {
		m := g.members[mid]
		gm := kmsg.NewDescribeGroupsResponseGroupMember()
		gm.MemberID, gm.ClientID, gm.ClientHost = mid, m.clientID, "/"+m.clientID
		if m.instanceID != "" {
			inst := m.instanceID
			gm.InstanceID = &inst
		}
		if stable {
			gm.ProtocolMetadata, gm.MemberAssignment = m.metadataFor(g.protocol), m.assignment
		}
		rg.Members = append(rg.Members, gm)
	}
	return rg
}

// ListGroups answers a ListGroups request: the groups led here whose
// state is in states (all when states is empty), sorted by id.
func (c *Coordinator) ListGroups(states []string) ([]kmsg.ListGroupsResponseGroup, *kerr.Error) {
	for _, loaded := range c.owned { // NB: any one loading decides; order does not matter
		if !loaded {
			return nil, kerr.CoordinatorLoadInProgress
		}
	}
	var out []kmsg.ListGroupsResponseGroup
	for _, id := range c.groupIDs() {
		g := c.groups[id]
		if g.state == Dead || len(states) > 0 && !slices.ContainsFunc(states, func(s string) bool { return strings.EqualFold(s, g.state.String()) }) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState = id, g.protocolType, g.state.String()
		out = append(out, lg)
	}
	return out, nil
}
