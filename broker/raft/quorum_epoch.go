package raft

// This file is the BeginQuorumEpoch (key 53, v1) and EndQuorumEpoch (key
// 54, v1) APIs, as in KafkaRaftClient: a new leader announces its epoch to
// the voters at once and again every fetch timeout / 2 (LeaderState's
// beginQuorumEpochTimer) to every voter that has not acknowledged it yet —
// by answering a BeginQuorumEpoch or by fetching
// (ReplicaState.hasAcknowledgedLeader, as LeaderState documents the
// targets) — skipping, as RequestManager does, a voter with a request
// still awaiting its answer (up to the request timeout) or within
// retry.backoff of a failed one; a voter of a lower or equal epoch follows
// it; a
// resigning leader sends EndQuorumEpoch with its preferred successors (the
// voters by end offset, most caught up first) and a follower of that
// leader shortens its fetch timeout by its rank (endEpochElectionBackoff),
// so the best successor stands first.
// Simplifications: leader endpoints (v1's LeaderEndpoints) are left empty:
// static voters are reachable by id. Once every voter has acknowledged, the
// resend timer is not armed again (Kafka's keeps running with nobody left
// to send to: the same messages). NB: Kafka 4.0's pollLeader sends to every
// voter each round and later 4.x releases to the voters that have not
// fetched within fetch timeout / 2; both include every unacknowledged
// voter, which is what matters for a voter that missed the election.

import (
	"sort"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	beginQuorumEpochVersion = 1
	endQuorumEpochVersion   = 1
)

func (c *Client) sendBeginQuorumEpoch() {
	if c.role != roleLeader {
		return
	}
	gen := c.gen
	now := c.ctx.Now()
	pending := false
	for _, v := range c.voters {
		r := c.replicas[v]
		if v == c.cfg.NodeID || r.acked {
			continue
		}
		pending = true
		if r.beginInflight || now < r.beginBackoff {
			continue
		}
		req := kmsg.NewPtrBeginQuorumEpochRequest()
		req.Version = beginQuorumEpochVersion
		req.ClusterID = &c.cfg.ClusterID
		req.VoterID = v
		t := kmsg.NewBeginQuorumEpochRequestTopic()
		t.Topic = MetadataTopic
		p := kmsg.NewBeginQuorumEpochRequestTopicPartition()
		p.LeaderID, p.LeaderEpoch = c.cfg.NodeID, c.epoch
		p.VoterDirectoryID = c.voterDir(v) // KIP-853: zero for a static voter
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
		r.beginInflight = true
		c.env.Send(v, req, c.cfg.RequestTimeout, func(resp kmsg.Response, err error) {
			if c.stopped || gen != c.gen {
				return
			}
			r.beginInflight = false
			br, _ := resp.(*kmsg.BeginQuorumEpochResponse)
			if err != nil || br == nil || br.ErrorCode != 0 || len(br.Topics) != 1 || len(br.Topics[0].Partitions) != 1 {
				r.beginBackoff = c.ctx.Now().Add(c.cfg.RetryBackoff)
				return
			}
			p := br.Topics[0].Partitions[0]
			if c.observeEpoch(p.LeaderEpoch, p.LeaderID) {
				return
			}
			if p.ErrorCode != 0 {
				r.beginBackoff = c.ctx.Now().Add(c.cfg.RetryBackoff)
				return
			}
			r.acked = true // LeaderState.addAcknowledgementFrom
		})
	}
	if pending {
		c.beginTimer = c.ctx.SetTimer(c.cfg.FetchTimeout/2, "raft-begin-epoch")
	}
}

func beginResponse(version, code, partCode int16, leader, epoch int32) *kmsg.BeginQuorumEpochResponse {
	resp := kmsg.NewPtrBeginQuorumEpochResponse()
	resp.Version, resp.ErrorCode = version, code
	t := kmsg.NewBeginQuorumEpochResponseTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewBeginQuorumEpochResponseTopicPartition()
	p.ErrorCode, p.LeaderID, p.LeaderEpoch = partCode, leader, epoch
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}

