// Package cluster builds a simulated Kafka cluster in a sim.World: one
// ZooKeeper server ("zk"), brokers "b0".."bN-1" (with racks if given), and
// an admin node ("admin") that creates the topics in ZooKeeper the way
// kafka-topics.sh --zookeeper did, with Kafka's replica assignment. The
// configuration is Kafka's properties, parsed by package config.
package cluster

import (
	"fmt"
	"slices"
	"sort"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/controller"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/security"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

// Topic is a topic to create.
type Topic struct {
	Name              string
	Partitions        int
	ReplicationFactor int
	// Assignment, if set, is the replica list of each partition, preferred
	// leader first; otherwise Kafka's assignment is computed.
	Assignment [][]int32
	// Config holds the topic's own configs (min.insync.replicas,
	// unclean.leader.election.enable, max.message.bytes, compression.type,
	// cleanup.policy, ...), applied over Spec.Config.Topic.
	Config map[string]string
}

// Spec describes a cluster.
type Spec struct {
	Brokers int
	Racks   []string // broker.rack per broker; empty for none
	Topics  []Topic
	Config  config.Config
	Disk    sim.DiskConfig
	// ManualController builds the brokers without ZooKeeper and without a
	// controller: whoever drives the world sends LeaderAndIsr and
	// UpdateMetadata itself, as the TLA+ models and the KIP traces take the
	// controller's decisions as given steps.
	ManualController bool
	// Controllers is the number of dedicated KRaft controller nodes (c0,
	// c1, ...); 0 in ZooKeeper mode, and in KRaft mode means
	// DefaultControllers unless the brokers hold the controller role
	// (kraft.go).
	Controllers int
	// OffsetsTopic creates __consumer_offsets (offsets.topic.num.partitions,
	// offsets.topic.replication.factor, compacted) with the other topics, so
	// consumer groups find a coordinator; Kafka creates it on the first
	// FindCoordinator instead.
	OffsetsTopic bool
	// ScriptedTopics says the run's script creates every topic its clients
	// use (Topics, OffsetsTopic, or later with CreateTopics), as an
	// operator who creates topics before any client starts: the brokers
	// never create one on their own (auto-creation and the first
	// FindCoordinator's creation of __consumer_offsets or
	// __transaction_state, auto_create.go in package server), so a client
	// that comes before the admin's topic sees it missing, not created
	// with other settings. The scenario harness sets it; kafkasim serve
	// leaves it off, so real clients get Kafka's auto-creation.
	ScriptedTopics bool
	// NB: kafkasim.transactions (Config.Broker.Txn.Enabled) creates
	// __transaction_state the same way (transaction.state.log.num.partitions,
	// transaction.state.log.replication.factor, compacted, min.insync.replicas
	// = transaction.state.log.min.isr).
}

// Cluster is a built cluster's nodes.
type Cluster struct {
	World   *sim.World
	ZK      sim.NodeID
	Admin   sim.NodeID
	Brokers []sim.NodeID
	// Controllers are the dedicated KRaft controller nodes.
	Controllers []sim.NodeID
	Spec        Spec
	// Assignments are each topic's replica lists, preferred leader first.
	Assignments map[string][][]int32

	admins  int             // admin nodes added by CreateTopics
	configs []server.Config // each broker's, as built
	// altered holds the topics whose configs changed during the run
	// (AlterTopicConfig), as changed.
	altered map[string]config.Topic
	// requested holds the topics whose configs an AlterConfigs request
	// changed (ZooKeeper mode), as each broker takes them.
	requested map[string]server.TopicSettings
	// security is the cluster's ACLs, SCRAM credentials and client
	// quotas, one Store every broker reads and writes (broker/security).
	security *security.Store
}

// BrokerConfig returns broker i's server configuration, as Build made it.
func (c *Cluster) BrokerConfig(i int) server.Config { return c.configs[i] }

// SupportedAPIs returns the API versions broker i advertises in
// ApiVersions (server.SupportedAPIs of its configuration), whether or not
// it is running: a socket in front of it refuses every other request.
func (c *Cluster) SupportedAPIs(i int) []server.APIRange { return server.SupportedAPIs(c.configs[i]) }

// ZKName is the node name of the ZooKeeper server.
const ZKName = "zk"

// Validate checks the spec against itself: broker count, racks, topics,
// and the configuration's cluster-level rules (min.insync.replicas against
// each topic's replication factor, replication factor against brokers).
func (s Spec) Validate() error {
	if s.Brokers < 1 || s.Brokers > 64 {
		return fmt.Errorf("brokers %d: must be in [1, 64]", s.Brokers)
	}
	if len(s.Racks) != 0 && len(s.Racks) != s.Brokers {
		return fmt.Errorf("racks: %d given for %d brokers (give one per broker or none)", len(s.Racks), s.Brokers)
	}
	seen := map[string]bool{}
	for _, t := range s.Topics {
		if t.Name == "" || seen[t.Name] {
			return fmt.Errorf("topic %q: names must be non-empty and unique", t.Name)
		}
		seen[t.Name] = true
		if t.Partitions < 1 {
			return fmt.Errorf("topic %s: partitions %d: must be >= 1", t.Name, t.Partitions)
		}
		tc := s.Config
		var err error
		if tc.Topic, err = s.Config.Topic.With(s.Config.Broker, t.Config); err != nil {
			return fmt.Errorf("topic %s: %w", t.Name, err)
		}
		if err := tc.Validate(s.Brokers, t.ReplicationFactor); err != nil {
			return fmt.Errorf("topic %s: %w", t.Name, err)
		}
		if t.Assignment != nil && len(t.Assignment) != t.Partitions {
			return fmt.Errorf("topic %s: assignment lists %d partitions, want %d", t.Name, len(t.Assignment), t.Partitions)
		}
	}
	if err := s.validateKRaft(); err != nil {
		return err
	}
	if t := s.Config.Broker.Txn; t.Enabled && !s.ManualController && t.StateLogReplicationFactor > s.Brokers {
		return fmt.Errorf("transaction.state.log.replication.factor %d: above the %d brokers, so %s could not be created", t.StateLogReplicationFactor, s.Brokers, txn.StateTopic)
	}
	if s.OffsetsTopic && !s.ManualController && s.Config.Broker.OffsetsTopicReplicationFactor > s.Brokers {
		return fmt.Errorf("offsets.topic.replication.factor %d: above the %d brokers, so __consumer_offsets could not be created", s.Config.Broker.OffsetsTopicReplicationFactor, s.Brokers)
	}
	return nil
}

// ServerConfig resolves broker id's server configuration from Kafka's
// properties.
func ServerConfig(c config.Config, id int32, rack string) (server.Config, error) {
	b := c.Broker
	sc := server.DefaultConfig(id)
	sc.Rack = rack
	sc.Release = b.InterBrokerProtocolVersion
	sc.AutoCreateTopics = b.AutoCreateTopicsEnable
	sc.DeleteTopicEnable = b.DeleteTopicEnable
	sc.NumPartitions, sc.DefaultReplicationFactor = b.NumPartitions, b.DefaultReplicationFactor
	sc.OffsetsTopicReplicationFactor = b.OffsetsTopicReplicationFactor
	sc.TxnStateReplicationFactor = b.Txn.StateLogReplicationFactor
	st := storage.DefaultConfig()
	st.LogDirs = b.LogDirs
	st.SegmentBytes = int64(b.LogSegmentBytes)
	st.SegmentMs = b.LogRoll
	st.SegmentIndexBytes = int64(b.LogIndexSizeMaxBytes)
	st.IndexIntervalBytes = int64(b.LogIndexIntervalBytes)
	st.RetentionMs = b.LogRetention
	st.RetentionBytes = b.LogRetentionBytes
	st.RetentionCheckInterval = b.LogRetentionCheckInterval
	st.FlushIntervalMessages = b.LogFlushIntervalMessages
	st.FlushIntervalMs = b.LogFlushInterval
	st.FlushOffsetCheckpointInterval = b.LogFlushOffsetCheckpointInterval
	st.MessageFormatVersion = b.LogMessageFormatVersion
	st.CleanupPolicy = string(b.LogCleanupPolicy)
	st.DeleteRetentionMs = b.LogCleanerDeleteRetention
	st.CleanerBackoff = b.LogCleanerBackoff
	st.Mutants = b.Mutants
	sc.Storage = st
	sc.Mutants = b.Mutants
	sc.Coordinator.Mutants = b.Mutants
	switch b.Truncation {
	case config.HW:
		sc.Truncation = server.TruncateHW
	case config.KIP101:
		sc.Truncation = server.TruncateKIP101
	default:
		sc.Truncation = server.TruncateKIP279
	}
	sc.KIP320 = b.LeaderEpochFencing
	sc.TruncationInFetch = b.TruncationInFetch
	sc.TruncateOnLeaderChangeOnly = b.TruncateOnLeaderChangeOnly
	sc.RackAwareReplicaSelector = b.ReplicaSelectorClass == config.SelectorRackAware
	sc.MinInsyncReplicas = b.MinInsyncReplicas
	sc.UncleanLeaderElection = b.UncleanLeaderElectionEnable
	sc.MessageMaxBytes = b.Records.MessageMaxBytes
	sc.CompressionType = b.Records.CompressionType.String()
	unclean := c.Topic.UncleanLeaderElectionEnable
	sc.TopicOverrides = nil
	if c.Topic.MinInsyncReplicas != b.MinInsyncReplicas || unclean != b.UncleanLeaderElectionEnable {
		// Topic-level settings apply to every topic of the run.
		sc.MinInsyncReplicas = c.Topic.MinInsyncReplicas
		sc.UncleanLeaderElection = unclean
	}
	sc.ReplicaLagTimeMax = b.ReplicaLagTimeMax
	sc.ReplicaFetchWaitMax = b.ReplicaFetchWaitMax
	sc.ReplicaFetchMinBytes = int32(b.ReplicaFetchMinBytes)
	sc.ReplicaFetchMaxBytes = int32(b.ReplicaFetchMaxBytes)
	sc.ReplicaFetchBackoff = b.ReplicaFetchBackoff
	sc.HWCheckpointInterval = b.ReplicaHighWatermarkCheckpointInterval
	sc.ControllerTimeout = b.ControllerSocketTimeout
	sc.AutoLeaderRebalance = b.AutoLeaderRebalanceEnable
	sc.LeaderImbalanceCheckInterval = b.LeaderImbalanceCheckInterval
	sc.LeaderImbalancePerBrokerPercentage = b.LeaderImbalancePerBrokerPercentage
	sc.ZooKeeper = ZKName
	sc.ZKSessionTimeout = b.ZookeeperSessionTimeout
	sc.Coordinator.NumPartitions = b.OffsetsTopicNumPartitions
	sc.Coordinator.MinSessionTimeout = b.GroupMinSessionTimeout
	sc.Coordinator.MaxSessionTimeout = b.GroupMaxSessionTimeout
	sc.Coordinator.InitialRebalanceDelay = b.GroupInitialRebalanceDelay
	sc.Coordinator.Consumer = coordinator.ConsumerConfig{Enabled: b.ConsumerGroups.Enabled(), SessionTimeout: b.ConsumerGroups.SessionTimeout,
		HeartbeatInterval: b.ConsumerGroups.HeartbeatInterval, MaxSize: b.ConsumerGroups.MaxSize, Assignors: b.ConsumerGroups.Assignors,
		MigrationPolicy: b.ConsumerGroups.MigrationPolicy}
	sc.Share = share.Config{Enabled: b.ShareGroups.Enabled(), SessionTimeout: b.ShareGroups.SessionTimeout,
		HeartbeatInterval: b.ShareGroups.HeartbeatInterval, MaxSize: b.ShareGroups.MaxSize,
		RecordLockDuration: b.ShareGroups.RecordLockDuration, DeliveryCountLimit: b.ShareGroups.DeliveryCountLimit,
		PartitionMaxRecordLocks: b.ShareGroups.PartitionMaxRecordLocks, MaxShareSessions: b.ShareGroups.MaxShareSessions,
		StatePartitions: b.ShareGroups.StatePartitions, StateReplicationFactor: b.ShareGroups.StateReplicationFactor}
	sc.Txn = txn.Config{NumPartitions: b.Txn.StateLogNumPartitions, OffsetsPartitions: b.OffsetsTopicNumPartitions,
		MaxTimeout: b.Txn.MaxTimeout, IDExpiration: b.Txn.IDExpiration, AbortCheckInterval: b.Txn.AbortCleanupInterval,
		ExpireCheckInterval: b.Txn.RemoveExpiredInterval, Version: int16(b.Txn.Version),
		FenceBumpsEpochTwice: b.Mechanisms().TxnFenceBumpsEpochTwice, Mutants: b.Mutants}
	sc.TxnPartitionVerification = b.Txn.Enabled && b.Txn.PartitionVerification
	sc.StrictTV2MarkerEpoch = b.InterBrokerProtocolVersion.Mechanisms().StrictTV2MarkerEpoch
	if b.Txn.Enabled {
		sc.TopicOverrides = map[string]server.TopicSettings{txn.StateTopic: {MinInsyncReplicas: b.Txn.StateLogMinISR}}
	}
	return sc, sc.Validate()
}

// Build adds the cluster's nodes to w and starts them. Topics are created
// by the admin node as soon as it connects to ZooKeeper. It is NewPlan and
// Plan.Build: a caller that builds the same cluster in many worlds (an
// exploration) makes the plan once.
func Build(w *sim.World, spec Spec) (*Cluster, error) {
	p, err := NewPlan(spec)
	if err != nil {
		return nil, err
	}
	return p.Build(w)
}

// Build adds the plan's cluster to w and starts it: what Build does after
// the checks and the brokers' configurations.
func (p *Plan) Build(w *sim.World) (*Cluster, error) {
	spec := &p.spec // NB: a pointer, so that the closures below do not copy the spec to the heap
	c := &Cluster{World: w, Spec: *spec, configs: p.configs}
	zkServer := zk.ServerConfig{}
	var err error
	c.ZK = -1
	kraftMode := spec.KRaft()
	if !spec.ManualController && !kraftMode {
		if c.ZK, err = w.AddNode(ZKName, func() sim.Node { return zk.NewServer(zkServer) }, sim.NodeOptions{}); err != nil {
			return nil, err
		}
	}
	for i, f := range p.brokers {
		id, err := w.AddNode(server.NodeName(int32(i)), c.withAltered(f), sim.NodeOptions{Disk: spec.Disk})
		if err != nil {
			return nil, err
		}
		c.Brokers = append(c.Brokers, id)
	}
	all := spec.Topics
	if spec.OffsetsTopic && !spec.ManualController {
		all = append(slices.Clone(all), Topic{Name: coordinator.OffsetsTopic, Partitions: spec.Config.Broker.OffsetsTopicNumPartitions,
			ReplicationFactor: spec.Config.Broker.OffsetsTopicReplicationFactor})
	}
	if t := spec.Config.Broker.Txn; t.Enabled && !spec.ManualController {
		all = append(slices.Clone(all), Topic{Name: txn.StateTopic, Partitions: t.StateLogNumPartitions, ReplicationFactor: t.StateLogReplicationFactor})
	}
	topics, err := assignments(all, p.members)
	if err != nil {
		return nil, err
	}
	c.Assignments = map[string][][]int32{}
	for _, t := range topics {
		a := make([][]int32, len(t.assignment))
		for p, rs := range t.assignment {
			a[p] = rs
		}
		c.Assignments[t.name] = a
	}
	start := c.Brokers
	c.Admin = -1
	if kraftMode {
		if err := c.addControllers(p.controllers); err != nil {
			return nil, err
		}
		voters, brokers := p.voters, spec.Brokers
		if c.Admin, err = w.AddNode("admin", func() sim.Node { return &kraftAdmin{topics: topics, voters: voters, brokers: brokers} }, sim.NodeOptions{}); err != nil {
			return nil, err
		}
		start = append(append(slices.Clone(c.Controllers), c.Brokers...), c.Admin)
	} else if !spec.ManualController {
		session := spec.Config.Broker.ZookeeperSessionTimeout
		if c.Admin, err = w.AddNode("admin", func() sim.Node { return &admin{topics: topics, session: session} }, sim.NodeOptions{}); err != nil {
			return nil, err
		}
		start = append(append([]sim.NodeID{c.ZK}, c.Brokers...), c.Admin)
	}
	for _, id := range start {
		if err := w.Inject(sim.Start{Node: id}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// assignments computes each topic's replica assignment: Kafka's
// round-robin, continuing across topics as the seeds' example does.
func assignments(topics []Topic, brokers []controller.Broker) ([]topicAssignment, error) {
	var out []topicAssignment
	start := 0
	for _, t := range topics {
		a := t.Assignment
		if a == nil {
			var err error
			a, err = controller.AssignReplicas(brokers, t.Partitions, t.ReplicationFactor, start%len(brokers), 0)
			if err != nil {
				return nil, fmt.Errorf("topic %s: %w", t.Name, err)
			}
			start += t.Partitions
		}
		ra := zk.ReplicaAssignment{}
		for p, rs := range a {
			ra[int32(p)] = rs
		}
		out = append(out, topicAssignment{name: t.Name, assignment: ra})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// Broker returns broker i's running instance, or nil while it is down.
func (c *Cluster) Broker(i int) *server.Broker {
	n, _ := c.World.Node(c.Brokers[i]).(*server.Broker)
	return n
}

// ActiveController returns the index of the broker whose controller is
// active with the highest epoch, or -1.
func (c *Cluster) ActiveController() int {
	best, bestEpoch := -1, int32(-1)
	for i := range c.Brokers {
		if b := c.Broker(i); b != nil && b.Controller() != nil && b.Controller().Active() && b.Controller().Epoch() > bestEpoch {
			best, bestEpoch = i, b.Controller().Epoch()
		}
	}
	return best
}

// ActiveQuorumController returns the node name of the active KRaft
// controller (the quorum leader with the highest epoch whose controller is
// active), or "".
func (c *Cluster) ActiveQuorumController() string {
	if n, _ := c.activeQuorum(); n >= 0 {
		return c.World.Name(n)
	}
	return ""
}

// ActiveQuorumBroker is ActiveQuorumController's node (nil for none),
// found without allocating: observers call it after every event.
func (c *Cluster) ActiveQuorumBroker() *server.Broker {
	_, b := c.activeQuorum()
	return b
}

func (c *Cluster) activeQuorum() (sim.NodeID, *server.Broker) {
	best, bestEpoch, bestB := sim.NodeID(-1), int32(-1), (*server.Broker)(nil)
	for _, nodes := range [2][]sim.NodeID{c.Brokers, c.Controllers} {
		for _, n := range nodes {
			b, _ := c.World.Node(n).(*server.Broker)
			if b == nil || b.QuorumController() == nil || !b.QuorumController().Active() {
				continue
			}
			if e := b.QuorumController().Epoch(); e > bestEpoch {
				best, bestEpoch, bestB = n, e, b
			}
		}
	}
	return best, bestB
}
