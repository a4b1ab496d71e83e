package share

// This file holds the share group properties (KIP-932) with Kafka 4.2's
// names and defaults, and the share group's dynamic group configs
// (IncrementalAlterConfigs on a GROUP resource, KIP-848's group configs
// extended by KIP-932).

import (
	"fmt"

	"github.com/kafkasim/kafkasim/sim"
)

// Config is the broker's share group configuration.
type Config struct {
	// Enabled is whether the broker serves share groups: Kafka's
	// share.version feature at 1, finalized by default from 4.2 (4.0 and
	// 4.1 had share groups as early access, off unless enabled).
	Enabled bool
	// SessionTimeout is group.share.session.timeout.ms (45000).
	SessionTimeout sim.Duration
	// HeartbeatInterval is group.share.heartbeat.interval.ms (5000).
	HeartbeatInterval sim.Duration
	// MaxSize is group.share.max.size (200): a ShareGroupHeartbeat that
	// would add a member past it gets GROUP_MAX_SIZE_REACHED.
	MaxSize int
	// RecordLockDuration is group.share.record.lock.duration.ms (30000):
	// how long an acquired record stays locked to its member.
	RecordLockDuration sim.Duration
	// DeliveryCountLimit is group.share.delivery.count.limit (5): a record
	// delivered this many times is archived instead of made available
	// again.
	DeliveryCountLimit int
	// PartitionMaxRecordLocks is group.share.partition.max.record.locks
	// (2000): no new records are acquired on a share-partition while this
	// many are in flight.
	PartitionMaxRecordLocks int
	// MaxShareSessions is group.share.max.share.sessions (2000): a new
	// share session past it gets SHARE_SESSION_LIMIT_REACHED.
	MaxShareSessions int
	// StatePartitions is share.coordinator.state.topic.num.partitions
	// (50): the partitions of __share_group_state.
	StatePartitions int
	// StateReplicationFactor is
	// share.coordinator.state.topic.replication.factor (3).
	StateReplicationFactor int
}

// DefaultConfig returns Kafka 4.2's defaults, enabled.
func DefaultConfig() Config {
	return Config{Enabled: true, SessionTimeout: sim.Ms(45000), HeartbeatInterval: sim.Ms(5000), MaxSize: 200,
		RecordLockDuration: sim.Ms(30000), DeliveryCountLimit: 5, PartitionMaxRecordLocks: 2000, MaxShareSessions: 2000,
		StatePartitions: 50, StateReplicationFactor: 3}
}

// Validate reports the first setting outside Kafka's range.
func (c Config) Validate() error {
	switch {
	case c.SessionTimeout < sim.Ms(1):
		return fmt.Errorf("group.share.session.timeout.ms %d: must be >= 1", c.SessionTimeout.Milliseconds())
	case c.HeartbeatInterval < sim.Ms(1) || c.HeartbeatInterval >= c.SessionTimeout:
		return fmt.Errorf("group.share.heartbeat.interval.ms %d: must be >= 1 and below group.share.session.timeout.ms %d",
			c.HeartbeatInterval.Milliseconds(), c.SessionTimeout.Milliseconds())
	case c.MaxSize < 1 || c.MaxSize > 1000:
		return fmt.Errorf("group.share.max.size %d: allowed [1, 1000]", c.MaxSize)
	case c.RecordLockDuration < sim.Ms(1000) || c.RecordLockDuration > sim.Ms(3600000):
		return fmt.Errorf("group.share.record.lock.duration.ms %d: allowed [1000, 3600000]", c.RecordLockDuration.Milliseconds())
	case c.DeliveryCountLimit < 2 || c.DeliveryCountLimit > 10:
		return fmt.Errorf("group.share.delivery.count.limit %d: allowed [2, 10]", c.DeliveryCountLimit)
	case c.PartitionMaxRecordLocks < 100 || c.PartitionMaxRecordLocks > 10000:
		return fmt.Errorf("group.share.partition.max.record.locks %d: allowed [100, 10000]", c.PartitionMaxRecordLocks)
	case c.StatePartitions < 1:
		return fmt.Errorf("share.coordinator.state.topic.num.partitions %d: must be >= 1", c.StatePartitions)
	case c.StateReplicationFactor < 1:
		return fmt.Errorf("share.coordinator.state.topic.replication.factor %d: must be >= 1", c.StateReplicationFactor)
	case c.MaxShareSessions < 1:
		return fmt.Errorf("group.share.max.share.sessions %d: must be >= 1", c.MaxShareSessions)
	}
	return nil
}

