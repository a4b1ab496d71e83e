package raft

// This file is the fetching side of Fetch (KafkaRaftClient.maybeSendFetch
// and handleFetchResponse): a follower fetches from its leader with its
// log end offset and last fetched epoch; a DivergingEpoch makes it truncate
// to the end offset the two logs agree on and fetch again (KIP-595); a
// SnapshotID makes it fetch the snapshot (fetch_snapshot.go); records are
// appended, flushed, and the HW learned (never past the local end offset,
// never backwards). An observer with no known leader asks a random voter
// and follows the CurrentLeader in the answer. Errors are retried after
// retry.backoff; a follower that gets no answer within the fetch timeout
// stands for election (state.go).

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchTarget returns whom to fetch from now, or -1.
func (c *Client) fetchTarget() int32 {
	switch {
	case c.role == roleFollower:
		return c.leader
	case c.role == roleUnattached && !c.voter:
		if c.fetchFrom < 0 {
			// A dynamic observer may know no voter yet: it asks the
			// bootstrap servers (a static quorum's are its voters).
			c.fetchFrom = c.bootstrap[c.ctx.Rand().IntN(len(c.bootstrap))]
		}
		return c.fetchFrom
	}
	return -1
}

func (c *Client) retryFetch() {
	if c.retryTimer == 0 {
		c.retryTimer = c.ctx.SetTimer(c.cfg.RetryBackoff, "raft-fetch-retry")
	}
}

// maybeFetch sends the next Fetch (or FetchSnapshot) if none is in flight.
func (c *Client) maybeFetch() {
	if c.stopped || c.fetchInflight || c.retryTimer != 0 {
		return
	}
	to := c.fetchTarget()
	if to < 0 {
		return
	}
	if c.snapFetch != nil {
		c.sendFetchSnapshot(to)
		return
	}
	lastEpoch, leo := c.lastOffsetEpoch()
	if leo == 0 {
		lastEpoch = 0
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version = fetchVersion
	req.ClusterID = &c.cfg.ClusterID
	req.ReplicaID = c.cfg.NodeID
	req.ReplicaState.ID, req.ReplicaState.Epoch = c.cfg.NodeID, -1
	req.MaxWaitMillis = int32(c.cfg.FetchMaxWait.Milliseconds())
	req.MinBytes, req.MaxBytes = 0, fetchMaxBytes
	req.SessionID, req.SessionEpoch = 0, -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic, t.TopicID = MetadataTopic, metadataTopicID
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition, p.CurrentLeaderEpoch, p.FetchOffset, p.LastFetchedEpoch = 0, c.epoch, leo, lastEpoch
	p.LogStartOffset, p.PartitionMaxBytes = c.log.startOffset(), fetchMaxBytes
	p.ReplicaDirectoryID = c.dir // zero with kraft.version 0
	if c.cfg.FetchHighWatermark {
		// KIP-1166: the HW this replica knows, so that a leader whose HW
		// is past it answers at once (fetchResponse).
		req.Version, p.HighWatermark = fetchVersionKIP1166, c.hw
	}
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	c.fetchInflight = true
	gen := c.gen
	c.env.Send(to, req, c.cfg.RequestTimeout+c.cfg.FetchMaxWait, func(r kmsg.Response, err error) {
		if c.stopped || gen != c.gen {
			return
		}
		c.fetchInflight = false
		resp, _ := r.(*kmsg.FetchResponse)
		c.handleFetchResponse(to, resp, err)
	})
}

func (c *Client) handleFetchResponse(from int32, resp *kmsg.FetchResponse, err error) {
	if err != nil || resp == nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		if !c.voter && c.role == roleUnattached {
			c.fetchFrom = -1
		}
		c.retryFetch()
		return
	}
	p := resp.Topics[0].Partitions[0]
	cl := p.CurrentLeader
	if p.ErrorCode != 0 {
		if c.observeEpoch(cl.LeaderEpoch, cl.LeaderID) {
			return
		}
		if !c.voter && c.role == roleUnattached {
			c.fetchFrom = -1
			if cl.LeaderEpoch == c.epoch && cl.LeaderID >= 0 {
				c.fetchFrom = cl.LeaderID
			}
		}
		c.retryFetch()
		return
	}
	if c.role != roleFollower || from != c.leader {
		// An observer's random voter turned out to be the leader.
		if !c.observeEpoch(cl.LeaderEpoch, cl.LeaderID) {
			c.retryFetch()
		}
		return
	}
	c.heardLeader = true
	c.armFetchTimeout(c.cfg.FetchTimeout)
	switch {
	case p.DivergingEpoch.EndOffset >= 0 && p.DivergingEpoch.Epoch >= 0:
		if !c.truncateToDiverging(p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset) {
			return // fatal: the node halts
		}
	case p.SnapshotID.EndOffset >= 0 && p.SnapshotID.Epoch >= 0:
		c.snapFetch = &snapshotFetch{id: snapshotID{end: p.SnapshotID.EndOffset, epoch: p.SnapshotID.Epoch, ok: true}}
	default:
		if err := c.log.appendFollower(p.RecordBatches); err != nil {
			c.ctx.Log("raft-append-error", sim.S("error", err.Error()))
			c.retryFetch()
			return
		}
		if c.dynamic() && len(p.RecordBatches) > 0 {
			bs, err := storage.DecodeBatches(p.RecordBatches)
			must(err)
			c.scanVoters(bs)
		}
		if p.HighWatermark >= 0 {
			c.setHW(min(p.HighWatermark, c.log.endOffset()))
		}
		c.maybeAutoJoin()
	}
	c.maybeFetch()
}

