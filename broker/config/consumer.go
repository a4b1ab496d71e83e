package config

// This file holds the consumer's configuration (Kafka's ConsumerConfig).
// Defaults are those of the 3.x Java consumer (session.timeout.ms=45000 after
// KIP-735; partition.assignment.strategy=range,cooperative-sticky).
// group.instance.id (KIP-345, 2.3+) makes the member static: JoinGroup v5+
// with the instance id, no LeaveGroup on close, FENCED_INSTANCE_ID fatal.
// Its value is checked as JoinGroupRequest.validateGroupInstanceId does (1
// to 249 characters of [a-zA-Z0-9._-], not "." or ".."); a client is not held to the
// brokers' release (accepted.go), so against brokers older than 2.3 the
// member fails at its first JoinGroup with UNSUPPORTED_VERSION, as the
// Java consumer does when ApiVersions offers no JoinGroup v5.
// Simplified vs Kafka: no deserializers, interceptors or
// the KIP-848 group protocol; assignors are the four built-in ones, named by
// their protocol names or Kafka's class names. Two properties are not the
// Java consumer's: offsets.storage is the old (pre-0.9) consumer's choice
// between ZooKeeper and __consumer_offsets, and rebalance.timeout.ms is Kafka
// Connect's name for the JoinGroup RebalanceTimeoutMs, which the Java
// consumer takes from max.poll.interval.ms (its default here too).
//
// kafkasim.truncation.detection is not a Kafka property: it says whether
// the consumer is a KIP-320 client (2.1+) that sends its current leader
// epoch in Fetch, validates its position with OffsetsForLeaderEpoch after a
// leader change and detects log truncation.
// ParseConsumer defaults it to true (a current client); Parse, which sees
// the brokers too, defaults it to kafkasim.leader.epoch.fencing, so the
// client's version follows the brokers' unless the key is given.
//
// As Kafka does, a consumer without group.id has auto-commit off: setting
// enable.auto.commit=true explicitly without a group is an error, and the
// default true becomes false.

import (
	"math"
	"strings"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
)

// Names of the consumer properties other code refers to.
const (
	PropGroupID                     = "group.id"
	PropGroupInstanceID             = "group.instance.id"
	PropSessionTimeoutMs            = "session.timeout.ms"
	PropHeartbeatIntervalMs         = "heartbeat.interval.ms"
	PropMaxPollIntervalMs           = "max.poll.interval.ms"
	PropRebalanceTimeoutMs          = "rebalance.timeout.ms"
	PropEnableAutoCommit            = "enable.auto.commit"
	PropPartitionAssignmentStrategy = "partition.assignment.strategy"
	// PropTruncationDetection is the kafkasim switch for KIP-320 truncation
	// detection in the consumer.
	PropTruncationDetection = "kafkasim.truncation.detection"
	assignorAllowed         = "a comma-separated list of range, roundrobin, sticky, cooperative-sticky (or Kafka's class names, e.g. org.apache.kafka.clients.consumer.RangeAssignor)"
)

// AutoOffsetReset is auto.offset.reset: where a consumer starts without a
// committed offset, or after OFFSET_OUT_OF_RANGE.
type AutoOffsetReset string

// The auto.offset.reset values.
const (
	ResetEarliest AutoOffsetReset = "earliest"
	ResetLatest   AutoOffsetReset = "latest"
	// ResetNone raises an error to the application instead.
	ResetNone AutoOffsetReset = "none"
)

// String returns the property value.
func (r AutoOffsetReset) String() string { return string(r) }

func parseReset(s string) (AutoOffsetReset, bool) {
	switch r := AutoOffsetReset(strings.ToLower(s)); r {
	case ResetEarliest, ResetLatest, ResetNone:
		return r, true
	}
	return "", false
}

// IsolationLevel is isolation.level (KIP-98): read_uncommitted reads up to
// the HW; read_committed reads up to the last stable offset and drops the
// records of aborted transactions.
type IsolationLevel string

// The isolation levels.
const (
	ReadUncommitted IsolationLevel = "read_uncommitted"
	ReadCommitted   IsolationLevel = "read_committed"
)

