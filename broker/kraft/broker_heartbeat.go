package kraft

// This file serves BrokerHeartbeatRequest (api key 63) and fences brokers
// whose session expires, as Kafka 4.0's BrokerHeartbeatManager
// (calculateNextBrokerState, findOneStaleBroker, lowestActiveOffset) and
// ReplicationControlManager (processBrokerHeartbeat, handleBrokerFenced,
// handleBrokerUnfenced, handleBrokerInControlledShutdown,
// maybeFenceOneStaleBroker):
//   - FENCED -> UNFENCED once the broker has caught up with its
//     RegisterBrokerRecord's offset and does not want fencing;
//   - UNFENCED + WantShutDown -> CONTROLLED_SHUTDOWN while it leads
//     something (its leaderships move, it leaves every ISR), else
//     SHUTDOWN_NOW; CONTROLLED_SHUTDOWN -> SHUTDOWN_NOW once it leads
//     nothing and every active broker has caught up past the controlled
//     shutdown records;
//   - fencing and unfencing write BrokerRegistrationChangeRecord v0
//     (metadata.version >= 3.3-IV2), controlled shutdown v1;
//   - a broker without a heartbeat for broker.session.timeout.ms is
//     fenced, one broker per timer firing, the stalest first.
//
// Simplified: no offline log dirs; heartbeats are never "expired" in the
// controller's queue.

