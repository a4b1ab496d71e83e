package harness

// This file puts share groups (KIP-932) into scripts. 'share-consumer
// NAME group.id=G topic=T [poll=DUR] [process=DUR] [release=V,...]
// [reject=V,...] [share.acknowledgement.mode=implicit|explicit] [consumer
// property=value ...]' starts a node running Kafka's share consumer
// (client.ShareConsumer) in an application loop: every poll interval it
// polls and processes what it got (process=DUR); in explicit mode it then
// acknowledges each record: RELEASE for the values in release=, REJECT for
// those in reject=, ACCEPT for the others (release= or reject= make the
// mode explicit; '-' names none). In implicit mode (Kafka's default) the next poll accepts
// them. 'kill-consumer', 'restart-consumer' (a new member: share member
// ids are the client's, drawn anew) and 'close-consumer' (acknowledge,
// close the share sessions, leave) work on share consumers as on
// consumers; 'crash-coordinator GROUP' crashes the share group's
// coordinator (the group coordinator: share groups live there too).
//
// The history records each ShareFetch's acquired records with their
// delivery counts (ShareAcquire), each acknowledgement with its outcome
// (ShareAck), and a close (ShareLeave); the share group is declared with
// its topics, group.share.delivery.count.limit and
// group.share.record.lock.duration.ms (the run's broker properties,
// Kafka's defaults 5 and 30000 ms) and share.auto.offset.reset=latest
// (Kafka's default, a group config scripts do not set: a share-partition
// starts at the log end when first fetched, so scripts start their share
// consumers before producing). The end phase drains the share groups
// (shareDrain) and marks them Drained.
//
// What it simplifies: the share group's own configs (share.record.lock.
// duration.ms and friends set by IncrementalAlterConfigs on the group) are
// not read: the broker-wide values are what the checker is told.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/client"
	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// shareSettings are a share consumer node's settings; they survive
// restarts.
type shareSettings struct {
	name            string
	topic           string
	poll, process   sim.Duration
	release, reject []string
	autoOffsetReset string
	cfg             client.ShareConsumerConfig
	bootstrap       []int32
	rec             *checkers.Recorder
}

// shareConsumerNode is the application around one share consumer.
type shareConsumerNode struct {
	s     *shareSettings
	c     *client.ShareConsumer
	busy  bool
	batch []client.ShareRecord
}

const (
	timerSharePoll    = "app-share-poll"
	timerShareProcess = "app-share-process"
)

func (n *shareConsumerNode) Start(ctx *sim.Context) {
	c, err := client.NewShareConsumer(n.s.cfg, n.s.bootstrap)
	if err != nil {
		panic(err) // NB: the settings were validated by the step
	}
	n.c = c
	s := n.s
	group := s.cfg.Consumer.GroupID
	c.Hooks.OnAcquired = func(ctx *sim.Context, sent sim.Time, broker int32, tp client.TopicPartition, recs []client.ShareRecord) {
		id := s.rec.ShareFetch(sent, s.name, group, c.MemberID(), tp.Topic, tp.Partition)
		s.rec.SetLeader(id, broker)
		out := make([]checkers.Record, len(recs))
		for i, r := range recs {
			out[i] = checkers.Record{Offset: r.Offset, Value: string(r.Value), DeliveryCount: r.DeliveryCount}
		}
		s.rec.ShareAcquired(id, ctx.Now(), out)
	}
	c.Hooks.OnAckSent = func(ctx *sim.Context, tp client.TopicPartition, typ int8, offs []int64) any {
		return s.rec.ShareAcknowledge(ctx.Now(), s.name, group, c.MemberID(), tp.Topic, tp.Partition, typ, offs)
	}
	c.Hooks.OnAcknowledged = func(ctx *sim.Context, token any, sent sim.Time, tp client.TopicPartition, typ int8, offs []int64, code int16, err error) {
		id := token.(checkers.OpID)
		switch {
		case err != nil:
			s.rec.Info(id, ctx.Now(), err.Error())
		case code != 0 && ackRefused(code):
			s.rec.Fail(id, ctx.Now(), kafkaErrorName(code))
		case code != 0:
			// NB: a failed write to __share_group_state (NOT_COORDINATOR,
			// COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT, ...) fails the
			// acknowledgement, but the write may still have landed: its
			// outcome is unknown.
			s.rec.Info(id, ctx.Now(), kafkaErrorName(code))
		default:
			s.rec.ShareAcked(id, ctx.Now())
		}
	}
	c.Start(ctx)
	if err := c.Subscribe(ctx, []string{s.topic}); err != nil {
		panic(err)
	}
	ctx.SetTimer(s.poll, timerSharePoll)
}

