package coordinator

// This file is the coordinator's frame: configuration, the host's
// environment, which __consumer_offsets partitions it leads (and whether it
// has loaded them), loading a partition's records after a fail-over, and
// the clock (Tick, NextDeadline) that expires sessions, MEMBER_ID_REQUIRED
// ids and rebalances.

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config is the coordinator's part of the broker configuration.
type Config struct {
	// Mutants are the planted bugs switched on (package mutant; none is Kafka).
	Mutants mutant.Set
	// BrokerID is broker.id, used in member ids.
	BrokerID int32
	// NumPartitions is offsets.topic.num.partitions (default 50).
	NumPartitions int
	// MinSessionTimeout and MaxSessionTimeout are
	// group.min.session.timeout.ms (6000) and group.max.session.timeout.ms
	// (1800000): a JoinGroup outside gets INVALID_SESSION_TIMEOUT.
	MinSessionTimeout, MaxSessionTimeout sim.Duration
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms (3000): an
	// Empty group waits this long for more members, extended by each join,
	// up to the rebalance timeout.
	InitialRebalanceDelay sim.Duration
	// Consumer configures the consumer group protocol (KIP-848,
	// consumergroup_heartbeat.go).
	Consumer ConsumerConfig
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig(brokerID int32) Config {
	return Config{BrokerID: brokerID, NumPartitions: 50, MinSessionTimeout: 6 * sim.Second,
		MaxSessionTimeout: 1800 * sim.Second, InitialRebalanceDelay: 3 * sim.Second, Consumer: DefaultConsumerConfig()}
}

// Validate reports the first setting outside its range.
func (c Config) Validate() error {
	switch {
	case c.NumPartitions < 1:
		return fmt.Errorf("offsets.topic.num.partitions %d: must be >= 1", c.NumPartitions)
	case c.MinSessionTimeout < 0 || c.MaxSessionTimeout < c.MinSessionTimeout:
		return fmt.Errorf("group.min.session.timeout.ms %d, group.max.session.timeout.ms %d: want 0 <= min <= max",
			c.MinSessionTimeout.Milliseconds(), c.MaxSessionTimeout.Milliseconds())
	case c.InitialRebalanceDelay < 0:
		return fmt.Errorf("group.initial.rebalance.delay.ms %d: must be >= 0", c.InitialRebalanceDelay.Milliseconds())
	}
	return c.Consumer.Validate()
}

// Env is what the coordinator asks of its host.
type Env struct {
	// Append appends records to __consumer_offsets-partition as its leader
	// with acks=all and calls done once they are committed (err nil) or
	// failed (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, ...,
	// REQUEST_TIMED_OUT). done may run inside Append.
	Append func(partition int32, records []storage.Record, done func(now sim.Time, err *kerr.Error))
	// AppendTxn appends records as Append does, in one transactional
	// batch of producerID and producerEpoch (TxnOffsetCommit): the
	// transaction's marker, written to the partition later, commits or
	// aborts them. Errors as Append's, plus the log's refusals of the
	// producer (INVALID_PRODUCER_EPOCH, ...). nil: transactional commits
	// answer COORDINATOR_NOT_AVAILABLE.
	AppendTxn func(partition int32, producerID int64, producerEpoch int16, records []storage.Record, done func(now sim.Time, err *kerr.Error))
	// Topics returns the cluster's topics (name, id, partition count) for
	// the consumer group protocol's assignors; nil: none.
	Topics func() []assignor.ServerTopic
	// Log writes a transition to the trace; nil logs nothing.
	Log func(kind string, fields ...sim.Field)
}

// Coordinator is the group coordinator of one broker.
type Coordinator struct {
	cfg    Config
	env    Env
	owned  map[int32]bool // partition -> loaded (false while loading)
	groups map[string]*group
	// cgroups are the consumer groups of the KIP-848 protocol
	// (consumergroup.go).
	cgroups map[string]*consumerGroup
	// loads counts each partition's BecomeLeader calls (ConsumerGroupView).
	loads map[int32]int64
	seq   int64
	// appendSeq orders the appends to each partition: at Load it starts
	// past the loaded log's last offset and each append takes the next
	// value, so it orders records as their log offsets do
	// (txn_offsets.go).
	appendSeq map[int32]int64
}

// New returns a coordinator that leads no partition yet. It panics on an
// invalid configuration.
func New(cfg Config, env Env) *Coordinator {
	if err := cfg.Validate(); err != nil {
		panic("coordinator.New: " + err.Error())
	}
	if env.Log == nil {
		env.Log = func(string, ...sim.Field) {}
	}
	return &Coordinator{cfg: cfg, env: env, owned: map[int32]bool{}, groups: map[string]*group{}, cgroups: map[string]*consumerGroup{}, loads: map[int32]int64{}, appendSeq: map[int32]int64{}}
}

// PartitionFor returns the __consumer_offsets partition of group.
func (c *Coordinator) PartitionFor(group string) int32 {
	return int32(CoordinatorPartition(group, c.cfg.NumPartitions))
}

// BecomeLeader starts loading partition: until Load, its groups get
// COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) BecomeLeader(now sim.Time, partition int32) {
	c.unload(partition)
	c.owned[partition] = false
	c.loads[partition]++
	c.env.Log("coordinator-loading", sim.I("partition", int64(partition)))
}

