package kraft

// This file serves AllocateProducerIdsRequest (api key 67, KIP-730) as
// Kafka 4.0's ProducerIdControlManager.generateNextProducerId: check the
// broker epoch (STALE_BROKER_EPOCH), hand out the block that starts at the
// image's next producer id, and write a ProducerIdsRecord that advances it
// by the block size. The reply waits for the record to commit.

import (
	"math"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (c *Controller) allocateProducerIDs(ctx *sim.Context, req *kmsg.AllocateProducerIDsRequest, reply func(kmsg.Response)) {
	resp := req.ResponseKind().(*kmsg.AllocateProducerIDsResponse)
	fail := func(e *kerr.Error) {
		resp.ErrorCode = e.Code
		reply(resp)
	}
	if b, ok := c.working.img.Broker(req.BrokerID); !ok || b.Epoch != req.BrokerEpoch {
		fail(kerr.StaleBrokerEpoch)
		return
	}
	start := c.working.img.NextProducerID()
	if start > math.MaxInt64-c.cfg.ProducerIDBlockSize {
		fail(kerr.UnknownServerError) // Kafka: "Exhausted all producerIds"
		return
	}
	rec := &metadata.ProducerIdsRecord{BrokerID: req.BrokerID, BrokerEpoch: req.BrokerEpoch, NextProducerID: start + c.cfg.ProducerIDBlockSize}
	c.write(ctx, []metadata.Record{rec}, func() {
		resp.ProducerIDStart, resp.ProducerIDLen = start, int32(c.cfg.ProducerIDBlockSize)
		reply(resp)
	}, fail)
}
