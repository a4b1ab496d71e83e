package server

// This file is a KRaft broker's side of its registration (Kafka's
// BrokerLifecycleManager, KIP-631): at every start the broker registers
// with the active controller under a fresh incarnation id and gets a broker
// epoch, then heartbeats every broker.heartbeat.interval.ms with the offset
// of the metadata it has applied. It asks to stay fenced (WantFence) until
// a heartbeat answer says it has caught up with the metadata log, and it
// serves clients once the controller has unfenced it (Kafka's BrokerServer
// enables request processing only then). On a controlled shutdown it sends
// WantShutDown. The requests to the controller that are not replication's
// (AllocateProducerIds for the idempotent producer) live here too.
//
// The active controller is the quorum leader as the broker's raft client
// (an observer) knows it; with none known, or on NOT_CONTROLLER or a
// timeout, the request is retried after lifecycleRetryBackoff.
//
// Simplifications: registration errors other than NOT_CONTROLLER and
// timeouts are retried too (Kafka's broker gives up and exits on some);
// STALE_BROKER_EPOCH on a heartbeat re-registers (the controller no longer
// knows this registration).
//
// KIP-966 clean-shutdown detection: the registration carries
// PreviousBrokerEpoch, the broker epoch the log directories'
// clean-shutdown markers held at start (-1 after a crash or power loss),
// and the epoch the controller grants is what a controlled shutdown writes
// into those markers (Kafka's BrokerLifecycleManager and LogManager).

