package config

// This file holds the broker properties of the consumer group protocol
// (KIP-848), with Kafka 4.0's names and defaults:
//
//	group.coordinator.rebalance.protocols  classic,consumer from 4.0; classic before
//	group.version                          1 from 4.0; 0 before
//	group.consumer.session.timeout.ms      45000
//	group.consumer.heartbeat.interval.ms   5000
//	group.consumer.max.size                2147483647
//	group.consumer.assignors               uniform,range (the first is the default)
//	group.consumer.migration.policy        bidirectional (disabled, upgrade, downgrade)
//
// group.version stands for Kafka's finalized group.version feature (as
// transaction.version does for its feature): 1 lets the coordinator serve
// ConsumerGroupHeartbeat. The protocol is on when the protocols list
// "consumer" and group.version is 1.
//
// Simplifications: "consumer" or group.version 1 below 4.0 is a Conflict
// (3.7-3.9 had the protocol as early access, not modelled); "share" and
// "streams" (KIP-932, KIP-1071) are refused; the assignors are named by
// their short names (Kafka also takes class names); the min/max bounds of
// the session timeout and heartbeat interval
// (group.consumer.{min,max}.*) are not modelled: any value >= 1 is taken.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// The consumer group protocol's properties.
const (
	PropGroupRebalanceProtocols      = "group.coordinator.rebalance.protocols"
	PropGroupVersion                 = "group.version"
	PropGroupConsumerSessionTimeout  = "group.consumer.session.timeout.ms"
	PropGroupConsumerHeartbeat       = "group.consumer.heartbeat.interval.ms"
	PropGroupConsumerMaxSize         = "group.consumer.max.size"
	PropGroupConsumerAssignors       = "group.consumer.assignors"
	PropGroupConsumerMigrationPolicy = "group.consumer.migration.policy"
)

// The values of group.consumer.migration.policy (ConsumerGroupMigrationPolicy).
var migrationPolicies = []string{"disabled", "upgrade", "downgrade", "bidirectional"}

// ConsumerGroups is the consumer group protocol's part of the broker
// configuration.
type ConsumerGroups struct {
	// RebalanceProtocols is group.coordinator.rebalance.protocols: some of
	// classic, consumer. Default classic,consumer from 4.0, else classic.
	RebalanceProtocols []string
	// GroupVersion is group.version: 0 or 1. Default 1 from 4.0, else 0.
	GroupVersion int
	// SessionTimeout is group.consumer.session.timeout.ms. Default 45000ms.
	SessionTimeout sim.Duration
	// HeartbeatInterval is group.consumer.heartbeat.interval.ms. Default
	// 5000ms; below the session timeout.
	HeartbeatInterval sim.Duration
	// MaxSize is group.consumer.max.size. Default 2147483647; at least 1.
	MaxSize int
	// Assignors is group.consumer.assignors: uniform, range. Default
	// uniform,range.
	Assignors []string
	// MigrationPolicy is group.consumer.migration.policy: disabled,
	// upgrade, downgrade or bidirectional (Kafka takes any case; stored in
	// lower case). Default bidirectional (Kafka 4.0's).
	MigrationPolicy string
}

// Enabled reports whether the coordinator serves the consumer protocol.
func (c ConsumerGroups) Enabled() bool {
	return slices.Contains(c.RebalanceProtocols, "consumer") && c.GroupVersion >= 1
}

func defaultConsumerGroups(v Version) ConsumerGroups {
	c := ConsumerGroups{RebalanceProtocols: []string{"classic"}, SessionTimeout: sim.Ms(45000),
		HeartbeatInterval: sim.Ms(5000), MaxSize: maxInt32, Assignors: []string{"uniform", "range"}, MigrationPolicy: "bidirectional"}
	if v >= V4_0 {
		c.RebalanceProtocols, c.GroupVersion = []string{"classic", "consumer"}, 1
	}
	return c
}

