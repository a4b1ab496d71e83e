package client

// This file is the consumer's public face (KafkaConsumer, Kafka 2.x eager
// rebalance protocol): Subscribe (group-managed) or Assign (manual), Poll,
// Seek, commits, Close, and the plumbing a host node forwards its inputs
// through. Kafka's consumer does its network I/O inside poll() and sends
// heartbeats from a background thread; here one periodic timer
// ("consumer-tick", every consumerTick) does both, and Poll only hands out
// buffered records, so the host's own poll loop decides the processing
// rhythm that max.poll.interval.ms judges.
//
// Fetch from follower (KIP-392) and truncation detection (KIP-320) are in
// consumer_fetch.go and consumer_validate.go.
//
// Simplified vs Kafka: no deserializers, interceptors, pause/resume,
// fetch sessions (KIP-227) or static membership. Cooperative rebalancing:
// consumer_cooperative.go; offsets.storage=zookeeper: consumer_zkoffsets.go.
// Leader assignment uses the metadata the leader already has. KIP-392: the
// preferred read replica is kept until metadata.max.age.ms passes, any
// error from it, or a leader change; no ApiVersions, so a broker that
// cannot serve follower reads is found out by its errors. KIP-320: a
// position has a leader epoch only once a record was consumed (committed
// offsets are committed, and reset positions taken, without one), so only
// those positions are validated; validation sends one OffsetsForLeaderEpoch
// per partition; whether the brokers support it is the consumer's
// kafkasim.truncation.detection (package config defaults it to the
// brokers' fencing) instead of ApiVersions.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
)

// ConsumerTimerPrefix starts the name of every timer the consumer sets.
const ConsumerTimerPrefix = "consumer-"

const (
	timerConsumerTick = ConsumerTimerPrefix + "tick"
	consumerTick      = 50 * sim.Millisecond
)

// TopicPartition names a partition.
type TopicPartition = assignor.TopicPartition

// TopicPartitionOffset is an offset of a partition (a commit's: the next
// offset to consume).
type TopicPartitionOffset struct {
	TopicPartition
	Offset int64
}

// ConsumerRecord is a record Poll returns.
type ConsumerRecord struct {
	Topic       string
	Partition   int32
	Offset      int64
	Timestamp   int64
	LeaderEpoch int32
	Key, Value  []byte
	// HighWatermark and LastStableOffset are the ones the fetch response
	// that carried the record reported for its partition. NB: not Kafka's
	// (its ConsumerRecord has neither; its consumer keeps them per
	// partition): kafkasim's checkers judge each record by the response
	// that served it, which may differ from the partition's latest.
	HighWatermark, LastStableOffset int64
	// CurrentLeaderEpoch is the one the Fetch that got the record carried
	// (KIP-320; -1 from a client without truncation detection), for the
	// same reason.
	CurrentLeaderEpoch int32
}

// RebalanceListener is ConsumerRebalanceListener. Each callback may be nil.
// OnRevoked runs before the consumer rejoins its group, with the
// partitions it owned (the place to commit: the rejoin waits for commits
// started there); OnAssigned after the rebalance with the new ones; OnLost
// instead of OnRevoked when the partitions were already taken away (the
// member was fenced: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, session
// expiry), when committing is no longer possible (KIP-429's onPartitionsLost).
type RebalanceListener struct {
	OnRevoked  func(ctx *sim.Context, tps []TopicPartition)
	OnAssigned func(ctx *sim.Context, tps []TopicPartition)
	OnLost     func(ctx *sim.Context, tps []TopicPartition)
}

// CommitCallback receives a commit's outcome: err is nil when the
// coordinator stored every offset.
type CommitCallback func(ctx *sim.Context, offsets []TopicPartitionOffset, err error)