// String returns the property value.
func (l IsolationLevel) String() string { return string(l) }

func parseIsolation(s string) (IsolationLevel, bool) {
	switch l := IsolationLevel(strings.ToLower(s)); l {
	case ReadUncommitted, ReadCommitted:
		return l, true
	}
	return "", false
}

// OffsetsStorage is offsets.storage: where committed offsets live.
type OffsetsStorage string

// The offset stores.
const (
	// OffsetsKafka stores offsets in __consumer_offsets (0.9 and later).
	OffsetsKafka OffsetsStorage = "kafka"
	// OffsetsZookeeper stores them under
	// /consumers/<group>/offsets/<topic>/<partition>, as before 0.9.
	OffsetsZookeeper OffsetsStorage = "zookeeper"
)

// String returns the property value.
func (o OffsetsStorage) String() string { return string(o) }

func parseOffsetsStorage(s string) (OffsetsStorage, bool) {
	switch o := OffsetsStorage(strings.ToLower(s)); o {
	case OffsetsKafka, OffsetsZookeeper:
		return o, true
	}
	return "", false
}

// Assignor is a partition assignment strategy, by its protocol name (the
// name JoinGroup carries).
type Assignor string

// The built-in assignors.
const (
	AssignorRange             Assignor = "range"
	AssignorRoundRobin        Assignor = "roundrobin"
	AssignorSticky            Assignor = "sticky"
	AssignorCooperativeSticky Assignor = "cooperative-sticky"
)

// String returns the protocol name.
func (a Assignor) String() string { return string(a) }

var assignorNames = map[string]Assignor{
	"range": AssignorRange, "RangeAssignor": AssignorRange,
	"org.apache.kafka.clients.consumer.RangeAssignor": AssignorRange,
	"roundrobin": AssignorRoundRobin, "RoundRobinAssignor": AssignorRoundRobin,
	"org.apache.kafka.clients.consumer.RoundRobinAssignor": AssignorRoundRobin,
	"sticky": AssignorSticky, "StickyAssignor": AssignorSticky,
	"org.apache.kafka.clients.consumer.StickyAssignor": AssignorSticky,
	"cooperative-sticky": AssignorCooperativeSticky, "CooperativeStickyAssignor": AssignorCooperativeSticky,
	"org.apache.kafka.clients.consumer.CooperativeStickyAssignor": AssignorCooperativeSticky,
}

// ParseAssignor parses one assignor: its protocol name or Kafka's (simple or
// fully qualified) class name, optionally preceded by "class " as Kafka
// prints class lists.
func ParseAssignor(s string) (Assignor, bool) {
	a, ok := assignorNames[strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "class "))]
	return a, ok
}

