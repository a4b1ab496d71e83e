package config

// This file holds the broker properties of share groups (KIP-932), with
// Kafka 4.2's names and defaults:
//
//	share.version                            1 from 4.2; 0 before
//	group.share.session.timeout.ms           45000
//	group.share.heartbeat.interval.ms        5000
//	group.share.max.size                     200
//	group.share.record.lock.duration.ms      30000
//	group.share.delivery.count.limit         5
//	group.share.partition.max.record.locks   2000
//	group.share.max.share.sessions           2000
//	share.coordinator.state.topic.num.partitions       50
//	share.coordinator.state.topic.replication.factor   3
//
// share.version stands for Kafka's finalized share.version feature (as
// group.version does for its feature): 1 serves the share group APIs.
//
// Simplifications: share groups at 4.0 and 4.1 (early access and preview,
// off unless an operator enabled them) are not modelled: share.version=1
// below 4.2 is a Conflict. The min/max bounds of the session timeout,
// heartbeat interval and lock duration (group.share.{min,max}.*) are not
// modelled; group.share.assignors is "simple" only.

import (
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// The share group properties.
const (
	PropShareVersion                 = "share.version"
	PropGroupShareSessionTimeout     = "group.share.session.timeout.ms"
	PropGroupShareHeartbeat          = "group.share.heartbeat.interval.ms"
	PropGroupShareMaxSize            = "group.share.max.size"
	PropGroupShareRecordLockDuration = "group.share.record.lock.duration.ms"
	PropGroupShareDeliveryCountLimit = "group.share.delivery.count.limit"
	PropGroupShareMaxRecordLocks     = "group.share.partition.max.record.locks"
	PropGroupShareMaxSessions        = "group.share.max.share.sessions"
	PropShareStatePartitions         = "share.coordinator.state.topic.num.partitions"
	PropShareStateReplicationFactor  = "share.coordinator.state.topic.replication.factor"
)

// ShareGroups is the share groups' part of the broker configuration.
type ShareGroups struct {
	// ShareVersion is share.version: 0 or 1. Default 1 from 4.2, else 0.
	ShareVersion int
	// SessionTimeout is group.share.session.timeout.ms (45000).
	SessionTimeout sim.Duration
	// HeartbeatInterval is group.share.heartbeat.interval.ms (5000);
	// below the session timeout.
	HeartbeatInterval sim.Duration
	// MaxSize is group.share.max.size (200), in [1, 1000].
	MaxSize int
	// RecordLockDuration is group.share.record.lock.duration.ms (30000),
	// in [1000, 3600000].
	RecordLockDuration sim.Duration
	// DeliveryCountLimit is group.share.delivery.count.limit (5), in
	// [2, 10].
	DeliveryCountLimit int
	// PartitionMaxRecordLocks is group.share.partition.max.record.locks
	// (2000), in [100, 10000].
	PartitionMaxRecordLocks int
	// MaxShareSessions is group.share.max.share.sessions (2000).
	MaxShareSessions int
	// StatePartitions is share.coordinator.state.topic.num.partitions
	// (50).
	StatePartitions int
	// StateReplicationFactor is
	// share.coordinator.state.topic.replication.factor (3).
	StateReplicationFactor int
}

// Enabled reports whether the broker serves share groups.
func (s ShareGroups) Enabled() bool { return s.ShareVersion >= 1 }

func defaultShareGroups(v Version) ShareGroups {
	s := ShareGroups{SessionTimeout: sim.Ms(45000), HeartbeatInterval: sim.Ms(5000), MaxSize: 200,
		RecordLockDuration: sim.Ms(30000), DeliveryCountLimit: 5, PartitionMaxRecordLocks: 2000, MaxShareSessions: 2000,
		StatePartitions: 50, StateReplicationFactor: 3}
	if v >= V4_2 {
		s.ShareVersion = 1
	}
	return s
}

// validateShareGroups checks the properties against each other and the
// release.
func (b Broker) validateShareGroups() error {
	s, v := b.ShareGroups, b.InterBrokerProtocolVersion
	switch {
	case s.ShareVersion >= 1 && v < V4_2:
		return conflict(PropShareVersion, strconv.Itoa(s.ShareVersion), PropInterBrokerProtocolVersion, v.String(),
			"share groups (KIP-932) are production-ready from Kafka 4.2; 4.0 and 4.1's early access is not modelled",
			"inter.broker.protocol.version 4.2 or later, or share.version=0")
	case s.HeartbeatInterval >= s.SessionTimeout:
		return conflict(PropGroupShareHeartbeat, ms(s.HeartbeatInterval), PropGroupShareSessionTimeout, ms(s.SessionTimeout),
			"a heartbeat interval at or above the session timeout expires every member", "group.share.heartbeat.interval.ms < group.share.session.timeout.ms")
	}
	return nil
}

func shareGroupProps() []property[Broker] {
	return []property[Broker]{
		intProp(PropShareVersion, func(b *Broker) *int { return &b.ShareGroups.ShareVersion }, 0, 1),
		msProp(PropGroupShareSessionTimeout, func(b *Broker) *sim.Duration { return &b.ShareGroups.SessionTimeout }, 1, maxInt32),
		msProp(PropGroupShareHeartbeat, func(b *Broker) *sim.Duration { return &b.ShareGroups.HeartbeatInterval }, 1, maxInt32),
		intProp(PropGroupShareMaxSize, func(b *Broker) *int { return &b.ShareGroups.MaxSize }, 1, 1000),
		msProp(PropGroupShareRecordLockDuration, func(b *Broker) *sim.Duration { return &b.ShareGroups.RecordLockDuration }, 1000, 3600000),
		intProp(PropGroupShareDeliveryCountLimit, func(b *Broker) *int { return &b.ShareGroups.DeliveryCountLimit }, 2, 10),
		intProp(PropGroupShareMaxRecordLocks, func(b *Broker) *int { return &b.ShareGroups.PartitionMaxRecordLocks }, 100, 10000),
		intProp(PropGroupShareMaxSessions, func(b *Broker) *int { return &b.ShareGroups.MaxShareSessions }, 1, maxInt32),
		intProp(PropShareStatePartitions, func(b *Broker) *int { return &b.ShareGroups.StatePartitions }, 1, maxInt32),
		intProp(PropShareStateReplicationFactor, func(b *Broker) *int { return &b.ShareGroups.StateReplicationFactor }, 1, 32767),
	}
}
