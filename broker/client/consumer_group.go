package client

// This file is the consumer's group membership (Kafka's
// AbstractCoordinator and ConsumerCoordinator; what the cooperative
// protocol changes is in consumer_cooperative.go):
// FindCoordinator, JoinGroup (with KIP-394's MEMBER_ID_REQUIRED retry),
// the leader's assignment, SyncGroup, heartbeats every
// heartbeat.interval.ms, LeaveGroup, max.poll.interval.ms, and what each
// error code makes the member do:
//   - REBALANCE_IN_PROGRESS: rejoin, keeping member id and generation;
//   - UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION: the partitions are lost
//     (OnLost); forget the member id and generation and rejoin;
//   - NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE: find the coordinator again;
//   - COORDINATOR_LOAD_IN_PROGRESS: retry after retry.backoff.ms;
//   - INVALID_SESSION_TIMEOUT, INCONSISTENT_GROUP_PROTOCOL, INVALID_GROUP_ID,
//     UNSUPPORTED_VERSION (a static member and a broker without JoinGroup
//     v5, below 2.3): fatal, returned by Poll;
//   - FENCED_INSTANCE_ID (a static member): fatal for good
//     (consumer_static.go).

import (
	"cmp"
	"slices"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerRequest is a request in flight.
type consumerRequest struct {
	corr     int32
	broker   int32
	node     sim.NodeID
	deadline sim.Time
	sent     bool  // false: held back by a reset connection's back-off
	err      error // what it fails with at deadline
	done     func(ctx *sim.Context, resp kmsg.Response, err error)
}

// call sends body to broker; done runs once with the answer or, after
// request.timeout.ms, with ErrRequestTimeout (ErrDisconnected, when the
// broker's connection is backing off after a reset: consumer_conn.go).
func (c *Consumer) call(ctx *sim.Context, broker int32, body kmsg.Request, done func(*sim.Context, kmsg.Response, error)) *consumerRequest {
	c.corr++
	r := &consumerRequest{corr: c.corr, broker: broker, node: -1, deadline: ctx.Now().Add(c.cfg.RequestTimeout), err: ErrRequestTimeout, done: done}
	if node, ok := ctx.Lookup(nodeName(broker)); ok {
		r.node = node
		if until, off := c.backingOff(ctx.Now(), node); off {
			r.deadline, r.err = until, ErrDisconnected
		} else {
			ctx.Send(node, c.enc.Request(c.corr, body))
			r.sent = true
		}
	}
	// NB: c.corr is the highest yet, so r goes last; except after a
	// restart of the same consumer (Start starts the ids over): then it
	// takes its place, and the place of a request of the last life with its
	// id, as a map by id would.
	if n := len(c.requests); n == 0 || c.requests[n-1].corr < r.corr {
		c.requests = append(c.requests, r)
	} else if i, found := c.findRequest(r.corr); found {
		c.requests[i] = r
	} else {
		c.requests = slices.Insert(c.requests, i, r)
	}
	return r
}

// findRequest returns the index of the request in flight with correlation
// id corr, if there is one.
func (c *Consumer) findRequest(corr int32) (int, bool) {
	return slices.BinarySearchFunc(c.requests, corr, func(r *consumerRequest, corr int32) int { return cmp.Compare(r.corr, corr) })
}

// takeRequest removes r from the requests in flight; false if it was
// not in flight (any more).
func (c *Consumer) takeRequest(r *consumerRequest) bool {
	i, ok := c.findRequest(r.corr)
	if ok {
		c.requests = slices.Delete(c.requests, i, i+1)
	}
	return ok
}

// waitUntil moves the deadline of a request that was sent and waits on
// the broker longer than request.timeout.ms (a JoinGroup, a fetch); one
// held back by a back-off keeps failing when the back-off ends.
func (r *consumerRequest) waitUntil(t sim.Time) {
	if r.sent {
		r.deadline = t
	}
}

// expire fails the requests past their deadline, in correlation order.
func (c *Consumer) expire(ctx *sim.Context) {
	now := ctx.Now()
	var due []*consumerRequest
	for _, r := range c.requests { // NB: in correlation id order
		if r.deadline <= now {
			due = append(due, r)
		}
	}
	for _, r := range due {
		if c.takeRequest(r) { // NB: a callback below may have ended it
			r.done(ctx, nil, r.err)
		}
	}
}

func sortInt32s(xs []int32) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// anyBroker returns a broker to ask for metadata or the coordinator.
func (c *Consumer) anyBroker() int32 {
	cands := c.meta.brokers
	if len(cands) == 0 {
		cands = c.bootstrap
	}
	return cands[c.meta.cursor%len(cands)]
}

// maybeMetadata refreshes metadata when wanted.
func (c *Consumer) maybeMetadata(ctx *sim.Context) {
	m := &c.meta
	now := ctx.Now()
	due := m.needUpdate || (len(m.wanted) > 0 && now >= m.lastRefresh.Add(c.MetadataMaxAge))
	if m.inflight || !due || now < c.metaRetry || len(m.wanted) == 0 {
		return
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 7
	for _, t := range m.wanted {
		name := t
		req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: &name})
	}
	m.inflight = true
	to := c.anyBroker()
	m.cursor++ // NB: spread over the brokers, as leastLoadedNode does: one with stale metadata is not asked forever
	c.call(ctx, to, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
		m.inflight = false
		r, ok := resp.(*kmsg.MetadataResponse)
		if err != nil || !ok {
			m.needUpdate, c.metaRetry = true, ctx.Now().Add(c.cfg.RetryBackoff)
			return
		}
		c.applyMetadata(ctx, r)
	})
}

