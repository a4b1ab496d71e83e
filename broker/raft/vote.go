package raft

// This file is the Vote API (key 52, v2 as Kafka 4.0 sends it; v2 adds
// PreVote for KIP-996): KafkaRaftClient.handleVoteRequest and
// handleVoteResponse, and the vote rules of the EpochState classes
// (canGrantVote): a vote is granted once per epoch, only to a candidate
// whose log is at least as up to date (last epoch, then end offset) —
// unless Config.VoteCheckLog is false, the planted bug — and persisted in
// quorum-state before the answer leaves.
//
// Validation, in handleVoteRequest's order: a request with a negative last
// offset or last epoch, or whose last epoch is not below the candidate's
// epoch (a pre-vote's may equal it: the prospective has not bumped its
// epoch), or from a negative replica id, is refused with INVALID_REQUEST;
// one of an older epoch with FENCED_LEADER_EPOCH; one addressed to another
// voter id with INVALID_VOTER_KEY (after the epoch transition, as Kafka).
//
// Pre-vote (KIP-996, as 4.x ships it): a prospective sends its current
// epoch, not the next one (buildVoteRequest uses quorum.epoch() for both
// kinds), so the epoch it names exists; a receiver at a lower epoch moves
// to it (unattached, no vote, no leader) exactly as for a standard vote,
// then answers. A pre-vote never persists anything. A follower that has
// fetched from its leader in its current follower state refuses it
// (FollowerState.hasFetchedFromLeader); unattached, prospective, candidate
// and resigned members grant it when the log is up to date; a leader never.
// Observers answer like any member (Kafka 4.0 no longer refuses a Vote
// with INCONSISTENT_VOTER_SET: with KIP-853 the voter set a node knows may
// be stale); candidates only ask voters, so an observer's answer never
// counts.
// KIP-853 (kraft.version 1): the candidate names its directory id and the
// voter's as its voter set has it; a member whose own directory id is
// another (its disk was wiped) answers INVALID_VOTER_KEY and its answer is
// no vote. Static voters send zero directory ids, which match any.
// Simplifications: a prospective
// that grants a standard vote becomes unattached-voted (Kafka 4.x keeps it
// prospective with the vote: prospectiveAddVotedState); both stop its own
// pre-vote round and arm a fresh election timeout.

