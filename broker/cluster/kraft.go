package cluster

// This file builds a cluster in KRaft mode (KIP-500): no ZooKeeper; a
// metadata quorum of dedicated controller nodes c0, c1, ... (node.id 3000,
// 3001, ...: process.roles=controller) or, in combined mode
// (process.roles=broker,controller), of the broker nodes themselves; and a
// kraft-admin node that creates the topics by sending CreateTopics to the
// controllers, as `kafka-topics.sh --bootstrap-controller` does (KIP-919).
// The admin passes each topic's replica assignment, computed with the same
// round-robin as ZooKeeper mode (kafka-topics --replica-assignment), so a
// scenario finds its partitions where it expects them in both modes;
// topics created without one (auto-creation) get the controller's
// StripedReplicaPlacer.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClusterID is the cluster.id every KRaft node is formatted with
// (kafka-storage.sh format --cluster-id): the example id of Kafka's
// quickstart.
const ClusterID = "MkU3OEVBNTcwNTJENDM2Qk"

// DefaultControllers is the number of dedicated controllers a KRaft
// cluster gets when the spec names none and the brokers do not hold the
// controller role: Kafka's recommended three.
const DefaultControllers = 3

// KRaft reports whether the spec builds a KRaft cluster.
func (s Spec) KRaft() bool { return s.Config.Broker.KRaftMode() }

// controllerIDs returns the node ids holding the controller role.
func (s Spec) controllerIDs() []int32 {
	var ids []int32
	if s.Config.Broker.KRaft.ProcessRoles.Controller() {
		for i := 0; i < s.Brokers; i++ {
			ids = append(ids, int32(i))
		}
	}
	for i := 0; i < s.controllers(); i++ {
		ids = append(ids, server.FirstControllerID+int32(i))
	}
	return ids
}

// controllers returns the number of dedicated controller nodes.
func (s Spec) controllers() int {
	if !s.KRaft() {
		return 0
	}
	if s.Controllers == 0 && !s.Config.Broker.KRaft.ProcessRoles.Controller() {
		return DefaultControllers
	}
	return s.Controllers
}

// Voters returns the quorum's voter ids (controller.quorum.voters, or
// every controller; with kraft.version 1 the initial controllers).
func (s Spec) Voters() []int32 {
	ids, _ := s.voters()
	return ids
}

// voters resolves controller.quorum.voters: as given (every id must be a
// node with the controller role), or every such node.
func (s Spec) voters() ([]int32, error) {
	nodes := s.controllerIDs()
	given, err := config.ParseVoters(s.Config.Broker.KRaft.ControllerQuorumVoters)
	if err != nil {
		return nil, err
	}
	if len(given) == 0 {
		return nodes, nil
	}
	var ids []int32
	for _, v := range given {
		if !slices.Contains(nodes, v.ID) {
			return nil, fmt.Errorf("controller.quorum.voters: node %d is not a controller of this cluster (controllers: %s)", v.ID, fmtNodes(nodes))
		}
		ids = append(ids, v.ID)
	}
	return ids, nil
}

func fmtNodes(ids []int32) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d (%s)", id, server.NodeName(id))
	}
	if s == "" {
		return "none"
	}
	return s
}

// validateKRaft checks the KRaft parts of the spec.
func (s Spec) validateKRaft() error {
	if !s.KRaft() {
		if s.Controllers != 0 {
			return fmt.Errorf("controllers %d: dedicated controllers need KRaft mode (process.roles=broker, or a release of 4.0 or later)", s.Controllers)
		}
		return nil
	}
	if s.ManualController {
		return &config.Error{Kind: config.Conflict, Property: config.PropProcessRoles, Value: s.Config.Broker.KRaft.ProcessRoles.String(),
			Other:  "the scenario's manual controller (its leader-and-isr steps, a ZooKeeper-mode harness)",
			Reason: "KRaft brokers learn their roles from the metadata log", Allowed: "this scenario under ZooKeeper: a release of 3.9 or earlier, without process.roles"}
	}
	if s.Controllers < 0 || s.Controllers > 9 {
		return fmt.Errorf("controllers %d: must be in [1, 9]", s.Controllers)
	}
	_, err := s.voters()
	return err
}