func (c *Consumer) applyMetadata(ctx *sim.Context, r *kmsg.MetadataResponse) {
	m := &c.meta
	m.needUpdate, m.lastRefresh = false, ctx.Now()
	if len(r.Brokers) > 0 {
		m.brokers = m.brokers[:0]
		for _, b := range r.Brokers {
			m.brokers = append(m.brokers, b.NodeID)
		}
		sortInt32s(m.brokers)
	}
	for _, rt := range r.Topics {
		if rt.Topic == nil {
			continue
		}
		if rt.ErrorCode != 0 {
			m.needUpdate = true
			c.metaRetry = ctx.Now().Add(c.cfg.RetryBackoff)
			continue
		}
		n := 0
		for _, rp := range rt.Partitions {
			n = max(n, int(rp.Partition)+1)
		}
		t := &topicMeta{partitions: make([]partitionMeta, n)}
		for _, rp := range rt.Partitions {
			pm := partitionMeta{leader: rp.Leader, epoch: rp.LeaderEpoch}
			if rp.ErrorCode != 0 && rp.ErrorCode != kerr.ReplicaNotAvailable.Code {
				pm.leader = -1
				m.needUpdate = true
				c.metaRetry = ctx.Now().Add(c.cfg.RetryBackoff)
			}
			t.partitions[rp.Partition] = pm
		}
		m.setTopic(*rt.Topic, t)
	}
	c.leadersChanged(ctx)
	c.leaderCheckMetadata(ctx)
}

// leaderCheckMetadata is the leader's check after a metadata update and
// after each completed join (ConsumerCoordinator's assignmentSnapshot vs
// metadataSnapshot): when a
// subscribed topic's partition count differs from what the last assignment
// saw — a topic it did not know yet, or new partitions — the group
// rebalances, so no partition stays unassigned.
func (c *Consumer) leaderCheckMetadata(ctx *sim.Context) {
	g := &c.group
	if g.assignedParts == nil || g.leader != g.memberID || g.memberID == "" || g.needRejoin || g.joining {
		return // NB: with a join in flight, synced compares once it completes
	}
	for _, topic := range c.topics {
		n := int32(0)
		if t := c.meta.topics[topic]; t != nil {
			n = int32(len(t.partitions))
		}
		if n != g.assignedParts[topic] {
			ctx.Log("consumer-metadata-changed", sim.S("client-id", c.cfg.ClientID), sim.S("topic", topic),
				sim.I("partitions", int64(n)), sim.I("assigned", int64(g.assignedParts[topic])))
			g.assignedParts, g.needRejoin = nil, true
			return
		}
	}
}

