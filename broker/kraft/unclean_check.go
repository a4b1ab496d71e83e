package kraft

// This file is the active controller's periodic unclean election of Kafka
// 3.9 on (KAFKA-12670, apache/kafka PR #16866): QuorumController's
// maybeScheduleNextElectUncleanLeaders and ReplicationControlManager's
// maybeElectUncleanLeaders. After every write event (and on activation), if
// some partition of the working image has no leader and no check is
// scheduled, one is scheduled unclean.leader.election.interval.ms later
// (300000), or 10 ms later when the previous check stopped at
// MAX_ELECTIONS_PER_IMBALANCE (1000) elections. The check elects, for each
// leaderless partition of a topic with unclean.leader.election.enable,
// what ElectLeaders(UNCLEAN) would (PartitionChangeBuilder with
// Election.UNCLEAN: an ISR member if one is acceptable, else the first
// acceptable replica, uncleanly). Renouncing cancels the schedule.
//
// Before 3.9 (Config.UncleanElection false) nothing is scheduled: a 3.3-3.8
// controller never elects uncleanly on its own.
//
// Simplified: Kafka's event queue defers the check behind other events of
// the same instant; here it runs when its timer fires.

import (
	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

const (
	timerUncleanCheck = "controller-unclean-check"
	// maxElectionsPerImbalance is
	// ReplicationControlManager.MAX_ELECTIONS_PER_IMBALANCE.
	maxElectionsPerImbalance = 1000
	// uncleanCheckImmediately is the delay of a check that follows one
	// that hit maxElectionsPerImbalance.
	uncleanCheckImmediately = 10 * sim.Millisecond
)

// uncleanCheck is QuorumController's uncleanScheduled (ImbalanceSchedule)
// and the timer of the scheduled check.
type uncleanCheck struct {
	armed bool // SCHEDULED
	// immediately: the last check hit the election limit (IMMEDIATELY);
	// else DEFERRED.
	immediately bool
	timer       sim.TimerID
}

// maybeScheduleUncleanCheck is maybeScheduleNextElectUncleanLeaders.
func (c *Controller) maybeScheduleUncleanCheck(ctx *sim.Context) {
	if !c.active || !c.cfg.UncleanElection || c.unclean.armed || !c.working.img.HasLeaderless() {
		return
	}
	d := c.cfg.UncleanCheckInterval
	if c.unclean.immediately {
		d = uncleanCheckImmediately
	}
	c.unclean.timer, c.unclean.armed = ctx.SetTimer(d, timerUncleanCheck), true
}

// cancelUncleanCheck is cancelMaybeNextElectUncleanLeaders.
func (c *Controller) cancelUncleanCheck(ctx *sim.Context) {
	if c.unclean.armed {
		ctx.CancelTimer(c.unclean.timer)
	}
	c.unclean = uncleanCheck{}
}

// electUncleanLeaders is maybeElectUncleanLeaders: one check, then the
// next is scheduled by the write (or at once when nothing was written).
func (c *Controller) electUncleanLeaders(ctx *sim.Context) {
	var recs []metadata.Record
	for _, p := range c.working.img.Partitions() {
		if len(recs) >= maxElectionsPerImbalance {
			break
		}
		if p.Leader != metadata.NoLeader || c.cfg.Unclean == nil || !c.cfg.Unclean(p.Topic) {
			continue
		}
		ch := c.newChange(p, nil)
		ch.unclean = true
		rec := ch.build()
		if rec == nil || rec.Leader == metadata.NoLeaderChange || rec.Leader == metadata.NoLeader {
			// ELIGIBLE_LEADERS_NOT_AVAILABLE: no acceptable replica.
			continue
		}
		logChange(ctx, p, rec, "unclean-check", ch.uncleanElected)
		recs = append(recs, rec)
	}
	c.unclean.immediately = len(recs) >= maxElectionsPerImbalance
	ctx.Log("controller-unclean-check", sim.I("elected", int64(len(recs))))
	if len(recs) == 0 {
		c.maybeScheduleUncleanCheck(ctx)
		return
	}
	c.write(ctx, recs, func() {}, func(*kerr.Error) {})
}
