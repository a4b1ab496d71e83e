package server

// This file connects the broker to ZooKeeper (KafkaZkClient, 0.11-2.x):
// at every new session it creates Kafka's persistent paths, registers
// itself as the ephemeral /brokers/ids/<id> and runs for controller; as
// leader it writes ISR changes to the partition state znodes (conditional
// on the zkVersion it was given) and leaves an ISR-change notification for
// the controller. Without a ZooKeeper (Config.ZooKeeper empty) the broker
// is driven by hand, as the scripted replication tests do.
//
// Simplification: a restarted broker whose previous session still holds
// /brokers/ids/<id> retries the registration every second until that
// session expires (Kafka fails the start with NodeExists and an operator
// or supervisor restarts it).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/broker/controller"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const timerRegister = "broker-register-retry"

// controllerRetryBackoff is how long the controller waits before resending
// a request a broker did not answer.
const controllerRetryBackoff = 100 * sim.Millisecond

func (b *Broker) startZK() {
	if b.cfg.ZooKeeper == "" {
		return
	}
	server, ok := b.ctx.Lookup(b.cfg.ZooKeeper)
	if !ok {
		panic(fmt.Sprintf("broker %d: no ZooKeeper node %q", b.cfg.BrokerID, b.cfg.ZooKeeper))
	}
	b.zk = zk.NewClient(server, b.cfg.ZKSessionTimeout)
	b.controller = controller.New(controller.Env{
		ID: b.cfg.BrokerID, ZK: b.zk,
		Send: func(to int32, req kmsg.Request, cb func(kmsg.Response, error)) {
			b.send(to, req, b.cfg.ControllerTimeout, cb)
		},
		Unclean:           b.uncleanFor,
		AutoRebalance:     b.cfg.AutoLeaderRebalance,
		RebalanceInterval: b.cfg.LeaderImbalanceCheckInterval,
		ImbalancePercent:  b.cfg.LeaderImbalancePerBrokerPercentage,
		RetryBackoff:      controllerRetryBackoff,
		Mutants:           b.cfg.Mutants,
	})
	b.zk.OnSession = func(ctx *sim.Context, ev zk.SessionEvent) {
		b.ctx = ctx
		switch ev.State {
		case zk.SyncConnected:
			if ev.Session != b.zkSession {
				b.zkSession = ev.Session
				b.register()
			}
		case zk.Expired:
			b.controller.Resign(ctx, "zookeeper session expired")
		}
	}
	b.zk.OnWatch = func(ctx *sim.Context, ev zk.WatchEvent) {
		b.ctx = ctx
		b.controller.OnWatch(ctx, ev)
	}
	b.zk.Start(b.ctx)
}

// register creates the persistent paths and the broker's registration,
// then runs for controller.
func (b *Broker) register() {
	session := b.zkSession
	next := func() {}
	next = func() {
		reg := zk.Encode(zk.NewBrokerRegistration(NodeName(b.cfg.BrokerID), 9092, b.cfg.Rack, b.ctx.Now()))
		b.zk.Create(b.ctx, zk.BrokerIDPath(b.cfg.BrokerID), reg, zk.Ephemeral, func(ctx *sim.Context, r *zk.Response) {
			b.ctx = ctx
			if session != b.zkSession || b.halted {
				return
			}
			registered := func(ctx *sim.Context) {
				b.ctx.Log("registered", sim.I("session", session))
				b.serving = true
				b.controller.Elect(ctx)
			}
			switch r.Code {
			case zk.Ok:
				registered(ctx)
			case zk.NodeExists:
				// KafkaZkClient.checkedEphemeralCreate: the znode may be
				// ours already (a create queued in an earlier session and
				// sent in this one); another session's waits for it to expire.
				b.zk.Exists(ctx, zk.BrokerIDPath(b.cfg.BrokerID), false, func(ctx *sim.Context, r *zk.Response) {
					b.ctx = ctx
					if session != b.zkSession || b.halted {
						return
					}
					if r.Code == zk.Ok && r.Stat.EphemeralOwner == session {
						registered(ctx)
						return
					}
					b.registerTimer = ctx.SetTimer(sim.Second, timerRegister)
				})
			default:
				b.ctx.Log("register-error", sim.S("code", r.Code.String()))
				b.registerTimer = ctx.SetTimer(sim.Second, timerRegister)
			}
		})
	}
	paths := zk.PersistentPaths
	var create func(i int)
	create = func(i int) {
		if i == len(paths) {
			next()
			return
		}
		b.zk.CreateRecursive(b.ctx, paths[i], nil, func(ctx *sim.Context, _ *zk.Response) {
			b.ctx = ctx
			create(i + 1)
		})
	}
	create(0)
}

