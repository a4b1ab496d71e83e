package kraft

// This file is the controller's core (QuorumController, Kafka 4.0): the
// committed image built from HandleCommit, the working image the active
// controller applies its own records to as it appends them, the replies
// that wait for their records to commit, and the leadership changes that
// make it active or discard its uncommitted state.
//
// Simplified: requests run one at a time to completion (no event queue,
// no deadlines); the next write offset is taken from the quorum
// (LogEndOffset when the quorum offers it, else the high watermark at
// activation) and corrected from what Append returns.

import (
	"fmt"
	"math"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Quorum is what the controller needs of the raft client.
type Quorum interface {
	// Append writes records as one batch (leader only) and returns the
	// offset of the last one.
	Append(ctx *sim.Context, records [][]byte) (lastOffset int64, err error)
	Leader() raft.LeaderAndEpoch
	// HighWatermark is the offset after the last committed record.
	HighWatermark() int64
}

// logEnd is implemented by a quorum that can tell its log end offset: the
// offset the next Append will start at (KafkaRaftClient.logEndOffset).
type logEnd interface {
	LogEndOffset() int64
}

// Config is the controller's configuration, from Kafka's properties.
type Config struct {
	// Mutants are the planted bugs switched on (package mutant; none is Kafka).
	Mutants mutant.Set
	// NodeID is node.id.
	NodeID int32
	// ClusterID is cluster.id; a BrokerRegistration for another cluster
	// gets INCONSISTENT_CLUSTER_ID. Empty skips the check.
	ClusterID string
	// SessionTimeout is broker.session.timeout.ms (9000).
	SessionTimeout sim.Duration
	// Unclean is unclean.leader.election.enable for a topic (the topic's
	// config, else the cluster's; default false). Nil means false.
	Unclean func(topic string) bool
	// UncleanElection: the controller consults Unclean at all (3.9 on,
	// KAFKA-12670). False is a 3.3-3.8 controller, whose
	// uncleanLeaderElectionEnabledForTopic always returned false.
	UncleanElection bool
	// UncleanCheckInterval is unclean.leader.election.interval.ms
	// (300000): with UncleanElection, how often the active controller
	// elects leaders for leaderless partitions (unclean_check.go).
	UncleanCheckInterval sim.Duration
	// ElectFencedLastKnownLeader is 4.0.0's KAFKA-19522: the
	// last-known-leader election (change.go) takes that broker even while
	// it is fenced. False from 4.0.1.
	ElectFencedLastKnownLeader bool
	// DefaultReplicationFactor is default.replication.factor (1).
	DefaultReplicationFactor int
	// NumPartitions is num.partitions (1).
	NumPartitions int
	// DeleteTopicEnable is delete.topic.enable (true).
	DeleteTopicEnable bool
	// TopicConfigDefault is the value of a topic config a topic does not
	// set (the broker's), for IncrementalAlterConfigs' APPEND and
	// SUBTRACT; nil means "".
	TopicConfigDefault func(name string) string
	// ProducerIDBlockSize is the block AllocateProducerIds hands out
	// (ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE, 1000).
	ProducerIDBlockSize int64
	// ELR is eligible.leader.replicas.version >= 1 (KIP-966 part 1,
	// change.go); off by default, as in Kafka 4.0.
	ELR bool
	// MinISR is a topic's min.insync.replicas (its config, else the
	// cluster's), which decides when replicas enter the ELR. Nil means 1.
	MinISR func(topic string) int
	// MetadataVersion is the metadata.version level the controller
	// bootstraps an empty log with (25 = 4.0-IV3).
	MetadataVersion int16
}

// Validate reports the first setting out of range.
func (c Config) Validate() error {
	switch {
	case c.SessionTimeout <= 0:
		return fmt.Errorf("broker.session.timeout.ms %d: must be > 0", c.SessionTimeout.Milliseconds())
	case c.DefaultReplicationFactor <= 0 || c.DefaultReplicationFactor > math.MaxInt16:
		return fmt.Errorf("default.replication.factor %d: must be in [1, 32767]", c.DefaultReplicationFactor)
	case c.NumPartitions <= 0:
		return fmt.Errorf("num.partitions %d: must be > 0", c.NumPartitions)
	case c.ProducerIDBlockSize <= 0:
		return fmt.Errorf("producer id block size %d: must be > 0", c.ProducerIDBlockSize)
	case c.MetadataVersion < 0:
		return fmt.Errorf("metadata.version level %d: must be >= 0", c.MetadataVersion)
	case c.UncleanElection && c.UncleanCheckInterval <= 0:
		return fmt.Errorf("unclean.leader.election.interval.ms %d: must be >= 1", c.UncleanCheckInterval.Milliseconds())
	}
	return nil
}

// DefaultConfig returns Kafka's defaults for node id.
func DefaultConfig(id int32) Config {
	return Config{NodeID: id, SessionTimeout: sim.Ms(9000), DefaultReplicationFactor: 1, NumPartitions: 1, DeleteTopicEnable: true,
		ProducerIDBlockSize: 1000, MetadataVersion: metadata.MetadataVersion40IV3,
		UncleanElection: true, UncleanCheckInterval: sim.Ms(300000)}
}

// state is an image plus the offsets of the brokers' RegisterBrokerRecords
// (ClusterControlManager.registerBrokerRecordOffsets).
type state struct {
	img       *metadata.Image
	regOffset map[int32]int64
}

func newState(mutants mutant.Set) *state {
	img := metadata.NewImage()
	img.SetMutants(mutants)
	return &state{img: img, regOffset: map[int32]int64{}}
}

func (s *state) clone() *state {
	c := &state{img: s.img.Clone(), regOffset: make(map[int32]int64, len(s.regOffset))}
	for k, v := range s.regOffset {
		c.regOffset[k] = v
	}
	return c
}

func (s *state) replay(r metadata.Record, offset int64) error {
	if err := s.img.Replay(r); err != nil {
		return err
	}
	if x, ok := r.(*metadata.RegisterBrokerRecord); ok {
		s.regOffset[x.BrokerID] = offset
	}
	return nil
}

// pending is a reply waiting for offset to commit.
type pending struct {
	offset int64
	ok     func()
	fail   func(kerr *kerr.Error)
}

// Controller is a KRaft controller node's state machine.
type Controller struct {
	cfg           Config
	q             Quorum
	committed     *state
	working       *state // == committed while inactive
	lastCommitted int64
	active        bool
	epoch         int32
	nextWrite     int64
	pending       []pending
	sessions      map[int32]*session
	fenceTimer    sim.TimerID
	fenceArmed    bool
	unclean       uncleanCheck
	// previousEpochs keeps each broker's PreviousBrokerEpoch from its last
	// BrokerRegistration (KIP-966 unclean-shutdown detection).
	previousEpochs map[int32]int64
}

// New returns a controller over quorum q.
func New(cfg Config, q Quorum) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if q == nil {
		return nil, fmt.Errorf("kraft: nil quorum")
	}
	c := &Controller{cfg: cfg, q: q, committed: newState(cfg.Mutants), lastCommitted: -1, epoch: -1,
		sessions: map[int32]*session{}, previousEpochs: map[int32]int64{}}
	c.working = c.committed
	return c, nil
}

