package raft

// This file is the FetchSnapshot API (key 59, v1; KIP-630): the leader
// serves its latest snapshot file in chunks (Position, MaxBytes, the file's
// Size); a follower whose fetch offset fell below the leader's log start
// fetches it chunk by chunk, then writes it durably, truncates its log
// fully to start at the snapshot's end offset and hands the snapshot to
// the listener (HandleLoadSnapshot), and fetches the log from there.
// Simplification: only the latest snapshot is served (Kafka serves any
// snapshot it still holds); a follower asking for another one gets
// SNAPSHOT_NOT_FOUND and starts over from a Fetch.

import (
	"path"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	fetchSnapshotVersion = 1
	snapshotChunkBytes   = 64 << 10
)

// snapshotFetch is a snapshot download in progress.
type snapshotFetch struct {
	id  snapshotID
	buf []byte
}

func (c *Client) sendFetchSnapshot(to int32) {
	sf := c.snapFetch
	req := kmsg.NewPtrFetchSnapshotRequest()
	req.Version = fetchSnapshotVersion
	req.ClusterID = &c.cfg.ClusterID
	req.ReplicaID = c.cfg.NodeID
	req.MaxBytes = snapshotChunkBytes
	t := kmsg.NewFetchSnapshotRequestTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewFetchSnapshotRequestTopicPartition()
	p.CurrentLeaderEpoch = c.epoch
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch = sf.id.end, sf.id.epoch
	p.Position = int64(len(sf.buf))
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	c.fetchInflight = true
	gen := c.gen
	c.env.Send(to, req, c.cfg.RequestTimeout, func(r kmsg.Response, err error) {
		if c.stopped || gen != c.gen {
			return
		}
		c.fetchInflight = false
		resp, _ := r.(*kmsg.FetchSnapshotResponse)
		c.handleFetchSnapshotResponse(resp, err)
	})
}

func (c *Client) handleFetchSnapshotResponse(resp *kmsg.FetchSnapshotResponse, err error) {
	if err != nil || resp == nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		c.retryFetch()
		return
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		if c.observeEpoch(p.CurrentLeader.LeaderEpoch, p.CurrentLeader.LeaderID) {
			return
		}
		c.snapFetch = nil
		c.retryFetch()
		return
	}
	sf := c.snapFetch
	if sf == nil || p.SnapshotID.EndOffset != sf.id.end || p.SnapshotID.Epoch != sf.id.epoch || p.Position != int64(len(sf.buf)) {
		c.snapFetch = nil
		c.retryFetch()
		return
	}
	c.heardLeader = true
	c.armFetchTimeout(c.cfg.FetchTimeout)
	sf.buf = append(sf.buf, p.Bytes...)
	if int64(len(sf.buf)) >= p.Size {
		c.snapFetch = nil
		records, voters, err := decodeSnapshotVoters(sf.buf)
		if err != nil {
			c.retryFetch()
			return
		}
		c.writeSnapshotFile(sf.id, sf.buf)
		c.installSnapshot(sf.id, records, voters, "fetch")
		c.cleanBelowSnapshot()
		c.deliver()
	}
	c.maybeFetch()
}

func (c *Client) handleFetchSnapshot(req *kmsg.FetchSnapshotRequest) *kmsg.FetchSnapshotResponse {
	resp := kmsg.NewPtrFetchSnapshotResponse()
	resp.Version = req.Version
	if req.ClusterID != nil && *req.ClusterID != c.cfg.ClusterID {
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		return resp
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic || len(req.Topics[0].Partitions) != 1 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	rp := req.Topics[0].Partitions[0]
	t := kmsg.NewFetchSnapshotResponseTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewFetchSnapshotResponseTopicPartition()
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch = rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = c.leader, c.epoch
	defer func() {
		t.Partitions = []kmsg.FetchSnapshotResponseTopicPartition{p}
		resp.Topics = []kmsg.FetchSnapshotResponseTopic{t}
	}()
	switch {
	case rp.CurrentLeaderEpoch < c.epoch:
		p.ErrorCode = kerr.FencedLeaderEpoch.Code
		return resp
	case rp.CurrentLeaderEpoch > c.epoch:
		p.ErrorCode = kerr.UnknownLeaderEpoch.Code
		return resp
	case c.role != roleLeader:
		p.ErrorCode = kerr.NotLeaderForPartition.Code
		return resp
	case !c.snap.ok || rp.SnapshotID.EndOffset != c.snap.end || rp.SnapshotID.Epoch != c.snap.epoch:
		p.ErrorCode = kerr.SnapshotNotFound.Code
		return resp
	}
	data, err := c.ctx.Disk().ReadFile(path.Join(c.log.dir, snapshotName(c.snap)))
	must(err)
	if rp.Position < 0 || rp.Position > int64(len(data)) {
		p.ErrorCode = kerr.PositionOutOfRange.Code
		return resp
	}
	// A FetchSnapshot counts for check-quorum as a Fetch does
	// (handleFetchSnapshotRequest).
	c.noteVoterFetch(req.ReplicaID)
	n := min(int64(len(data))-rp.Position, int64(max(req.MaxBytes, 1)))
	p.Size, p.Position = int64(len(data)), rp.Position
	p.Bytes = append([]byte(nil), data[rp.Position:rp.Position+n]...)
	return resp
}