// Loading reports whether partition is led and still loading.
func (c *Coordinator) Loading(partition int32) bool {
	loaded, ok := c.owned[partition]
	return ok && !loaded
}

// Load finishes loading partition from its records, in offset order, as
// LoadBatches does with one non-transactional batch per record.
func (c *Coordinator) Load(now sim.Time, partition int32, records []storage.Record) error {
	batches := make([]storage.RecordBatch, len(records))
	for i, r := range records {
		batches[i] = storage.RecordBatch{BaseOffset: r.Offset, ProducerID: storage.NoProducerID, Records: []storage.Record{r}}
	}
	return c.LoadBatches(now, partition, batches)
}

// LoadBatches finishes loading partition from its batches, in offset order
// (the latest record of a key wins; a null value deletes). The offset
// records of a transactional batch stay pending for its producer until a
// control batch of that producer commits them (if newer than the
// committed offset's record) or aborts them; those still pending at the
// end wait for their marker (GroupMetadataManager.loadGroupsAndOffsets).
// Groups with members come back Stable with fresh session deadlines;
// groups without, Empty. It does nothing unless the partition is loading.
func (c *Coordinator) LoadBatches(now sim.Time, partition int32, batches []storage.RecordBatch) error {
	if !c.Loading(partition) {
		return nil
	}
	values := map[string]*kmsg.GroupMetadataValue{}
	offsets := map[string]map[TopicPartition]Offset{}
	offsetAt := map[string]map[TopicPartition]int64{}
	pending := map[int64]map[string]map[TopicPartition]*pendingOffset{}
	var order []string
	seen := map[string]bool{}
	records := 0
	var consumerRecs []ConsumerRecord
	commit := func(g string, tp TopicPartition, off Offset, at int64) {
		if offsets[g] == nil {
			offsets[g], offsetAt[g] = map[TopicPartition]Offset{}, map[TopicPartition]int64{}
		}
		offsets[g][tp], offsetAt[g][tp] = off, at
	}
	for bi := range batches {
		bt := &batches[bi]
		c.appendSeq[partition] = bt.NextOffset()
		if bt.Attributes&storage.ControlFlagMask != 0 {
			if len(bt.Records) == 0 {
				continue
			}
			m, err := storage.ParseEndTxnMarker(bt.Records[0].Key, bt.Records[0].Value)
			if err != nil {
				return fmt.Errorf("__consumer_offsets-%d offset %d: control batch: %w", partition, bt.BaseOffset, err)
			}
			if m.Commit() {
				for _, g := range sortedKeys(pending[bt.ProducerID]) {
					for _, tp := range sortedTPs(pending[bt.ProducerID][g]) {
						po := pending[bt.ProducerID][g][tp]
						if at, ok := offsetAt[g][tp]; !ok || at < po.at {
							commit(g, tp, po.off, po.at)
						}
					}
				}
			}
			delete(pending, bt.ProducerID)
			continue
		}
		txnl := bt.Attributes&storage.TransactionalFlagMask != 0
		for _, r := range bt.Records {
			records++
			if isConsumerRecord(r) {
				cr, err := decodeConsumerRecord(r)
				if err != nil {
					return fmt.Errorf("__consumer_offsets-%d offset %d: %w", partition, r.Offset, err)
				}
				consumerRecs = append(consumerRecs, cr)
				continue
			}
			d, err := Decode(r)
			if err != nil {
				return fmt.Errorf("__consumer_offsets-%d offset %d: %w", partition, r.Offset, err)
			}
			g := d.Group()
			if !seen[g] {
				seen[g] = true
				order = append(order, g)
			}
			switch {
			case d.OffsetKey != nil:
				tp := TopicPartition{d.OffsetKey.Topic, d.OffsetKey.Partition}
				switch v := d.OffsetValue; {
				case txnl && v != nil:
					if pending[bt.ProducerID] == nil {
						pending[bt.ProducerID] = map[string]map[TopicPartition]*pendingOffset{}
					}
					if pending[bt.ProducerID][g] == nil {
						pending[bt.ProducerID][g] = map[TopicPartition]*pendingOffset{}
					}
					pending[bt.ProducerID][g][tp] = &pendingOffset{off: offsetOf(v), appended: true, at: bt.BaseOffset}
				case v == nil:
					delete(offsets[g], tp)
					delete(offsetAt[g], tp)
				default:
					commit(g, tp, offsetOf(v), bt.BaseOffset)
				}
			default:
				values[g] = d.GroupValue // nil for a tombstone
			}
		}
	}
	hasPending := func(g string) bool {
		for _, byGroup := range pending {
			if len(byGroup[g]) > 0 {
				return true
			}
		}
		return false
	}
	slices.Sort(order)
	for _, id := range order {
		v := values[id]
		if v == nil && len(offsets[id]) == 0 && !hasPending(id) {
			continue
		}
		g := newGroup(id, partition)
		// NB: mutant.OffsetsLoadSkipped serves the group without the
		// offsets its partition holds: OffsetFetch answers -1 (none).
		if offsets[id] != nil && !c.cfg.Mutants.On(mutant.OffsetsLoadSkipped) {
			g.offsets, g.offsetAt = offsets[id], offsetAt[id]
		}
		for pid, byGroup := range pending { // NB: each producer's own map; order does not matter
			if len(byGroup[id]) > 0 {
				g.txnOffsets[pid] = byGroup[id]
			}
		}
		if v != nil {
			g.generation, g.protocolType = v.Generation, v.ProtocolType
			if v.Protocol != nil {
				g.protocol = *v.Protocol
			}
			if v.Leader != nil {
				g.leader = *v.Leader
			}
			for _, vm := range v.Members {
				g.addMember(&member{id: vm.MemberID, instanceID: instanceOf(vm.InstanceID), clientID: vm.ClientID,
					sessionTimeout: sim.Ms(int64(vm.SessionTimeoutMillis)), rebalanceTimeout: sim.Ms(int64(vm.RebalanceTimeoutMillis)),
					protocols:  []kmsg.JoinGroupRequestProtocol{{Name: g.protocol, Metadata: vm.Subscription}},
					assignment: vm.Assignment, lastHeartbeat: now})
			}
		}
		if len(g.members) > 0 {
			g.state = Stable
		}
		c.groups[id] = g
		c.env.Log("group-loaded", sim.S("group", g.describe()), sim.I("offsets", int64(len(g.offsets))))
		if n := len(g.txnOffsets); n > 0 {
			c.env.Log("group-loaded-pending-txn-offsets", sim.S("group", id), sim.I("producers", int64(n)))
		}
	}
	c.loadConsumerGroups(now, partition, consumerRecs)
	c.owned[partition] = true
	c.env.Log("coordinator-loaded", sim.I("partition", int64(partition)), sim.I("records", int64(records)))
	return nil
}