import (
	"math"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const timerFenceStale = "controller-fence-stale"

// session is a broker's heartbeat state (BrokerHeartbeatState).
type session struct {
	lastContact    sim.Time
	fenced         bool
	metadataOffset int64
	// shutdownOffset is the offset of its controlled-shutdown records;
	// -1 when not shutting down.
	shutdownOffset int64
}

type brokerControlState int

const (
	stateFenced brokerControlState = iota
	stateUnfenced
	stateControlledShutdown
	stateShutdownNow
)

func (s brokerControlState) fenced() bool { return s == stateFenced || s == stateShutdownNow }

func (c *Controller) validSession(ctx *sim.Context, id int32) bool {
	s, ok := c.sessions[id]
	return ok && !s.fenced && s.lastContact.Add(c.cfg.SessionTimeout) >= ctx.Now()
}

// lowestActiveOffset is the lowest metadata offset among unfenced brokers
// not shutting down (MaxInt64 when there are none).
func (c *Controller) lowestActiveOffset() int64 {
	low := int64(math.MaxInt64)
	for _, id := range sortedIDs(c.sessions) {
		if s := c.sessions[id]; !s.fenced && s.shutdownOffset < 0 && s.metadataOffset < low {
			low = s.metadataOffset
		}
	}
	return low
}

func (c *Controller) nextState(b metadata.BrokerState, s *session, req *kmsg.BrokerHeartbeatRequest, regOffset int64) (cur, next brokerControlState) {
	switch {
	case b.Fenced:
		cur = stateFenced
	case b.InControlledShutdown:
		cur = stateControlledShutdown
	default:
		cur = stateUnfenced
	}
	switch cur {
	case stateFenced:
		switch {
		case req.WantShutdown:
			return cur, stateShutdownNow
		case !req.WantFence && req.CurrentMetadataOffset >= regOffset:
			return cur, stateUnfenced
		}
		return cur, stateFenced
	case stateUnfenced:
		switch {
		case req.WantFence && req.WantShutdown:
			return cur, stateShutdownNow
		case req.WantFence:
			return cur, stateFenced
		case req.WantShutdown && c.hasLeaderships(b.ID):
			return cur, stateControlledShutdown
		case req.WantShutdown:
			return cur, stateShutdownNow
		}
		return cur, stateUnfenced
	default: // controlled shutdown
		if c.hasLeaderships(b.ID) || s.shutdownOffset > c.lowestActiveOffset() {
			return cur, stateControlledShutdown
		}
		return cur, stateShutdownNow
	}
}

func (c *Controller) brokerHeartbeat(ctx *sim.Context, req *kmsg.BrokerHeartbeatRequest, reply func(kmsg.Response)) {
	resp := req.ResponseKind().(*kmsg.BrokerHeartbeatResponse)
	fail := func(e *kerr.Error) {
		resp.ErrorCode = e.Code
		reply(resp)
	}
	id := req.BrokerID
	b, ok := c.working.img.Broker(id)
	if !ok || b.Epoch != req.BrokerEpoch {
		fail(kerr.StaleBrokerEpoch)
		return
	}
	s := c.sessions[id]
	if s == nil {
		s = &session{fenced: b.Fenced, metadataOffset: -1, shutdownOffset: -1}
		c.sessions[id] = s
	}
	regOffset := c.working.regOffset[id]
	cur, next := c.nextState(b, s, req, regOffset)
	var recs []metadata.Record
	if cur != next {
		switch next {
		case stateFenced, stateShutdownNow:
			recs = c.fenceRecords(ctx, id, b.Epoch)
		case stateUnfenced:
			recs = c.unfenceRecords(ctx, id, b.Epoch)
		case stateControlledShutdown:
			recs = c.controlledShutdownRecords(ctx, id, b.Epoch)
		}
	}
	// touch
	s.lastContact, s.fenced, s.metadataOffset = ctx.Now(), next.fenced(), req.CurrentMetadataOffset
	if next != stateControlledShutdown {
		s.shutdownOffset = -1
	}
	last := c.write(ctx, recs, func() {
		if cur != next {
			switch next {
			case stateFenced, stateShutdownNow:
				why := "want-fence"
				if next == stateShutdownNow {
					why = "shutdown"
				}
				ctx.Log("broker-fenced", sim.I("broker", int64(id)), sim.S("reason", why))
			case stateUnfenced:
				ctx.Log("broker-unfenced", sim.I("broker", int64(id)))
			case stateControlledShutdown:
				ctx.Log("broker-controlled-shutdown", sim.I("broker", int64(id)))
			}
		}
		resp.IsCaughtUp = req.CurrentMetadataOffset >= regOffset
		resp.IsFenced = next.fenced()
		resp.ShouldShutdown = next == stateShutdownNow
		reply(resp)
	}, fail)
	if next == stateControlledShutdown && s.shutdownOffset < 0 {
		s.shutdownOffset = last
	}
	c.armFenceTimer(ctx)
}

// fenceRecords removes the broker from every ISR, moves its leaderships,
// and fences it (handleBrokerFenced).
func (c *Controller) fenceRecords(ctx *sim.Context, id int32, epoch int64) []metadata.Record {
	parts := c.partitionsWith(func(p metadata.PartitionState) bool { return contains(p.ISR, id) || p.Leader == id })
	recs := c.leaderAndISRUpdates(ctx, id, -1, parts, "fence")
	return append(recs, &metadata.BrokerRegistrationChangeRecord{BrokerID: id, BrokerEpoch: epoch, Fenced: metadata.Fence})
}

// unfenceRecords unfences the broker and elects leaders for leaderless
// partitions it can lead (handleBrokerUnfenced).
func (c *Controller) unfenceRecords(ctx *sim.Context, id int32, epoch int64) []metadata.Record {
	recs := []metadata.Record{&metadata.BrokerRegistrationChangeRecord{BrokerID: id, BrokerEpoch: epoch, Fenced: metadata.Unfence}}
	parts := c.partitionsWith(func(p metadata.PartitionState) bool { return p.Leader == metadata.NoLeader })
	return append(recs, c.leaderAndISRUpdates(ctx, -1, id, parts, "unfence")...)
}

// controlledShutdownRecords marks the broker shutting down, then moves its
// leaderships and drops it from the ISRs (handleBrokerInControlledShutdown).
func (c *Controller) controlledShutdownRecords(ctx *sim.Context, id int32, epoch int64) []metadata.Record {
	recs := []metadata.Record{&metadata.BrokerRegistrationChangeRecord{BrokerID: id, BrokerEpoch: epoch, InControlledShutdown: metadata.InControlledShutdownChange}}
	parts := c.partitionsWith(func(p metadata.PartitionState) bool { return contains(p.ISR, id) || p.Leader == id })
	return append(recs, c.leaderAndISRUpdates(ctx, id, -1, parts, "controlled-shutdown")...)
}

// armFenceTimer sets the timer for the earliest session expiry among
// unfenced brokers.
func (c *Controller) armFenceTimer(ctx *sim.Context) {
	if c.fenceArmed {
		ctx.CancelTimer(c.fenceTimer)
		c.fenceArmed = false
	}
	if !c.active {
		return
	}
	id, ok := c.stalest()
	if !ok {
		return
	}
	d := c.sessions[id].lastContact.Add(c.cfg.SessionTimeout).Sub(ctx.Now()) + 1
	if d < 1 {
		d = 1
	}
	c.fenceTimer, c.fenceArmed = ctx.SetTimer(d, timerFenceStale), true
}

// stalest returns the unfenced broker with the oldest contact (lowest id
// on ties).
func (c *Controller) stalest() (int32, bool) {
	best, found := int32(0), false
	for _, id := range sortedIDs(c.sessions) {
		s := c.sessions[id]
		if s.fenced {
			continue
		}
		if !found || s.lastContact < c.sessions[best].lastContact {
			best, found = id, true
		}
	}
	return best, found
}

// maybeFenceStaleBroker fences the stalest broker if its session expired.
func (c *Controller) maybeFenceStaleBroker(ctx *sim.Context) {
	if !c.active {
		return
	}
	if id, ok := c.stalest(); ok && !c.validSession(ctx, id) {
		b, ok := c.working.img.Broker(id)
		s := c.sessions[id]
		s.fenced, s.shutdownOffset = true, -1
		if c.cfg.Mutants.On(mutant.NoFenceOnSessionExpiry) {
			// Mutant no-fence-on-session-expiry: the session is over but
			// the broker is not fenced: it keeps its leaderships and ISRs.
			ctx.Log("broker-not-fenced", sim.I("broker", int64(id)), sim.S("reason", "session-timeout"))
		} else if ok && !b.Fenced {
			recs := c.fenceRecords(ctx, id, b.Epoch)
			c.write(ctx, recs, func() {
				ctx.Log("broker-fenced", sim.I("broker", int64(id)), sim.S("reason", "session-timeout"))
			}, func(*kerr.Error) {})
		}
	}
	c.armFenceTimer(ctx)
}

func contains(v []int32, x int32) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

func sortedIDs[V any](m map[int32]V) []int32 {
	ids := make([]int32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}
