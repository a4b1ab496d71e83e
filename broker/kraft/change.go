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
//   - below metadata.version 3.6-IV0 an ISR shrink bumps the leader epoch
//     although the leader stays (triggerLeaderEpochBumpIfNeeded: the record
//     names the same leader; KAFKA-15021 stopped it from 3.6-IV0,
//     MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink); the level is
//     the image's finalized metadata.version, else Config.MetadataVersion.
//     The image's Merge bumps the leader epoch on every record that names
//     a leader, and the partition epoch on every change;
//   - unclean.leader.election.enable is read only from 3.9
//     (Config.UncleanElection, KAFKA-12670): before, the controller's
//     uncleanLeaderElectionEnabledForTopic was hard-wired false.
//
// With ELR on (eligible.leader.replicas.version=1, KIP-966 part 1,
// maybePopulateTargetElr / maybeUpdateRecordElr): a target ISR at or above
// the partition's min.insync.replicas clears the ELR; below it, the ELR
// becomes the old ELR plus the old ISR, minus the target ISR and minus a
// replica that shut down uncleanly. The ISR may become empty. A replica of
// the ELR may lead when the target ISR is empty; elected, the ISR becomes
// just it and it leaves the ELR. An unclean election clears the ELR.
//
// Simplified: no reassignment (adding/removing replicas), no directory
// changes, no preferred election.
//
// KIP-966 part 2 as Kafka ships it (4.0, 4.1): the unclean recovery
// manager (unclean.recovery.strategy, asking the last known ELR for their
// logs) is not in any release; what is, hard-wired on
// (useLastKnownLeaderInBalancedRecovery = true in PartitionChangeBuilder,
// set false only by tests), is the last-known-leader election: when the ISR
// first becomes empty the LastKnownELR records the partition's last leader
// (just it), and when both the ISR and the ELR are empty that broker is
// elected once acceptable — whatever unclean.leader.election.enable says —
// as an unclean election (ISR just it, LeaderRecoveryState RECOVERING), even
// after an unclean shutdown took it out of the ELR. KAFKA-19522 (fixed in
// 4.0.1 and 4.1.0) made Kafka 4.0.0 elect it even while fenced (its
// canElectLastKnownLeader logged an unacceptable leader and went on):
// Config.ElectFencedLastKnownLeader, set for 4.0.0 by the releases table.
// Any leader clears the LastKnownELR.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
)

// change is one partition's pending change.
type change struct {
	p          metadata.PartitionState
	acceptable func(int32) bool
	unclean    bool
	targetISR  []int32
	targetLRS  int8
	// elr is eligible.leader.replicas.version >= 1; minISR the topic's
	// min.insync.replicas.
	elr    bool
	minISR int
	// uncleanShutdown is a replica whose registration showed an unclean
	// shutdown (-1 for none): it may not lead and leaves the ELR.
	uncleanShutdown int32
	targetELR       []int32
	// electFenced is 4.0.0's KAFKA-19522 (Config.ElectFencedLastKnownLeader).
	electFenced bool
	// bumpOnShrink: the metadata.version is below 3.6-IV0 (KAFKA-15021).
	bumpOnShrink bool
	// uncleanElected is set by build when it elected a leader from
	// outside the ISR; elrElected when it elected one from the ELR;
	// lastKnownElected when it elected the last known leader.
	uncleanElected, elrElected, lastKnownElected bool
	// outOfISR is mutant clean-election-out-of-isr.
	outOfISR bool
}

func (c *Controller) newChange(p metadata.PartitionState, acceptable func(int32) bool) *change {
	if acceptable == nil {
		acceptable = c.isActive
	}
	ch := &change{p: p, acceptable: acceptable, unclean: c.cfg.UncleanElection && c.cfg.Unclean != nil && c.cfg.Unclean(p.Topic),
		targetISR: slices.Clone(p.ISR), targetLRS: p.LeaderRecoveryState,
		elr: c.cfg.ELR, minISR: 1, uncleanShutdown: -1,
		targetELR: slices.Clone(p.ELR), electFenced: c.cfg.ElectFencedLastKnownLeader,
		bumpOnShrink: c.metadataVersion() < metadata.MetadataVersion36IV0,
		outOfISR:     c.cfg.Mutants.On(mutant.CleanElectionOutOfISR)}
	if c.cfg.MinISR != nil {
		ch.minISR = c.cfg.MinISR(p.Topic)
	}
	return ch
}