func (b *Broker) handleZKMessage(from sim.NodeID, m sim.Message) bool {
	return b.zk != nil && b.zk.HandleMessage(b.ctx, from, m)
}

func (b *Broker) handleZKTimer(id sim.TimerID, name string) bool {
	if b.zk == nil {
		return false
	}
	switch {
	case strings.HasPrefix(name, "zk-"):
		return b.zk.HandleTimer(b.ctx, id, name)
	case name == controller.TimerName:
		return b.controller.HandleTimer(b.ctx, id)
	case name == timerRegister && id == b.registerTimer:
		b.registerTimer = 0
		b.register()
		return true
	}
	return false
}

// writePartitionState writes p's state with newISR, conditional on p's
// zkVersion, and calls done with the new version.
//
// As Kafka's KafkaZkClient.conditionalUpdatePath with the leader's
// checker (ReplicationUtils.checkLeaderAndIsrZkData): a write whose
// connection was lost is sent again once connected
// (retryRequestUntilConnected); BADVERSION then may mean that the first
// one applied and only its answer was lost, so the znode is read, and
// the write succeeded if it holds what was written. Without that, a
// leader paused or cut off while its write was out kept the old
// zkVersion, and every later ISR change of it was refused for good
// (swarm seed 463: a follower never rejoined the ISR).
func (b *Broker) writePartitionState(p *Partition, newISR []int32, done func(version int32, ok bool)) {
	st := zk.PartitionState{ControllerEpoch: p.controllerEpoch, Leader: b.cfg.BrokerID, Version: 1, LeaderEpoch: p.leaderEpoch, ISR: newISR}
	path, data, version := zk.TopicPartitionStatePath(p.tp.Topic, p.tp.Partition), zk.Encode(st), p.zkVersion
	var write func()
	write = func() {
		b.zk.SetData(b.ctx, path, data, version, func(ctx *sim.Context, r *zk.Response) {
			b.ctx = ctx
			switch r.Code {
			case zk.ConnectionLoss:
				write()
			case zk.BadVersion:
				b.zk.GetData(b.ctx, path, false, func(ctx *sim.Context, got *zk.Response) {
					b.ctx = ctx
					var now zk.PartitionState
					if got.Code == zk.Ok && zk.Decode(got.Data, &now) == nil && samePartitionState(now, st) {
						done(got.Stat.Version, true)
						return
					}
					done(r.Stat.Version, false)
				})
			default:
				done(r.Stat.Version, r.Code == zk.Ok)
			}
		})
	}
	write()
}

// samePartitionState compares two partition states as Kafka's
// LeaderAndIsr.equalsIgnoreZkVersion does.
func samePartitionState(a, b zk.PartitionState) bool {
	return a.Leader == b.Leader && a.LeaderEpoch == b.LeaderEpoch && a.ControllerEpoch == b.ControllerEpoch && slices.Equal(a.ISR, b.ISR)
}

// notifyISRChange leaves /isr_change_notification/isr_change_<seq> for
// the controller, which then refreshes its metadata.
func (b *Broker) notifyISRChange(p *Partition) {
	l := zk.PartitionList{Version: 1, Partitions: []zk.TopicPartitionRef{{Topic: p.tp.Topic, Partition: p.tp.Partition}}}
	b.zk.Create(b.ctx, zk.IsrChangeNotificationPrefix, zk.Encode(l), zk.PersistentSequential, nil)
}

// Controller returns the controller logic running in this broker (active
// or not), nil without ZooKeeper.
func (b *Broker) Controller() *controller.Controller { return b.controller }

// serveMore serves the APIs that are not replication's: offsets kept in
// ZooKeeper (offsets_zk.go) and the group coordinator's
// (group_coordinator.go), the admin APIs (admin.go), ACLs, SCRAM
// credentials and client quotas (security.go).
func (b *Broker) serveMore(from sim.NodeID, req *wire.Request) bool {
	return b.serveZKOffsets(from, req) || b.serveGroup(from, req) || b.serveShare(from, req) || b.serveTxn(from, req) || b.serveAdmin(from, req) || b.serveSecurity(from, req)
}