// ackRefused reports whether an acknowledgement answered with code was
// certainly not applied: the record was not the member's to acknowledge
// (INVALID_RECORD_STATE), or the request was refused before the share
// partition looked at it (a bad session, an unknown partition, a leader
// that is not one).
func ackRefused(code int16) bool {
	switch code {
	case kerr.InvalidRecordState.Code, kerr.InvalidRequest.Code, kerr.ShareSessionNotFound.Code, kerr.InvalidShareSessionEpoch.Code,
		kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicID.Code, kerr.NotLeaderForPartition.Code, kerr.FencedLeaderEpoch.Code:
		return true
	}
	return false
}

// kafkaErrorName is the Kafka name of an error code ("INVALID_RECORD_STATE").
func kafkaErrorName(code int16) string {
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return "error " + strconv.Itoa(int(code))
}

func (n *shareConsumerNode) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	n.c.HandleMessage(ctx, from, m)
}

// Disconnected implements sim.Disconnectable.
func (n *shareConsumerNode) Disconnected(ctx *sim.Context, peer sim.NodeID) {
	n.c.HandleDisconnect(ctx, peer)
}

func (n *shareConsumerNode) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	if n.c.HandleTimer(ctx, id, name) {
		return
	}
	switch name {
	case timerSharePoll:
		if n.c.Closed() {
			return
		}
		if !n.busy {
			recs, err := n.c.Poll(ctx)
			if err != nil {
				ctx.Log("app-poll-error", sim.S("error", err.Error()))
			}
			if len(recs) > 0 {
				n.busy, n.batch = true, recs
				ctx.SetTimer(n.s.process, timerShareProcess)
			}
		}
		ctx.SetTimer(n.s.poll, timerSharePoll)
	case timerShareProcess:
		if n.s.cfg.AcknowledgementMode == client.ShareAckExplicit && !n.c.Closed() {
			for _, r := range n.batch {
				typ := client.AckAccept
				switch v := string(r.Value); {
				case slices.Contains(n.s.reject, v):
					typ = client.AckReject
				case slices.Contains(n.s.release, v):
					typ = client.AckRelease
				}
				if err := n.c.Acknowledge(r, typ); err != nil {
					panic(err) // NB: each record of the last poll, once
				}
			}
		}
		n.busy, n.batch = false, nil
	}
}

// close closes the share consumer and records the leave.
func (n *shareConsumerNode) close(ctx *sim.Context) {
	if n.c.Closed() {
		return
	}
	n.s.rec.ShareLeft(ctx.Now(), n.s.name, n.s.cfg.Consumer.GroupID, n.c.MemberID())
	n.c.Close(ctx)
}

