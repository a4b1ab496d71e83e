package client

// This file is the share consumer's public face and its membership
// (KIP-932, Kafka 4.2's KafkaShareConsumer: ShareConsumerImpl,
// ShareMembershipManager and ShareHeartbeatRequestManager). A share member
// finds the group coordinator (FindCoordinator key type 0: share groups
// live on the group coordinator; key type 2 is the share coordinator,
// which only brokers ask), sends ShareGroupHeartbeat (API 76) every
// heartbeat interval the coordinator gives, with its client-generated
// member id (KIP-1082) and subscription, and takes the assignment the
// answer carries at once: share groups have no revocation protocol, since
// several members may read one partition and records are locked one at a
// time, not partitions owned. Fetching and acknowledging are in
// share_consumer_fetch.go.
//
// Errors: FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID rejoin at epoch 0
// with the same member id, the assignment dropped; NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE and a lost answer find the coordinator again;
// COORDINATOR_LOAD_IN_PROGRESS retries after retry.backoff.ms; others
// (GROUP_MAX_SIZE_REACHED, INVALID_REQUEST, UNSUPPORTED_VERSION) are
// fatal, returned by Poll.
//
// Simplified vs Kafka: every heartbeat carries the subscription (Kafka
// sends it only when it changed); no rack; the network plumbing
// (correlation ids, request timeouts, metadata, the coordinator lookup)
// is the classic consumer's (an embedded Consumer that is never
// subscribed and owns no partition).

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The values of share.acknowledgement.mode.
const (
	ShareAckImplicit = "implicit"
	ShareAckExplicit = "explicit"
)

// ShareConsumerConfig configures a share consumer: the consumer properties
// it shares with KafkaConsumer (group.id, client.id, request.timeout.ms,
// retry.backoff.ms, fetch.max.wait.ms, max.poll.records) and its own.
type ShareConsumerConfig struct {
	Consumer config.Consumer
	// AcknowledgementMode is share.acknowledgement.mode: "implicit"
	// (Kafka's default: the next Poll, or Close, accepts what the last
	// Poll returned) or "explicit" (Acknowledge each record).
	AcknowledgementMode string
}

// Validate checks the configuration.
func (c ShareConsumerConfig) Validate() error {
	if c.Consumer.GroupID == "" {
		return errors.New("group.id: a share consumer needs one")
	}
	if c.AcknowledgementMode != ShareAckImplicit && c.AcknowledgementMode != ShareAckExplicit {
		return fmt.Errorf("share.acknowledgement.mode=%q: want implicit or explicit", c.AcknowledgementMode)
	}
	return c.Consumer.Validate()
}

// ShareRecord is a record Poll returns to a share consumer's application.
type ShareRecord struct {
	Topic         string
	Partition     int32
	Offset        int64
	Key, Value    []byte
	DeliveryCount int16
}

// TopicPartition returns the record's partition.
func (r ShareRecord) TopicPartition() TopicPartition {
	return TopicPartition{Topic: r.Topic, Partition: r.Partition}
}

// ShareHooks tell the host what the consumer did, for its history. Each
// may be nil.
type ShareHooks struct {
	// OnAcquired: a ShareFetch sent at sent acquired recs (one partition's);
	// also called, with none, for the first answer of each partition.
	OnAcquired func(ctx *sim.Context, sent sim.Time, broker int32, tp TopicPartition, recs []ShareRecord)
	// OnAckSent: acknowledgements of offsets with ackType go out now; the
	// token it returns comes back to OnAcknowledged (a member that dies
	// first never answers: its history keeps them pending, unknown).
	OnAckSent func(ctx *sim.Context, tp TopicPartition, ackType int8, offsets []int64) any
	// OnAcknowledged: acknowledgements of offsets with ackType sent at
	// sent were answered with errCode (0: done), or, with err set, their
	// outcome is unknown (timeout, lost connection).
	OnAcknowledged func(ctx *sim.Context, token any, sent sim.Time, tp TopicPartition, ackType int8, offsets []int64, errCode int16, err error)
}