// Consumer is the consumer configuration. Each field names its Kafka
// property, unit, default and limits; DefaultConsumer returns the defaults.
type Consumer struct {
	// Mutants are the planted client bugs switched on (package mutant; none
	// is Kafka): the harness copies the brokers' kafkasim.mutant.* here for
	// the workload's clients, never for the checkers' own readers.
	Mutants mutant.Set
	// GroupID is group.id. Default "" (Kafka's null: no group, manual
	// assignment only, no auto-commit).
	GroupID string
	// GroupInstanceID is group.instance.id: a static member's identity
	// across restarts (KIP-345). Default "" (Kafka's null: a dynamic
	// member); 1 to 249 characters of [a-zA-Z0-9._-], not "." or "..",
	// with a group.id.
	GroupInstanceID string
	// ClientID is client.id, recorded in histories. Default "".
	ClientID string
	// ClientRack is client.rack: fetch from a replica in this rack
	// (KIP-392). Default "".
	ClientRack string
	// SessionTimeout is session.timeout.ms: the coordinator drops a member
	// silent this long. Default 45000ms; within the broker's
	// group.min/max.session.timeout.ms (Config.Validate).
	SessionTimeout sim.Duration
	// HeartbeatInterval is heartbeat.interval.ms. Default 3000ms; at least
	// 0; below session.timeout.ms.
	HeartbeatInterval sim.Duration
	// MaxPollInterval is max.poll.interval.ms: a member that does not poll
	// this long leaves the group. Default 300000ms; at least 1ms.
	MaxPollInterval sim.Duration
	// RebalanceTimeout is rebalance.timeout.ms: how long the coordinator
	// waits for members to rejoin. Default max.poll.interval.ms; at least 1ms.
	RebalanceTimeout sim.Duration
	// AutoOffsetReset is auto.offset.reset. Default ResetLatest.
	AutoOffsetReset AutoOffsetReset
	// EnableAutoCommit is enable.auto.commit. Default true with a group.id,
	// false without.
	EnableAutoCommit bool
	// AutoCommitInterval is auto.commit.interval.ms. Default 5000ms; at
	// least 0.
	AutoCommitInterval sim.Duration
	// FetchMinBytes is fetch.min.bytes. Default 1; at least 0.
	FetchMinBytes int
	// FetchMaxWait is fetch.max.wait.ms. Default 500ms; at least 0.
	FetchMaxWait sim.Duration
	// FetchMaxBytes is fetch.max.bytes: bytes per fetch response. Default
	// 52428800; at least 0.
	FetchMaxBytes int
	// MaxPartitionFetchBytes is max.partition.fetch.bytes. Default 1048576;
	// at least 0.
	MaxPartitionFetchBytes int
	// MaxPollRecords is max.poll.records. Default 500; at least 1.
	MaxPollRecords int
	// RequestTimeout is request.timeout.ms. Default 30000ms; at least 0.
	RequestTimeout sim.Duration
	// RetryBackoff is retry.backoff.ms. Default 100ms; at least 0.
	RetryBackoff sim.Duration
	// ReconnectBackoff and ReconnectBackoffMax are reconnect.backoff.ms
	// (default 50ms) and reconnect.backoff.max.ms (default 1s): how long a
	// broker whose connection was reset is left alone, doubling with each
	// reset in a row up to the maximum.
	ReconnectBackoff, ReconnectBackoffMax sim.Duration
	// PartitionAssignmentStrategy is partition.assignment.strategy, in
	// preference order. Default [range, cooperative-sticky]; at least one,
	// no repeats.
	PartitionAssignmentStrategy []Assignor
	// IsolationLevel is isolation.level. Default ReadUncommitted.
	IsolationLevel IsolationLevel
	// OffsetsStorage is offsets.storage. Default OffsetsKafka.
	OffsetsStorage OffsetsStorage
	// TruncationDetection is kafkasim.truncation.detection: KIP-320 position
	// validation (OffsetsForLeaderEpoch after a leader change; a truncated
	// log resets the position to the divergence point or, with
	// auto.offset.reset=none, fails Poll with a log-truncation error).
	// Default true; Parse defaults it to the brokers'
	// kafkasim.leader.epoch.fencing.
	TruncationDetection bool
}

// DefaultConsumer returns Kafka's defaults for a consumer without a group.
func DefaultConsumer() Consumer {
	return Consumer{
		SessionTimeout:              sim.Ms(45000),
		HeartbeatInterval:           sim.Ms(3000),
		MaxPollInterval:             sim.Ms(300000),
		RebalanceTimeout:            sim.Ms(300000),
		AutoOffsetReset:             ResetLatest,
		EnableAutoCommit:            false,
		AutoCommitInterval:          sim.Ms(5000),
		FetchMinBytes:               1,
		FetchMaxWait:                sim.Ms(500),
		FetchMaxBytes:               52428800,
		MaxPartitionFetchBytes:      1048576,
		MaxPollRecords:              500,
		RequestTimeout:              sim.Ms(30000),
		RetryBackoff:                sim.Ms(100),
		ReconnectBackoff:            sim.Ms(50),
		ReconnectBackoffMax:         sim.Ms(1000),
		PartitionAssignmentStrategy: []Assignor{AssignorRange, AssignorCooperativeSticky},
		IsolationLevel:              ReadUncommitted,
		OffsetsStorage:              OffsetsKafka,
		TruncationDetection:         true,
	}
}