// isActive: registered, unfenced and not in controlled shutdown
// (ClusterControlManager.isActive), in the working image.
func (c *Controller) isActive(id int32) bool {
	b, ok := c.working.img.Broker(id)
	return ok && !b.Fenced && !b.InControlledShutdown
}

// validLeader: in the target ISR, or in the target ELR when that ISR is
// empty, and acceptable (isValidNewLeader).
func (ch *change) validLeader(r int32) bool {
	in := slices.Contains(ch.targetISR, r) || len(ch.targetISR) == 0 && slices.Contains(ch.targetELR, r)
	return in && ch.acceptable(r) && r != ch.uncleanShutdown
}

// populateTargetELR is maybePopulateTargetElr (see the file comment).
func (ch *change) populateTargetELR() {
	if !ch.elr {
		return
	}
	if len(ch.targetISR) >= ch.minISR {
		ch.targetELR = nil
		return
	}
	candidates := sortedUnion(ch.targetELR, ch.p.ISR)
	var elr []int32
	for _, r := range candidates {
		if !slices.Contains(ch.targetISR, r) && r != ch.uncleanShutdown {
			elr = append(elr, r)
		}
	}
	ch.targetELR = elr
}

// containsAll reports whether a holds every member of b
// (Replicas.contains).
func containsAll(a, b []int32) bool {
	for _, r := range b {
		if !slices.Contains(a, r) {
			return false
		}
	}
	return true
}

