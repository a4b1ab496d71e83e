package harness

// This file is the liveness phase's stability check of a consumer group
// of the KIP-848 protocol: the coordinator's group is Stable (every member
// at the target assignment epoch, nothing left to revoke or to assign) and
// every running member of the script is one of its members, at the member
// epoch the coordinator has for it.

import (
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
)

// consumerGroupUnstable reports (desc, true) for a consumer group of the
// KIP-848 protocol: desc says why it is not stable, "" when it is; false
// when g is not such a group on coordinator b.
func consumerGroupUnstable(c *coordinator.Coordinator, b int32, g string, members []groupMember) (string, bool) {
	state, epoch, aepoch, ms, ok := c.ConsumerGroupState(g)
	if !ok {
		return "", false
	}
	if state != "Stable" {
		return "coordinator b" + strconv.Itoa(int(b)) + ": consumer group " + state + " epoch " + strconv.Itoa(int(epoch)) +
			" assignment epoch " + strconv.Itoa(int(aepoch)), true
	}
	for _, m := range members {
		e, id := m.n.c.Generation()
		i := slices.IndexFunc(ms, func(x coordinator.ConsumerMember) bool { return x.ID == id })
		if i < 0 || ms[i].Epoch != e {
			return m.name + " (member " + id + " at epoch " + strconv.Itoa(int(e)) + ") is not a member at the group's epoch " + strconv.Itoa(int(aepoch)), true
		}
	}
	return "", true
}

// groupProtocolLabel is the history's name of a consumer's group
// protocol: "consumer" for KIP-848, "" for classic (the field's zero, so
// classic histories read as before).
func groupProtocolLabel(p config.GroupProtocol) string {
	if p == config.GroupProtocolConsumer {
		return "consumer"
	}
	return ""
}