var consumerProps = newTable(
	stringProp(PropGroupID, func(c *Consumer) *string { return &c.GroupID }),
	stringProp(PropGroupInstanceID, func(c *Consumer) *string { return &c.GroupInstanceID }),
	stringProp("client.id", func(c *Consumer) *string { return &c.ClientID }),
	stringProp("client.rack", func(c *Consumer) *string { return &c.ClientRack }),
	msProp(PropSessionTimeoutMs, func(c *Consumer) *sim.Duration { return &c.SessionTimeout }, 1, maxInt32),
	msProp(PropHeartbeatIntervalMs, func(c *Consumer) *sim.Duration { return &c.HeartbeatInterval }, 0, maxInt32),
	msProp(PropMaxPollIntervalMs, func(c *Consumer) *sim.Duration { return &c.MaxPollInterval }, 1, maxInt32),
	msProp(PropRebalanceTimeoutMs, func(c *Consumer) *sim.Duration { return &c.RebalanceTimeout }, 1, maxInt32),
	choiceProp("auto.offset.reset", func(c *Consumer) *AutoOffsetReset { return &c.AutoOffsetReset }, parseReset, "earliest, latest, none"),
	boolProp(PropEnableAutoCommit, func(c *Consumer) *bool { return &c.EnableAutoCommit }),
	msProp("auto.commit.interval.ms", func(c *Consumer) *sim.Duration { return &c.AutoCommitInterval }, 0, maxInt32),
	intProp("fetch.min.bytes", func(c *Consumer) *int { return &c.FetchMinBytes }, 0, maxInt32),
	msProp("fetch.max.wait.ms", func(c *Consumer) *sim.Duration { return &c.FetchMaxWait }, 0, maxInt32),
	intProp("fetch.max.bytes", func(c *Consumer) *int { return &c.FetchMaxBytes }, 0, maxInt32),
	intProp("max.partition.fetch.bytes", func(c *Consumer) *int { return &c.MaxPartitionFetchBytes }, 0, maxInt32),
	intProp("max.poll.records", func(c *Consumer) *int { return &c.MaxPollRecords }, 1, maxInt32),
	msProp("request.timeout.ms", func(c *Consumer) *sim.Duration { return &c.RequestTimeout }, 0, maxInt32),
	msProp("retry.backoff.ms", func(c *Consumer) *sim.Duration { return &c.RetryBackoff }, 0, math.MaxInt64),
	msProp("reconnect.backoff.ms", func(c *Consumer) *sim.Duration { return &c.ReconnectBackoff }, 0, math.MaxInt64),
	msProp("reconnect.backoff.max.ms", func(c *Consumer) *sim.Duration { return &c.ReconnectBackoffMax }, 0, math.MaxInt64),
	assignorsProp(),
	choiceProp("isolation.level", func(c *Consumer) *IsolationLevel { return &c.IsolationLevel }, parseIsolation, "read_committed, read_uncommitted"),
	choiceProp("offsets.storage", func(c *Consumer) *OffsetsStorage { return &c.OffsetsStorage }, parseOffsetsStorage, "kafka, zookeeper"),
	boolProp(PropTruncationDetection, func(c *Consumer) *bool { return &c.TruncationDetection }),
)

// ConsumerProperties returns every key ParseConsumer accepts, sorted.
func ConsumerProperties() []string { return consumerProps.names() }

// ParseConsumer parses consumer properties, keys in sorted order, resolves
// the defaults that depend on other properties, and validates the result.
func ParseConsumer(props map[string]string) (Consumer, error) {
	c := DefaultConsumer()
	if err := consumerProps.apply(&c, props); err != nil {
		return Consumer{}, err
	}
	if _, set := props[PropEnableAutoCommit]; !set {
		c.EnableAutoCommit = c.GroupID != ""
	}
	if _, set := props[PropRebalanceTimeoutMs]; !set {
		c.RebalanceTimeout = c.MaxPollInterval
	}
	if err := c.Validate(); err != nil {
		return Consumer{}, err
	}
	return c, nil
}