// The share group's dynamic group configs (GROUP resources, KIP-932), each
// overriding the broker property of the same suffix for one group.
const (
	GroupAutoOffsetReset    = "share.auto.offset.reset"       // latest (default) or earliest
	GroupRecordLockDuration = "share.record.lock.duration.ms" // the broker's group.share.record.lock.duration.ms
	GroupSessionTimeout     = "share.session.timeout.ms"      // the broker's group.share.session.timeout.ms
	GroupHeartbeatInterval  = "share.heartbeat.interval.ms"   // the broker's group.share.heartbeat.interval.ms
	GroupIsolationLevel     = "share.isolation.level"         // read_uncommitted (default) or read_committed
	GroupDeliveryCountLimit = "share.delivery.count.limit"    // the broker's group.share.delivery.count.limit
)

// GroupConfigNames lists the share group configs, sorted.
var GroupConfigNames = []string{GroupAutoOffsetReset, GroupDeliveryCountLimit, GroupHeartbeatInterval,
	GroupIsolationLevel, GroupRecordLockDuration, GroupSessionTimeout}

// GroupConfigDefault returns the value a share group config has when
// the group does not set it, under broker configuration c.
func (c Config) GroupConfigDefault(name string) string {
	switch name {
	case GroupAutoOffsetReset:
		return "latest"
	case GroupRecordLockDuration:
		return fmt.Sprint(c.RecordLockDuration.Milliseconds())
	case GroupSessionTimeout:
		return fmt.Sprint(c.SessionTimeout.Milliseconds())
	case GroupHeartbeatInterval:
		return fmt.Sprint(c.HeartbeatInterval.Milliseconds())
	case GroupIsolationLevel:
		return "read_uncommitted"
	case GroupDeliveryCountLimit:
		return fmt.Sprint(c.DeliveryCountLimit)
	}
	return ""
}

// ValidateGroupConfig checks one share group config's value, as Kafka's
// GroupConfig does, and returns an error naming the allowed values.
func (c Config) ValidateGroupConfig(name, value string) error {
	var n int64
	num := func(lo, hi int64) error {
		if _, err := fmt.Sscan(value, &n); err != nil || fmt.Sprint(n) != value {
			return fmt.Errorf("%s %q: not an integer", name, value)
		}
		if n < lo || n > hi {
			return fmt.Errorf("%s %d: allowed [%d, %d]", name, n, lo, hi)
		}
		return nil
	}
	switch name {
	case GroupAutoOffsetReset:
		if value != "latest" && value != "earliest" {
			return fmt.Errorf("%s %q: allowed latest, earliest", name, value)
		}
	case GroupIsolationLevel:
		if value != "read_uncommitted" && value != "read_committed" {
			return fmt.Errorf("%s %q: allowed read_uncommitted, read_committed", name, value)
		}
	case GroupRecordLockDuration:
		return num(1000, 3600000)
	case GroupSessionTimeout:
		return num(1, 1<<31-1)
	case GroupHeartbeatInterval:
		return num(1, 1<<31-1)
	case GroupDeliveryCountLimit:
		return num(2, 10)
	default:
		return fmt.Errorf("%s: not a share group config (allowed: %v)", name, GroupConfigNames)
	}
	return nil
}