// truncateToDiverging is KIP-595's reconciliation: truncate to the end
// offset of the diverging epoch, as the local log knows it too.
// Invariant: a follower never truncates below its high watermark. Kafka's
// handleFetchResponse throws a KafkaException (fatal to the raft thread)
// when the leader asks for it, and the node's fatal fault handler halts the
// process; here it goes to Env.Fatal (the broker halts; the raft checker
// reports the "raft-fatal" record), and it returns false. The local end
// offset of the epoch is held to the same rule: removing a committed record
// is never silent.
func (c *Client) truncateToDiverging(epoch int32, endOffset int64) bool {
	if c.hw >= 0 && endOffset < c.hw {
		c.fatal(fmt.Sprintf("raft: invariant: node %d (epoch %d, leader %d) asked to truncate to offset %d (diverging epoch %d), below its high watermark %d",
			c.cfg.NodeID, c.epoch, c.leader, endOffset, epoch, c.hw))
		return false
	}
	target := endOffset
	if e, localEnd := c.log.endOffsetForEpoch(epoch); e >= 0 && localEnd >= 0 {
		target = min(target, localEnd)
	}
	target = max(target, c.log.startOffset())
	leo := c.log.endOffset()
	if target >= leo {
		return true
	}
	if c.hw >= 0 && target < c.hw {
		c.fatal(fmt.Sprintf("raft: invariant: node %d (epoch %d, leader %d) would truncate to offset %d (its end of epoch %d), below its high watermark %d",
			c.cfg.NodeID, c.epoch, c.leader, target, epoch, c.hw))
		return false
	}
	c.ctx.Log("raft-truncate", sim.I("to", target), sim.I("from-leo", leo), sim.I("hw", c.hw))
	c.log.truncateTo(target)
	c.votersTruncated(target)
	return true
}

// fatal hands a fatal error to the node (Env.Fatal), or panics without
// one.
func (c *Client) fatal(reason string) {
	if c.env.Fatal == nil {
		panic(reason)
	}
	c.ctx.Log("raft-fatal", sim.S("reason", reason))
	c.env.Fatal(reason)
}