// Start is called when the node starts: the controller begins empty and
// learns the log through the listener calls.
func (c *Controller) Start(ctx *sim.Context) {}

// Active reports whether this controller is the active one.
func (c *Controller) Active() bool { return c.active }

// Epoch returns the controller epoch: the quorum epoch it last saw.
func (c *Controller) Epoch() int32 { return c.epoch }

// Image returns the committed image (do not change it).
func (c *Controller) Image() *metadata.Image { return c.committed.img }

// PreviousBrokerEpoch returns the PreviousBrokerEpoch a broker sent with
// its last registration (-1 if none).
func (c *Controller) PreviousBrokerEpoch(broker int32) int64 {
	if e, ok := c.previousEpochs[broker]; ok {
		return e
	}
	return -1
}

// HandleCommit implements raft.Listener.
func (c *Controller) HandleCommit(ctx *sim.Context, b raft.Batch) {
	for i, raw := range b.Records {
		off := b.BaseOffset + int64(i)
		if off <= c.lastCommitted {
			continue
		}
		r, err := metadata.Decode(raw)
		if err != nil {
			panic(fmt.Sprintf("kraft: node %d: committed record at offset %d: %v", c.cfg.NodeID, off, err))
		}
		if err := c.committed.replay(r, off); err != nil {
			panic(fmt.Sprintf("kraft: node %d: replaying committed record at offset %d: %v", c.cfg.NodeID, off, err))
		}
		c.lastCommitted = off
		logCommitted(ctx, r, c.committed.img, off)
	}
	if b.LastOffset() > c.lastCommitted {
		c.lastCommitted = b.LastOffset()
	}
	c.completePending()
}