// parseShareStep reads a 'share-consumer' step (variables substituted),
// checked against the scenario's topics and the run's configuration.
func parseShareStep(st scenarios.Step, topics []scenarios.TopicSpec, run config.Config, given map[string]string) (*shareSettings, error) {
	name := st.Args[0]
	props := config.ClientProps(given, config.ConsumerPrefix)
	s := &shareSettings{name: name, poll: 100 * sim.Millisecond, process: 20 * sim.Millisecond, autoOffsetReset: "latest"}
	mode := ""
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range st.KV {
			if !yield(k) {
				return
			}
		}
	}) {
		v := st.KV[k]
		var err error
		switch k {
		case "topic":
			s.topic = v
		case "poll":
			s.poll, err = scenarios.ParseDuration(v)
		case "process":
			s.process, err = scenarios.ParseDuration(v)
		case "release":
			s.release = valueList(v)
		case "reject":
			s.reject = valueList(v)
		case "share.acknowledgement.mode":
			mode = v
		default:
			props[k] = v
		}
		if err != nil {
			return nil, fmt.Errorf("share-consumer: %s=%q: %w", k, v, err)
		}
	}
	if s.topic == "" || !slices.ContainsFunc(topics, func(t scenarios.TopicSpec) bool { return t.Name == s.topic }) {
		return nil, fmt.Errorf("share-consumer: topic=%q: want a topic of this scenario", s.topic)
	}
	if s.poll <= 0 || s.process < 0 {
		return nil, fmt.Errorf("share-consumer: poll=%v process=%v: poll must be > 0, process >= 0", s.poll, s.process)
	}
	switch {
	case mode == "" && (len(s.release) > 0 || len(s.reject) > 0):
		mode = client.ShareAckExplicit
	case mode == "":
		mode = client.ShareAckImplicit
	case mode == client.ShareAckImplicit && (len(s.release) > 0 || len(s.reject) > 0):
		return nil, fmt.Errorf("share-consumer: release= and reject= need share.acknowledgement.mode=explicit, not implicit")
	case mode != client.ShareAckImplicit && mode != client.ShareAckExplicit:
		return nil, fmt.Errorf("share-consumer: share.acknowledgement.mode=%q: allowed implicit, explicit", mode)
	}
	if props["client.id"] == "" {
		props["client.id"] = name
	}
	modelled, _, err := config.SplitClient(config.ConsumerPrefix, run.Broker.InterBrokerProtocolVersion, props)
	if err != nil {
		return nil, err
	}
	cfg, err := config.ParseConsumer(modelled)
	if err != nil {
		return nil, err
	}
	if cfg.GroupID == "" {
		return nil, fmt.Errorf("share-consumer: a group.id is required (group.id=NAME)")
	}
	if !run.Broker.KRaftMode() || !run.Broker.ShareGroups.Enabled() {
		return nil, fmt.Errorf("share-consumer: share groups (KIP-932) need a KRaft cluster of 4.2 or later with share.version=1 (its default there), and this run is %s", scenarios.ProtocolLabel(run))
	}
	s.cfg = client.ShareConsumerConfig{Consumer: cfg, AcknowledgementMode: mode}
	if _, err := client.NewShareConsumer(s.cfg, []int32{0}); err != nil {
		return nil, err
	}
	return s, nil
}