// ShareConsumer is Kafka's KafkaShareConsumer as a library embedded in a
// node, driven as Consumer is (Start, HandleMessage, HandleDisconnect,
// HandleTimer).
type ShareConsumer struct {
	Hooks ShareHooks

	cfg      ShareConsumerConfig
	net      *Consumer // network plumbing only (never subscribed)
	topics   []string  // sorted
	memberID string
	epoch    int32 // 0 before joining, -1 after leaving
	interval sim.Duration
	hbFlight bool
	hbNext   sim.Time
	assigned []TopicPartition // sorted
	// target is the last assignment the coordinator sent, by topic id,
	// while hasTarget: not yet resolved to names (resolveTarget).
	target    []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition
	hasTarget bool
	fatal     error
	closed    bool
	// The fetch side (share_consumer_fetch.go).
	sessions  []*shareSession  // one per leader, sorted by broker
	buffered  []ShareRecord    // acquired, not yet returned by Poll
	delivered []ShareRecord    // returned by the last Poll, not yet acknowledged
	acks      []pendingAck     // acknowledgements not yet sent
	answered  []TopicPartition // partitions a ShareFetch answered without error
}

// NewShareConsumer returns a share consumer with cfg over the bootstrap
// brokers, or the configuration's error.
func NewShareConsumer(cfg ShareConsumerConfig, bootstrap []int32) (*ShareConsumer, error) {
	if cfg.AcknowledgementMode == "" {
		cfg.AcknowledgementMode = ShareAckImplicit
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("client.NewShareConsumer: %w", err)
	}
	inner := cfg.Consumer
	inner.GroupProtocol = config.GroupProtocolConsumer // Metadata v12: topic ids
	net, err := NewConsumer(inner, bootstrap)
	if err != nil {
		return nil, err
	}
	return &ShareConsumer{cfg: cfg, net: net}, nil
}

// Config returns the consumer's configuration.
func (s *ShareConsumer) Config() ShareConsumerConfig { return s.cfg }

// MemberID returns the member id (empty before Start).
func (s *ShareConsumer) MemberID() string { return s.memberID }

// Start starts the consumer: a member id from the node's random stream
// (Kafka's client draws a random Uuid, KIP-1082).
func (s *ShareConsumer) Start(ctx *sim.Context) {
	var id [16]byte
	for i := range id {
		id[i] = byte(ctx.Rand().IntN(256))
	}
	s.memberID = base64.RawURLEncoding.EncodeToString(id[:])
	s.net.Start(ctx)
	ctx.Log("share-consumer-start", sim.S("client-id", s.cfg.Consumer.ClientID), sim.S("group", s.cfg.Consumer.GroupID), sim.S("member", s.memberID))
}

// Subscribe subscribes to topics.
func (s *ShareConsumer) Subscribe(ctx *sim.Context, topics []string) error {
	if s.closed {
		return ErrConsumerClosed
	}
	if len(topics) == 0 {
		return errors.New("client.ShareConsumer.Subscribe: no topics")
	}
	s.topics = slices.Sorted(slices.Values(topics))
	for _, t := range s.topics {
		s.net.meta.want(t)
	}
	s.net.meta.needUpdate = true
	s.run(ctx)
	return nil
}

// Assignment returns the partitions the coordinator assigned, sorted.
func (s *ShareConsumer) Assignment() []TopicPartition { return slices.Clone(s.assigned) }

// Closed reports whether Close was called.
func (s *ShareConsumer) Closed() bool { return s.closed }

// HandleMessage processes m if it answers one of the consumer's requests.
func (s *ShareConsumer) HandleMessage(ctx *sim.Context, from sim.NodeID, m sim.Message) bool {
	if !s.net.HandleMessage(ctx, from, m) {
		return false
	}
	s.run(ctx)
	return true
}