import (
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// startupHeartbeatInterval is the heartbeat period until the broker is
// first unfenced (BrokerLifecycleManager's 10 ms in STARTING and RECOVERY).
const startupHeartbeatInterval = 10 * sim.Millisecond

// lifecycleRetryBackoff is how long the broker waits to resend a request
// the controller did not take (Kafka's exponential backoff starts near it).
const lifecycleRetryBackoff = 100 * sim.Millisecond

const (
	timerLifecycleRegister  = "lifecycle-register"
	timerLifecycleHeartbeat = "lifecycle-heartbeat"
	timerLifecycleAlter     = "lifecycle-alter-partition"
	timerLifecycleProducer  = "lifecycle-producer-ids"
)

type lifecycle struct {
	b           *Broker
	incarnation [16]byte
	epoch       int64 // the broker epoch; -1 until registered
	caughtUp    bool  // a heartbeat answer said IsCaughtUp
	fenced      bool  // as the last heartbeat answer said
	inflight    bool  // a registration or heartbeat is out
	next        sim.TimerID
	stopping    bool

	alterRetry map[sim.TimerID]storage.TopicPartition
}

func (l *lifecycle) start() {
	r := l.b.ctx.Rand()
	for i := range l.incarnation {
		l.incarnation[i] = byte(r.Uint32())
	}
	l.epoch, l.fenced = -1, true
	l.alterRetry = map[sim.TimerID]storage.TopicPartition{}
	l.register()
}

// controller returns the node id of the active controller as the raft
// client knows it, or -1.
func (l *lifecycle) controller() int32 {
	return l.b.kraft.raft.Leader().Leader
}

func (l *lifecycle) schedule(d sim.Duration, name string) {
	if l.next != 0 {
		l.b.ctx.CancelTimer(l.next)
	}
	l.next = l.b.ctx.SetTimer(d, name)
}

func (l *lifecycle) register() {
	b := l.b
	ctl := l.controller()
	if ctl < 0 {
		l.schedule(lifecycleRetryBackoff, timerLifecycleRegister)
		return
	}
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.Version = 4
	req.BrokerID = b.cfg.BrokerID
	req.ClusterID = b.cfg.KRaft.Raft.ClusterID
	req.IncarnationID = l.incarnation
	req.Listeners = []kmsg.BrokerRegistrationRequestListener{{Name: "PLAINTEXT", Host: NodeName(b.cfg.BrokerID), Port: 9092}}
	_, maxLevel := b.cfg.KRaft.metadataVersion()
	req.Features = []kmsg.BrokerRegistrationRequestFeature{{Name: "metadata.version", MinSupportedVersion: 1, MaxSupportedVersion: maxLevel}}
	if b.cfg.Rack != "" {
		rack := b.cfg.Rack
		req.Rack = &rack
	}
	req.PreviousBrokerEpoch = b.logs.PreviousBrokerEpoch()
	l.inflight = true
	b.send(ctl, req, b.cfg.KRaft.Raft.RequestTimeout, func(resp kmsg.Response, err error) {
		l.inflight = false
		r, _ := resp.(*kmsg.BrokerRegistrationResponse)
		if err != nil || r == nil || r.ErrorCode != 0 {
			code := int16(-1)
			if r != nil {
				code = r.ErrorCode
			}
			b.ctx.Log("broker-registration-failed", sim.I("controller", int64(ctl)), sim.S("error", errName(code, err)))
			l.schedule(lifecycleRetryBackoff, timerLifecycleRegister)
			return
		}
		l.epoch = r.BrokerEpoch
		b.logs.SetBrokerEpoch(r.BrokerEpoch)
		b.ctx.Log("broker-registration", sim.I("controller", int64(ctl)), sim.I("broker-epoch", r.BrokerEpoch))
		l.heartbeat()
	})
}

// metadataVersionLevel is the metadata.version feature level a node
// supports and bootstraps with when KRaftConfig leaves it unset: 4.0-IV3
// (level 25 in Kafka 4.0's MetadataVersion).
const metadataVersionLevel = 25

func (l *lifecycle) heartbeat() {
	b := l.b
	ctl := l.controller()
	if ctl < 0 {
		l.schedule(lifecycleRetryBackoff, timerLifecycleHeartbeat)
		return
	}
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.Version = 1
	req.BrokerID, req.BrokerEpoch = b.cfg.BrokerID, l.epoch
	req.CurrentMetadataOffset = b.kraft.meta.offset
	req.WantFence = !l.caughtUp
	req.WantShutdown = l.stopping
	l.inflight = true
	b.send(ctl, req, b.cfg.KRaft.Raft.RequestTimeout, func(resp kmsg.Response, err error) {
		l.inflight = false
		r, _ := resp.(*kmsg.BrokerHeartbeatResponse)
		switch {
		case err != nil || r == nil:
			l.schedule(b.cfg.KRaft.HeartbeatInterval, timerLifecycleHeartbeat)
			return
		case r.ErrorCode == kerr.StaleBrokerEpoch.Code:
			b.ctx.Log("broker-heartbeat-failed", sim.S("error", "STALE_BROKER_EPOCH"))
			l.epoch = -1
			l.register()
			return
		case r.ErrorCode != 0:
			l.schedule(lifecycleRetryBackoff, timerLifecycleHeartbeat)
			return
		}
		wasFenced := l.fenced
		l.caughtUp = l.caughtUp || r.IsCaughtUp
		l.fenced = r.IsFenced
		if wasFenced != l.fenced {
			b.ctx.Log("broker-fence-state", sim.S("fenced", boolStr(l.fenced)), sim.I("broker-epoch", l.epoch))
		}
		if !l.fenced && !b.serving {
			b.serving = true
		}
		if !b.serving {
			// Starting or recovering (not yet unfenced once): Kafka's
			// BrokerLifecycleManager heartbeats again after only 10 ms,
			// "so that we start up a bit quicker".
			l.schedule(startupHeartbeatInterval, timerLifecycleHeartbeat)
			return
		}
		l.schedule(b.cfg.KRaft.HeartbeatInterval, timerLifecycleHeartbeat)
	})
}

// errName names a failed request's outcome: the error code's name, or
// "timeout".
func errName(code int16, err error) string {
	if err != nil {
		return "timeout"
	}
	if e := kerr.ErrorForCode(code); e != nil {
		return e.(*kerr.Error).Message
	}
	return "NONE"
}

func (l *lifecycle) timer(id sim.TimerID, name string) bool {
	switch name {
	case timerLifecycleRegister, timerLifecycleHeartbeat:
		if id != l.next {
			return true
		}
		l.next = 0
		if l.inflight {
			return true
		}
		if name == timerLifecycleRegister || l.epoch < 0 {
			l.register()
		} else {
			l.heartbeat()
		}
		return true
	case timerLifecycleAlter:
		tp, ok := l.alterRetry[id]
		delete(l.alterRetry, id)
		if p, live := l.b.partitions[tp]; ok && live && p.role == Leader && p.isrUpdateInFlight {
			l.b.alterPartition(p, p.pendingISR)
		}
		return true
	case timerLifecycleProducer:
		l.b.allocateProducerIDs()
		return true
	}
	return false
}

// shutdown sends the heartbeat that asks for a controlled shutdown.
func (l *lifecycle) shutdown() {
	if l.epoch < 0 {
		return
	}
	l.stopping = true
	l.heartbeat()
}

// allocateProducerIDs asks the controller for a block of producer ids
// (AllocateProducerIds, KIP-730) for the waiting InitProducerId requests.
func (b *Broker) allocateProducerIDs() {
	l := b.kraft.life
	ctl := l.controller()
	if ctl < 0 || l.epoch < 0 {
		b.ctx.SetTimer(lifecycleRetryBackoff, timerLifecycleProducer)
		return
	}
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID, req.BrokerEpoch = b.cfg.BrokerID, l.epoch
	b.send(ctl, req, b.cfg.KRaft.Raft.RequestTimeout, func(resp kmsg.Response, err error) {
		r, _ := resp.(*kmsg.AllocateProducerIDsResponse)
		if err != nil || r == nil || r.ErrorCode != 0 || r.ProducerIDLen <= 0 {
			b.ctx.SetTimer(lifecycleRetryBackoff, timerLifecycleProducer)
			return
		}
		ids := &b.producerIDs
		ids.next, ids.end, ids.claiming = r.ProducerIDStart, r.ProducerIDStart+int64(r.ProducerIDLen), false
		waiting := ids.waiting
		ids.waiting = nil
		for _, cb := range waiting {
			b.nextProducerID(cb)
		}
	})
}