// valueList reads release= or reject=: values separated by commas; "-"
// names none (for a variant that sets none).
func valueList(v string) []string {
	if v == "-" || v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// shareGroupProps returns group.share.delivery.count.limit and
// group.share.record.lock.duration.ms as the run's brokers have them.
func shareGroupProps(b config.Broker) (int16, sim.Duration) {
	return int16(b.ShareGroups.DeliveryCountLimit), b.ShareGroups.RecordLockDuration
}

// newShareConsumer executes a 'share-consumer' step.
func (r *Runner) newShareConsumer(st scenarios.Step) error {
	name := st.Args[0]
	if _, ok := r.World.Lookup(name); ok {
		return fmt.Errorf("%q already names a node", name)
	}
	s, err := parseShareStep(st, r.s.Topics, r.Cluster.Spec.Config, r.given)
	if err != nil {
		return err
	}
	s.rec = r.Recorder
	for i := range r.Cluster.Brokers {
		s.bootstrap = append(s.bootstrap, int32(i))
	}
	b := r.Cluster.Spec.Config.Broker
	if _, ok := r.Cluster.Assignments[coordinator.OffsetsTopic]; !ok {
		if err := r.Cluster.CreateTopics(cluster.Topic{Name: coordinator.OffsetsTopic, Partitions: b.OffsetsTopicNumPartitions, ReplicationFactor: b.OffsetsTopicReplicationFactor}); err != nil {
			return err
		}
	}
	if _, ok := r.Cluster.Assignments[share.StateTopic]; !ok {
		// NB: scripts create the internal topics (brokers do not
		// auto-create here), as __consumer_offsets above.
		if err := r.Cluster.CreateTopics(cluster.Topic{Name: share.StateTopic, Partitions: b.ShareGroups.StatePartitions, ReplicationFactor: b.ShareGroups.StateReplicationFactor}); err != nil {
			return err
		}
	}
	group := s.cfg.Consumer.GroupID
	limit, lock := shareGroupProps(b)
	g := checkers.ShareGroup{Group: group, DeliveryCountLimit: limit, LockDuration: lock, AutoOffsetReset: s.autoOffsetReset}
	for _, x := range r.shareGroups {
		if x.Group == group {
			g = x
		}
	}
	if !slices.Contains(g.Topics, s.topic) {
		g.Topics = append(g.Topics, s.topic)
	}
	r.setShareGroup(g)
	id, err := r.World.AddNode(name, func() sim.Node { return &shareConsumerNode{s: s} }, sim.NodeOptions{})
	if err != nil {
		return err
	}
	r.shareConsumers = append(r.shareConsumers, name)
	return r.World.Inject(sim.Start{Node: id})
}

// setShareGroup declares g to the recorder and keeps it.
func (r *Runner) setShareGroup(g checkers.ShareGroup) {
	i := slices.IndexFunc(r.shareGroups, func(x checkers.ShareGroup) bool { return x.Group == g.Group })
	if i < 0 {
		r.shareGroups = append(r.shareGroups, g)
	} else {
		r.shareGroups[i] = g
	}
	r.Recorder.ShareGroup(g)
}

// shareDrain is the end phase's wait for the share groups: until no
// record owed to a group with a running member is unfinished, or two
// lock durations and 30 s passed; then the groups with a running member
// are marked Drained (their never-delivered and unfinished records are
// judged).
func (r *Runner) shareDrain() error {
	if len(r.shareGroups) == 0 {
		return nil
	}
	running := map[string]bool{}
	for _, name := range r.shareConsumers {
		if id, ok := r.World.Lookup(name); ok && r.World.Up(id) {
			if n, ok := r.World.Node(id).(*shareConsumerNode); ok && !n.c.Closed() {
				running[n.s.cfg.Consumer.GroupID] = true
			}
		}
	}
	var wait sim.Duration
	for _, g := range r.shareGroups {
		wait = max(wait, 2*g.LockDuration+30*sim.Second)
	}
	if err := r.endMark(sim.S("phase", "share-drain")); err != nil {
		return err
	}
	for deadline := r.World.Now().Add(wait); r.World.Now() < deadline; {
		h := r.Recorder.History()
		done := true
		for _, g := range r.shareGroups {
			if running[g.Group] && checkers.ShareUnfinished(h, g) > 0 {
				done = false
			}
		}
		if done {
			break
		}
		if err := r.Advance(r.World.Now().Add(200 * sim.Millisecond)); err != nil {
			return err
		}
	}
	for _, g := range r.shareGroups {
		if running[g.Group] {
			g.Drained = true
			r.setShareGroup(g)
		}
	}
	return nil
}

// allConsumers returns the consumers' and then the share consumers' names
// (the swarm's consumer faults and restart-all take both; a run without
// share consumers draws as before).
func (r *Runner) allConsumers() []string {
	if len(r.shareConsumers) == 0 {
		return r.consumers
	}
	return append(slices.Clone(r.consumers), r.shareConsumers...)
}

// takeShareLoads moves the share-partition states broker b recovered since
// the last event into o.ShareLoads.
func (o *Observer) takeShareLoads(b int32) {
	br := o.c.Broker(int(b))
	if br == nil {
		return
	}
	for _, l := range br.TakeShareStateLoads() {
		cl := checkers.ShareLoad{Time: l.Time, Broker: b, Group: l.Group, Topic: l.Topic, Partition: l.Partition,
			StateEpoch: l.StateEpoch, StartOffset: l.StartOffset}
		for _, x := range l.Batches {
			cl.Batches = append(cl.Batches, checkers.ShareStateBatch{FirstOffset: x.FirstOffset, LastOffset: x.LastOffset,
				DeliveryState: x.DeliveryState, DeliveryCount: x.DeliveryCount})
		}
		o.ShareLoads = append(o.ShareLoads, cl)
	}
}
