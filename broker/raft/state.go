package raft

// This file is the election state machine (QuorumState.java and the
// EpochState classes: UnattachedState, ProspectiveState (KIP-996, Kafka
// 4.0), CandidateState, LeaderState, FollowerState, ResignedState): every
// transition persists quorum-state first when the epoch, the vote or the
// leader changes, logs `raft-state`, and tells the listener of a new leader
// or epoch. Observers (non-voters) are only ever unattached or following.
//
// Simplifications vs Kafka: a prospective that loses its pre-vote returns
// to following the leader it knew, or to unattached (KIP-996's rule), with
// the failure counted for the next backoff; election backoff is Kafka's
// binary exponential one (random multiple of retry.backoff, capped at
// election.backoff.max).
//
// Check-quorum (KIP-996, LeaderState's checkQuorumTimer): the timer runs
// 1.5 × controller.quorum.fetch.timeout.ms from the leader's start and
// starts again whenever a majority of the voters (the leader counting
// itself) has fetched — Fetch at a valid position, or FetchSnapshot — since
// the last start; when it expires the leader resigns. It is a sliding
// deadline, not a window: a leader lives exactly the timeout past the last
// time a majority was with it.

import (
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

type role uint8

const (
	roleUnattached role = iota
	roleProspective
	roleCandidate
	roleLeader
	roleFollower
	roleResigned
)

var roleNames = [...]string{"unattached", "prospective", "candidate", "leader", "follower", "resigned"}

func (r role) String() string { return roleNames[r] }

func (c *Client) majority() int { return len(c.voters)/2 + 1 }

func (c *Client) isVoter(id int32) bool {
	for _, v := range c.voters {
		if v == id {
			return true
		}
	}
	return false
}

func (c *Client) persist() {
	if c.cfg.Mutants.On(mutant.RaftEpochNotPersisted) && c.leader < 0 {
		// The planted bug: quorum-state is written lazily, once the
		// epoch has a leader; a vote granted or an election started is
		// kept in memory only, and a crash before a leader is known
		// forgets the epoch and the vote.
		return
	}
	writeQuorumState(c.ctx.Disk(), c.cfg, c.voters, electionState{epoch: c.epoch, leader: c.leader, votedFor: c.votedFor})
}

// setRole enters r: a fresh state (timers cancelled, callbacks of the old
// one dropped), logged, and the listener told of a leader change.
func (c *Client) setRole(r role) {
	c.setRoleQuietly(r)
	c.notifyLeader()
}

// setRoleQuietly is setRole without telling the listener: becomeLeader
// writes the epoch's LeaderChange first.
func (c *Client) setRoleQuietly(r role) {
	c.cancelTimers()
	c.gen++
	c.fetchInflight = false
	c.snapFetch = nil
	wasLeader := c.role == roleLeader
	c.role = r
	if wasLeader && r != roleLeader {
		c.answerParked()
		c.abandonVoterChange()
	}
	c.ctx.Log("raft-state", sim.S("state", r.String()), sim.I("epoch", int64(c.epoch)),
		sim.I("leader", int64(c.leader)), sim.I("voted-for", int64(c.votedFor)))
}

func (c *Client) cancelTimers() {
	for _, t := range []*sim.TimerID{&c.electionTimer, &c.fetchTimer, &c.backoffTimer, &c.checkQuorumTimer, &c.beginTimer, &c.retryTimer} {
		if *t != 0 {
			c.ctx.CancelTimer(*t)
			*t = 0
		}
	}
}

func (c *Client) randomElectionTimeout() sim.Duration {
	t := c.cfg.ElectionTimeout
	return t + sim.Duration(c.ctx.Rand().Int64N(int64(t)))
}

// electionBackoff is KafkaRaftClient's binaryExponentialElectionBackoffMs.
func (c *Client) electionBackoff() sim.Duration {
	n := min(max(c.failedElections, 1), 20)
	d := c.cfg.RetryBackoff * sim.Duration(c.ctx.Rand().Int64N(int64(2)<<(n-1)))
	return min(max(d, c.cfg.RetryBackoff), c.cfg.ElectionBackoffMax)
}

func (c *Client) armElection(d sim.Duration) {
	if c.electionTimer != 0 {
		c.ctx.CancelTimer(c.electionTimer)
	}
	c.electionTimer = c.ctx.SetTimer(d, "raft-election")
	c.electionDeadline = c.ctx.Now().Add(d)
}

func (c *Client) armFetchTimeout(d sim.Duration) {
	if c.fetchTimer != 0 {
		c.ctx.CancelTimer(c.fetchTimer)
	}
	c.fetchTimer = c.ctx.SetTimer(d, "raft-fetch-timeout")
}

// becomeUnattached enters unattached in epoch, with votedFor as the vote
// (kept when the epoch does not change).
func (c *Client) becomeUnattached(epoch, votedFor int32) {
	changed := epoch != c.epoch || c.leader != -1 || votedFor != c.votedFor
	if epoch == c.epoch && votedFor < 0 {
		votedFor = c.votedFor
		changed = c.leader != -1
	}
	c.epoch, c.leader, c.votedFor = epoch, -1, votedFor
	if changed {
		c.persist()
	}
	c.setRole(roleUnattached)
	c.fetchFrom = -1
	if c.voter {
		c.armElection(c.randomElectionTimeout())
	} else {
		c.maybeFetch()
	}
}

// becomeFollower follows leader in epoch.
func (c *Client) becomeFollower(epoch, leader int32) {
	if epoch != c.epoch || leader != c.leader {
		if epoch != c.epoch {
			c.votedFor = -1
		}
		c.epoch, c.leader = epoch, leader
		c.persist()
	}
	c.setRole(roleFollower)
	c.fetchFrom = leader
	c.heardLeader = false
	c.armFetchTimeout(c.cfg.FetchTimeout)
	c.maybeFetch()
}

// startElection begins an election: a pre-vote first with KIP-996.
func (c *Client) startElection() {
	if !c.voter {
		return
	}
	if c.cfg.PreVote {
		c.becomeProspective()
	} else {
		c.becomeCandidate()
	}
}

// becomeProspective asks for pre-votes: no epoch bump, nothing persisted.
func (c *Client) becomeProspective() {
	c.setRole(roleProspective)
	c.granted = map[int32]bool{c.cfg.NodeID: true}
	c.rejected = map[int32]bool{}
	c.armElection(c.randomElectionTimeout())
	if len(c.granted) >= c.majority() {
		c.becomeCandidate()
		return
	}
	c.sendVotes(true)
}

// becomeCandidate bumps the epoch, votes for itself (persisted) and asks
// the other voters.
func (c *Client) becomeCandidate() {
	c.epoch++
	c.leader, c.votedFor = -1, c.cfg.NodeID
	c.persist()
	c.setRole(roleCandidate)
	c.granted = map[int32]bool{c.cfg.NodeID: true}
	c.rejected = map[int32]bool{}
	c.armElection(c.randomElectionTimeout())
	if len(c.granted) >= c.majority() {
		c.becomeLeader()
		return
	}
	c.sendVotes(false)
}

// electionLost handles a lost or timed-out election.
func (c *Client) electionLost() {
	c.failedElections++
	switch c.role {
	case roleProspective:
		if c.leader >= 0 && c.leader != c.cfg.NodeID {
			c.becomeFollower(c.epoch, c.leader)
		} else {
			c.becomeUnattached(c.epoch, -1)
		}
	case roleCandidate:
		c.cancelTimers()
		c.backoffTimer = c.ctx.SetTimer(c.electionBackoff(), "raft-backoff")
	}
}

// becomeLeader takes the epoch the candidate won: the LeaderChange control
// batch is written at the epoch's start offset and the voters are told
// with BeginQuorumEpoch. Only then is the listener told (Kafka's
// KafkaRaftClient appends the LeaderChange in onBecomeLeader and fires
// handleLeaderChange on a later poll), so that an active controller's
// first records follow the LeaderChange: a single voter commits them at
// once, and before, they took the epoch's start offset ahead of it.
func (c *Client) becomeLeader() {
	granting := sortedKeys(c.granted)
	c.failedElections = 0
	c.leader = c.cfg.NodeID
	c.persist()
	lastEpoch := c.log.lastEpoch()
	if lastEpoch < 0 && c.snap.ok {
		lastEpoch = c.snap.epoch
	}
	c.epochStart, c.hwInEpoch = c.log.endOffset(), false
	c.replicas = map[int32]*replica{}
	for _, v := range c.voters {
		c.replicas[v] = &replica{endOffset: -1, acked: v == c.cfg.NodeID}
	}
	c.setRoleQuietly(roleLeader)
	c.ctx.Log("raft-leader", sim.I("epoch", int64(c.epoch)), sim.I("leo", c.epochStart), sim.I("last-epoch", int64(lastEpoch)))
	c.observers = map[voterKey]*replica{}
	nowMs := sim.Duration(c.ctx.Now()).Milliseconds()
	recs := []storage.Record{leaderChangeRecord(nowMs, c.cfg.NodeID, c.voters, granting)}
	bootstrap := c.dynamic() && c.epochStart == 0 && !c.snap.ok
	if bootstrap {
		// The bootstrap checkpoint is not replicated: the first leader
		// writes its voter set at the log's start, for every replica to
		// fetch (LeaderState.appendStartOfEpochControlRecords).
		recs = append(recs, votersRecords(nowMs, c.vset)...)
	}
	info := c.log.appendLeader(c.ctx.Now(), c.epoch, true, recs)
	if bootstrap {
		c.pushVoters(info.FirstOffset+2, c.vset)
	}
	if c.cfg.CheckQuorum && len(c.voters) > 1 {
		// A single voter's check-quorum never expires.
		c.checkQuorumDeadline = c.ctx.Now().Add(c.checkQuorumTimeout())
		c.checkQuorumTimer = c.ctx.SetTimer(c.checkQuorumTimeout(), "raft-check-quorum")
	}
	c.sendBeginQuorumEpoch()
	c.onLeaderAppend()
	c.notifyLeader()
}

// resign gives the epoch up: resigned, EndQuorumEpoch to the voters.
func (c *Client) resign(why string) {
	successors := c.preferredSuccessors()
	c.setRole(roleResigned)
	c.ctx.Log("raft-resign", sim.S("why", why), sim.I("epoch", int64(c.epoch)))
	c.sendEndQuorumEpoch(successors)
	c.armElection(c.randomElectionTimeout())
}

// observeEpoch moves to a higher epoch, or to following a leader newly
// learned in the current one, as QuorumState's maybeTransition does for
// every request and response. It reports whether the state changed.
func (c *Client) observeEpoch(epoch, leader int32) bool {
	if leader == c.cfg.NodeID {
		leader = -1 // never follow oneself
	}
	switch {
	case c.leaderKeepsRole(epoch):
		return false
	case epoch > c.epoch:
		if leader >= 0 {
			c.becomeFollower(epoch, leader)
		} else {
			c.becomeUnattached(epoch, -1)
		}
		return true
	case epoch == c.epoch && leader >= 0 && c.leader != leader &&
		(c.role == roleUnattached || c.role == roleProspective || c.role == roleCandidate):
		c.becomeFollower(epoch, leader)
		return true
	}
	// NB: a prospective that already knows the leader it came from stays
	// prospective when a response names that leader again (a granted
	// pre-vote carries the granter's leader too); it follows it again only
	// when the pre-vote is lost (electionLost), as KafkaRaftClient does.
	return false
}

// leaderKeepsRole is the planted bug RaftLeaderWithoutQuorum: a leader
// that sees a higher epoch (a Vote, a BeginQuorumEpoch, an
// EndQuorumEpoch, a response) takes the epoch but stays leader instead of
// stepping down, so two members lead one epoch. It reports whether it did.
func (c *Client) leaderKeepsRole(epoch int32) bool {
	if !c.cfg.Mutants.On(mutant.RaftLeaderWithoutQuorum) || c.role != roleLeader || epoch <= c.epoch {
		return false
	}
	c.epoch = epoch
	c.persist()
	return true
}

func (c *Client) onElectionTimeout() {
	switch c.role {
	case roleResigned:
		if !c.voter {
			// KafkaRaftClient.pollResigned: a leader that removed itself
			// goes unattached in the next epoch, so that no Fetch answer
			// names it the leader any more, and fetches as an observer.
			c.becomeUnattached(c.epoch+1, -1)
			break
		}
		c.startElection()
	case roleUnattached, roleFollower:
		c.startElection()
	case roleProspective, roleCandidate:
		c.electionLost()
	}
}

func (c *Client) onBackoff() {
	if c.role == roleCandidate {
		c.startElection()
	}
}

// onFetchTimeout: a follower that has not heard from its leader stands for
// election (a voter) or looks for the leader again (an observer).
func (c *Client) onFetchTimeout() {
	if c.role != roleFollower {
		return
	}
	if c.voter {
		c.startElection()
	} else {
		c.becomeUnattached(c.epoch, -1)
	}
}

// checkQuorumTimeout is LeaderState's checkQuorumTimeoutMs: 1.5 times
// the fetch timeout, in whole milliseconds as Kafka's int cast leaves it.
func (c *Client) checkQuorumTimeout() sim.Duration {
	return sim.Ms(int64(float64(c.cfg.FetchTimeout.Milliseconds()) * checkQuorumFactor))
}

// noteVoterFetch is LeaderState.updateCheckQuorumForFollowingVoter, called
// for every valid Fetch and FetchSnapshot of a voter: once a majority of
// the voters (the leader counts itself while it is one) has fetched since
// the last reset, the set is cleared and the check-quorum timer starts
// again.
func (c *Client) noteVoterFetch(id int32) {
	r := c.replicas[id]
	if c.role != roleLeader || id == c.cfg.NodeID || r == nil || !c.isVoter(id) {
		return
	}
	r.acked, r.fetched = true, true
	n := 0
	for _, v := range c.voters {
		if v != c.cfg.NodeID && c.replicas[v].fetched {
			n++
		}
	}
	need := c.majority()
	if c.voter {
		need-- // the leader counts itself, when it is a voter
	}
	if n >= need {
		for _, v := range c.voters {
			c.replicas[v].fetched = false
		}
		c.checkQuorumDeadline = c.ctx.Now().Add(c.checkQuorumTimeout())
	}
}

// onCheckQuorum is KIP-996's check-quorum (pollLeader): a leader whose
// check-quorum timer expired — no majority of voters fetched within the
// timeout since the last time a majority did — resigns. The sim timer is
// re-armed lazily: a reset only moves checkQuorumDeadline.
func (c *Client) onCheckQuorum() {
	if c.role != roleLeader {
		return
	}
	if now := c.ctx.Now(); now < c.checkQuorumDeadline {
		c.checkQuorumTimer = c.ctx.SetTimer(c.checkQuorumDeadline.Sub(now), "raft-check-quorum")
		return
	}
	c.resign("check-quorum")
}

func sortedKeys(m map[int32]bool) []int32 {
	out := make([]int32, 0, len(m))
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	sortInt32(out)
	return out
}
