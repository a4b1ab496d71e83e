package raft

// This file is KIP-853's voter changes on the leader: AddRaftVoter (key
// 80, v0) and RemoveRaftVoter (key 81, v0), as Kafka 3.9's AddVoterHandler
// and RemoveVoterHandler serve them. The leader changes the set one voter
// at a time: it appends a KRAFT_VOTERS control record with the new set,
// which counts at once (the HW is computed over it), and answers once that
// record is committed. It refuses:
//   - with kraft.version 0: UNSUPPORTED_VERSION (static voters cannot
//     change);
//   - off the leader: NOT_LEADER_OR_FOLLOWER;
//   - before the leader has committed in its epoch, or while another voter
//     change is uncommitted: REQUEST_TIMED_OUT (Kafka's "the leader is
//     still working on a previous voter change"), so that at most one
//     change is ever uncommitted: two overlapping majorities of the old
//     and new sets always share a member;
//   - adding a voter id already in the set: DUPLICATE_VOTER; removing an
//     (id, directory id) not in it, or the set's only voter:
//     VOTER_NOT_FOUND;
//   - adding a replica that has not fetched up to the high watermark as
//     an observer with that directory id: REQUEST_TIMED_OUT (Kafka's
//     "new voter is not caught up").
//
// A leader may remove itself: the new set, without it, counts at once (its
// high watermark is then a majority of the others' end offsets, and
// check-quorum needs a majority of them fetching, as LeaderState counts
// them), and once the change commits the leader answers and resigns
// (voterChangeCommitted).
//
// Simplifications vs Kafka, and why: the leader does not ask the new
// voter for its ApiVersions (every kafkasim node speaks kraft.version 1);
// UpdateRaftVoter is left out (a voter's endpoint and supported
// kraft.version range are the same for every node and never change, so
// no voter ever needs an update); a change pending when the leader loses
// its epoch is answered NOT_LEADER_OR_FOLLOWER.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// voterChange is a change appended and waiting for its commit.
type voterChange struct {
	offset int64 // of its KRAFT_VOTERS record
	reply  func(code int16, msg string)
	// earlier is a change still waiting under this one: only with the
	// planted bug raft-voter-changes-overlap, which lets a change start
	// before the last one committed.
	earlier *voterChange
}

// handleAddVoter serves AddRaftVoter.
func (c *Client) handleAddVoter(req *kmsg.AddRaftVoterRequest, reply func(kmsg.Response)) {
	answer := func(code int16, msg string) {
		c.logVoterChange("AddRaftVoter", req.VoterID, req.VoterDirectoryID, code, msg)
		resp := kmsg.NewPtrAddRaftVoterResponse()
		resp.Version, resp.ErrorCode = req.Version, code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		reply(resp)
	}
	if code, msg := c.voterChangeAllowed(req.ClusterID); code != 0 {
		answer(code, msg)
		return
	}
	if _, ok := c.vset.find(req.VoterID); ok {
		answer(kerr.DuplicateVoter.Code, "voter "+voterKeyString(req.VoterID, req.VoterDirectoryID)+" is already part of the set of voters")
		return
	}
	if req.VoterDirectoryID == [16]byte{} {
		answer(kerr.InvalidRequest.Code, "a voter needs a directory id")
		return
	}
	if r := c.observers[voterKey{id: req.VoterID, dir: req.VoterDirectoryID}]; r == nil || r.endOffset < c.hw {
		answer(kerr.RequestTimedOut.Code, "new voter "+voterKeyString(req.VoterID, req.VoterDirectoryID)+" is not caught up with the leader")
		return
	}
	set := slices.Clone(c.vset)
	set = append(set, voterKey{id: req.VoterID, dir: req.VoterDirectoryID})
	slices.SortFunc(set, func(a, b voterKey) int { return int(a.id) - int(b.id) })
	c.appendVoterChange(set, answer)
}

// handleRemoveVoter serves RemoveRaftVoter.
func (c *Client) handleRemoveVoter(req *kmsg.RemoveRaftVoterRequest, reply func(kmsg.Response)) {
	answer := func(code int16, msg string) {
		c.logVoterChange("RemoveRaftVoter", req.VoterID, req.VoterDirectoryID, code, msg)
		resp := kmsg.NewPtrRemoveRaftVoterResponse()
		resp.Version, resp.ErrorCode = req.Version, code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		reply(resp)
	}
	if code, msg := c.voterChangeAllowed(req.ClusterID); code != 0 {
		answer(code, msg)
		return
	}
	k, ok := c.vset.find(req.VoterID)
	if !ok || k.dir != req.VoterDirectoryID {
		answer(kerr.VoterNotFound.Code, "voter "+voterKeyString(req.VoterID, req.VoterDirectoryID)+" is not part of the set of voters "+c.vset.String())
		return
	}
	if len(c.vset) == 1 {
		// VoterSet.removeVoter keeps the last voter: a set must have one.
		answer(kerr.VoterNotFound.Code, "voter "+voterKeyString(req.VoterID, req.VoterDirectoryID)+" is the only voter of the set")
		return
	}
	set := slices.DeleteFunc(slices.Clone(c.vset), func(v voterKey) bool { return v.id == req.VoterID })
	c.appendVoterChange(set, answer)
}

// logVoterChange traces a voter change's answer ("raft-voter-change").
func (c *Client) logVoterChange(api string, id int32, dir [16]byte, code int16, msg string) {
	e := "NONE"
	if err := kerr.ErrorForCode(code); err != nil {
		e = err.Error()
		if ke, ok := err.(*kerr.Error); ok {
			e = ke.Message
		}
	}
	c.ctx.Log("raft-voter-change", sim.S("api", api), sim.S("voter", voterKeyString(id, dir)), sim.S("error", e), sim.S("message", msg))
}