// Resign drops partition (this broker no longer leads it): its groups are
// forgotten and their parked requests answered NOT_COORDINATOR.
func (c *Coordinator) Resign(now sim.Time, partition int32) {
	if _, ok := c.owned[partition]; !ok {
		return
	}
	c.unload(partition)
	delete(c.owned, partition)
	c.env.Log("coordinator-resigned", sim.I("partition", int64(partition)))
}

func (c *Coordinator) unload(partition int32) {
	c.unloadConsumerGroups(partition)
	for _, id := range c.groupIDs() {
		g := c.groups[id]
		if g.partition != partition {
			continue
		}
		for _, mid := range g.memberIDs() {
			m := g.members[mid]
			if m.joinReply != nil {
				m.joinReply(joinError(kerr.NotCoordinator, mid))
				m.joinReply = nil
			}
			if m.syncReply != nil {
				m.syncReply(&kmsg.SyncGroupResponse{ErrorCode: kerr.NotCoordinator.Code})
				m.syncReply = nil
			}
		}
		g.state = Dead
		delete(c.groups, id)
	}
}

func (c *Coordinator) groupIDs() []string {
	ids := make([]string, 0, len(c.groups))
	for id := range c.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// checkGroup returns the error for a request about groupID that this
// coordinator cannot serve now.
func (c *Coordinator) checkGroup(groupID string) *kerr.Error {
	if groupID == "" {
		return kerr.InvalidGroupID
	}
	loaded, ok := c.owned[c.PartitionFor(groupID)]
	switch {
	case !ok:
		return kerr.NotCoordinator
	case !loaded:
		return kerr.CoordinatorLoadInProgress
	}
	return nil
}

// Group describes a group for observers: its state, generation, leader and
// members (sorted), and whether it exists here.
func (c *Coordinator) Group(id string) (state State, generation int32, leader string, members []string, ok bool) {
	g := c.groups[id]
	if g == nil {
		return Dead, -1, "", nil, false
	}
	return g.state, g.generation, g.leader, g.memberIDs(), true
}

// Committed returns a group's committed offset of a partition.
func (c *Coordinator) Committed(group, topic string, partition int32) (Offset, bool) {
	g := c.groups[group]
	if g == nil {
		return Offset{}, false
	}
	o, ok := g.offsets[TopicPartition{topic, partition}]
	return o, ok
}

func (c *Coordinator) newMemberID(clientID string, now sim.Time) string {
	c.seq++
	return clientID + "-" + strconv.Itoa(int(c.cfg.BrokerID)) + "." + strconv.FormatInt(ms(now), 10) + "." + strconv.FormatInt(c.seq, 10)
}

// NextDeadline returns the earliest time Tick has something to do.
func (c *Coordinator) NextDeadline() (sim.Time, bool) {
	var at sim.Time
	found := false
	take := func(t sim.Time) {
		if !found || t < at {
			at, found = t, true
		}
	}
	c.consumerDeadline(take)
	// NB: only minima are taken, so map order does not matter.
	for _, g := range c.groups {
		for _, exp := range g.pending {
			take(exp)
		}
		if g.state == PreparingRebalance {
			take(g.joinDeadline)
		}
		for _, m := range g.members {
			if !m.awaitingJoin() && m.syncReply == nil {
				take(m.lastHeartbeat.Add(m.sessionTimeout))
			}
		}
	}
	return at, found
}

// Tick expires what is due at now: MEMBER_ID_REQUIRED ids never used,
// members whose session timed out, and rebalances whose time is up.
func (c *Coordinator) Tick(now sim.Time) {
	c.tickConsumer(now)
	for _, id := range c.groupIDs() {
		g := c.groups[id]
		if g == nil {
			continue
		}
		for _, pid := range g.pendingIDs() {
			if g.pending[pid] <= now {
				delete(g.pending, pid)
				c.env.Log("member-id-expired", sim.S("group", id), sim.S("member", pid))
			}
		}
		for _, mid := range g.memberIDs() {
			m := g.members[mid]
			if m == nil || m.awaitingJoin() || m.syncReply != nil {
				continue
			}
			if m.lastHeartbeat.Add(m.sessionTimeout) <= now {
				c.env.Log("member-session-expired", sim.S("group", id), sim.S("member", mid), sim.I("generation", int64(g.generation)))
				c.removeMember(now, g, mid)
			}
		}
		if g.state == PreparingRebalance && (g.joinDeadline <= now || (!g.initialDelay && g.allJoined())) {
			c.completeJoin(now, g)
		}
	}
}
