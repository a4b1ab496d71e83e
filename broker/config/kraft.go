package config

// This file holds the KRaft properties of KafkaConfig (KIP-500, KIP-595,
// KIP-631, KIP-996): the node's process.roles, the static quorum
// (controller.quorum.voters), the Raft timeouts, broker registration and
// heartbeats, and the metadata log. Kafka's defaults throughout.
//
// Mode: a run is in KRaft mode when process.roles is set or the release is
// 4.0 or later (Kafka 4.0 removed ZooKeeper). kafkasim shares one Broker
// value across the cluster's nodes, so process.roles here is the roles of
// the broker nodes (b0, b1, ...): "broker" (dedicated controllers c0, c1, ...
// hold the quorum) or "broker,controller" (combined nodes). Dedicated
// controller nodes always run "controller". node.id is numbered by the
// cluster harness (brokers from 0, dedicated controllers from 3000, as
// Kafka's KafkaClusterTestKit numbers them). controller.quorum.voters
// defaults to every node with the controller role; given, its ids must be
// unique (here) and name controller nodes of the cluster (cluster.Spec).
//
// Simulation-only switches: kafkasim.raft.prevote (KIP-996 pre-vote, on from
// 4.0 where Kafka ships it), kafkasim.raft.check.quorum (KIP-996 check
// quorum: a leader that a majority stopped fetching from resigns; on from
// 3.7, where Kafka added it, KAFKA-15489) and kafkasim.raft.vote.check.log (Raft's log
// up-to-date check on Vote; false is a planted bug for explore to find).
// kafkasim.kraft.version chooses how the controllers' storage is formatted
// (kafka-storage.sh format): 0 (the default), with controller.quorum.voters,
// a static quorum; 1 (KIP-853, from 3.9), with --initial-controllers (every
// controller, each with its directory id; --feature kraft.version=1): a
// dynamic quorum whose voter set lives in the metadata log, changed by
// AddRaftVoter and RemoveRaftVoter (broker/raft/voters.go). With 1 the
// bootstrap servers (controller.quorum.bootstrap.servers) are every
// controller and controller.quorum.voters must be unset, as kafka-storage
// refuses --initial-controllers beside it. The default stays 0 on every
// release (Kafka 4.x formats kraft.version 1 only when told to with
// --standalone or --initial-controllers). controller.quorum.auto.join.enable
// (Kafka 4.2, KIP-853: a controller that is no voter removes the stale
// voter of its id and adds itself) is off by default and refused before
// 4.2; kafkasim.raft.auto.join is the same behaviour as a simulation
// switch on any release from 3.9. Both need kafkasim.kraft.version=1.

import (
	"math"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// Names of the KRaft properties other code refers to.
const (
	PropProcessRoles           = "process.roles"
	PropControllerQuorumVoters = "controller.quorum.voters"
	PropZookeeperConnect       = "zookeeper.connect"
	PropRaftPreVote            = "kafkasim.raft.prevote"
	// PropUncleanElectionInterval is unclean.leader.election.interval.ms.
	PropUncleanElectionInterval = "unclean.leader.election.interval.ms"
	PropRaftCheckQuorum         = "kafkasim.raft.check.quorum"
	PropRaftVoteCheckLog        = "kafkasim.raft.vote.check.log"
	// PropKRaftVersion is kafkasim.kraft.version: the kraft.version the
	// controllers are formatted with (0 static, 1 KIP-853 dynamic).
	PropKRaftVersion = "kafkasim.kraft.version"
	// PropRaftAutoJoin is kafkasim.raft.auto.join: the simulation's
	// switch for auto-join on any release with KIP-853 (3.9+).
	PropRaftAutoJoin = "kafkasim.raft.auto.join"
	// PropControllerAutoJoin is Kafka 4.2's
	// controller.quorum.auto.join.enable.
	PropControllerAutoJoin = "controller.quorum.auto.join.enable"
)

// Roles is process.roles.
type Roles string

// The process roles.
const (
	// RolesNone is ZooKeeper mode (process.roles unset).
	RolesNone Roles = ""
	// RolesBroker is a KRaft broker; the quorum runs elsewhere.
	RolesBroker Roles = "broker"
	// RolesController is a dedicated KRaft controller.
	RolesController Roles = "controller"
	// RolesCombined is a node that is both (Kafka's combined mode).
	RolesCombined Roles = "broker,controller"
)

const rolesAllowed = `broker, controller, "broker,controller" (either order); unset for ZooKeeper mode`

// String returns the property value.
func (r Roles) String() string { return string(r) }

// Broker reports whether the roles include the broker.
func (r Roles) Broker() bool { return r == RolesBroker || r == RolesCombined }

// Controller reports whether the roles include the controller.
func (r Roles) Controller() bool { return r == RolesController || r == RolesCombined }

func parseRoles(s string) (Roles, bool) {
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p != "broker" && p != "controller" || seen[p] {
			return "", s == ""
		}
		seen[p] = true
	}
	switch {
	case seen["broker"] && seen["controller"]:
		return RolesCombined, true
	case seen["broker"]:
		return RolesBroker, true
	case seen["controller"]:
		return RolesController, true
	}
	return RolesNone, true
}