// HandleLoadSnapshot implements raft.Listener.
func (c *Controller) HandleLoadSnapshot(ctx *sim.Context, s raft.Snapshot) {
	if c.active {
		c.renounce(ctx, "snapshot-load")
	}
	st := newState(c.cfg.Mutants)
	for _, raw := range s.Records {
		r, err := metadata.Decode(raw)
		if err != nil {
			panic(fmt.Sprintf("kraft: node %d: snapshot record: %v", c.cfg.NodeID, err))
		}
		if err := st.replay(r, s.EndOffset-1); err != nil {
			panic(fmt.Sprintf("kraft: node %d: replaying snapshot: %v", c.cfg.NodeID, err))
		}
	}
	c.committed, c.working, c.lastCommitted = st, st, s.EndOffset-1
}

// HandleLeaderChange implements raft.Listener.
func (c *Controller) HandleLeaderChange(ctx *sim.Context, l raft.LeaderAndEpoch) {
	if l.Leader == c.cfg.NodeID {
		if c.active && l.Epoch == c.epoch {
			return
		}
		if c.active {
			c.renounce(ctx, "new-epoch")
		}
		c.epoch = l.Epoch
		c.activate(ctx)
		return
	}
	c.epoch = l.Epoch
	if c.active {
		c.renounce(ctx, "leader-change")
	}
}

// Snapshot implements raft.Listener: the committed image as records.
func (c *Controller) Snapshot() [][]byte {
	var out [][]byte
	for _, r := range c.committed.img.Records() {
		out = append(out, metadata.Encode(r))
	}
	return out
}

func (c *Controller) activate(ctx *sim.Context) {
	c.active = true
	c.working = c.committed.clone()
	c.nextWrite = c.lastCommitted + 1
	if le, ok := c.q.(logEnd); ok {
		c.nextWrite = le.LogEndOffset()
	} else if hw := c.q.HighWatermark(); hw > c.nextWrite {
		c.nextWrite = hw
	}
	ctx.Log("controller-active", sim.I("epoch", int64(c.epoch)), sim.I("next-offset", c.nextWrite))
	// On failover every registered broker gets a fresh session
	// (ClusterControlManager.activate re-registers them with the new
	// BrokerHeartbeatManager, touching each at the current time).
	c.sessions = map[int32]*session{}
	for _, b := range c.working.img.Brokers() {
		c.sessions[b.ID] = &session{lastContact: ctx.Now(), fenced: b.Fenced, metadataOffset: -1, shutdownOffset: -1}
	}
	c.armFenceTimer(ctx)
	c.maybeScheduleUncleanCheck(ctx)
	if c.working.img.Feature(metadata.MetadataVersionFeature) == 0 && c.lastCommitted < 0 {
		// ActivationRecordsGenerator: an empty log is bootstrapped with
		// the metadata.version record first.
		c.write(ctx, []metadata.Record{&metadata.FeatureLevelRecord{Name: metadata.MetadataVersionFeature, FeatureLevel: c.cfg.MetadataVersion}}, func() {}, func(*kerr.Error) {})
	}
}

// renounce gives up activeness: uncommitted state is discarded and every
// waiting reply fails with NOT_CONTROLLER.
func (c *Controller) renounce(ctx *sim.Context, why string) {
	c.active = false
	c.working = c.committed
	if c.fenceArmed {
		ctx.CancelTimer(c.fenceTimer)
		c.fenceArmed = false
	}
	c.cancelUncleanCheck(ctx)
	c.sessions = map[int32]*session{}
	ps := c.pending
	c.pending = nil
	ctx.Log("controller-inactive", sim.I("epoch", int64(c.epoch)), sim.S("reason", why), sim.I("failed", int64(len(ps))))
	for _, p := range ps {
		p.fail(kerr.NotController)
	}
}

// write appends records (applied at once to the working image) and calls
// ok once they commit, or fail if leadership is lost first. With no
// records it waits for everything written before to commit, as
// QuorumController does for a read-only result.
func (c *Controller) write(ctx *sim.Context, recs []metadata.Record, ok func(), fail func(*kerr.Error)) (lastOffset int64) {
	return c.append(ctx, recs, true, ok, fail)
}

// writeReplayed is write for records already applied to the working image.
func (c *Controller) writeReplayed(ctx *sim.Context, recs []metadata.Record, ok func(), fail func(*kerr.Error)) (lastOffset int64) {
	return c.append(ctx, recs, false, ok, fail)
}

