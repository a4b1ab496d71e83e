package server

// This file runs a node in KRaft mode (KIP-500, KafkaRaftServer): the raft
// client of the metadata quorum (package raft: a voter on a node with the
// controller role, an observer on a broker-only node), the QuorumController
// on a node with the controller role (package kraft), and, on a node with
// the broker role, the broker side: registration and heartbeats
// (kraft_lifecycle.go), the metadata image it applies (kraft_metadata.go)
// and AlterPartition for ISR changes (alter_partition.go). A combined node
// hosts all of them over one raft client, as Kafka's combined mode does.
//
// Requests are routed by API: Vote, BeginQuorumEpoch, EndQuorumEpoch,
// FetchSnapshot, DescribeQuorum and a Fetch of __cluster_metadata go to the
// raft client; BrokerRegistration, BrokerHeartbeat, AlterPartition,
// AllocateProducerIds and the admin APIs brokers forward (CreateTopics,
// DeleteTopics, CreatePartitions, AlterConfigs, IncrementalAlterConfigs,
// ElectLeaders) to the controller. Kafka serves the
// controller's APIs on a separate listener (controller.listener.names); the
// simulation has one address per node, so the API decides.

import (
	"fmt"
	"strings"

	"github.com/kafkasim/kafkasim/broker/kraft"
	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FirstControllerID is the node.id of the first dedicated controller
// (c0); c1 is FirstControllerID+1, and so on, as Kafka's
// KafkaClusterTestKit numbers controllers from 3000.
const FirstControllerID = 3000

// KRaftConfig is a node's KRaft configuration; Config.KRaft is nil in
// ZooKeeper mode.
type KRaftConfig struct {
	// Broker and Controller are process.roles.
	Broker, Controller bool
	// Raft is the quorum client's configuration (its NodeID is the node's).
	Raft raft.Config
	// SessionTimeout is broker.session.timeout.ms (9000).
	SessionTimeout sim.Duration
	// HeartbeatInterval is broker.heartbeat.interval.ms (2000).
	HeartbeatInterval sim.Duration
	// DefaultReplicationFactor and NumPartitions are
	// default.replication.factor and num.partitions, for the controller's
	// CreateTopics.
	DefaultReplicationFactor, NumPartitions int
	// ELR is eligible.leader.replicas.version >= 1 (KIP-966 part 1): the
	// controller keeps eligible leader replicas and the partition leaders
	// follow the strict min ISR rule (Partition.maybeIncrementHW).
	ELR bool
	// MetadataVersion is the metadata.version level the controller
	// bootstraps with; MetadataVersionMax the newest level the node
	// supports (its release's latest). Zero: 4.0-IV3 for both.
	MetadataVersion, MetadataVersionMax int16
	// UncleanElection: the controller honours
	// unclean.leader.election.enable (3.9 on, KAFKA-12670), checking
	// leaderless partitions every UncleanCheckInterval
	// (unclean.leader.election.interval.ms).
	UncleanElection      bool
	UncleanCheckInterval sim.Duration
	// ElectFencedLastKnownLeader is 4.0.0's KAFKA-19522.
	ElectFencedLastKnownLeader bool
}

// metadataVersion returns the bootstrap level and the supported maximum.
func (k *KRaftConfig) metadataVersion() (bootstrap, max int16) {
	bootstrap, max = k.MetadataVersion, k.MetadataVersionMax
	if bootstrap == 0 {
		bootstrap = metadataVersionLevel
	}
	if max == 0 {
		max = metadataVersionLevel
	}
	return bootstrap, max
}

// kraftState is what a KRaft node holds beside the broker.
type kraftState struct {
	raft       *raft.Client
	controller *kraft.Controller // with the controller role
	meta       *brokerMetadata   // with the broker role
	life       *lifecycle        // with the broker role
}

// fanout hands the raft client's events to the controller and the broker
// metadata listener of one node, controller first (Kafka registers the
// controller's listener before the broker's in combined mode).
type fanout struct{ ls []raft.Listener }

func (f *fanout) HandleCommit(ctx *sim.Context, b raft.Batch) {
	for _, l := range f.ls {
		l.HandleCommit(ctx, b)
	}
}

func (f *fanout) HandleLoadSnapshot(ctx *sim.Context, s raft.Snapshot) {
	for _, l := range f.ls {
		l.HandleLoadSnapshot(ctx, s)
	}
}

func (f *fanout) HandleLeaderChange(ctx *sim.Context, le raft.LeaderAndEpoch) {
	for _, l := range f.ls {
		l.HandleLeaderChange(ctx, le)
	}
}

func (f *fanout) Snapshot() [][]byte { return f.ls[0].Snapshot() }

// sendRaft is the Raft client's send: a request a connection reset
// fails at once (Broker.Disconnected).
func (b *Broker) sendRaft(to int32, req kmsg.Request, timeout sim.Duration, cb func(kmsg.Response, error)) {
	b.sendPending(to, req, nil, timeout, pending{cb: cb, raft: true})
}

// startKRaft builds and starts the node's KRaft parts.
func (b *Broker) startKRaft() {
	k := b.cfg.KRaft
	if k == nil {
		return
	}
	st := &kraftState{}
	b.kraft = st
	f := &fanout{}
	rc, err := raft.New(k.Raft, raft.Env{Send: b.sendRaft, Fatal: b.halt}, f)
	if err != nil {
		panic(fmt.Sprintf("node %d: the raft client: %v", b.cfg.BrokerID, err))
	}
	st.raft = rc
	if k.Controller {
		mv, _ := k.metadataVersion()
		ctl, err := kraft.New(kraft.Config{
			NodeID:                     b.cfg.BrokerID,
			ClusterID:                  k.Raft.ClusterID,
			MetadataVersion:            mv,
			SessionTimeout:             k.SessionTimeout,
			Unclean:                    b.uncleanFor,
			UncleanElection:            k.UncleanElection,
			UncleanCheckInterval:       k.UncleanCheckInterval,
			ElectFencedLastKnownLeader: k.ElectFencedLastKnownLeader,
			ELR:                        k.ELR,
			MinISR:                     b.minISRFor,
			DefaultReplicationFactor:   k.DefaultReplicationFactor,
			NumPartitions:              k.NumPartitions,
			DeleteTopicEnable:          b.cfg.DeleteTopicEnable,
			TopicConfigDefault:         b.topicConfigDefault,
			ProducerIDBlockSize:        producerIDBlockSize,
			Mutants:                    b.cfg.Mutants,
		}, rc)
		if err != nil {
			panic(fmt.Sprintf("node %d: the controller: %v", b.cfg.BrokerID, err))
		}
		st.controller = ctl
		f.ls = append(f.ls, ctl)
	}
	if k.Broker {
		st.meta = newBrokerMetadata(b)
		st.life = &lifecycle{b: b}
		f.ls = append(f.ls, st.meta)
	}
	if st.controller != nil {
		st.controller.Start(b.ctx)
	}
	rc.Start(b.ctx)
	if st.life != nil {
		st.life.start()
	}
}

// kraftMode reports whether the node runs KRaft.
func (b *Broker) kraftMode() bool { return b.kraft != nil }

// Raft returns the node's quorum client, nil in ZooKeeper mode.
func (b *Broker) Raft() *raft.Client {
	if b.kraft == nil {
		return nil
	}
	return b.kraft.raft
}

// QuorumController returns the node's KRaft controller, nil without the
// controller role.
func (b *Broker) QuorumController() *kraft.Controller {
	if b.kraft == nil {
		return nil
	}
	return b.kraft.controller
}

// serveKRaft serves the quorum's and the controller's APIs; false for
// any other request.
func (b *Broker) serveKRaft(from sim.NodeID, req *wire.Request) bool {
	st := b.kraft
	if st == nil {
		return false
	}
	switch body := req.Body.(type) {
	case *kmsg.FetchRequest:
		if len(body.Topics) == 0 || body.Topics[0].Topic != raft.MetadataTopic {
			return false
		}
	case *kmsg.VoteRequest, *kmsg.BeginQuorumEpochRequest, *kmsg.EndQuorumEpochRequest,
		*kmsg.FetchSnapshotRequest, *kmsg.DescribeQuorumRequest, *kmsg.AddRaftVoterRequest, *kmsg.RemoveRaftVoterRequest:
	default:
		if forwardedToController(body) {
			// A client's CreateTopics (DeleteTopics, CreatePartitions, ...)
			// on the broker listener is forwarded to the active controller
			// (admin.go); a local active controller, or the controller
			// listener, answers it here.
			if st.controller == nil || (st.meta != nil && !req.ControllerListener && !st.controller.Active()) {
				return false
			}
			return st.controller.Handle(b.ctx, b.peerID(from), req.Body, b.replier(from, req))
		}
		if st.controller == nil {
			return false
		}
		return st.controller.Handle(b.ctx, b.peerID(from), req.Body, b.replier(from, req))
	}
	return st.raft.Handle(b.ctx, b.peerID(from), req.Body, b.replier(from, req))
}

// replier returns the callback that answers req. It is made only for the
// requests served here: most of those a broker gets are not.
func (b *Broker) replier(from sim.NodeID, req *wire.Request) func(kmsg.Response) {
	return func(resp kmsg.Response) { b.respond(from, req, resp) }
}

// peerID returns the node id of the simulation node n (-1 for a client).
func (b *Broker) peerID(n sim.NodeID) int32 {
	id, ok := nodeIDOfName(b.ctx.NameOf(n))
	if !ok {
		return -1
	}
	return id
}

// nodeIDOfName inverts NodeName: "b3" is 3, "ctl1" is FirstControllerID+1.
func nodeIDOfName(name string) (int32, bool) {
	digits, base := "", int32(0)
	switch {
	case strings.HasPrefix(name, ControllerPrefix):
		digits, base = name[len(ControllerPrefix):], FirstControllerID
	case strings.HasPrefix(name, "b"):
		digits = name[1:]
	}
	if digits == "" {
		return 0, false
	}
	n := int32(0)
	for _, c := range digits {
		if c < '0' || c > '9' || n > 1<<24 {
			return 0, false
		}
		n = n*10 + int32(c-'0')
	}
	return base + n, true
}

// handleKRaftTimer runs the timers of the raft client, the controller and
// the lifecycle manager.
func (b *Broker) handleKRaftTimer(id sim.TimerID, name string) bool {
	st := b.kraft
	if st == nil {
		return false
	}
	switch {
	case strings.HasPrefix(name, "raft-"):
		return st.raft.Timer(b.ctx, id, name)
	case strings.HasPrefix(name, "controller-") && st.controller != nil:
		return st.controller.Timer(b.ctx, id, name)
	case strings.HasPrefix(name, "lifecycle-") && st.life != nil:
		return st.life.timer(id, name)
	}
	return false
}

// shutdownKRaft is the KRaft part of a controlled shutdown: the broker
// asks the controller to move its leaderships away (a heartbeat with
// WantShutDown), and a quorum leader resigns (EndQuorumEpoch).
// Simplification: Kafka's broker waits for ShouldShutDown before it stops;
// the simulation's shutdown is one step, so the request is sent and the
// node goes down at once, as the ZooKeeper-mode shutdown does.
func (b *Broker) shutdownKRaft() {
	st := b.kraft
	if st == nil {
		return
	}
	if st.life != nil {
		st.life.shutdown()
	}
	st.raft.Shutdown(b.ctx)
}