func sortedUnion(a, b []int32) []int32 {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// elect returns the leader and whether the election is unclean.
func (ch *change) elect() (int32, bool) {
	if ch.validLeader(ch.p.Leader) {
		return ch.p.Leader, false
	}
	for _, r := range ch.p.Replicas {
		if ch.validLeader(r) || ch.outOfISR && ch.acceptable(r) && r != ch.uncleanShutdown {
			// Mutant clean-election-out-of-isr: the first acceptable
			// replica leads, in the ISR or not, as a clean election.
			return r, false
		}
	}
	if ch.canElectLastKnownLeader() {
		ch.lastKnownElected = true
		return ch.p.LastKnownELR[0], true
	}
	if ch.unclean {
		for _, r := range ch.p.Replicas {
			if ch.acceptable(r) && r != ch.uncleanShutdown {
				return r, true
			}
		}
	}
	return metadata.NoLeader, false
}

// canElectLastKnownLeader: ELR on, the target ISR and ELR empty, the
// LastKnownELR just the last leader, and that broker acceptable — or, on
// 4.0.0 (KAFKA-19522), whether acceptable or not.
func (ch *change) canElectLastKnownLeader() bool {
	return ch.elr && len(ch.targetISR) == 0 && len(ch.targetELR) == 0 && len(ch.p.LastKnownELR) == 1 &&
		(ch.electFenced || ch.acceptable(ch.p.LastKnownELR[0]))
}

// metadataVersion is the finalized metadata.version level of the working
// image (FeatureControlManager.metadataVersion), else the one the
// controller bootstraps with.
func (c *Controller) metadataVersion() int16 {
	if l := c.working.img.Feature(metadata.MetadataVersionFeature); l > 0 {
		return l
	}
	return c.cfg.MetadataVersion
}

// build returns the record, or nil when nothing changes.
func (ch *change) build() *metadata.PartitionChangeRecord {
	rec := metadata.NewPartitionChangeRecord(ch.p.TopicID, ch.p.Partition)
	ch.populateTargetELR()
	if leader, unclean := ch.elect(); leader != ch.p.Leader {
		if slices.Contains(ch.targetELR, leader) {
			ch.elrElected = true
			ch.targetISR = []int32{leader}
			ch.targetELR = slices.DeleteFunc(slices.Clone(ch.targetELR), func(r int32) bool { return r == leader })
		}
		rec.Leader = leader
		if ch.outOfISR && !unclean && leader >= 0 && !slices.Contains(ch.targetISR, leader) {
			ch.targetISR = append(slices.Clone(ch.targetISR), leader)
		}
		if unclean {
			ch.uncleanElected = true
			rec.ISR = []int32{leader}
			if ch.p.LeaderRecoveryState != metadata.Recovering {
				rec.LeaderRecoveryState = metadata.Recovering
			}
		}
	}
	// triggerLeaderEpochBumpIfNeeded: below 3.6-IV0 an ISR shrink names
	// the same leader, so the leader epoch is bumped (KAFKA-15021).
	if rec.Leader == metadata.NoLeaderChange && ch.bumpOnShrink && !containsAll(ch.targetISR, ch.p.ISR) {
		rec.Leader = ch.p.Leader
	}
	// maybeUpdateRecordElr: an unclean election, or ELR off, clears both.
	if rec.ISR != nil || !ch.elr {
		ch.targetELR = nil
	}
	if !slices.Equal(ch.targetELR, ch.p.ELR) {
		rec.EligibleLeaderReplicas = append([]int32{}, ch.targetELR...)
	}
	if rec.ISR == nil && (len(ch.targetISR) > 0 || ch.elr) && !slices.Equal(ch.targetISR, ch.p.ISR) {
		rec.ISR = append([]int32{}, ch.targetISR...)
	}
	// maybeUpdateLastKnownLeader: the LastKnownELR holds the last leader
	// from the change that first empties the ISR; any leader clears it.
	if ch.elr {
		switch {
		case rec.ISR != nil && len(rec.ISR) == 0 && (len(ch.p.LastKnownELR) != 1 || ch.p.LastKnownELR[0] != ch.p.Leader):
			rec.LastKnownELR = []int32{ch.p.Leader}
		case (rec.Leader >= 0 || ch.p.Leader != metadata.NoLeader && rec.Leader != metadata.NoLeader) && len(ch.p.LastKnownELR) > 0:
			rec.LastKnownELR = []int32{}
		}
	}
	if ch.targetLRS != ch.p.LeaderRecoveryState {
		rec.LeaderRecoveryState = ch.targetLRS
	}
	if rec.Leader == metadata.NoLeaderChange && rec.ISR == nil && rec.LeaderRecoveryState == metadata.LeaderRecoveryNoChange &&
		rec.EligibleLeaderReplicas == nil && rec.LastKnownELR == nil {
		return nil
	}
	return rec
}

// leaderAndISRUpdates returns the changes for partitions when broker
// remove (-1 for none) leaves the ISRs and broker add (-1 for none) may
// lead although the image still shows it fenced.
func (c *Controller) leaderAndISRUpdates(ctx *sim.Context, remove, add int32, parts []metadata.PartitionState, reason string) []metadata.Record {
	return c.generateLeaderAndISRUpdates(ctx, remove, add, -1, parts, reason)
}

// generateLeaderAndISRUpdates is leaderAndISRUpdates with a broker that
// shut down uncleanly (-1 for none): it leaves the ISRs and the ELRs and
// may not lead (ReplicationControlManager.generateLeaderAndIsrUpdates).
func (c *Controller) generateLeaderAndISRUpdates(ctx *sim.Context, remove, add, uncleanShutdown int32, parts []metadata.PartitionState, reason string) []metadata.Record {
	acceptable := func(r int32) bool {
		return r != remove && r != uncleanShutdown && (r == add || c.isActive(r))
	}
	var out []metadata.Record
	for _, p := range parts {
		ch := c.newChange(p, acceptable)
		ch.uncleanShutdown = uncleanShutdown
		ch.targetISR = slices.DeleteFunc(slices.Clone(p.ISR), func(r int32) bool { return r == remove || r == uncleanShutdown })
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
	fields = appendELR(fields, n)
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
	fields := []sim.Field{sim.S("partition", fmt.Sprintf("%s-%d", t, part)), sim.I("offset", offset),
		sim.I("leader", int64(p.Leader)), sim.I("leader-epoch", int64(p.LeaderEpoch)),
		sim.I("partition-epoch", int64(p.PartitionEpoch)), sim.S("isr", ints(p.ISR)), sim.I("recovery", int64(p.LeaderRecoveryState))}
	ctx.Log("partition-committed", appendELR(fields, p)...)
}

// appendELR adds the ELR and LastKnownELR to a trace record when they are
// not empty (they are always empty with ELR off, so those traces keep
// their form).
func appendELR(fields []sim.Field, p metadata.PartitionState) []sim.Field {
	if len(p.ELR) > 0 {
		fields = append(fields, sim.S("elr", ints(p.ELR)))
	}
	if len(p.LastKnownELR) > 0 {
		fields = append(fields, sim.S("last-known-elr", ints(p.LastKnownELR)))
	}
	return fields
}