// groupState is the member's view of its group.
type groupState struct {
	coordinator int32 // -1 when unknown
	finding     bool
	memberID    string
	generation  int32
	protocol    string
	leader      string
	joining     bool // JoinGroup or SyncGroup in flight
	synced      bool // the last SyncGroup succeeded
	needRejoin  bool
	revoked     bool // OnRevoked ran for this rejoin (onJoinPrepare)
	// resets counts fencings and leaves: a JoinGroup answered after one is
	// stale (Kafka's member is no longer PREPARING_REBALANCE and drops it).
	resets int
	// pendingAssign is a COOPERATIVE assignment SyncGroup gave, installed
	// at the next Poll (Kafka's onJoinComplete runs inside poll(), on the
	// application's thread, so its callbacks never overlap the
	// application's own work).
	pendingAssign    []TopicPartition
	hasPendingAssign bool
	// assignedParts is, on the leader, the partition count of each topic
	// its last assignment saw (Kafka's assignmentSnapshot).
	assignedParts map[string]int32
	// lastAssigned and lastGeneration are the last assignment SyncGroup
	// gave and its generation (the sticky assignor's user data).
	lastAssigned   []TopicPartition
	lastGeneration int32
	retryAt        sim.Time
	nextHeartbeat  sim.Time
	heartbeating   bool
	// instanceFenced: FENCED_INSTANCE_ID was answered; the member is out
	// of the group for good.
	instanceFenced bool
}

func (g *groupState) stable() bool { return g.synced && !g.needRejoin && !g.joining }

// coordinatorLost forgets the coordinator after NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE or a lost request.
func (c *Consumer) coordinatorLost(ctx *sim.Context, why string) {
	if c.group.coordinator >= 0 {
		ctx.Log("consumer-coordinator-lost", sim.S("client-id", c.cfg.ClientID), sim.I("coordinator", int64(c.group.coordinator)), sim.S("reason", why))
	}
	c.group.coordinator = -1
	c.group.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
	c.meta.cursor++
}

// ensureCoordinator sends FindCoordinator if the coordinator is unknown and
// reports whether it is known.
func (c *Consumer) ensureCoordinator(ctx *sim.Context) bool {
	g := &c.group
	if g.coordinator >= 0 {
		return true
	}
	if g.finding || ctx.Now() < g.retryAt {
		return false
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKey = 2, c.cfg.GroupID
	g.finding = true
	c.call(ctx, c.anyBroker(), req, func(ctx *sim.Context, resp kmsg.Response, err error) {
		g.finding = false
		r, _ := resp.(*kmsg.FindCoordinatorResponse)
		if err != nil || r == nil || r.ErrorCode != 0 {
			g.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
			c.meta.cursor++
			return
		}
		g.coordinator = r.NodeID
		ctx.Log("consumer-coordinator", sim.S("client-id", c.cfg.ClientID), sim.I("coordinator", int64(r.NodeID)))
	})
	return false
}

// runGroup does what group membership needs now.
func (c *Consumer) runGroup(ctx *sim.Context) {
	g := &c.group
	now := ctx.Now()
	if g.stable() && now.Sub(c.lastPoll) > c.cfg.MaxPollInterval && !c.pollExpiry {
		// The heartbeat thread's max.poll.interval.ms check: leave.
		ctx.Log("consumer-poll-timeout", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID))
		// NB: set before leave: its OnRevoked may commit, and a commit
		// runs the group again (a stall past the interval recursed here).
		c.pollExpiry = true
		c.leave(ctx, "max.poll.interval.ms")
		return
	}
	if g.hasPendingAssign && c.polling {
		g.hasPendingAssign = false
		if c.installAssignment(ctx, g.pendingAssign) {
			g.needRejoin, g.revoked = true, true // hand the revoked partitions over
		}
		g.pendingAssign = nil
	}
	if c.pollExpiry || g.instanceFenced || !c.ensureCoordinator(ctx) {
		return
	}
	if g.needRejoin && !g.joining && now >= g.retryAt {
		if !g.revoked {
			if !c.polling {
				return // NB: as in Kafka's poll(): revocation and the rejoin start inside Poll
			}
			g.revoked = true
			if c.cooperative() {
				c.autoCommitBeforeJoin(ctx) // keeps its partitions through the rebalance
			} else {
				c.revoke(ctx, false)
			}
		}
		if len(c.commits) == 0 { // wait for commits started in OnRevoked
			c.join(ctx)
		}
		return
	}
	if g.stable() && !g.heartbeating && now >= g.nextHeartbeat {
		c.heartbeat(ctx)
	}
}