import (
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const voteVersion = 2

// lastOffsetEpoch returns the (epoch, end offset) of the local log, the
// snapshot's epoch when the log is empty past it.
func (c *Client) lastOffsetEpoch() (int32, int64) {
	e := c.log.lastEpoch()
	if e < 0 && c.snap.ok {
		e = c.snap.epoch
	}
	return max(e, 0), c.log.endOffset()
}

// logUpToDate is Raft's up-to-date check.
func (c *Client) logUpToDate(lastEpoch int32, endOffset int64) bool {
	myEpoch, myEnd := c.lastOffsetEpoch()
	return lastEpoch > myEpoch || (lastEpoch == myEpoch && endOffset >= myEnd)
}

func voteResponse(version int16, code int16, partCode int16, leader, epoch int32, granted bool) *kmsg.VoteResponse {
	resp := kmsg.NewPtrVoteResponse()
	resp.Version = version
	resp.ErrorCode = code
	t := kmsg.NewVoteResponseTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewVoteResponseTopicPartition()
	p.ErrorCode, p.LeaderID, p.LeaderEpoch, p.VoteGranted = partCode, leader, epoch, granted
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}

func (c *Client) handleVote(from int32, req *kmsg.VoteRequest) *kmsg.VoteResponse {
	if req.ClusterID != nil && *req.ClusterID != c.cfg.ClusterID {
		return voteResponse(req.Version, kerr.InconsistentClusterID.Code, 0, -1, -1, false)
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic || len(req.Topics[0].Partitions) != 1 {
		return voteResponse(req.Version, kerr.InvalidRequest.Code, 0, -1, -1, false)
	}
	p := req.Topics[0].Partitions[0]
	preVote := req.Version >= 2 && p.PreVote
	illegalEpoch := p.LastOffsetEpoch >= p.CandidateEpoch
	if preVote {
		illegalEpoch = p.LastOffsetEpoch > p.CandidateEpoch
	}
	if p.LastOffset < 0 || p.LastOffsetEpoch < 0 || illegalEpoch {
		return voteResponse(req.Version, 0, kerr.InvalidRequest.Code, c.leader, c.epoch, false)
	}
	// validateVoterOnlyRequest.
	if p.CandidateEpoch < c.epoch {
		c.logVote(p.CandidateEpoch, p.CandidateID, false, preVote)
		return voteResponse(req.Version, 0, kerr.FencedLeaderEpoch.Code, c.leader, c.epoch, false)
	}
	if p.CandidateID < 0 {
		return voteResponse(req.Version, 0, kerr.InvalidRequest.Code, c.leader, c.epoch, false)
	}
	// Raft's rule: only a granted vote (or a leader) resets the election
	// timer, so a voter refusing a stale candidate that keeps bumping the
	// epoch still stands in time.
	var deadline sim.Time
	if c.electionTimer != 0 {
		deadline = c.electionDeadline
	}
	if p.CandidateEpoch > c.epoch && !c.leaderKeepsRole(p.CandidateEpoch) {
		c.becomeUnattached(p.CandidateEpoch, -1)
		if deadline > 0 && c.electionTimer != 0 {
			c.armElection(max(deadline.Sub(c.ctx.Now()), 0))
		}
	}
	if req.Version >= 1 && (req.VoterID != c.cfg.NodeID || p.VoterDirectoryID != [16]byte{} && p.VoterDirectoryID != c.dir) {
		return voteResponse(req.Version, 0, kerr.InvalidVoterKey.Code, c.leader, c.epoch, false)
	}
	upToDate := !c.cfg.VoteCheckLog || c.logUpToDate(p.LastOffsetEpoch, p.LastOffset)
	granted := c.canGrantVote(p.CandidateID, p.CandidateEpoch, upToDate, preVote)
	if granted && !preVote && (c.role == roleUnattached || c.role == roleProspective) && c.votedFor != p.CandidateID {
		// The vote is persisted before the answer leaves.
		c.votedFor = p.CandidateID
		c.persist()
		c.setRole(roleUnattached)
		c.fetchFrom = -1
		if c.voter {
			c.armElection(c.randomElectionTimeout())
		} else {
			c.maybeFetch()
		}
	}
	c.logVote(p.CandidateEpoch, p.CandidateID, granted, preVote)
	return voteResponse(req.Version, 0, 0, c.leader, c.epoch, granted)
}

// canGrantVote is EpochState.canGrantVote for each state.
func (c *Client) canGrantVote(candidate, candidateEpoch int32, upToDate, preVote bool) bool {
	if preVote {
		switch c.role {
		case roleLeader:
			return false
		case roleFollower:
			// KIP-996: refuse once the leader answered a fetch in this
			// follower state (FollowerState.hasFetchedFromLeader); the
			// state ends when the fetch timeout expires.
			return !c.heardLeader && upToDate
		default:
			return upToDate
		}
	}
	if candidateEpoch != c.epoch {
		return false
	}
	switch c.role {
	case roleUnattached, roleProspective:
		if c.role == roleProspective && c.leader >= 0 {
			// A prospective that came from following a leader of this
			// epoch refuses a vote in it (ProspectiveState.canGrantVote):
			// the epoch has a leader already.
			return false
		}
		if c.votedFor >= 0 {
			return c.votedFor == candidate
		}
		return upToDate
	case roleCandidate:
		return candidate == c.cfg.NodeID
	}
	return false
}

func (c *Client) logVote(epoch, candidate int32, granted, preVote bool) {
	c.ctx.Log("raft-vote", sim.I("epoch", int64(epoch)), sim.I("candidate", int64(candidate)),
		sim.S("granted", boolStr(granted)), sim.S("pre-vote", boolStr(preVote)))
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// sendVotes sends a Vote (or a pre-vote) to every other voter, in the
// current epoch: a candidate bumped it already, a prospective does not
// (KIP-996 as 4.x ships it).
func (c *Client) sendVotes(preVote bool) {
	lastEpoch, end := c.lastOffsetEpoch()
	epoch := c.epoch
	gen := c.gen
	for _, v := range c.voters {
		if v == c.cfg.NodeID {
			continue
		}
		req := kmsg.NewPtrVoteRequest()
		req.Version = voteVersion
		req.ClusterID = &c.cfg.ClusterID
		req.VoterID = v
		t := kmsg.NewVoteRequestTopic()
		t.Topic = MetadataTopic
		p := kmsg.NewVoteRequestTopicPartition()
		p.CandidateEpoch, p.CandidateID, p.LastOffsetEpoch, p.LastOffset, p.PreVote = epoch, c.cfg.NodeID, lastEpoch, end, preVote
		p.CandidateDirectoryID, p.VoterDirectoryID = c.dir, c.voterDir(v)
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
		voter := v
		c.env.Send(v, req, c.cfg.RequestTimeout, func(r kmsg.Response, err error) {
			if c.stopped || gen != c.gen {
				return
			}
			resp, _ := r.(*kmsg.VoteResponse)
			// Only an answer to this very round counts: a pre-vote grant
			// arriving after the node became candidate (or a vote of an
			// older round) is not a vote in the current epoch.
			current := (preVote && c.role == roleProspective && c.epoch == epoch) ||
				(!preVote && c.role == roleCandidate && c.epoch == epoch)
			c.handleVoteResponse(voter, resp, err, current)
		})
	}
}

func (c *Client) handleVoteResponse(from int32, resp *kmsg.VoteResponse, err error, current bool) {
	if err != nil || resp == nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return // the election timer decides; Kafka retries after retry.backoff, here the next round does
	}
	p := resp.Topics[0].Partitions[0]
	if c.observeEpoch(p.LeaderEpoch, p.LeaderID) || !current {
		return
	}
	if c.role == roleProspective && !p.VoteGranted && p.LeaderID >= 0 && p.LeaderID != c.cfg.NodeID && p.LeaderEpoch == c.epoch {
		// A voter that still follows the leader refuses the pre-vote and
		// names it: follow it again (KIP-996). A grant naming the same
		// leader does not stop the pre-vote.
		c.becomeFollower(p.LeaderEpoch, p.LeaderID)
		return
	}
	if p.ErrorCode != 0 {
		c.rejected[from] = true
	} else if p.VoteGranted {
		c.granted[from] = true
	} else {
		c.rejected[from] = true
	}
	switch {
	case len(c.granted) >= c.majority():
		if c.role == roleProspective {
			c.becomeCandidate()
		} else if c.role == roleCandidate {
			c.becomeLeader()
		}
	case len(c.rejected) >= len(c.voters)-c.majority()+1:
		c.electionLost()
	}
}

// handleVoteRequest is the Handle entry for Vote.
func (c *Client) handleVoteRequest(from int32, req *kmsg.VoteRequest, reply func(kmsg.Response)) {
	reply(c.handleVote(from, req))
}