func (c *Client) handleBeginQuorumEpoch(from int32, req *kmsg.BeginQuorumEpochRequest) *kmsg.BeginQuorumEpochResponse {
	if req.ClusterID != nil && *req.ClusterID != c.cfg.ClusterID {
		return beginResponse(req.Version, kerr.InconsistentClusterID.Code, 0, -1, -1)
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic || len(req.Topics[0].Partitions) != 1 {
		return beginResponse(req.Version, kerr.InvalidRequest.Code, 0, -1, -1)
	}
	p := req.Topics[0].Partitions[0]
	if req.Version >= 1 && (req.VoterID >= 0 && req.VoterID != c.cfg.NodeID || p.VoterDirectoryID != [16]byte{} && p.VoterDirectoryID != c.dir) {
		// KIP-853: meant for another replica (the voter this node was
		// before its disk was wiped).
		return beginResponse(req.Version, 0, kerr.InvalidVoterKey.Code, c.leader, c.epoch)
	}
	if !c.isVoter(p.LeaderID) && !c.dynamic() {
		return beginResponse(req.Version, 0, kerr.InconsistentVoterSet.Code, c.leader, c.epoch)
	}
	if p.LeaderEpoch < c.epoch {
		return beginResponse(req.Version, 0, kerr.FencedLeaderEpoch.Code, c.leader, c.epoch)
	}
	if p.LeaderID != c.cfg.NodeID && c.leaderKeepsRole(p.LeaderEpoch) {
		return beginResponse(req.Version, 0, 0, c.leader, c.epoch)
	}
	if p.LeaderID != c.cfg.NodeID && (p.LeaderEpoch > c.epoch || c.role != roleFollower || c.leader != p.LeaderID) {
		c.becomeFollower(p.LeaderEpoch, p.LeaderID)
	}
	return beginResponse(req.Version, 0, 0, c.leader, c.epoch)
}

// preferredSuccessors lists the other voters, most caught up first.
func (c *Client) preferredSuccessors() []int32 {
	var out []int32
	for _, v := range c.voters {
		if v != c.cfg.NodeID {
			out = append(out, v)
		}
	}
	if c.replicas != nil {
		sort.SliceStable(out, func(i, j int) bool { return c.replicas[out[i]].endOffset > c.replicas[out[j]].endOffset })
	}
	return out
}

func (c *Client) sendEndQuorumEpoch(successors []int32) {
	for _, v := range c.voters {
		if v == c.cfg.NodeID {
			continue
		}
		req := kmsg.NewPtrEndQuorumEpochRequest()
		req.Version = endQuorumEpochVersion
		req.ClusterID = &c.cfg.ClusterID
		t := kmsg.NewEndQuorumEpochRequestTopic()
		t.Topic = MetadataTopic
		p := kmsg.NewEndQuorumEpochRequestTopicPartition()
		p.LeaderID, p.LeaderEpoch = c.cfg.NodeID, c.epoch
		p.PreferredSuccessors = append([]int32(nil), successors...)
		for _, s := range successors {
			pc := kmsg.NewEndQuorumEpochRequestTopicPartitionPreferredCandidate()
			pc.CandidateID = s
			p.PreferredCandidates = append(p.PreferredCandidates, pc)
		}
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
		c.env.Send(v, req, c.cfg.RequestTimeout, func(kmsg.Response, error) {})
	}
}

func endResponse(version, code, partCode int16, leader, epoch int32) *kmsg.EndQuorumEpochResponse {
	resp := kmsg.NewPtrEndQuorumEpochResponse()
	resp.Version, resp.ErrorCode = version, code
	t := kmsg.NewEndQuorumEpochResponseTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewEndQuorumEpochResponseTopicPartition()
	p.ErrorCode, p.LeaderID, p.LeaderEpoch = partCode, leader, epoch
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}

func (c *Client) handleEndQuorumEpoch(from int32, req *kmsg.EndQuorumEpochRequest) *kmsg.EndQuorumEpochResponse {
	if req.ClusterID != nil && *req.ClusterID != c.cfg.ClusterID {
		return endResponse(req.Version, kerr.InconsistentClusterID.Code, 0, -1, -1)
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic || len(req.Topics[0].Partitions) != 1 {
		return endResponse(req.Version, kerr.InvalidRequest.Code, 0, -1, -1)
	}
	p := req.Topics[0].Partitions[0]
	if p.LeaderEpoch < c.epoch {
		return endResponse(req.Version, 0, kerr.FencedLeaderEpoch.Code, c.leader, c.epoch)
	}
	if p.LeaderEpoch > c.epoch {
		c.observeEpoch(p.LeaderEpoch, p.LeaderID)
	}
	if c.role == roleFollower && c.leader == p.LeaderID && c.voter {
		rank := -1
		for i, s := range p.PreferredSuccessors {
			if s == c.cfg.NodeID {
				rank = i
			}
		}
		d := c.cfg.ElectionBackoffMax
		if rank >= 0 {
			d = min(c.cfg.RetryBackoff*sim.Duration(int64(1)<<min(rank, 20))-c.cfg.RetryBackoff, c.cfg.ElectionBackoffMax)
		}
		c.armFetchTimeout(d)
	}
	return endResponse(req.Version, 0, 0, c.leader, c.epoch)
}