// Voter is one entry of controller.quorum.voters: id@host:port.
type Voter struct {
	ID   int32
	Host string
	Port int
}

// String renders the entry as Kafka writes it.
func (v Voter) String() string {
	return strconv.Itoa(int(v.ID)) + "@" + v.Host + ":" + strconv.Itoa(v.Port)
}

// ParseVoters parses controller.quorum.voters ("3000@c0:9093,3001@c1:9093").
// The empty string is no voters (the harness's default applies).
func ParseVoters(s string) ([]Voter, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	bad := func(why string) error {
		return &Error{Kind: BadValue, Property: PropControllerQuorumVoters, Value: s, Reason: why,
			Allowed: "a comma-separated list of id@host:port with distinct ids, e.g. 3000@c0:9093,3001@c1:9093"}
	}
	var out []Voter
	seen := map[int32]bool{}
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		at := strings.IndexByte(e, '@')
		colon := strings.LastIndexByte(e, ':')
		if at <= 0 || colon < at+2 || colon == len(e)-1 {
			return nil, bad("entry " + strconv.Quote(e) + " is not id@host:port")
		}
		id, err := strconv.ParseInt(e[:at], 10, 32)
		if err != nil || id < 0 {
			return nil, bad("entry " + strconv.Quote(e) + ": the id is not a node id (an integer >= 0)")
		}
		port, err := strconv.Atoi(e[colon+1:])
		if err != nil || port < 1 || port > 65535 {
			return nil, bad("entry " + strconv.Quote(e) + ": the port is not in [1, 65535]")
		}
		if seen[int32(id)] {
			return nil, bad("node id " + e[:at] + " is listed twice")
		}
		seen[int32(id)] = true
		out = append(out, Voter{ID: int32(id), Host: e[at+1 : colon], Port: port})
	}
	return out, nil
}

// KRaft is the KRaft part of the broker configuration.
type KRaft struct {
	// ProcessRoles is process.roles of the broker nodes. Default unset
	// (ZooKeeper mode) below 4.0, "broker" from 4.0.
	ProcessRoles Roles
	// ZookeeperConnect is zookeeper.connect; kafkasim connects brokers to
	// its one ZooKeeper node whatever the value, but refuses it in KRaft
	// mode, as Kafka does.
	ZookeeperConnect string
	// ControllerQuorumVoters is controller.quorum.voters. Default: every
	// node with the controller role.
	ControllerQuorumVoters string
	// ElectionTimeout is controller.quorum.election.timeout.ms (1000).
	ElectionTimeout sim.Duration
	// FetchTimeout is controller.quorum.fetch.timeout.ms (2000).
	FetchTimeout sim.Duration
	// ElectionBackoffMax is controller.quorum.election.backoff.max.ms (1000).
	ElectionBackoffMax sim.Duration
	// RequestTimeout is controller.quorum.request.timeout.ms (2000).
	RequestTimeout sim.Duration
	// RetryBackoff is controller.quorum.retry.backoff.ms (20).
	RetryBackoff sim.Duration
	// BrokerSessionTimeout is broker.session.timeout.ms (9000): a broker
	// without a heartbeat this long is fenced.
	BrokerSessionTimeout sim.Duration
	// BrokerHeartbeatInterval is broker.heartbeat.interval.ms (2000).
	BrokerHeartbeatInterval sim.Duration
	// MetadataLogDir is metadata.log.dir. Default: the first of log.dirs.
	MetadataLogDir string
	// MetadataLogSegmentBytes is metadata.log.segment.bytes (1073741824).
	MetadataLogSegmentBytes int
	// MetadataSnapshotBytes is
	// metadata.log.max.record.bytes.between.snapshots (20971520).
	MetadataSnapshotBytes int64
	// UncleanElectionInterval is unclean.leader.election.interval.ms
	// (300000, at least 1; an internal property of Kafka 3.9's
	// ReplicationConfigs): how often the active controller looks for
	// leaderless partitions to elect uncleanly (KAFKA-12670). Accepted on
	// every release, read only where the controller honours unclean
	// election (3.9 on; Kafka before 3.9 ignores the unknown property).
	UncleanElectionInterval sim.Duration
	// PreVote is kafkasim.raft.prevote (KIP-996 pre-vote; on from 4.0).
	PreVote bool
	// CheckQuorum is kafkasim.raft.check.quorum (KAFKA-15489; on from 3.7).
	CheckQuorum bool
	// VoteCheckLog is kafkasim.raft.vote.check.log (true; false is the
	// planted bug).
	VoteCheckLog bool
	// KRaftVersion is kafkasim.kraft.version (0; 1 from 3.9, KIP-853).
	KRaftVersion int
	// AutoJoin is kafkasim.raft.auto.join (false; needs KRaftVersion 1).
	AutoJoin bool
	// AutoJoinEnable is controller.quorum.auto.join.enable (false; 4.2+,
	// needs KRaftVersion 1): the same behaviour under Kafka's name.
	AutoJoinEnable bool
}