// Consumer errors.
var (
	// ErrCommitFailed is Kafka's CommitFailedException: the group
	// rebalanced (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
	// REBALANCE_IN_PROGRESS) and the partitions may be someone else's.
	ErrCommitFailed = errors.New("commit failed: the group rebalanced and the partitions may be reassigned")
	// ErrNoOffset is NoOffsetForPartitionException: auto.offset.reset=none
	// and no committed offset (or the position is out of range).
	ErrNoOffset = errors.New("no committed offset and auto.offset.reset=none")
	// ErrConsumerClosed: the consumer was closed.
	ErrConsumerClosed = errors.New("consumer is closed")
	// ErrLogTruncation is Kafka's LogTruncationException (KIP-320): the
	// log was truncated below the consumer's position after a leader
	// change, and auto.offset.reset=none. Poll returns a
	// *LogTruncationError that matches it with errors.Is; the partition is
	// not fetched again until the application seeks.
	ErrLogTruncation = errors.New("log truncation detected")
)

// LogTruncationError is the error Poll returns when KIP-320 validation
// found the log truncated under the position (auto.offset.reset=none).
type LogTruncationError struct {
	TopicPartition
	// Position is the consumer's position that was validated.
	Position int64
	// DivergentOffset is the end offset the leader gave for the epoch of
	// the last consumed record: the first offset known to diverge. -1
	// when the leader had no such epoch (undefined).
	DivergentOffset int64
}

func (e *LogTruncationError) Error() string {
	if e.DivergentOffset < 0 {
		return fmt.Sprintf("%s: %v at position %d: the leader has no end offset for the last consumed epoch", ErrLogTruncation, e.TopicPartition, e.Position)
	}
	return fmt.Sprintf("%s: %v at position %d: the log diverges from offset %d", ErrLogTruncation, e.TopicPartition, e.Position, e.DivergentOffset)
}

// Is makes errors.Is(err, ErrLogTruncation) hold.
func (e *LogTruncationError) Is(target error) bool { return target == ErrLogTruncation }

// partState is one assigned partition.
type partState struct {
	tp       TopicPartition
	position int64 // next offset Poll returns; -1 until known
	fetchPos int64 // next offset to fetch
	buffer   []ConsumerRecord
	// skipTo is the offset after the batches the buffered fetch dropped
	// (control batches, aborted transactions) past its last record, -1 if
	// none: the position moves there once the buffer is drained.
	skipTo   int64
	fetching bool
	// fetchRetryAt holds the partition's next fetch back for
	// retry.backoff.ms after a partition error (NOT_LEADER_FOR_PARTITION,
	// FENCED_LEADER_EPOCH, ...) while fresh metadata is fetched.
	fetchRetryAt sim.Time
	epoch        int // bumped by seeks and reassignment: stale answers are dropped
	// offset lookup state
	needCommitted bool                   // ask the coordinator for the committed offset
	needReset     bool                   // reset by auto.offset.reset (ListOffsets)
	lookup        bool                   // OffsetFetch or ListOffsets in flight
	resetTo       config.AutoOffsetReset // a SeekToBeginning/End target; "" = auto.offset.reset
	retryAt       sim.Time
	// KIP-392: the replica the leader said to read from, until the
	// expiry; -1 for the leader. fetchingFrom is the broker of the fetch
	// in flight.
	readReplica       int32
	readReplicaExpiry sim.Time
	fetchingFrom      int32
	fetchFromReplica  bool // the fetch in flight went to a read replica
	// KIP-320: posEpoch is the leader epoch of the record before position
	// (-1 when unknown); leaderSeen the leader and epoch the position was
	// last checked against; validate that the position awaits
	// OffsetsForLeaderEpoch.
	posEpoch   int32
	leaderSeen partitionMeta
	validate   bool
	// hw is the high watermark the last fetch response reported (-1 until
	// one did), as Kafka's SubscriptionState keeps it for the lag metrics.
	hw int64
}