// HandleDisconnect fails the requests in flight to node.
func (s *ShareConsumer) HandleDisconnect(ctx *sim.Context, node sim.NodeID) {
	s.net.HandleDisconnect(ctx, node)
	s.run(ctx)
}

// HandleTimer processes the consumer's timer and reports whether id was it.
func (s *ShareConsumer) HandleTimer(ctx *sim.Context, id sim.TimerID, name string) bool {
	if !s.net.HandleTimer(ctx, id, name) {
		return false
	}
	s.run(ctx)
	return true
}

// run is the consumer's network step.
func (s *ShareConsumer) run(ctx *sim.Context) {
	if s.closed || s.fatal != nil || len(s.topics) == 0 {
		return
	}
	s.resolveTarget(ctx)
	s.heartbeat(ctx)
	s.sendFetches(ctx)
}

// heartbeat sends ShareGroupHeartbeat when one is due.
func (s *ShareConsumer) heartbeat(ctx *sim.Context) {
	g := &s.net.group
	if !s.net.ensureCoordinator(ctx) || s.hbFlight || ctx.Now() < s.hbNext || ctx.Now() < g.retryAt {
		return
	}
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version, req.GroupID, req.MemberID, req.MemberEpoch = 1, s.cfg.Consumer.GroupID, s.memberID, s.epoch
	req.SubscribedTopicNames = slices.Clone(s.topics)
	s.hbFlight = true
	sentEpoch := s.epoch
	s.net.call(ctx, g.coordinator, req, func(ctx *sim.Context, resp kmsg.Response, err error) {
		s.hbFlight = false
		r, _ := resp.(*kmsg.ShareGroupHeartbeatResponse)
		if err != nil || r == nil {
			s.net.coordinatorLost(ctx, "heartbeat: "+errString(err))
			return
		}
		if s.closed || sentEpoch != s.epoch {
			return // a heartbeat of a membership since left or fenced
		}
		s.heartbeated(ctx, r)
	})
}

// heartbeated applies a ShareGroupHeartbeat answer.
func (s *ShareConsumer) heartbeated(ctx *sim.Context, r *kmsg.ShareGroupHeartbeatResponse) {
	switch e := kerr.ErrorForCode(r.ErrorCode); e {
	case nil:
	case kerr.NotCoordinator, kerr.CoordinatorNotAvailable:
		s.net.coordinatorLost(ctx, e.Error())
		return
	case kerr.CoordinatorLoadInProgress:
		s.hbNext = ctx.Now().Add(s.cfg.Consumer.RetryBackoff)
		return
	case kerr.FencedMemberEpoch, kerr.UnknownMemberID:
		ctx.Log("share-consumer-fenced", sim.S("client-id", s.cfg.Consumer.ClientID), sim.S("error", e.Error()), sim.I("epoch", int64(s.epoch)))
		s.epoch, s.assigned, s.hasTarget = 0, nil, false
		return
	default:
		s.fatal = e
		ctx.Log("share-consumer-fatal", sim.S("client-id", s.cfg.Consumer.ClientID), sim.S("error", e.Error()))
		return
	}
	s.epoch = r.MemberEpoch
	if r.HeartbeatIntervalMillis > 0 {
		s.interval = sim.Ms(int64(r.HeartbeatIntervalMillis))
	}
	s.hbNext = ctx.Now().Add(s.interval)
	if r.Assignment == nil {
		return
	}
	s.target = slices.Clone(r.Assignment.TopicPartitions)
	s.hasTarget = true
	s.resolveTarget(ctx)
}