// revoke gives up the assignment before a rejoin: an auto-commit of the
// positions (ConsumerCoordinator.onJoinPrepare), then OnRevoked, or OnLost
// when the member was fenced.
func (c *Consumer) revoke(ctx *sim.Context, lost bool) {
	tps := c.Assignment()
	if len(tps) == 0 {
		return
	}
	if !lost {
		c.autoCommitBeforeJoin(ctx)
	}
	ctx.Log("consumer-revoke", sim.S("client-id", c.cfg.ClientID), sim.I("partitions", int64(len(tps))), sim.S("lost", boolString(lost)))
	switch {
	case lost && c.listener.OnLost != nil:
		c.listener.OnLost(ctx, tps)
	case c.listener.OnRevoked != nil:
		c.listener.OnRevoked(ctx, tps)
	}
	// The partitions are given up at once (2.4+ onJoinPrepare's
	// assignFromSubscribed(empty)): while commits started in OnRevoked
	// finish and the member rejoins, Poll hands out none of their records.
	c.setAssignment(nil)
}

// autoCommitBeforeJoin is onJoinPrepare's commit of the positions when
// enable.auto.commit is on.
func (c *Consumer) autoCommitBeforeJoin(ctx *sim.Context) {
	if c.cfg.EnableAutoCommit && c.group.generation >= 0 {
		if offs := c.positions(); len(offs) > 0 {
			c.commit(ctx, offs, true, nil)
		}
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// fenced handles UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION: the partitions
// are lost, the member forgets its id and generation and rejoins.
func (c *Consumer) fenced(ctx *sim.Context, why string) {
	g := &c.group
	ctx.Log("consumer-fenced", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID), sim.I("generation", int64(g.generation)), sim.S("reason", why))
	c.revoke(ctx, true)
	g.memberID, g.generation, g.synced, g.needRejoin, g.revoked = "", -1, false, true, true
	g.resets++
	g.pendingAssign, g.hasPendingAssign = nil, false
}

func (c *Consumer) join(ctx *sim.Context) {
	g := &c.group
	if !c.cooperative() {
		c.setAssignment(nil) // eager: everything is revoked before joining
	}
	g.pendingAssign, g.hasPendingAssign = nil, false // superseded by this rebalance
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID, req.ProtocolType = 5, c.cfg.GroupID, g.memberID, assignor.ProtocolType
	req.InstanceID = c.instanceID()
	req.SessionTimeoutMillis = int32(c.cfg.SessionTimeout.Milliseconds())
	req.RebalanceTimeoutMillis = int32(c.cfg.RebalanceTimeout.Milliseconds())
	for _, a := range c.cfg.PartitionAssignmentStrategy {
		req.Protocols = append(req.Protocols, kmsg.JoinGroupRequestProtocol{Name: string(a), Metadata: c.subscription(string(a))})
	}
	g.joining, g.synced = true, false
	coord := g.coordinator
	ctx.Log("consumer-join", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID), sim.I("coordinator", int64(coord)))
	// NB: a JoinGroup waits for the whole rebalance: the rebalance timeout
	// bounds it, not request.timeout.ms (Kafka adds the two).
	resets := g.resets
	r := c.call(ctx, coord, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
		g.joining = false
		if g.resets != resets {
			ctx.Log("consumer-join-stale", sim.S("client-id", c.cfg.ClientID))
			return // fenced or left meanwhile: the member joins afresh
		}
		r, _ := resp.(*kmsg.JoinGroupResponse)
		if err != nil || r == nil {
			c.coordinatorLost(ctx, "JoinGroup: no answer")
			return
		}
		c.joined(ctx, r)
	})
	r.waitUntil(ctx.Now().Add(c.cfg.RebalanceTimeout + c.cfg.RequestTimeout))
}

