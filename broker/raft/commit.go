package raft

// This file is the high watermark and the listener: the leader's HW rule
// (LeaderState.maybeUpdateHighWatermark: the end offset a majority of
// voters holds, and only once it passes the epoch's start offset, so that
// a record of the leader's own epoch is committed — Raft's rule), the
// follower's HW from fetch responses, and the hand-over of committed
// batches (KafkaRaftClient's listener contexts): every batch below the HW,
// in order, once per process life, control batches as Batch.Control with
// no records; and the
// leader's own HandleLeaderChange only once every batch below its epoch's
// start offset was delivered.
//
// `raft-hw` is logged at every advance (a record per advance: chatty but
// kept, the checkers read it).

import (
	"sort"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

func sortInt32(s []int32) { sort.Slice(s, func(i, j int) bool { return s[i] < s[j] }) }

// setHW advances the high watermark; it never goes back.
func (c *Client) setHW(hw int64) {
	if hw <= c.hw {
		return
	}
	c.hw = hw
	c.ctx.Log("raft-hw", sim.I("hw", hw))
	c.voterChangeCommitted()
	c.deliver()
}

// onLeaderAppend runs after the leader appended (and flushed): its own
// end offset moved, the HW may advance, parked fetches have data.
func (c *Client) onLeaderAppend() {
	c.replicas[c.cfg.NodeID].endOffset = c.log.endOffset()
	c.maybeAdvanceHW()
	c.answerParked()
}

// maybeAdvanceHW is LeaderState.maybeUpdateHighWatermark.
func (c *Client) maybeAdvanceHW() {
	if c.role != roleLeader {
		return
	}
	ends := make([]int64, 0, len(c.voters))
	for _, v := range c.voters {
		ends = append(ends, c.replicas[v].endOffset)
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i] > ends[j] })
	candidate := ends[c.majority()-1]
	if c.cfg.Mutants.On(mutant.RaftHWWithoutMajority) {
		// The planted bug: one voter's end offset is taken for the
		// quorum's, the furthest one (the leader's own log end), not the
		// one a majority holds.
		candidate = ends[0]
	}
	inEpoch := candidate > c.epochStart
	if c.cfg.Mutants.On(mutant.RaftCommitPreviousTerm) && candidate > c.hw {
		// The planted bug (Raft's Figure 8): records of earlier epochs are
		// committed once a majority holds them, before a record of the
		// leader's own epoch is.
		inEpoch = true
	}
	if inEpoch {
		c.hwInEpoch = true
	}
	if inEpoch && candidate > c.hw {
		c.setHW(candidate)
		c.answerParked()
	}
}

// leaderHW is the high watermark a leader's Fetch answer carries: -1 until
// it is known in the leader's epoch (hwInEpoch), as KafkaRaftClient's
// buildFetchResponse sends leaderState.highWatermark().orElse(-1).
func (c *Client) leaderHW() int64 {
	if !c.hwInEpoch {
		return -1
	}
	return c.hw
}

// notifyLeader tells the listener of a new leader or epoch; this node's
// own leadership waits until it is caught up (deliver).
func (c *Client) notifyLeader() {
	cur := c.Leader()
	if c.role == roleLeader {
		c.selfNotifyWait = cur != c.notified
		c.deliver()
		return
	}
	c.selfNotifyWait = false
	if cur.Leader == c.cfg.NodeID {
		// Not the leader (any more): a restarted leader is resigned, then
		// prospective, in the epoch it led; the listener must not take
		// that for its own leadership.
		cur.Leader = -1
	}
	if cur != c.notified && c.role != roleResigned {
		c.notified = cur
		c.l.HandleLeaderChange(c.ctx, cur)
	}
}

// deliver hands every committed batch not yet handed over to the listener.
func (c *Client) deliver() {
	if c.delivering || c.log == nil {
		return
	}
	c.delivering = true
	defer func() { c.delivering = false }()
	for {
		end := min(c.hw, c.log.endOffset())
		if c.nextDeliver < c.log.startOffset() {
			// Only a snapshot can take the listener past the log start.
			break
		}
		progressed := false
		if c.nextDeliver < end {
			for _, b := range c.log.batches(c.nextDeliver, end) {
				if b.NextOffset() > end {
					break
				}
				c.nextDeliver = b.NextOffset()
				progressed = true
				if b.Attributes&storage.ControlFlagMask != 0 {
					c.l.HandleCommit(c.ctx, Batch{BaseOffset: b.BaseOffset, Epoch: b.PartitionLeaderEpoch, Control: true, ControlLastOffset: b.LastOffset()})
					continue
				}
				recs := make([][]byte, len(b.Records))
				size := int64(0)
				for i, r := range b.Records {
					recs[i] = r.Value
					size += int64(len(r.Value))
				}
				c.ctx.Log("raft-commit", sim.I("base-offset", b.BaseOffset), sim.I("last-offset", b.LastOffset()),
					sim.I("epoch", int64(b.PartitionLeaderEpoch)), sim.I("crc", int64(b.CRC)))
				c.bytesSinceSnap += size
				c.l.HandleCommit(c.ctx, Batch{BaseOffset: b.BaseOffset, Epoch: b.PartitionLeaderEpoch, Records: recs})
			}
		}
		if c.role == roleLeader && c.selfNotifyWait && c.nextDeliver >= c.epochStart {
			c.selfNotifyWait = false
			c.notified = c.Leader()
			c.l.HandleLeaderChange(c.ctx, c.notified)
			progressed = true
		}
		if !progressed {
			break
		}
	}
	c.maybeSnapshot()
}