// Consumer is Kafka's consumer as a library embedded in a node: the node
// calls Start from its own Start and forwards messages and timers to
// HandleMessage and HandleTimer.
type Consumer struct {
	// CorrelationBase is the first correlation id; default 1<<29 (below
	// the producer's), so a node can embed both.
	CorrelationBase int32
	// MetadataMaxAge is metadata.max.age.ms (300000); it also bounds how
	// long a preferred read replica (KIP-392) is used.
	MetadataMaxAge sim.Duration
	// OnTruncation, if set, is called when KIP-320 validation finds the log
	// truncated under the position (divergent is -1 when the leader had no
	// end offset for the epoch), before the reset or the error.
	OnTruncation func(ctx *sim.Context, tp TopicPartition, position, divergent int64)

	cfg       config.Consumer
	bootstrap []int32
	enc       wire.Encoder
	corr      int32
	requests  []*consumerRequest         // in flight, sorted by correlation id
	backoff   map[sim.NodeID]connBackoff // brokers whose connection was reset
	meta      metadata
	metaRetry sim.Time

	topics     []string // subscription, sorted; nil when assigning manually
	manual     bool
	listener   RebalanceListener
	fetched    CommittedFetched // nil: nobody is told
	parts      []*partState     // assigned, sorted
	cursor     int              // Poll's round-robin start
	group      groupState
	commits    []*commitCall
	fatal      error
	autoNext   sim.Time
	lastPoll   sim.Time
	pollExpiry bool // max.poll.interval.ms passed: left the group until the next Poll
	polling    bool // inside Poll
	started    bool
	closed     bool
	timer      sim.TimerID
}

// NewConsumer returns a consumer with configuration cfg that finds the
// cluster through the bootstrap brokers. It refuses an empty bootstrap and
// a configuration that fails cfg.Validate.
func NewConsumer(cfg config.Consumer, bootstrap []int32) (*Consumer, error) {
	if len(bootstrap) == 0 {
		return nil, errors.New("client.NewConsumer: bootstrap must name at least one broker")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("client.NewConsumer: %w", err)
	}
	for _, a := range cfg.PartitionAssignmentStrategy {
		if _, err := assignor.ByName(string(a)); err != nil {
			return nil, fmt.Errorf("client.NewConsumer: partition.assignment.strategy: %w", err)
		}
	}
	return &Consumer{CorrelationBase: 1 << 29, MetadataMaxAge: sim.Ms(300000), cfg: cfg, bootstrap: slices.Clone(bootstrap),
		meta:  metadata{topics: map[string]*topicMeta{}},
		group: groupState{coordinator: -1, generation: -1}}, nil
}

// Config returns the consumer's configuration.
func (c *Consumer) Config() config.Consumer { return c.cfg }

// Start starts the consumer's timer.
func (c *Consumer) Start(ctx *sim.Context) {
	c.started = true
	c.corr = c.CorrelationBase
	c.enc.Connection = ctx.Incarnation()
	c.lastPoll = ctx.Now()
	ctx.Log("consumer-start", sim.S("client-id", c.cfg.ClientID), sim.S("group", c.cfg.GroupID))
	c.timer = ctx.SetTimer(consumerTick, timerConsumerTick)
}

// Subscribe subscribes to topics with group management (needs group.id);
// it replaces any earlier subscription or assignment.
func (c *Consumer) Subscribe(ctx *sim.Context, topics []string, l RebalanceListener) error {
	switch {
	case c.closed:
		return ErrConsumerClosed
	case c.cfg.GroupID == "":
		return errors.New("client: Subscribe needs a group.id (or use Assign)")
	case len(topics) == 0:
		return errors.New("client: Subscribe needs at least one topic (use Unsubscribe to stop)")
	}
	for _, t := range topics {
		if t == "" {
			return errors.New("client: Subscribe: a topic name is empty")
		}
	}
	c.topics = slices.Clone(topics)
	slices.Sort(c.topics)
	c.topics = slices.Compact(c.topics)
	c.manual, c.listener = false, l
	for _, t := range c.topics {
		c.meta.want(t)
	}
	c.group.needRejoin = true
	return nil
}