// resolveTarget makes the coordinator's last assignment the member's once
// the metadata names all its topic ids (Kafka's ShareMembershipManager
// keeps an assignment of unknown topic ids until metadata resolves them:
// the coordinator sends an assignment only when it changes).
func (s *ShareConsumer) resolveTarget(ctx *sim.Context) {
	if !s.hasTarget {
		return
	}
	var tps []TopicPartition
	for _, t := range s.target {
		name, ok := s.net.topicName(t.TopicID)
		if !ok {
			s.net.meta.needUpdate = true
			return
		}
		for _, p := range t.Partitions {
			tps = append(tps, TopicPartition{Topic: name, Partition: p})
		}
	}
	slices.SortFunc(tps, compareTP)
	s.hasTarget = false
	if !slices.Equal(tps, s.assigned) {
		s.assigned = tps
		ctx.Log("share-consumer-assigned", sim.S("client-id", s.cfg.Consumer.ClientID), sim.I("epoch", int64(s.epoch)), sim.S("partitions", tpList(tps)))
	}
}

func errString(err error) string {
	if err == nil {
		return "no answer"
	}
	return err.Error()
}

// Poll returns the records acquired since the last Poll (at most
// max.poll.records). In implicit mode it first accepts what the last Poll
// returned; in explicit mode the application acknowledged them, and any
// it did not stays acquired until its lock expires.
func (s *ShareConsumer) Poll(ctx *sim.Context) ([]ShareRecord, error) {
	if s.closed {
		return nil, ErrConsumerClosed
	}
	if s.fatal != nil {
		return nil, s.fatal
	}
	if s.cfg.AcknowledgementMode == ShareAckImplicit {
		for _, r := range s.delivered {
			s.queueAck(r, AckAccept)
		}
	}
	s.delivered = nil
	n := min(len(s.buffered), s.cfg.Consumer.MaxPollRecords)
	out := slices.Clone(s.buffered[:n])
	s.buffered = slices.Delete(s.buffered, 0, n)
	s.delivered = slices.Clone(out)
	s.run(ctx)
	return out, nil
}

// Acknowledge acknowledges a record the last Poll returned with ackType
// (AckAccept, AckRelease, AckReject), in explicit mode.
func (s *ShareConsumer) Acknowledge(r ShareRecord, ackType int8) error {
	if s.cfg.AcknowledgementMode != ShareAckExplicit {
		return errors.New("client.ShareConsumer.Acknowledge: share.acknowledgement.mode is implicit")
	}
	if ackType < AckAccept || ackType > AckReject {
		return fmt.Errorf("client.ShareConsumer.Acknowledge: acknowledge type %d: want 1 (accept), 2 (release) or 3 (reject)", ackType)
	}
	i := slices.IndexFunc(s.delivered, func(d ShareRecord) bool {
		return d.Topic == r.Topic && d.Partition == r.Partition && d.Offset == r.Offset
	})
	if i < 0 {
		return fmt.Errorf("client.ShareConsumer.Acknowledge: %s-%d@%d was not returned by the last poll, or was acknowledged already", r.Topic, r.Partition, r.Offset)
	}
	s.delivered = slices.Delete(s.delivered, i, i+1)
	s.queueAck(r, ackType)
	return nil
}

// Close acknowledges what is pending (implicit mode: accepts what the last
// Poll returned), closes the share sessions with ShareAcknowledge at epoch
// -1, which releases what the member still holds, and leaves the group
// (ShareGroupHeartbeat at epoch -1).
func (s *ShareConsumer) Close(ctx *sim.Context) {
	if s.closed {
		return
	}
	if s.cfg.AcknowledgementMode == ShareAckImplicit {
		for _, r := range s.delivered {
			s.queueAck(r, AckAccept)
		}
	}
	s.delivered = nil
	s.closeSessions(ctx)
	if g := &s.net.group; g.coordinator >= 0 && s.epoch > 0 {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.Version, req.GroupID, req.MemberID, req.MemberEpoch = 1, s.cfg.Consumer.GroupID, s.memberID, -1
		s.net.call(ctx, g.coordinator, req, func(*sim.Context, kmsg.Response, error) {})
	}
	s.epoch = -1
	s.closed = true
	ctx.Log("share-consumer-closed", sim.S("client-id", s.cfg.Consumer.ClientID), sim.S("member", s.memberID))
}
