package raft

// This file routes requests to the member (KafkaRaftClient.handleRequest)
// and serves DescribeQuorum (key 55, v2): only the leader answers, with
// the HW and every voter's and observer's end offset and last fetch time
// (with kraft.version 1 an observer's directory id too);
// any other member answers NOT_LEADER_OR_FOLLOWER, as Kafka does.

import (
	"sort"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Handle serves the raft APIs: Vote, BeginQuorumEpoch, EndQuorumEpoch,
// Fetch of __cluster_metadata, FetchSnapshot and DescribeQuorum. It returns
// false for any other request. reply is called exactly once, maybe later
// (a parked Fetch).
func (c *Client) Handle(ctx *sim.Context, from int32, req kmsg.Request, reply func(kmsg.Response)) bool {
	c.ctx = ctx
	if f, ok := req.(*kmsg.FetchRequest); ok && !isMetadataFetch(f) {
		return false
	}
	switch req.(type) {
	case *kmsg.VoteRequest, *kmsg.BeginQuorumEpochRequest, *kmsg.EndQuorumEpochRequest, *kmsg.FetchRequest,
		*kmsg.FetchSnapshotRequest, *kmsg.DescribeQuorumRequest, *kmsg.AddRaftVoterRequest, *kmsg.RemoveRaftVoterRequest:
	default:
		return false
	}
	if !c.started || c.stopped {
		// Not serving (yet, or any more): the top-level error Kafka's
		// network layer gives a request it cannot route.
		resp := req.ResponseKind()
		resp.SetVersion(req.GetVersion())
		setTopLevelError(resp, kerr.BrokerNotAvailable.Code)
		reply(resp)
		return true
	}
	switch r := req.(type) {
	case *kmsg.VoteRequest:
		c.handleVoteRequest(from, r, reply)
	case *kmsg.BeginQuorumEpochRequest:
		reply(c.handleBeginQuorumEpoch(from, r))
	case *kmsg.EndQuorumEpochRequest:
		reply(c.handleEndQuorumEpoch(from, r))
	case *kmsg.FetchRequest:
		c.handleFetch(from, r, reply)
	case *kmsg.FetchSnapshotRequest:
		reply(c.handleFetchSnapshot(r))
	case *kmsg.DescribeQuorumRequest:
		reply(c.handleDescribeQuorum(r))
	case *kmsg.AddRaftVoterRequest:
		c.handleAddVoter(r, reply)
	case *kmsg.RemoveRaftVoterRequest:
		c.handleRemoveVoter(r, reply)
	}
	return true
}

func setTopLevelError(resp kmsg.Response, code int16) {
	switch r := resp.(type) {
	case *kmsg.VoteResponse:
		r.ErrorCode = code
	case *kmsg.BeginQuorumEpochResponse:
		r.ErrorCode = code
	case *kmsg.EndQuorumEpochResponse:
		r.ErrorCode = code
	case *kmsg.FetchResponse:
		r.ErrorCode = code
	case *kmsg.FetchSnapshotResponse:
		r.ErrorCode = code
	case *kmsg.DescribeQuorumResponse:
		r.ErrorCode = code
	case *kmsg.AddRaftVoterResponse:
		r.ErrorCode = code
	case *kmsg.RemoveRaftVoterResponse:
		r.ErrorCode = code
	}
}

func (c *Client) handleDescribeQuorum(req *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse {
	resp := kmsg.NewPtrDescribeQuorumResponse()
	resp.Version = req.Version
	t := kmsg.NewDescribeQuorumResponseTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewDescribeQuorumResponseTopicPartition()
	p.LeaderID, p.LeaderEpoch, p.HighWatermark = c.leader, c.epoch, c.leaderHW()
	if c.role != roleLeader {
		p.ErrorCode = kerr.NotLeaderForPartition.Code
	} else {
		ids := make([]int32, 0, len(c.replicas))
		for id := range c.replicas {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			r := c.replicas[id]
			s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			s.ReplicaID, s.LogEndOffset = id, r.endOffset
			s.LastFetchTimestamp, s.LastCaughtUpTimestamp = -1, -1
			if id == c.cfg.NodeID {
				s.LastFetchTimestamp = sim.Duration(c.ctx.Now()).Milliseconds()
			} else if r.lastFetch > 0 {
				s.LastFetchTimestamp = sim.Duration(r.lastFetch).Milliseconds()
			}
			if c.isVoter(id) {
				p.CurrentVoters = append(p.CurrentVoters, s)
			} else {
				p.Observers = append(p.Observers, s)
			}
		}
		// KIP-853 (kraft.version 1): the fetchers that are no voter by
		// (id, directory id), a voter's id on a wiped disk among them, by
		// id then directory id.
		keys := make([]voterKey, 0, len(c.observers))
		for k := range c.observers {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].id != keys[j].id {
				return keys[i].id < keys[j].id
			}
			return string(keys[i].dir[:]) < string(keys[j].dir[:])
		})
		for _, k := range keys {
			r := c.observers[k]
			s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			s.ReplicaID, s.ReplicaDirectoryID, s.LogEndOffset = k.id, k.dir, r.endOffset
			s.LastFetchTimestamp, s.LastCaughtUpTimestamp = sim.Duration(r.lastFetch).Milliseconds(), -1
			p.Observers = append(p.Observers, s)
		}
	}
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}