func defaultKRaft(v Version) KRaft {
	m := v.Mechanisms()
	k := KRaft{
		ElectionTimeout:         sim.Ms(1000),
		FetchTimeout:            sim.Ms(2000),
		ElectionBackoffMax:      sim.Ms(1000),
		RequestTimeout:          sim.Ms(2000),
		RetryBackoff:            sim.Ms(20),
		BrokerSessionTimeout:    sim.Ms(9000),
		BrokerHeartbeatInterval: sim.Ms(2000),
		MetadataLogSegmentBytes: 1073741824,
		MetadataSnapshotBytes:   20971520,
		UncleanElectionInterval: sim.Ms(300000),
		PreVote:                 m.PreVote,
		CheckQuorum:             !m.NoCheckQuorum,
		VoteCheckLog:            true,
	}
	if !m.ZooKeeper {
		k.ProcessRoles = RolesBroker
	}
	return k
}

func kraftProps() []property[Broker] {
	k := func(f func(*KRaft) *sim.Duration) func(*Broker) *sim.Duration {
		return func(b *Broker) *sim.Duration { return f(&b.KRaft) }
	}
	return []property[Broker]{
		choiceProp(PropProcessRoles, func(b *Broker) *Roles { return &b.KRaft.ProcessRoles }, parseRoles, rolesAllowed),
		stringProp(PropZookeeperConnect, func(b *Broker) *string { return &b.KRaft.ZookeeperConnect }),
		stringProp(PropControllerQuorumVoters, func(b *Broker) *string { return &b.KRaft.ControllerQuorumVoters }),
		msProp("controller.quorum.election.timeout.ms", k(func(c *KRaft) *sim.Duration { return &c.ElectionTimeout }), 1, maxInt32),
		msProp("controller.quorum.fetch.timeout.ms", k(func(c *KRaft) *sim.Duration { return &c.FetchTimeout }), 1, maxInt32),
		msProp("controller.quorum.election.backoff.max.ms", k(func(c *KRaft) *sim.Duration { return &c.ElectionBackoffMax }), 1, maxInt32),
		msProp("controller.quorum.request.timeout.ms", k(func(c *KRaft) *sim.Duration { return &c.RequestTimeout }), 1, maxInt32),
		msProp("controller.quorum.retry.backoff.ms", k(func(c *KRaft) *sim.Duration { return &c.RetryBackoff }), 0, maxInt32),
		msProp("broker.session.timeout.ms", k(func(c *KRaft) *sim.Duration { return &c.BrokerSessionTimeout }), 1, maxInt32),
		msProp("broker.heartbeat.interval.ms", k(func(c *KRaft) *sim.Duration { return &c.BrokerHeartbeatInterval }), 1, maxInt32),
		stringProp("metadata.log.dir", func(b *Broker) *string { return &b.KRaft.MetadataLogDir }),
		intProp("metadata.log.segment.bytes", func(b *Broker) *int { return &b.KRaft.MetadataLogSegmentBytes }, 14, maxInt32),
		longProp("metadata.log.max.record.bytes.between.snapshots", func(b *Broker) *int64 { return &b.KRaft.MetadataSnapshotBytes }, 1, math.MaxInt64),
		msProp(PropUncleanElectionInterval, k(func(c *KRaft) *sim.Duration { return &c.UncleanElectionInterval }), 1, math.MaxInt64),
		boolProp(PropRaftPreVote, func(b *Broker) *bool { return &b.KRaft.PreVote }),
		boolProp(PropRaftCheckQuorum, func(b *Broker) *bool { return &b.KRaft.CheckQuorum }),
		boolProp(PropRaftVoteCheckLog, func(b *Broker) *bool { return &b.KRaft.VoteCheckLog }),
		intProp(PropKRaftVersion, func(b *Broker) *int { return &b.KRaft.KRaftVersion }, 0, 1),
		boolProp(PropRaftAutoJoin, func(b *Broker) *bool { return &b.KRaft.AutoJoin }),
		boolProp(PropControllerAutoJoin, func(b *Broker) *bool { return &b.KRaft.AutoJoinEnable }),
	}
}

