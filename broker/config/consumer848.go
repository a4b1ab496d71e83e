package config

// This file holds the consumer's choice of group protocol (KIP-848, Kafka
// 4.0's ConsumerConfig):
//
//	group.protocol          classic (default) or consumer
//	group.remote.assignor   null: the coordinator's default (uniform or range)
//
// group.protocol=consumer needs brokers that serve the consumer group
// protocol: inter.broker.protocol.version 4.0 or later with "consumer" in
// group.coordinator.rebalance.protocols and group.version 1 (checked by
// Config.Validate, which sees both). Under it the classic properties
// session.timeout.ms, heartbeat.interval.ms and partition.assignment.strategy
// are ignored, as Kafka's consumer ignores them (the broker's
// group.consumer.* rule); Kafka refuses them when set explicitly, here they
// are left alone so a scenario can switch protocols with one key.

import "strings"

// The group protocol properties.
const (
	PropGroupProtocol       = "group.protocol"
	PropGroupRemoteAssignor = "group.remote.assignor"
)

// GroupProtocol is group.protocol.
type GroupProtocol string

// The group protocols.
const (
	GroupProtocolClassic  GroupProtocol = "classic"
	GroupProtocolConsumer GroupProtocol = "consumer"
)

// String returns the property value.
func (p GroupProtocol) String() string { return string(p) }

func parseGroupProtocol(s string) (GroupProtocol, bool) {
	switch p := GroupProtocol(strings.ToLower(s)); p {
	case GroupProtocolClassic, GroupProtocolConsumer:
		return p, true
	}
	return "", false
}

func groupProtocolProp() property[Consumer] {
	return choiceProp(PropGroupProtocol, func(c *Consumer) *GroupProtocol { return &c.GroupProtocol }, parseGroupProtocol, "classic, consumer")
}

// RemoteAssignor is group.remote.assignor: "" (null) or a server-side
// assignor's name.
type RemoteAssignor string

// String returns the property value.
func (r RemoteAssignor) String() string { return string(r) }

func groupRemoteAssignorProp() property[Consumer] {
	return choiceProp(PropGroupRemoteAssignor, func(c *Consumer) *RemoteAssignor { return &c.GroupRemoteAssignor },
		func(s string) (RemoteAssignor, bool) {
			return RemoteAssignor(s), s == "" || s == "uniform" || s == "range"
		}, `"" (the coordinator's default), uniform, range`)
}

// validateGroupProtocol checks group.protocol=consumer against the brokers.
func (c Config) validateGroupProtocol() error { return CheckGroupProtocol(c.Consumer, c.Broker) }

// CheckGroupProtocol checks a consumer's group.protocol=consumer (and
// group.remote.assignor) against the brokers' configuration.
func CheckGroupProtocol(consumer Consumer, broker Broker) error {
	c := struct {
		Consumer Consumer
		Broker   Broker
	}{consumer, broker}
	if c.Consumer.GroupProtocol != GroupProtocolConsumer {
		return nil
	}
	switch {
	case c.Broker.InterBrokerProtocolVersion < V4_0:
		return conflict(PropGroupProtocol, "consumer", PropInterBrokerProtocolVersion, c.Broker.InterBrokerProtocolVersion.String(),
			"the consumer group protocol (KIP-848) is served from Kafka 4.0", "inter.broker.protocol.version 4.0 or later, or group.protocol=classic")
	case !c.Broker.ConsumerGroups.Enabled():
		return conflict(PropGroupProtocol, "consumer", PropGroupRebalanceProtocols, joinList(c.Broker.ConsumerGroups.RebalanceProtocols),
			"the brokers do not serve the consumer group protocol", "group.coordinator.rebalance.protocols=classic,consumer with group.version=1, or group.protocol=classic")
	case c.Consumer.GroupRemoteAssignor != "" && !strings.Contains(","+joinList(c.Broker.ConsumerGroups.Assignors)+",", ","+string(c.Consumer.GroupRemoteAssignor)+","):
		return conflict(PropGroupRemoteAssignor, string(c.Consumer.GroupRemoteAssignor), PropGroupConsumerAssignors, joinList(c.Broker.ConsumerGroups.Assignors),
			"the coordinator would answer UNSUPPORTED_ASSIGNOR", "one of group.consumer.assignors")
	}
	return nil
}