func (c *Controller) append(ctx *sim.Context, recs []metadata.Record, replay bool, ok func(), fail func(*kerr.Error)) (lastOffset int64) {
	// After every write event QuorumController schedules the unclean
	// check if a partition is leaderless (maybeScheduleNextElectUncleanLeaders).
	defer c.maybeScheduleUncleanCheck(ctx)
	if len(recs) == 0 {
		c.pending = append(c.pending, pending{offset: c.nextWrite - 1, ok: ok, fail: fail})
		c.completePending()
		return c.nextWrite - 1
	}
	raw := make([][]byte, len(recs))
	for i, r := range recs {
		raw[i] = metadata.Encode(r)
		if !replay {
			continue
		}
		if err := c.working.replay(r, c.nextWrite+int64(i)); err != nil {
			panic(fmt.Sprintf("kraft: node %d generated a record that does not fit: %T %+v: %v", c.cfg.NodeID, r, r, err))
		}
	}
	last, err := c.q.Append(ctx, raw)
	if err != nil {
		ctx.Log("controller-append-failed", sim.S("error", err.Error()))
		c.pending = append(c.pending, pending{offset: math.MaxInt64, ok: ok, fail: fail})
		c.renounce(ctx, "append-failed")
		return -1
	}
	if want := c.nextWrite + int64(len(recs)) - 1; last != want {
		ctx.Log("controller-offset-mismatch", sim.I("expected", want), sim.I("got", last))
	}
	c.nextWrite = last + 1
	c.pending = append(c.pending, pending{offset: last, ok: ok, fail: fail})
	c.completePending()
	return last
}

// completePending runs the replies whose records have committed, in order.
func (c *Controller) completePending() {
	for len(c.pending) > 0 && c.pending[0].offset <= c.lastCommitted {
		p := c.pending[0]
		c.pending = c.pending[1:]
		p.ok()
	}
}

// Handle serves the controller's APIs; it returns false for others.
func (c *Controller) Handle(ctx *sim.Context, from int32, req kmsg.Request, reply func(kmsg.Response)) bool {
	switch r := req.(type) {
	case *kmsg.BrokerRegistrationRequest:
		if !c.active {
			resp := r.ResponseKind().(*kmsg.BrokerRegistrationResponse)
			resp.ErrorCode = kerr.NotController.Code
			reply(resp)
			return true
		}
		c.brokerRegistration(ctx, r, reply)
	case *kmsg.BrokerHeartbeatRequest:
		if !c.active {
			resp := r.ResponseKind().(*kmsg.BrokerHeartbeatResponse)
			resp.ErrorCode = kerr.NotController.Code
			reply(resp)
			return true
		}
		c.brokerHeartbeat(ctx, r, reply)
	case *kmsg.AlterPartitionRequest:
		if !c.active {
			resp := r.ResponseKind().(*kmsg.AlterPartitionResponse)
			resp.ErrorCode = kerr.NotController.Code
			reply(resp)
			return true
		}
		c.alterPartition(ctx, r, reply)
	case *kmsg.CreateTopicsRequest:
		if !c.active {
			reply(createTopicsError(r, kerr.NotController))
			return true
		}
		c.createTopics(ctx, r, reply)
	case *kmsg.DeleteTopicsRequest, *kmsg.CreatePartitionsRequest, *kmsg.AlterConfigsRequest,
		*kmsg.IncrementalAlterConfigsRequest, *kmsg.ElectLeadersRequest:
		if !c.active {
			reply(ErrorResponse(req, kerr.NotController))
			return true
		}
		c.handleAdmin(ctx, req, reply)
	case *kmsg.AllocateProducerIDsRequest:
		if !c.active {
			resp := r.ResponseKind().(*kmsg.AllocateProducerIDsResponse)
			resp.ErrorCode = kerr.NotController.Code
			reply(resp)
			return true
		}
		c.allocateProducerIDs(ctx, r, reply)
	default:
		return false
	}
	return true
}

// Timer handles the controller's timers ("controller-..."); it returns
// false for others.
func (c *Controller) Timer(ctx *sim.Context, id sim.TimerID, name string) bool {
	switch name {
	case timerFenceStale:
		if c.fenceArmed && id == c.fenceTimer {
			c.fenceArmed = false
			c.maybeFenceStaleBroker(ctx)
		}
		return true
	case timerUncleanCheck:
		if c.unclean.armed && id == c.unclean.timer {
			c.unclean.armed = false
			c.electUncleanLeaders(ctx)
		}
		return true
	}
	return false
}