// kraftConfig is node id's KRaft configuration.
func kraftConfig(c config.Config, id int32, roles config.Roles, voters []int32) *server.KRaftConfig {
	k := c.Broker.KRaft
	m := c.Broker.Mechanisms()
	dir := k.MetadataLogDir
	if dir == "" && len(c.Broker.LogDirs) > 0 {
		dir = c.Broker.LogDirs[0]
	}
	return &server.KRaftConfig{
		Broker: roles.Broker(), Controller: roles.Controller(),
		Raft: raft.Config{
			NodeID: id, Voters: slices.Clone(voters), ClusterID: ClusterID, Dir: dir,
			ElectionTimeout: k.ElectionTimeout, FetchTimeout: k.FetchTimeout, ElectionBackoffMax: k.ElectionBackoffMax,
			RequestTimeout: k.RequestTimeout, RetryBackoff: k.RetryBackoff, FetchMaxWait: 500 * sim.Millisecond,
			SegmentBytes: int64(k.MetadataLogSegmentBytes), SnapshotBytes: k.MetadataSnapshotBytes,
			PreVote: k.PreVote, CheckQuorum: k.CheckQuorum, Mutants: c.Broker.Mutants, KRaftVersion: int16(k.KRaftVersion), AutoJoin: k.AutoJoin || k.AutoJoinEnable,
			FetchHighWatermark: m.RaftFetchHighWatermark,
			VoteCheckLog:       k.VoteCheckLog && !c.Broker.Mutants.On(mutant.RaftVoteNoLogCheck),
		},
		SessionTimeout:           k.BrokerSessionTimeout,
		HeartbeatInterval:        k.BrokerHeartbeatInterval,
		DefaultReplicationFactor: c.Broker.DefaultReplicationFactor,
		NumPartitions:            c.Broker.NumPartitions,
		ELR:                      c.Broker.ELR.Enabled(),
		MetadataVersion:          c.Broker.MetadataVersionInEffect().Level,
		MetadataVersionMax:       config.LatestMetadataVersion(c.Broker.InterBrokerProtocolVersion).Level,
		UncleanElection:          m.UncleanElectionKRaft,
		UncleanCheckInterval:     k.UncleanElectionInterval,
		// KAFKA-19522 is 4.0.0's; the releases table says where.
		ElectFencedLastKnownLeader: m.FencedLastKnownLeaderElected,
	}
}

// addControllers adds the dedicated controller nodes, one per factory
// (Plan.controllers).
func (c *Cluster) addControllers(nodes []func() sim.Node) error {
	for i, f := range nodes {
		id := server.FirstControllerID + int32(i)
		n, err := c.World.AddNode(server.NodeName(id), c.withAltered(f), sim.NodeOptions{Disk: c.Spec.Disk})
		if err != nil {
			return err
		}
		c.Controllers = append(c.Controllers, n)
	}
	return nil
}

// kraftAdmin creates topics through the controllers: CreateTopics to each
// voter in turn until the active one takes it, retrying every
// kraftAdminBackoff while the quorum has no leader (NOT_CONTROLLER,
// timeouts). The cluster's first topics wait until every broker is
// unfenced (a Metadata answer lists them all), as Kafka's
// KafkaClusterTestKit waits for ready brokers: otherwise a topic created
// while one broker is still catching up would start with another leader
// than its preferred replica, depending on the seed.
type kraftAdmin struct {
	topics   []topicAssignment
	voters   []int32
	brokers  int // wait until this many brokers are unfenced; 0: do not wait
	ready    bool
	ask      int // the broker to ask next
	next     int // the voter to ask next
	corr     int32
	enc      wire.Encoder
	inflight bool // request corr is out
	timeout  sim.TimerID
	left     map[string]bool
}

const (
	kraftAdminBackoff = 200 * sim.Millisecond
	kraftAdminTimeout = 2 * sim.Second
	timerAdminRetry   = "admin-retry"
	timerAdminTimeout = "admin-timeout"
)