// Assign assigns partitions manually (no group management); positions
// come from the group's committed offsets when group.id is set, else from
// auto.offset.reset.
func (c *Consumer) Assign(ctx *sim.Context, tps []TopicPartition) error {
	if c.closed {
		return ErrConsumerClosed
	}
	for _, tp := range tps {
		if tp.Topic == "" || tp.Partition < 0 {
			return fmt.Errorf("client: Assign: %v: want a topic name and a partition >= 0", tp)
		}
	}
	if len(c.topics) > 0 && c.group.memberID != "" {
		c.leave(ctx, "assign")
	}
	c.topics, c.manual = nil, true
	c.setAssignment(tps)
	for _, tp := range tps {
		c.meta.want(tp.Topic)
	}
	return nil
}

// Assignment returns the assigned partitions, sorted.
func (c *Consumer) Assignment() []TopicPartition {
	out := make([]TopicPartition, len(c.parts))
	for i, p := range c.parts {
		out[i] = p.tp
	}
	return out
}

// AppendAssignment appends the assigned partitions, sorted, to dst and
// returns it: Assignment into a buffer the caller reuses.
func (c *Consumer) AppendAssignment(dst []TopicPartition) []TopicPartition {
	for _, p := range c.parts {
		dst = append(dst, p.tp)
	}
	return dst
}

// CommittedFetched is told each committed offset an OffsetFetch answered
// for an assigned partition (-1: the group has none), with when the
// request was sent. NB: not Kafka's API; kafkasim's harness records the
// answers for the checkers (a lost acknowledged commit shows there).
type CommittedFetched func(ctx *sim.Context, sent sim.Time, tp TopicPartition, offset int64)

// OnCommittedFetched sets the function told of OffsetFetch answers.
func (c *Consumer) OnCommittedFetched(f CommittedFetched) { c.fetched = f }

// Generation returns the group generation and member id the consumer is
// in (-1 and "" outside a group).
func (c *Consumer) Generation() (int32, string) { return c.group.generation, c.group.memberID }

func (c *Consumer) part(tp TopicPartition) *partState {
	i, ok := slices.BinarySearchFunc(c.parts, tp, func(p *partState, t TopicPartition) int { return assignor.Compare(p.tp, t) })
	if !ok {
		return nil
	}
	return c.parts[i]
}

// setAssignment replaces the assignment; kept partitions keep their state.
func (c *Consumer) setAssignment(tps []TopicPartition) {
	s := slices.Clone(tps)
	slices.SortFunc(s, assignor.Compare)
	s = slices.Compact(s)
	var parts []*partState
	for _, tp := range s {
		if p := c.part(tp); p != nil {
			parts = append(parts, p)
			continue
		}
		parts = append(parts, &partState{tp: tp, position: -1, fetchPos: -1, needCommitted: c.cfg.GroupID != "", needReset: c.cfg.GroupID == "",
			readReplica: -1, fetchingFrom: -1, posEpoch: -1, leaderSeen: partitionMeta{leader: -1, epoch: -1}, hw: -1})
	}
	c.parts = parts
}

// Position returns the offset of the next record Poll returns for tp.
func (c *Consumer) Position(tp TopicPartition) (int64, bool) {
	p := c.part(tp)
	if p == nil || p.position < 0 {
		return -1, false
	}
	return p.position, true
}

// HighWatermark returns the high watermark of an assigned partition as the
// last successful fetch response reported it (Kafka keeps it for
// records-lag and KIP-695's currentLag), and false before any did.
func (c *Consumer) HighWatermark(tp TopicPartition) (int64, bool) {
	p := c.part(tp)
	if p == nil || p.hw < 0 {
		return -1, false
	}
	return p.hw, true
}

// Closed reports whether Close was called.
func (c *Consumer) Closed() bool { return c.closed }

