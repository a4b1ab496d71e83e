package kraft

// This file builds PartitionChangeRecords as Kafka 4.0's
// PartitionChangeBuilder does, and applies one broker's arrival or
// departure to every partition it touches
// (ReplicationControlManager.generateLeaderAndIsrUpdates):
//   - the leader stays if it is in the target ISR and acceptable;
//     otherwise the first replica in the target ISR that is acceptable
//     (unfenced, not shutting down); otherwise, with unclean election, the
//     first acceptable replica, whose ISR becomes just it, with
//     LeaderRecoveryState RECOVERING (KIP-704); otherwise no leader (-1);
//   - an ISR that would become empty is left as it is (the last member
//     stays) when ELR is off;
//   - since metadata.version 3.6-IV0 an ISR shrink alone does not bump the
//     leader epoch (MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink); the
//     image's Merge bumps it on every leader change, and the partition
//     epoch on every change.
//
// Simplified: ELR (KIP-966) is off, as in a 4.0 cluster by default
// (eligible.leader.replicas.version=0): the ELR fields are only cleared,
// never filled. No reassignment (adding/removing replicas), no directory
// changes, no preferred election.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/sim"
)

// change is one partition's pending change.
type change struct {
	p          metadata.PartitionState
	acceptable func(int32) bool
	unclean    bool
	targetISR  []int32
	targetLRS  int8
	// uncleanElected is set by build when it elected a leader from
	// outside the ISR.
	uncleanElected bool
}

func (c *Controller) newChange(p metadata.PartitionState, acceptable func(int32) bool) *change {
	if acceptable == nil {
		acceptable = c.isActive
	}
	return &change{p: p, acceptable: acceptable, unclean: c.cfg.Unclean != nil && c.cfg.Unclean(p.Topic),
		targetISR: slices.Clone(p.ISR), targetLRS: p.LeaderRecoveryState}
}

// isActive: registered, unfenced and not in controlled shutdown
// (ClusterControlManager.isActive), in the working image.
func (c *Controller) isActive(id int32) bool {
	b, ok := c.working.img.Broker(id)
	return ok && !b.Fenced && !b.InControlledShutdown
}

func (ch *change) validLeader(r int32) bool {
	return slices.Contains(ch.targetISR, r) && ch.acceptable(r)
}

// elect returns the leader and whether the election is unclean.
func (ch *change) elect() (int32, bool) {
	if ch.validLeader(ch.p.Leader) {
		return ch.p.Leader, false
	}
	for _, r := range ch.p.Replicas {
		if ch.validLeader(r) {
			return r, false
		}
	}
	if ch.unclean {
		for _, r := range ch.p.Replicas {
			if ch.acceptable(r) {
				return r, true
			}
		}
	}
	return metadata.NoLeader, false
}

// build returns the record, or nil when nothing changes.
func (ch *change) build() *metadata.PartitionChangeRecord {
	rec := metadata.NewPartitionChangeRecord(ch.p.TopicID, ch.p.Partition)
	if leader, unclean := ch.elect(); leader != ch.p.Leader {
		rec.Leader = leader
		if unclean {
			ch.uncleanElected = true
			rec.ISR = []int32{leader}
			if ch.p.LeaderRecoveryState != metadata.Recovering {
				rec.LeaderRecoveryState = metadata.Recovering
			}
		}
	}
	if len(ch.p.ELR) > 0 {
		rec.EligibleLeaderReplicas = []int32{}
	}
	if rec.ISR == nil && len(ch.targetISR) > 0 && !slices.Equal(ch.targetISR, ch.p.ISR) {
		rec.ISR = slices.Clone(ch.targetISR)
	}
	if ch.targetLRS != ch.p.LeaderRecoveryState {
		rec.LeaderRecoveryState = ch.targetLRS
	}
	if rec.Leader == metadata.NoLeaderChange && rec.ISR == nil && rec.LeaderRecoveryState == metadata.LeaderRecoveryNoChange && rec.EligibleLeaderReplicas == nil {
		return nil
	}
	return rec
}

// leaderAndISRUpdates returns the changes for partitions when broker
// remove (-1 for none) leaves the ISRs and broker add (-1 for none) may
// lead although the image still shows it fenced.
func (c *Controller) leaderAndISRUpdates(ctx *sim.Context, remove, add int32, parts []metadata.PartitionState, reason string) []metadata.Record {
	acceptable := func(r int32) bool {
		return r != remove && (r == add || c.isActive(r))
	}
	var out []metadata.Record
	for _, p := range parts {
		ch := c.newChange(p, acceptable)
		ch.targetISR = slices.DeleteFunc(slices.Clone(p.ISR), func(r int32) bool { return r == remove })
		if rec := ch.build(); rec != nil {
			out = append(out, rec)
			logChange(ctx, p, rec, reason, ch.uncleanElected)
		}
	}
	return out
}

// partitionsWithISRMember / leaderless list partitions of the working image.
func (c *Controller) partitionsWith(pred func(metadata.PartitionState) bool) []metadata.PartitionState {
	var out []metadata.PartitionState
	for _, p := range c.working.img.Partitions() {
		if pred(p) {
			out = append(out, p)
		}
	}
	return out
}

func (c *Controller) hasLeaderships(id int32) bool {
	return len(c.partitionsWith(func(p metadata.PartitionState) bool { return p.Leader == id })) > 0
}

// logChange traces the state a change leads to; an unclean election
// (a leader from outside the ISR, unclean.leader.election.enable) carries
// election=unclean, which the scenarios read as the contract's fact.
func logChange(ctx *sim.Context, p metadata.PartitionState, rec *metadata.PartitionChangeRecord, reason string, unclean bool) {
	n := p
	n.ISR = slices.Clone(p.ISR)
	metadata.Merge(&n, rec)
	fields := []sim.Field{sim.S("partition", fmt.Sprintf("%s-%d", p.Topic, p.Partition)),
		sim.I("leader", int64(n.Leader)), sim.I("leader-epoch", int64(n.LeaderEpoch)),
		sim.I("partition-epoch", int64(n.PartitionEpoch)), sim.S("isr", ints(n.ISR)), sim.S("reason", reason)}
	if unclean {
		fields = append(fields, sim.S("election", "unclean"))
	}
	ctx.Log("partition-change", fields...)
}

func ints(v []int32) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// logCommitted traces the state a committed partition record leads to
// ("partition-committed"), on every controller that replays it: the
// scenarios read the contract's ISR and unclean-election facts from these
// (a proposed change may never commit, so partition-change records are
// not facts). An unclean election is the state's leader recovery state
// RECOVERING, which Kafka sets only for one.
func logCommitted(ctx *sim.Context, r metadata.Record, img *metadata.Image, offset int64) {
	t, part, ok := metadata.PartitionOf(r, img)
	if !ok {
		return
	}
	p, ok := img.Partition(t, part)
	if !ok {
		return
	}
	ctx.Log("partition-committed", sim.S("partition", fmt.Sprintf("%s-%d", t, part)), sim.I("offset", offset),
		sim.I("leader", int64(p.Leader)), sim.I("leader-epoch", int64(p.LeaderEpoch)),
		sim.I("partition-epoch", int64(p.PartitionEpoch)), sim.S("isr", ints(p.ISR)), sim.I("recovery", int64(p.LeaderRecoveryState)))
}