func (a *kraftAdmin) Start(ctx *sim.Context) {
	a.enc.Connection = ctx.Incarnation()
	a.left = map[string]bool{}
	for _, t := range a.topics {
		a.left[t.name] = true
	}
	a.send(ctx)
}

func (a *kraftAdmin) send(ctx *sim.Context) {
	if !a.ready && a.brokers > 0 {
		a.askMetadata(ctx)
		return
	}
	a.ready = true
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = int32(kraftAdminTimeout / sim.Millisecond)
	for _, t := range a.topics {
		if !a.left[t.name] {
			continue
		}
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = t.name, -1, -1
		for p := int32(0); p < int32(len(t.assignment)); p++ {
			ct.ReplicaAssignment = append(ct.ReplicaAssignment, kmsg.CreateTopicsRequestTopicReplicaAssignment{Partition: p, Replicas: slices.Clone(t.assignment[p])})
		}
		req.Topics = append(req.Topics, ct)
	}
	to := a.voters[a.next%len(a.voters)]
	a.next++
	node, ok := ctx.Lookup(server.NodeName(to))
	if !ok {
		ctx.SetTimer(kraftAdminBackoff, timerAdminRetry)
		return
	}
	a.corr++
	a.inflight = true
	w := a.enc.Request(a.corr, req)
	w.ControllerListener = true // kafka-topics.sh --bootstrap-controller
	ctx.Send(node, w)
	a.timeout = ctx.SetTimer(kraftAdminTimeout, timerAdminTimeout)
}

// askMetadata asks a broker which brokers are unfenced.
func (a *kraftAdmin) askMetadata(ctx *sim.Context) {
	to := int32(a.ask % a.brokers)
	a.ask++
	node, ok := ctx.Lookup(server.NodeName(to))
	if !ok {
		ctx.SetTimer(kraftAdminBackoff, timerAdminRetry)
		return
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	a.corr++
	a.inflight = true
	ctx.Send(node, a.enc.Request(a.corr, req))
	a.timeout = ctx.SetTimer(kraftAdminTimeout, timerAdminTimeout)
}

func (a *kraftAdmin) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	r, ok := m.(*wire.Response)
	if !ok || r.Connection != a.enc.Connection || !a.inflight || r.CorrelationID != a.corr {
		return
	}
	a.inflight = false
	ctx.CancelTimer(a.timeout)
	if md, ok := r.Body.(*kmsg.MetadataResponse); ok {
		if len(md.Brokers) >= a.brokers {
			a.ready = true
			a.send(ctx)
		} else {
			ctx.SetTimer(kraftAdminBackoff, timerAdminRetry)
		}
		return
	}
	resp, ok := r.Body.(*kmsg.CreateTopicsResponse)
	if !ok {
		ctx.SetTimer(kraftAdminBackoff, timerAdminRetry)
		return
	}
	for _, t := range resp.Topics {
		code := t.ErrorCode
		if code == 0 || code == kerr.TopicAlreadyExists.Code {
			if a.left[t.Topic] {
				ctx.Log("create-topic", sim.S("topic", t.Topic), sim.S("result", "ok"))
			}
			delete(a.left, t.Topic)
		}
	}
	if len(a.left) > 0 {
		ctx.SetTimer(kraftAdminBackoff, timerAdminRetry)
	}
}

// Disconnected implements sim.Disconnectable: a broker not serving yet
// refuses the connection; ask again after the backoff.
func (a *kraftAdmin) Disconnected(ctx *sim.Context, peer sim.NodeID) {
	if a.inflight {
		a.inflight = false
		ctx.CancelTimer(a.timeout)
		ctx.SetTimer(kraftAdminBackoff, timerAdminRetry)
	}
}

func (a *kraftAdmin) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	switch name {
	case timerAdminRetry:
		if (len(a.left) > 0 || !a.ready) && !a.inflight {
			a.send(ctx)
		}
	case timerAdminTimeout:
		if id == a.timeout && a.inflight {
			a.inflight = false
			a.send(ctx)
		}
	}
}