// Seek sets the position of an assigned partition; buffered and in-flight
// data for it is dropped.
func (c *Consumer) Seek(tp TopicPartition, offset int64) error {
	p := c.part(tp)
	switch {
	case offset < 0:
		return fmt.Errorf("client: Seek %v to %d: the offset must be >= 0", tp, offset)
	case p == nil:
		return fmt.Errorf("client: Seek %v: not assigned to this consumer", tp)
	}
	p.position, p.fetchPos, p.buffer = offset, offset, nil
	p.needCommitted, p.needReset, p.lookup, p.validate = false, false, false, false
	p.posEpoch = -1
	p.epoch++
	return nil
}

// SeekToBeginning resets the positions of tps (all assigned when empty) to
// the log start, as auto.offset.reset=earliest does.
func (c *Consumer) SeekToBeginning(tps []TopicPartition) { c.seekTo(tps, config.ResetEarliest) }

// SeekToEnd resets the positions of tps (all assigned when empty) to the HW.
func (c *Consumer) SeekToEnd(tps []TopicPartition) { c.seekTo(tps, config.ResetLatest) }

func (c *Consumer) seekTo(tps []TopicPartition, to config.AutoOffsetReset) {
	for _, p := range c.parts {
		if len(tps) == 0 || slices.Contains(tps, p.tp) {
			p.position, p.fetchPos, p.buffer = -1, -1, nil
			p.needCommitted, p.needReset, p.lookup, p.validate = false, true, false, false
			p.posEpoch = -1
			p.epoch++
			p.resetTo = to
		}
	}
}

// Poll returns the records buffered for the assigned partitions, at most
// max.poll.records, in offset order per partition, and advances the
// positions past them. It never waits: fetches run in the background.
// With enable.auto.commit it first commits the positions reached by the
// previous polls when auto.commit.interval.ms passed. A fatal error (a
// bad group configuration, ErrNoOffset) is returned once.
func (c *Consumer) Poll(ctx *sim.Context) ([]ConsumerRecord, error) {
	if c.closed {
		return nil, ErrConsumerClosed
	}
	now := ctx.Now()
	c.lastPoll = now
	if c.pollExpiry {
		c.pollExpiry = false
		c.group.needRejoin = true
	}
	if err := c.fatal; err != nil {
		if !c.group.instanceFenced {
			c.fatal = nil // NB: a fenced static member stays fenced: every Poll says so
		}
		return nil, err
	}
	if c.cfg.EnableAutoCommit && c.group.stable() && now >= c.autoNext {
		c.autoNext = now.Add(c.cfg.AutoCommitInterval)
		if offs := c.positions(); len(offs) > 0 {
			c.commit(ctx, offs, false, nil)
		}
	}
	// As Kafka's poll(): group work first (a pending rebalance revokes and
	// rejoins here, before any record is handed out), then the records.
	c.polling = true
	c.run(ctx)
	c.polling = false
	var out []ConsumerRecord
	n := len(c.parts)
	avail := 0
	for _, p := range c.parts {
		avail += len(p.buffer)
	}
	if m := min(avail, c.cfg.MaxPollRecords); m > 0 {
		out = make([]ConsumerRecord, 0, m) // NB: one allocation, not append's doublings
	}
	for i := 0; i < n && len(out) < c.cfg.MaxPollRecords; i++ {
		p := c.parts[(c.cursor+i)%n]
		take := min(len(p.buffer), c.cfg.MaxPollRecords-len(out))
		if take == 0 {
			continue
		}
		out = append(out, p.buffer[:take]...)
		p.position = p.buffer[take-1].Offset + 1
		p.posEpoch = p.buffer[take-1].LeaderEpoch
		p.buffer = p.buffer[take:]
		if len(p.buffer) == 0 && p.skipTo > p.position {
			p.position = p.skipTo // past control and aborted batches after the last record
		}
	}
	if n > 0 {
		c.cursor = (c.cursor + 1) % n
	}
	c.sendFetches(ctx)
	return out, nil
}

