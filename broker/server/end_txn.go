package server

// This file serves EndTxn (api key 26), v0-v5: the transaction
// coordinator (package txn) writes PrepareCommit or PrepareAbort to
// __transaction_state, answers, sends the WriteTxnMarkers
// (txn_coordinator.go) and then writes CompleteCommit or CompleteAbort.
// KIP-588: PRODUCER_FENCED from v2 (INVALID_PRODUCER_EPOCH before).
// KIP-890 part 2: with transaction.version 2, v5+ bumps the producer epoch
// on every end and returns the new producer id and epoch.
// Simplifications: as package txn states (no ACLs).

import (
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleEndTxn(from sim.NodeID, req *wire.Request, body *kmsg.EndTxnRequest) {
	b.txn.coord.EndTxn(b.ctx.Now(), body, func(r *kmsg.EndTxnResponse) { b.respond(from, req, r) })
}