// validateConsumerGroups checks the properties against each other and the
// release.
func (b Broker) validateConsumerGroups() error {
	c, v := b.ConsumerGroups, b.InterBrokerProtocolVersion
	for _, p := range c.RebalanceProtocols {
		if p != "classic" && p != "consumer" {
			return &Error{Kind: BadValue, Property: PropGroupRebalanceProtocols, Value: p,
				Reason: "not a modelled rebalance protocol", Allowed: "classic, consumer"}
		}
	}
	for _, a := range c.Assignors {
		if a != "uniform" && a != "range" {
			return &Error{Kind: BadValue, Property: PropGroupConsumerAssignors, Value: a,
				Reason: "not a server-side assignor", Allowed: "uniform, range"}
		}
	}
	switch {
	case !slices.Contains(c.RebalanceProtocols, "classic"):
		return &Error{Kind: BadValue, Property: PropGroupRebalanceProtocols, Value: joinList(c.RebalanceProtocols),
			Reason: "classic is required (Kafka refuses a list without it)", Allowed: "classic or classic,consumer"}
	case slices.Contains(c.RebalanceProtocols, "consumer") && v < V4_0:
		return conflict(PropGroupRebalanceProtocols, joinList(c.RebalanceProtocols), PropInterBrokerProtocolVersion, v.String(),
			"the consumer group protocol (KIP-848) is generally available from Kafka 4.0", "inter.broker.protocol.version 4.0 or later, or classic")
	case c.GroupVersion >= 1 && v < V4_0:
		return conflict(PropGroupVersion, strconv.Itoa(c.GroupVersion), PropInterBrokerProtocolVersion, v.String(),
			"group.version 1 (KIP-848) arrived in Kafka 4.0", "inter.broker.protocol.version 4.0 or later, or group.version=0")
	case c.HeartbeatInterval >= c.SessionTimeout:
		return conflict(PropGroupConsumerHeartbeat, ms(c.HeartbeatInterval), PropGroupConsumerSessionTimeout, ms(c.SessionTimeout),
			"a heartbeat interval at or above the session timeout expires every member", "group.consumer.heartbeat.interval.ms < group.consumer.session.timeout.ms")
	}
	return nil
}

func joinList(l []string) string {
	s := ""
	for i, x := range l {
		if i > 0 {
			s += ","
		}
		s += x
	}
	return s
}

func consumerGroupProps() []property[Broker] {
	return []property[Broker]{
		listProp(PropGroupRebalanceProtocols, func(b *Broker) *[]string { return &b.ConsumerGroups.RebalanceProtocols }),
		intProp(PropGroupVersion, func(b *Broker) *int { return &b.ConsumerGroups.GroupVersion }, 0, 1),
		msProp(PropGroupConsumerSessionTimeout, func(b *Broker) *sim.Duration { return &b.ConsumerGroups.SessionTimeout }, 1, maxInt32),
		msProp(PropGroupConsumerHeartbeat, func(b *Broker) *sim.Duration { return &b.ConsumerGroups.HeartbeatInterval }, 1, maxInt32),
		intProp(PropGroupConsumerMaxSize, func(b *Broker) *int { return &b.ConsumerGroups.MaxSize }, 1, maxInt32),
		listProp(PropGroupConsumerAssignors, func(b *Broker) *[]string { return &b.ConsumerGroups.Assignors }),
		{name: PropGroupConsumerMigrationPolicy,
			set: func(b *Broker, v string) error {
				p := strings.ToLower(strings.TrimSpace(v))
				if !slices.Contains(migrationPolicies, p) {
					return &Error{Kind: BadValue, Property: PropGroupConsumerMigrationPolicy, Value: v,
						Reason: "not a migration policy", Allowed: "disabled, upgrade, downgrade, bidirectional (any case)"}
				}
				b.ConsumerGroups.MigrationPolicy = p
				return nil
			},
			get: func(b *Broker) string { return b.ConsumerGroups.MigrationPolicy }},
	}
}