// Validate reports the first property outside its limits (in name order),
// then the first combination Kafka's consumer refuses.
func (c Consumer) Validate() error {
	if err := consumerProps.validate(&c); err != nil {
		return err
	}
	if c.HeartbeatInterval >= c.SessionTimeout {
		return conflict(PropHeartbeatIntervalMs, ms(c.HeartbeatInterval), PropSessionTimeoutMs, ms(c.SessionTimeout),
			"heartbeats must come more often than the session times out",
			"heartbeat.interval.ms < session.timeout.ms (Kafka recommends at most a third)")
	}
	if id := c.GroupInstanceID; id != "" {
		if !legalInstanceID(id) {
			return &Error{Kind: BadValue, Property: PropGroupInstanceID, Value: id, Reason: "not a legal group instance id",
				Allowed: "1 to 249 characters of [a-zA-Z0-9._-], not . or .. (JoinGroupRequest.validateGroupInstanceId), or unset for a dynamic member"}
		}
		if c.GroupID == "" {
			return conflict(PropGroupInstanceID, id, PropGroupID, `""`,
				"a static member is a member of a group", "a group.id, or no group.instance.id")
		}
	}
	if c.EnableAutoCommit && c.GroupID == "" {
		return conflict(PropEnableAutoCommit, "true", PropGroupID, `""`,
			"auto-commit needs a group to commit to", "a group.id, or enable.auto.commit=false")
	}
	return nil
}

// legalInstanceID reports whether id passes Kafka's
// JoinGroupRequest.validateGroupInstanceId (Topic.validate's rules).
func legalInstanceID(id string) bool {
	if len(id) == 0 || len(id) > 249 || id == "." || id == ".." {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Static reports whether the consumer is a static member (KIP-345).
func (c Consumer) Static() bool { return c.GroupInstanceID != "" }

// Pairs renders every consumer property as sorted key=value lines.
func (c Consumer) Pairs() []string { return consumerProps.pairs(&c) }

// NonDefaultPairs renders the consumer properties whose value differs from
// DefaultConsumer()'s.
func (c Consumer) NonDefaultPairs() []string {
	d := DefaultConsumer()
	return consumerProps.diff(&c, &d)
}

// String renders Pairs one per line.
func (c Consumer) String() string { return strings.Join(c.Pairs(), "\n") }

// assignorsProp is partition.assignment.strategy.
func assignorsProp() property[Consumer] {
	check := func(list []Assignor, raw string) error {
		if len(list) == 0 {
			return &Error{Kind: BadValue, Property: PropPartitionAssignmentStrategy, Value: raw, Reason: "empty list", Allowed: assignorAllowed}
		}
		for i, a := range list {
			if back, ok := ParseAssignor(string(a)); !ok || back != a {
				return &Error{Kind: BadValue, Property: PropPartitionAssignmentStrategy, Value: raw, Reason: "unknown assignor " + string(a), Allowed: assignorAllowed}
			}
			for _, prev := range list[:i] {
				if prev == a {
					return &Error{Kind: BadValue, Property: PropPartitionAssignmentStrategy, Value: raw, Reason: "assignor " + string(a) + " listed twice", Allowed: assignorAllowed}
				}
			}
		}
		return nil
	}
	render := func(list []Assignor) string {
		s := make([]string, len(list))
		for i, a := range list {
			s[i] = string(a)
		}
		return strings.Join(s, ",")
	}
	return property[Consumer]{
		name: PropPartitionAssignmentStrategy,
		set: func(c *Consumer, v string) error {
			var list []Assignor
			if strings.TrimSpace(v) != "" {
				for _, it := range strings.Split(v, ",") {
					a, ok := ParseAssignor(it)
					if !ok {
						return &Error{Kind: BadValue, Property: PropPartitionAssignmentStrategy, Value: v,
							Reason: "unknown assignor " + strings.TrimSpace(it), Allowed: assignorAllowed}
					}
					list = append(list, a)
				}
			}
			if err := check(list, v); err != nil {
				return err
			}
			c.PartitionAssignmentStrategy = list
			return nil
		},
		get: func(c *Consumer) string { return render(c.PartitionAssignmentStrategy) },
		check: func(c *Consumer) error {
			return check(c.PartitionAssignmentStrategy, render(c.PartitionAssignmentStrategy))
		},
	}
}