func (c *Consumer) joined(ctx *sim.Context, r *kmsg.JoinGroupResponse) {
	g := &c.group
	switch err := kerr.ErrorForCode(r.ErrorCode); err {
	case nil:
	case kerr.MemberIDRequired:
		g.memberID = r.MemberID
		return // rejoin at once with the id
	case kerr.UnknownMemberID, kerr.IllegalGeneration:
		// The coordinator no longer knows this member: what it still owns
		// (the cooperative protocol keeps partitions through a rejoin) is
		// lost, as onJoinPrepare's onPartitionsLost after a reset generation.
		c.fenced(ctx, "JoinGroup: "+err.Error())
		return
	case kerr.FencedInstanceID:
		c.fencedInstance(ctx, "JoinGroup")
		c.fatal = err
		return
	case kerr.NotCoordinator, kerr.CoordinatorNotAvailable:
		c.coordinatorLost(ctx, "JoinGroup: "+err.Error())
		return
	case kerr.CoordinatorLoadInProgress, kerr.RebalanceInProgress:
		g.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
		return
	default: // INVALID_SESSION_TIMEOUT, INCONSISTENT_GROUP_PROTOCOL, INVALID_GROUP_ID, ...
		c.fatal = err
		g.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
		return
	}
	g.memberID, g.generation, g.leader = r.MemberID, r.Generation, r.LeaderID
	if r.Protocol != nil {
		g.protocol = *r.Protocol
	}
	ctx.Log("consumer-joined", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID), sim.I("generation", int64(g.generation)),
		sim.S("leader", boolString(g.leader == g.memberID)), sim.S("protocol", g.protocol))
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.Generation, sync.MemberID = 3, c.cfg.GroupID, g.generation, g.memberID
	sync.InstanceID = c.instanceID()
	if g.leader == g.memberID {
		sync.GroupAssignment = c.assign(r)
	}
	g.joining = true
	gen := g.generation
	c.call(ctx, g.coordinator, sync, func(ctx *sim.Context, resp kmsg.Response, err error) {
		g.joining = false
		sr, _ := resp.(*kmsg.SyncGroupResponse)
		if err != nil || sr == nil {
			c.coordinatorLost(ctx, "SyncGroup: no answer")
			return
		}
		c.synced(ctx, gen, sr)
	})
}

// assign runs the selected assignor over the members' subscriptions.
func (c *Consumer) assign(r *kmsg.JoinGroupResponse) []kmsg.SyncGroupRequestGroupAssignment {
	as, err := assignor.ByName(c.group.protocol)
	if err != nil {
		return nil // NB: the coordinator only selects protocols every member offered
	}
	var members []assignor.Member
	parts := map[string]int32{}
	for _, m := range r.Members {
		am, err := assignor.DecodeSubscription(m.MemberID, m.ProtocolMetadata)
		if err != nil {
			continue
		}
		members = append(members, am)
		for _, t := range am.Topics {
			if tm := c.meta.topics[t]; tm != nil {
				parts[t] = int32(len(tm.partitions))
			}
		}
	}
	c.group.assignedParts = parts
	result := as.Assign(members, parts)
	if c.cfg.Mutants.On(mutant.AssignmentDuplicated) {
		duplicateOne(members, result)
	}
	var out []kmsg.SyncGroupRequestGroupAssignment
	for _, m := range members {
		out = append(out, kmsg.SyncGroupRequestGroupAssignment{MemberID: m.ID, MemberAssignment: assignor.EncodeAssignment(result[m.ID])})
	}
	return out
}

// duplicateOne is mutant.AssignmentDuplicated: the first member given a
// partition gives its first one to the next member too, so two members of
// one generation own it.
func duplicateOne(members []assignor.Member, result assignor.Assignment) {
	for i, m := range members {
		if len(result[m.ID]) == 0 || len(members) < 2 {
			continue
		}
		next := members[(i+1)%len(members)].ID
		result[next] = append(slices.Clone(result[next]), result[m.ID][0])
		return
	}
}

