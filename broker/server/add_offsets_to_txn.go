package server

// This file serves AddOffsetsToTxn (api key 25), v0-v4: the transaction
// coordinator adds the group's __consumer_offsets partition
// (abs(hash(group)) % offsets.topic.num.partitions) to the transaction, so
// that its markers complete the offsets the producer then sends to the
// group coordinator with TxnOffsetCommit (KIP-98). PRODUCER_FENCED from v2
// (KIP-588). Simplifications: no group ACL check.

import (
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleAddOffsetsToTxn(from sim.NodeID, req *wire.Request, body *kmsg.AddOffsetsToTxnRequest) {
	b.txn.coord.AddOffsetsToTxn(b.ctx.Now(), body, func(r *kmsg.AddOffsetsToTxnResponse) { b.respond(from, req, r) })
}