// positions returns the positions of the assigned partitions that have one.
func (c *Consumer) positions() []TopicPartitionOffset {
	var out []TopicPartitionOffset
	for _, p := range c.parts {
		if p.position >= 0 {
			out = append(out, TopicPartitionOffset{p.tp, p.position})
		}
	}
	return out
}

// Close commits the positions (with enable.auto.commit), leaves the group
// (a dynamic member: a static one only stops heartbeating, KIP-345) and
// stops the consumer.
func (c *Consumer) Close(ctx *sim.Context) {
	if c.closed {
		return
	}
	if c.cfg.EnableAutoCommit && c.group.stable() {
		if offs := c.positions(); len(offs) > 0 {
			c.commit(ctx, offs, false, nil)
		}
	}
	if c.group.memberID != "" {
		c.leave(ctx, "close")
	}
	c.closed = true
	ctx.Log("consumer-closed", sim.S("client-id", c.cfg.ClientID))
}

// HandleMessage processes m if it answers one of the consumer's requests.
func (c *Consumer) HandleMessage(ctx *sim.Context, from sim.NodeID, m sim.Message) bool {
	resp, ok := m.(*wire.Response)
	if !ok || !c.started || resp.CorrelationID < c.CorrelationBase || resp.CorrelationID > c.corr {
		return false
	}
	i, ok := c.findRequest(resp.CorrelationID)
	if !ok || c.requests[i].node != from || resp.Connection != c.enc.Connection {
		// Late, or written to the connection of this node's previous
		// life: a restarted consumer's correlation ids start over, and
		// its old sockets died with the old process (wire.Response).
		return true
	}
	r := c.requests[i]
	c.requests = slices.Delete(c.requests, i, i+1)
	delete(c.backoff, from)
	if !c.closed {
		r.done(ctx, resp.Body, nil)
		c.run(ctx)
	}
	return true
}

// HandleDisconnect fails every request in flight to node with
// ErrDisconnected, as Kafka's NetworkClient does when a connection is
// reset (the host node forwards sim.Disconnectable's notice here), so that
// a member waiting on a dead coordinator looks for the new one at once.
func (c *Consumer) HandleDisconnect(ctx *sim.Context, node sim.NodeID) {
	if !c.started || c.closed {
		return
	}
	c.connectionReset(ctx.Now(), node)
	var due []*consumerRequest
	for _, r := range c.requests { // NB: in correlation id order
		if r.node == node {
			due = append(due, r)
		}
	}
	if len(due) == 0 {
		return
	}
	ctx.Log("consumer-disconnected", sim.S("client-id", c.cfg.ClientID), sim.I("node", int64(node)), sim.I("in-flight", int64(len(due))))
	for _, r := range due {
		if c.takeRequest(r) { // NB: a callback below may have ended it
			r.done(ctx, nil, ErrDisconnected)
		}
	}
	c.run(ctx)
}

// HandleTimer processes the consumer's timer and reports whether id was it.
func (c *Consumer) HandleTimer(ctx *sim.Context, id sim.TimerID, name string) bool {
	if !strings.HasPrefix(name, ConsumerTimerPrefix) || id != c.timer {
		return false
	}
	if c.closed {
		return true
	}
	c.timer = ctx.SetTimer(consumerTick, timerConsumerTick)
	c.run(ctx)
	return true
}

// run is the consumer's network step.
func (c *Consumer) run(ctx *sim.Context) {
	if c.closed {
		return
	}
	c.expire(ctx)
	c.maybeMetadata(ctx)
	if !c.manual && len(c.topics) > 0 {
		c.runGroup(ctx)
	}
	c.sendCommits(ctx)
	c.lookupOffsets(ctx)
	c.validatePositions(ctx)
	c.sendFetches(ctx)
}
