package server

// This file serves InitProducerId (api key 22) for idempotent producers
// (KIP-98, without transactions): it hands out a new producer id with epoch
// 0. Ids come in blocks of 1000 claimed from ZooKeeper's
// /latest_producer_id_block with a conditional write (Kafka's
// ZkProducerIdManager), so no two brokers, and no restart, reuse one.
// Without ZooKeeper (hand-driven tests) a broker numbers from id * 10^9.
//
// With a transactional.id (KIP-98; v3+ KIP-360's producer id and epoch;
// v4+ KIP-588's PRODUCER_FENCED) the request is the transaction
// coordinator's (package txn, hosted in txn_coordinator.go): this broker
// answers NOT_COORDINATOR unless it leads the id's __transaction_state
// partition, and the coordinator takes its producer ids from the same
// blocks.

import (
	"encoding/json"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	producerIDBlockSize = 1000
	producerIDBlockPath = "/latest_producer_id_block"
)

// producerIDBlock is the JSON of /latest_producer_id_block.
type producerIDBlock struct {
	Version    int    `json:"version"`
	Broker     int32  `json:"broker"`
	BlockStart string `json:"block_start"`
	BlockEnd   string `json:"block_end"`
}

type producerIDs struct {
	next, end int64 // the current block: next id to give, last id + 1
	claiming  bool
	waiting   []func(id int64, err *kerr.Error)
}

func (b *Broker) handleInitProducerID(from sim.NodeID, req *wire.Request, body *kmsg.InitProducerIDRequest) {
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if body.Version >= 3 && (body.ProducerID == -1) != (body.ProducerEpoch == -1) {
		// KafkaApis.handleInitProducerIdRequest: an id without an epoch,
		// or an epoch without an id.
		resp.ErrorCode = kerr.InvalidRequest.Code
		b.respond(from, req, resp)
		return
	}
	if body.TransactionalID != nil {
		b.txn.coord.InitProducerID(b.ctx.Now(), body, func(r *kmsg.InitProducerIDResponse) {
			if r.ErrorCode == 0 {
				b.ctx.Log("init-producer-id", sim.S("transactional-id", *body.TransactionalID), sim.I("producer", r.ProducerID), sim.I("epoch", int64(r.ProducerEpoch)))
			}
			b.respond(from, req, r)
		})
		b.armTxnTick()
		return
	}
	b.nextProducerID(func(id int64, err *kerr.Error) {
		if err != nil {
			resp.ErrorCode = err.Code
		} else {
			resp.ProducerID, resp.ProducerEpoch = id, 0
			b.ctx.Log("init-producer-id", sim.I("producer", id))
		}
		b.respond(from, req, resp)
	})
}

func (b *Broker) nextProducerID(cb func(int64, *kerr.Error)) {
	ids := &b.producerIDs
	if ids.next < ids.end {
		ids.next++
		cb(ids.next-1, nil)
		return
	}
	if b.kraftMode() {
		ids.waiting = append(ids.waiting, cb)
		if !ids.claiming {
			ids.claiming = true
			b.allocateProducerIDs()
		}
		return
	}
	if b.zk == nil {
		start := max(ids.end, int64(b.cfg.BrokerID)*1_000_000_000)
		ids.next, ids.end = start+1, start+producerIDBlockSize
		cb(start, nil)
		return
	}
	ids.waiting = append(ids.waiting, cb)
	if ids.claiming {
		return
	}
	ids.claiming = true
	b.claimProducerIDBlock()
}

// claimProducerIDBlock reads the latest block and claims the next one with
// a conditional write, retrying on a lost race.
func (b *Broker) claimProducerIDBlock() {
	b.zk.GetData(b.ctx, producerIDBlockPath, false, func(ctx *sim.Context, r *zk.Response) {
		b.ctx = ctx
		start, version := int64(0), int32(-1)
		switch r.Code {
		case zk.Ok:
			var blk producerIDBlock
			if len(r.Data) > 0 && json.Unmarshal(r.Data, &blk) == nil {
				end, _ := strconv.ParseInt(blk.BlockEnd, 10, 64)
				start = end + 1
			}
			version = r.Stat.Version
		case zk.NoNode:
		default:
			b.failProducerIDs(kerr.CoordinatorNotAvailable)
			return
		}
		data, _ := json.Marshal(producerIDBlock{Version: 1, Broker: b.cfg.BrokerID,
			BlockStart: strconv.FormatInt(start, 10), BlockEnd: strconv.FormatInt(start+producerIDBlockSize-1, 10)})
		done := func(ctx *sim.Context, w *zk.Response) {
			b.ctx = ctx
			switch w.Code {
			case zk.Ok:
				ids := &b.producerIDs
				ids.next, ids.end, ids.claiming = start, start+producerIDBlockSize, false
				waiting := ids.waiting
				ids.waiting = nil
				for _, cb := range waiting {
					b.nextProducerID(cb)
				}
			case zk.BadVersion, zk.NodeExists:
				b.claimProducerIDBlock() // another broker claimed first
			default:
				b.failProducerIDs(kerr.CoordinatorNotAvailable)
			}
		}
		if version < 0 {
			b.zk.Create(b.ctx, producerIDBlockPath, data, zk.Persistent, done)
		} else {
			b.zk.SetData(b.ctx, producerIDBlockPath, data, version, done)
		}
	})
}

func (b *Broker) failProducerIDs(err *kerr.Error) {
	ids := &b.producerIDs
	waiting := ids.waiting
	ids.waiting, ids.claiming = nil, false
	for _, cb := range waiting {
		cb(-1, err)
	}
}