// VoterDirectoryID returns the directory id the voter set in force holds
// for node id, and whether id is a voter (what kafka-metadata-quorum
// describe --replication shows an operator before remove-controller).
func (c *Client) VoterDirectoryID(id int32) ([16]byte, bool) {
	k, ok := c.vset.find(id)
	return k.dir, ok
}

func voterKeyString(id int32, dir [16]byte) string {
	return voterSet{{id: id, dir: dir}}.String()
}

// voterChangeAllowed checks what AddRaftVoter and RemoveRaftVoter share.
func (c *Client) voterChangeAllowed(clusterID *string) (int16, string) {
	switch {
	case clusterID != nil && *clusterID != c.cfg.ClusterID:
		return kerr.InconsistentClusterID.Code, ""
	case !c.dynamic():
		return kerr.UnsupportedVersion.Code, "kraft.version 0: the voters are static (controller.quorum.voters)"
	case c.role != roleLeader:
		return kerr.NotLeaderForPartition.Code, ""
	case !c.hwInEpoch:
		return kerr.RequestTimedOut.Code, "the leader has not committed an offset in its epoch yet"
	case (c.change != nil || c.vhist[len(c.vhist)-1].offset >= c.hw) && !c.cfg.Mutants.On(mutant.RaftVoterChangesOverlap):
		return kerr.RequestTimedOut.Code, "the leader is still working on a previous voter change"
	}
	return 0, ""
}

// appendVoterChange appends the new set and waits for its commit. The
// trace record raft-voter-append says where the previous set's record is
// and how far the leader had committed: the raft checker holds the leader
// to KIP-853's one uncommitted change at a time from it.
func (c *Client) appendVoterChange(set voterSet, answer func(int16, string)) {
	nowMs := sim.Duration(c.ctx.Now()).Milliseconds()
	prev := c.vhist[len(c.vhist)-1].offset
	info := c.log.appendLeader(c.ctx.Now(), c.epoch, true, votersRecords(nowMs, set))
	c.ctx.Log("raft-voter-append", sim.I("epoch", int64(c.epoch)), sim.I("offset", info.FirstOffset+1),
		sim.I("previous", prev), sim.I("hw", c.hw), sim.S("voters", set.String()))
	c.pushVoters(info.FirstOffset+1, set)
	c.change = &voterChange{offset: info.FirstOffset + 1, reply: answer, earlier: c.change}
	c.onLeaderAppend()
}

// voterChangeCommitted answers the pending changes once the HW passes
// them. A leader that the committed set no longer holds (it removed
// itself) then resigns, as RemoveVoterHandler asks LeaderState to: its
// EndQuorumEpoch names the voters by their fetch offsets, and once its
// election timeout passes it goes unattached in the next epoch as an
// observer (onElectionTimeout).
func (c *Client) voterChangeCommitted() {
	if ch := c.change; ch != nil && c.hw > ch.offset {
		c.change = nil
		for ; ch != nil; ch = ch.earlier {
			ch.reply(0, "")
		}
		if c.role == roleLeader && !c.voter {
			c.resign("removed from the voter set")
		}
	}
}

// abandonVoterChange answers the pending changes when the leader loses
// its epoch: the records may still commit under the next leader, or be
// truncated.
func (c *Client) abandonVoterChange() {
	ch := c.change
	c.change = nil
	for ; ch != nil; ch = ch.earlier {
		ch.reply(kerr.NotLeaderForPartition.Code, "the leader lost its epoch before the voter change committed")
	}
}

// maybeAutoJoin is Kafka 4.2's controller.quorum.auto.join.enable
// (KIP-853's auto-join): a controller that fetches from the leader as an
// observer — its id among the bootstrap servers, its (id, directory id)
// not in the voter set — first asks the leader to remove the voter of its
// id with another directory id (the disk it had before a wipe), then to
// add itself. One request at a time, the next no sooner than the fetch
// timeout after an answer (Kafka retries on its own timer too).
func (c *Client) maybeAutoJoin() {
	if !c.cfg.AutoJoin || !c.dynamic() || c.voter || c.role != roleFollower || c.joinInflight ||
		c.ctx.Now() < c.joinNext || !slices.Contains(c.bootstrap, c.cfg.NodeID) {
		return
	}
	var req kmsg.Request
	if k, ok := c.vset.find(c.cfg.NodeID); ok {
		r := kmsg.NewPtrRemoveRaftVoterRequest()
		r.ClusterID, r.VoterID, r.VoterDirectoryID = &c.cfg.ClusterID, k.id, k.dir
		req = r
	} else {
		r := kmsg.NewPtrAddRaftVoterRequest()
		r.ClusterID, r.VoterID, r.VoterDirectoryID = &c.cfg.ClusterID, c.cfg.NodeID, c.dir
		r.TimeoutMillis = int32(c.cfg.RequestTimeout.Milliseconds())
		req = r
	}
	c.joinInflight = true
	c.ctx.Log("raft-auto-join", sim.S("request", kmsg.NameForKey(req.Key())), sim.S("voters", c.vset.String()))
	c.env.Send(c.leader, req, c.cfg.RequestTimeout, func(kmsg.Response, error) {
		if c.stopped {
			return
		}
		c.joinInflight = false
		c.joinNext = c.ctx.Now().Add(c.cfg.FetchTimeout)
	})
}