// KRaftMode reports whether the cluster runs KRaft: process.roles is set
// (4.0 and later set it by default).
func (b Broker) KRaftMode() bool { return b.KRaft.ProcessRoles != RolesNone }

// validateKRaft checks the KRaft combinations.
func (b Broker) validateKRaft() error {
	k := b.KRaft
	v := b.InterBrokerProtocolVersion
	if _, err := ParseVoters(k.ControllerQuorumVoters); err != nil {
		return err
	}
	if !b.KRaftMode() {
		if !v.Mechanisms().ZooKeeper {
			return conflict(PropProcessRoles, "", PropInterBrokerProtocolVersion, v.String(),
				"Kafka "+v.String()+" runs KRaft only (ZooKeeper was removed in 4.0)", "process.roles=broker or broker,controller, or a release below 4.0")
		}
		if k.ControllerQuorumVoters != "" {
			return conflict(PropControllerQuorumVoters, k.ControllerQuorumVoters, PropProcessRoles, "",
				"voters are a KRaft setting, and process.roles is unset (ZooKeeper mode)", "process.roles=broker or broker,controller with controller.quorum.voters")
		}
		return nil
	}
	if k.ZookeeperConnect != "" {
		return conflict(PropZookeeperConnect, k.ZookeeperConnect, PropProcessRoles, k.ProcessRoles.String(),
			"a KRaft node does not use ZooKeeper", "zookeeper.connect unset in KRaft mode, or process.roles unset for ZooKeeper mode")
	}
	if !k.ProcessRoles.Broker() {
		return &Error{Kind: BadValue, Property: PropProcessRoles, Value: k.ProcessRoles.String(),
			Reason:  "the cluster's broker nodes must have the broker role (dedicated controllers are the script's controllers header)",
			Allowed: "broker, broker,controller"}
	}
	if !v.Mechanisms().KRaftAvailable {
		return conflict(PropProcessRoles, k.ProcessRoles.String(), PropInterBrokerProtocolVersion, v.String(),
			"KRaft is production-ready from 3.3 (KIP-833); kafkasim models it from there", "a release of 3.3 or later")
	}
	if k.KRaftVersion >= 1 && !v.AtLeast(V3_9) {
		return conflict(PropKRaftVersion, strconv.Itoa(k.KRaftVersion), PropInterBrokerProtocolVersion, v.String(),
			"dynamic quorums (KIP-853, kraft.version 1) arrived in 3.9", "kafkasim.kraft.version=0, or a release of 3.9 or later")
	}
	if k.AutoJoinEnable && !v.AtLeast(V4_2) {
		return conflict(PropControllerAutoJoin, "true", PropInterBrokerProtocolVersion, v.String(),
			"controller auto-join (KIP-853) arrived in Kafka 4.2", "a release of 4.2 or later, or kafkasim.raft.auto.join=true (the simulation's switch, from 3.9)")
	}
	if k.AutoJoinEnable && k.KRaftVersion < 1 {
		return conflict(PropControllerAutoJoin, "true", PropKRaftVersion, strconv.Itoa(k.KRaftVersion),
			"a static quorum's voters cannot change", PropControllerAutoJoin+"=true with kafkasim.kraft.version=1")
	}
	if k.AutoJoin && k.KRaftVersion < 1 {
		return conflict(PropRaftAutoJoin, "true", PropKRaftVersion, strconv.Itoa(k.KRaftVersion),
			"a static quorum's voters cannot change", "kafkasim.raft.auto.join=true with kafkasim.kraft.version=1")
	}
	if k.KRaftVersion >= 1 && k.ControllerQuorumVoters != "" {
		return conflict(PropKRaftVersion, strconv.Itoa(k.KRaftVersion), PropControllerQuorumVoters, k.ControllerQuorumVoters,
			"kafka-storage format refuses --initial-controllers (kraft.version 1) beside static voters", "controller.quorum.voters unset with kafkasim.kraft.version=1")
	}
	if k.BrokerHeartbeatInterval >= k.BrokerSessionTimeout {
		return conflict("broker.heartbeat.interval.ms", ms(k.BrokerHeartbeatInterval), "broker.session.timeout.ms", ms(k.BrokerSessionTimeout),
			"a broker would be fenced between two heartbeats", "broker.heartbeat.interval.ms < broker.session.timeout.ms")
	}
	return nil
}