func (c *Consumer) synced(ctx *sim.Context, gen int32, r *kmsg.SyncGroupResponse) {
	g := &c.group
	if gen != g.generation {
		return
	}
	switch err := kerr.ErrorForCode(r.ErrorCode); err {
	case nil:
	case kerr.RebalanceInProgress:
		return // still needRejoin
	case kerr.UnknownMemberID, kerr.IllegalGeneration:
		c.fenced(ctx, "SyncGroup: "+err.Error())
		return
	case kerr.FencedInstanceID:
		c.fencedInstance(ctx, "SyncGroup")
		c.fatal = err
		return
	case kerr.NotCoordinator, kerr.CoordinatorNotAvailable:
		c.coordinatorLost(ctx, "SyncGroup: "+err.Error())
		return
	default:
		g.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
		return
	}
	tps, err := assignor.DecodeAssignment(r.MemberAssignment)
	if err != nil {
		g.retryAt = ctx.Now().Add(c.cfg.RetryBackoff)
		return
	}
	g.synced, g.needRejoin, g.revoked = true, false, false
	// Kafka's rejoinNeededOrPending compares the assignment snapshot with
	// the metadata at every poll, not only when metadata arrives: metadata
	// that came while the join was in flight (a leader that assigned before
	// it knew the topic, group-swarm eager seed 274) still makes it rejoin.
	defer c.leaderCheckMetadata(ctx)
	g.nextHeartbeat = ctx.Now().Add(c.cfg.HeartbeatInterval)
	c.autoNext = ctx.Now().Add(c.cfg.AutoCommitInterval)
	ctx.Log("consumer-assigned", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID), sim.I("generation", int64(g.generation)), sim.S("partitions", tpList(tps)))
	if c.cooperative() {
		g.pendingAssign, g.hasPendingAssign = tps, true
		return
	}
	c.installAssignment(ctx, tps)
}

func tpList(tps []TopicPartition) string {
	s := "["
	for i, tp := range tps {
		if i > 0 {
			s += " "
		}
		s += tp.String()
	}
	return s + "]"
}

func (c *Consumer) heartbeat(ctx *sim.Context) {
	g := &c.group
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version, req.Group, req.Generation, req.MemberID = 3, c.cfg.GroupID, g.generation, g.memberID
	req.InstanceID = c.instanceID()
	g.heartbeating = true
	g.nextHeartbeat = ctx.Now().Add(c.cfg.HeartbeatInterval)
	gen := g.generation
	c.call(ctx, g.coordinator, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
		g.heartbeating = false
		r, _ := resp.(*kmsg.HeartbeatResponse)
		if err != nil || r == nil {
			c.coordinatorLost(ctx, "Heartbeat: no answer")
			return
		}
		if gen != g.generation {
			return
		}
		switch e := kerr.ErrorForCode(r.ErrorCode); e {
		case nil:
		case kerr.RebalanceInProgress:
			if !g.needRejoin {
				ctx.Log("consumer-rebalance", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID))
			}
			g.needRejoin = true
		case kerr.UnknownMemberID, kerr.IllegalGeneration:
			c.fenced(ctx, "Heartbeat: "+e.Error())
		case kerr.FencedInstanceID:
			c.fencedInstance(ctx, "Heartbeat")
			c.fatal = e
		case kerr.NotCoordinator, kerr.CoordinatorNotAvailable:
			c.coordinatorLost(ctx, "Heartbeat: "+e.Error())
		default:
			g.nextHeartbeat = ctx.Now().Add(c.cfg.RetryBackoff)
		}
	})
}

// leave sends LeaveGroup (fire and forget; a dynamic member only) and
// forgets the membership.
func (c *Consumer) leave(ctx *sim.Context, why string) {
	g := &c.group
	if g.coordinator >= 0 && g.memberID != "" && !c.cfg.Static() {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version, req.Group = 3, c.cfg.GroupID
		req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: g.memberID}}
		c.call(ctx, g.coordinator, req, func(*sim.Context, kmsg.Response, error) {})
	}
	ctx.Log("consumer-leave", sim.S("client-id", c.cfg.ClientID), sim.S("member", g.memberID), sim.S("reason", why))
	c.revoke(ctx, false)
	c.setAssignment(nil)
	g.memberID, g.generation, g.synced, g.needRejoin, g.revoked = "", -1, false, true, true
	g.resets++
	g.pendingAssign, g.hasPendingAssign = nil, false
}
