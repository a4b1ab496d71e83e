// Package kraft is the KRaft controller (Kafka 4.0's QuorumController) as
// a pure state machine: it runs on a controller node, writes metadata
// records through the raft quorum (the Quorum interface), builds the
// committed metadata image from what the quorum hands back (it is a
// raft.Listener), and serves BrokerRegistration, BrokerHeartbeat,
// AlterPartition, CreateTopics and AllocateProducerIds.
//
//	c, _ := kraft.New(kraft.DefaultConfig(3000), quorum)
//	// raft calls c.HandleCommit / HandleLeaderChange / HandleLoadSnapshot;
//	// the node passes requests and timers on:
//	c.Handle(ctx, from, req, reply)
//	c.Timer(ctx, id, name)
package kraft
