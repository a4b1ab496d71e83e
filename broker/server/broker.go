// Package server is a Kafka broker as a simulation node: it serves Produce,
// Fetch, Metadata, ListOffsets, OffsetsForLeaderEpoch, LeaderAndIsr,
// UpdateMetadata, StopReplica, WriteTxnMarkers, ApiVersions, CreateTopics
// and DescribeConfigs (one file per API; the versions it advertises per
// release are api_versions.go's SupportedAPIs) and hosts the group
// coordinator (FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups, ListGroups:
// group_coordinator.go) and the admin APIs (DeleteTopics,
// CreatePartitions, AlterConfigs, IncrementalAlterConfigs, ElectLeaders,
// DeleteRecords, DescribeCluster, DeleteGroups, OffsetDelete,
// DescribeProducers, DescribeTransactions, ListTransactions,
// DescribeLogDirs: admin.go), replicates partitions
// as leader or follower with Kafka's HW, ISR and leader-epoch rules, and
// truncates the way the configured protocol version does (hw, kip101,
// kip279). It never reads the wall clock or touches the real world: all it
// does goes through its *sim.Context.
package server

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/controller"
	"github.com/kafkasim/kafkasim/broker/security"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/internal/slab"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ControllerPrefix starts a dedicated KRaft controller's node name:
// "ctl0", "ctl1". NB: not "c", which scripts use for consumers (c1, c2):
// a script written for ZooKeeper meets the controllers when -set selects
// a KRaft release (issue 28), so their names must be ones no client takes
// (scenarios refuses a client named so).
const ControllerPrefix = "ctl"

// NodeName returns the simulation node name of node id: "b<id>" for a
// broker, "ctl<i>" for the dedicated controller FirstControllerID+i.
func NodeName(id int32) string {
	if id >= FirstControllerID {
		return ControllerPrefix + strconv.Itoa(int(id-FirstControllerID))
	}
	return "b" + strconv.Itoa(int(id))
}

// Timer names.
const (
	timerHWCheckpoint = "hw-checkpoint"
	timerISRExpire    = "isr-expiration"
	timerLogTick      = "log-tick"
	timerReqTimeout   = "request-timeout"
	timerDelayed      = "purgatory"
	timerFetchBackoff = "fetch-backoff"
)

// pending is a request this broker sent and awaits the answer to.
type pending struct {
	to       int32
	node     sim.NodeID // the node of broker to
	key      int16      // the request's API key: only its response answers it
	deadline sim.Time   // on the broker's clock
	cb       func(resp kmsg.Response, err error)
	// fetch, set instead of cb, is the fetcher whose Fetch sent is, at
	// generation gen: its answer goes to fetchAnswered, with no closure
	// made per fetch.
	fetch *fetcher
	gen   int
	sent  *kmsg.FetchRequest
	// raft marks a request of the KRaft client (raft.Env.Send): a reset
	// of its connection fails it at once (Disconnected).
	raft bool
}

// done hands p its response, or the error that ends it.
func (b *Broker) done(p *pending, resp kmsg.Response, err error) {
	if p.fetch != nil {
		b.fetchAnswered(p.fetch, p.gen, p.sent, resp, err)
		return
	}
	p.cb(resp, err)
}

// Broker is one Kafka broker. A fresh Broker is made at every (re)start and
// recovers from its disk alone.
type Broker struct {
	cfg Config
	ctx *sim.Context // the context of the input being handled

	logs       *storage.Manager
	partitions map[storage.TopicPartition]*Partition
	pindex     partitionIndex                   // of partitions, for the hot paths
	hwOnDisk   map[storage.TopicPartition]int64 // replication-offset-checkpoint at start

	controllerEpoch int32 // the highest controller epoch seen
	metadata        metadataCache

	corr     int32
	enc      wire.Encoder
	inflight map[int32]pending
	// One timer, at the earliest deadline of the requests in flight,
	// expires them (as Kafka's NetworkClient checks on each poll): a timer
	// per request would mostly be set only to be cancelled.
	sweep   sim.TimerID
	sweepAt sim.Time
	nodes   map[int32]sim.NodeID

	fetchers map[int32]*fetcher // by leader broker id
	purgatory
	producerIDs producerIDs

	zk            *zk.Client
	zkSession     int64
	registerTimer sim.TimerID
	serving       bool // registered at least once: requests are processed
	controller    *controller.Controller

	group groupHost // the group coordinator
	share shareHost // share groups (share.go)
	// txnVerifier is KIP-890's check of a transaction's first batch in a
	// partition (verify_txn.go); nil accepts at once.
	txnVerifier TxnVerifier
	txn         txnHost // the transaction coordinator (txn_coordinator.go)

	kraft *kraftState // KRaft mode (kraft.go); nil in ZooKeeper mode

	// autoCreating holds the topics this broker is creating on its own
	// (auto_create.go); creates the CreateTopics requests waiting for their
	// topics' leaders (create_topics.go).
	autoCreating map[string]bool
	creates      []*pendingCreate
	// waits are the admin answers waiting for the metadata cache (admin.go).
	waits []*metadataWait

	halted bool

	// The blocks of the messages made per record, a chunk at a time.
	fetchCalls    slab.Slab[fetchCall]
	fetchAnswers  slab.Slab[fetchAnswer]
	fetchParts    slab.Slab[kmsg.FetchResponseTopicPartition]
	fetchReqParts slab.Slab[kmsg.FetchRequestTopicPartition]
	produceStates slab.Slab[produceState]
}

// New returns a broker factory for the world: each call makes a fresh
// instance, as a restart does.
func New(cfg Config) (func() sim.Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Security == nil {
		cfg.Security = security.NewStore() // kept across restarts, as metadata is
	}
	return func() sim.Node { return &Broker{cfg: cfg} }, nil
}

// ID returns the broker id.
func (b *Broker) ID() int32 { return b.cfg.BrokerID }

// Halted reports whether the broker stopped itself (the pre-0.11 answer to
// a log it may not truncate).
func (b *Broker) Halted() bool { return b.halted }

// Serving reports whether the broker processes requests: it has not
// halted and, with ZooKeeper or KRaft, has registered since it started
// (before that its socket server is not listening: a request is refused).
func (b *Broker) Serving() bool { return !b.halted && (b.zk == nil && b.kraft == nil || b.serving) }

// Partition returns this broker's replica of tp, if it has one.
func (b *Broker) Partition(tp storage.TopicPartition) (*Partition, bool) {
	p, ok := b.partitions[tp]
	return p, ok
}

// partitionIndex finds replicas on the replication paths (a fetch looks
// each of its partitions up several times on both sides, and a follower of
// __consumer_offsets fetches dozens at once): the replicas of each topic by
// partition number, and the last topic looked up, so consecutive lookups in
// one topic compare its name instead of hashing it.
// Invariant: byTopic[t][n] is partitions[{t, n}] or nil, and topicParts is
// byTopic[topic] (reset whenever byTopic changes).
type partitionIndex struct {
	byTopic    map[string][]*Partition
	topic      string
	topicParts []*Partition
}

// partition returns b.partitions[tp].
func (b *Broker) partition(tp storage.TopicPartition) *Partition {
	x := &b.pindex
	if tp.Topic != x.topic || x.topicParts == nil {
		x.topic, x.topicParts = tp.Topic, x.byTopic[tp.Topic]
	}
	if tp.Partition < 0 || int(tp.Partition) >= len(x.topicParts) {
		return nil
	}
	return x.topicParts[tp.Partition]
}

// setPartition makes p (nil: none) the replica of tp, in partitions and
// its index.
func (b *Broker) setPartition(tp storage.TopicPartition, p *Partition) {
	x := &b.pindex
	parts := x.byTopic[tp.Topic]
	if p == nil {
		delete(b.partitions, tp)
		if int(tp.Partition) < len(parts) {
			parts[tp.Partition] = nil
		}
	} else {
		b.partitions[tp] = p
		if n := int(tp.Partition) + 1; n > len(parts) {
			parts = append(parts, make([]*Partition, n-len(parts))...)
		}
		parts[tp.Partition] = p
		x.byTopic[tp.Topic] = parts
	}
	x.topic, x.topicParts = "", nil
}

// Partitions returns this broker's replicas, sorted by topic and partition.
func (b *Broker) Partitions() []*Partition {
	out := make([]*Partition, 0, len(b.partitions))
	for _, p := range b.partitions {
		out = append(out, p)
	}
	// NB: slices.SortFunc, not sort.Slice (which allocates twice more);
	// the keys are distinct, so the order is the same.
	slices.SortFunc(out, func(a, b *Partition) int { return storage.CompareTP(a.tp, b.tp) })
	return out
}

func lessTP(a, b storage.TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

// Start implements sim.Node: open the logs (recovering after a crash), load
// the checkpointed HWs and start the periodic tasks.
func (b *Broker) Start(ctx *sim.Context) {
	b.ctx = ctx
	b.enc.Connection = ctx.Incarnation()
	b.partitions = map[storage.TopicPartition]*Partition{}
	b.pindex = partitionIndex{byTopic: map[string][]*Partition{}}
	b.inflight = map[int32]pending{}
	b.nodes = map[int32]sim.NodeID{}
	b.fetchers = map[int32]*fetcher{}
	b.controllerEpoch = -1
	logs, err := storage.OpenManager(ctx.Disk(), b.cfg.Storage, ctx.Now())
	if err != nil {
		panic(fmt.Sprintf("broker %d: opening the logs: %v", b.cfg.BrokerID, err))
	}
	b.logs = logs
	b.hwOnDisk = map[storage.TopicPartition]int64{}
	hws, err := logs.ReadHighWatermarks()
	if err != nil {
		panic(fmt.Sprintf("broker %d: reading replication-offset-checkpoint: %v", b.cfg.BrokerID, err))
	}
	for _, e := range hws {
		b.hwOnDisk[e.TopicPartition] = e.Offset
	}
	for _, tp := range logs.Partitions() {
		l, _ := logs.Log(tp)
		ctx.Log("log-loaded", sim.S("partition", tp.String()), sim.I("leo", l.LogEndOffset()), sim.I("hw-checkpoint", b.hwOnDisk[tp]))
	}
	if k := b.cfg.KRaft; k == nil || k.Broker {
		// A dedicated KRaft controller hosts no partitions: no replica
		// checkpoints, ISR checks or log maintenance.
		ctx.SetTimer(b.cfg.HWCheckpointInterval, timerHWCheckpoint)
		ctx.SetTimer(b.cfg.ReplicaLagTimeMax/2, timerISRExpire)
		ctx.SetTimer(logTickInterval, timerLogTick)
	}
	b.startCoordinator()
	b.startShare()
	b.startTxnCoordinator()
	b.startZK()
	b.startKRaft()
}

// logTickInterval is how often the broker runs time-based log work
// (log.flush.interval.ms, retention, roll): Kafka's scheduler runs these
// every log.flush.scheduler.interval.ms and log.retention.check.interval.ms.
const logTickInterval = sim.Second

// Receive implements sim.Node.
func (b *Broker) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	b.ctx = ctx
	if b.halted {
		return
	}
	switch m := m.(type) {
	case *wire.Request:
		if b.serveKRaft(from, m) {
			return
		}
		if (b.zk != nil || b.kraft != nil) && !b.serving {
			// NB: as KafkaServer.startup, a broker processes requests only
			// once it is registered: a restarted broker whose old session
			// still holds its registration must not act on the controller's
			// requests meant for its previous life (it may have lost data
			// since; KIP-380 fences those with broker epochs). Its socket
			// server is not listening yet: a client is refused at once.
			b.ctx.Log("request-before-startup", sim.S("api", m.Kind()))
			b.ctx.Refuse(from)
			return
		}
		b.serve(from, m)
	case *wire.Response:
		b.handleResponse(from, m)
	default:
		if !b.handleZKMessage(from, m) {
			panic(fmt.Sprintf("broker %d: unexpected message %s", b.cfg.BrokerID, m.Kind()))
		}
	}
}

// Timer implements sim.Node.
func (b *Broker) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	b.ctx = ctx
	if b.halted {
		return
	}
	switch name {
	case timerHWCheckpoint:
		b.checkpointHighWatermarks()
		ctx.SetTimer(b.cfg.HWCheckpointInterval, timerHWCheckpoint)
	case timerISRExpire:
		b.maybeShrinkISRs()
		ctx.SetTimer(b.cfg.ReplicaLagTimeMax/2, timerISRExpire)
	case timerLogTick:
		if err := b.logs.Tick(ctx.Now(), b.highWatermarkOf); err != nil {
			panic(fmt.Sprintf("broker %d: log maintenance: %v", b.cfg.BrokerID, err))
		}
		b.traceCleaned()
		ctx.SetTimer(logTickInterval, timerLogTick)
	case timerReqTimeout:
		if id == b.sweep {
			b.sweep = 0
			b.expireRequests()
		}
	case timerDelayed:
		b.expireDelayed(id)
	case timerFetchBackoff:
		b.fetcherBackoffDone(id)
	default:
		if !b.handleZKTimer(id, name) && !b.handleGroupTimer(id, name) && !b.handleShareTimer(id, name) && !b.handleTxnTimer(id, name) && !b.handleKRaftTimer(id, name) && !b.handleCreateTopicsTimer(id, name) && !b.handleAdminTimer(id, name) {
			panic(fmt.Sprintf("broker %d: unknown timer %q", b.cfg.BrokerID, name))
		}
	}
}

func (b *Broker) highWatermarkOf(tp storage.TopicPartition) int64 {
	if p, ok := b.partitions[tp]; ok {
		return p.hw
	}
	return b.hwOnDisk[tp]
}

// node returns the simulation node of broker id.
func (b *Broker) node(id int32) (sim.NodeID, bool) {
	if n, ok := b.nodes[id]; ok {
		return n, true
	}
	n, ok := b.ctx.Lookup(NodeName(id))
	if ok {
		b.nodes[id] = n
	}
	return n, ok
}

// send sends req to broker `to` and calls cb with its response, or with an
// error when the request times out (the peer crashed, the link is cut, or
// the response was lost). Exactly one of the two happens.
func (b *Broker) send(to int32, req kmsg.Request, timeout sim.Duration, cb func(kmsg.Response, error)) {
	b.sendPending(to, req, nil, timeout, pending{cb: cb})
}

// sendPending is send with the callback in p (cb, or fetch), wrapping req
// in msg when not nil (allocated with req by the caller).
func (b *Broker) sendPending(to int32, req kmsg.Request, msg *wire.Request, timeout sim.Duration, p pending) {
	n, ok := b.node(to)
	if !ok {
		b.done(&p, nil, fmt.Errorf("no broker %d", to))
		return
	}
	b.corr++
	corr := b.corr
	deadline := b.ctx.Now().Add(timeout)
	p.to, p.node, p.key, p.deadline = to, n, req.Key(), deadline
	b.inflight[corr] = p
	b.armSweep(deadline)
	if msg == nil {
		msg = new(wire.Request)
	}
	b.ctx.Send(n, b.enc.RequestIn(msg, corr, req))
}

func (b *Broker) armSweep(deadline sim.Time) {
	if b.sweep != 0 && b.sweepAt <= deadline {
		return
	}
	if b.sweep != 0 {
		b.ctx.CancelTimer(b.sweep)
	}
	b.sweepAt = deadline
	b.sweep = b.ctx.SetTimer(deadline.Sub(b.ctx.Now()), timerReqTimeout)
}

// handleResponse hands m to the request it answers, as Kafka's
// NetworkClient does: a response is matched only against the requests in
// flight on the connection it came back on, by correlation id.
//
//   - A response on a connection of this broker's previous life (its
//     process crashed and restarted since it sent the request) is dropped:
//     the old socket died with the process, and the new process's
//     correlation ids start over, so matching it by id alone would hand,
//     say, a FetchResponse parked in the leader's purgatory to a new
//     OffsetsForLeaderEpoch request (found by kafkasim explore on
//     kip101-hw-lag/kip279).
//   - A response from another broker than the request went to, or whose
//     id has no request in flight (answered after its timeout), is dropped.
//   - A response of another API than its request is a broken connection
//     (NetworkClient.correlate fails it): the request fails, as on a
//     disconnect, and its sender retries.
//
// Invariant: a callback only ever sees the response of its own request.
func (b *Broker) handleResponse(from sim.NodeID, m *wire.Response) {
	if m.Connection != b.enc.Connection {
		b.ctx.Log("stale-response", sim.S("api", m.Kind()), sim.I("correlation-id", int64(m.CorrelationID)), sim.I("connection", int64(m.Connection)))
		return
	}
	p, ok := b.inflight[m.CorrelationID]
	if !ok || p.node != from {
		return // answered after its timeout: dropped, as a closed connection drops it
	}
	delete(b.inflight, m.CorrelationID)
	if m.Body == nil || m.Body.Key() != p.key {
		b.ctx.Log("response-mismatch", sim.S("api", m.Kind()), sim.S("want", kmsg.NameForKey(p.key)+"Response"), sim.I("correlation-id", int64(m.CorrelationID)))
		b.done(&p, nil, fmt.Errorf("response %d from broker %d is a %s, not a %sResponse", m.CorrelationID, p.to, m.Kind(), kmsg.NameForKey(p.key)))
		return
	}
	b.done(&p, m.Body, nil)
}

// expireRequests fails the requests past their deadline, oldest first, and
// arms the sweep for the next deadline.
func (b *Broker) expireRequests() {
	now := b.ctx.Now()
	var expired []int32
	next := sim.Time(-1)
	for corr, p := range b.inflight {
		switch {
		case p.deadline <= now:
			expired = append(expired, corr)
		case next < 0 || p.deadline < next:
			next = p.deadline
		}
	}
	sort.Slice(expired, func(i, j int) bool { return expired[i] < expired[j] })
	for _, corr := range expired {
		p := b.inflight[corr]
		delete(b.inflight, corr)
		b.done(&p, nil, fmt.Errorf("request %d to broker %d timed out", corr, p.to))
	}
	if next >= 0 {
		b.armSweep(next)
	}
}

// WantsResets reports whether the broker reacts to connection resets
// (sim.ResetChooser): a KRaft node does, for its Raft requests
// (Disconnected); a ZooKeeper-mode broker waits out its requests'
// timeouts, as kafkasim's brokers always have.
func (b *Broker) WantsResets() bool { return b.cfg.KRaft != nil }

// Disconnected fails at once, in correlation order, the Raft requests in
// flight to peer, whose process died (sim.Disconnectable): Kafka's
// NetworkClient fails every request on a connection the peer reset, and
// the Raft client then backs off and asks another node
// (RequestManager.findReadyBootstrapServer), where it would otherwise wait
// controller.quorum.request.timeout.ms for each answer from a crashed
// voter. What it simplifies: the broker's other inter-broker requests
// (replica fetches, AlterPartition, heartbeats) still wait out their
// timeouts.
func (b *Broker) Disconnected(ctx *sim.Context, peer sim.NodeID) {
	b.ctx = ctx
	if b.halted {
		return
	}
	var reset []int32
	for corr, p := range b.inflight {
		if p.raft && p.node == peer {
			reset = append(reset, corr)
		}
	}
	sort.Slice(reset, func(i, j int) bool { return reset[i] < reset[j] })
	for _, corr := range reset {
		p := b.inflight[corr]
		delete(b.inflight, corr)
		b.done(&p, nil, fmt.Errorf("request %d to node %d: connection reset", corr, p.to))
	}
}

// respond answers a request.
func (b *Broker) respond(to sim.NodeID, req *wire.Request, resp kmsg.Response) {
	resp.SetVersion(req.Body.GetVersion())
	b.ctx.Send(to, b.enc.Reply(req, resp))
}

// serve dispatches a request to the file that serves its API.
func (b *Broker) serve(from sim.NodeID, req *wire.Request) {
	switch body := req.Body.(type) {
	case *kmsg.ProduceRequest:
		b.handleProduce(from, req, body)
	case *kmsg.FetchRequest:
		b.handleFetch(from, req, body)
	case *kmsg.ListOffsetsRequest:
		b.handleListOffsets(from, req, body)
	case *kmsg.MetadataRequest:
		b.handleMetadata(from, req, body)
	case *kmsg.OffsetForLeaderEpochRequest:
		b.handleOffsetForLeaderEpoch(from, req, body)
	case *kmsg.LeaderAndISRRequest:
		b.handleLeaderAndISR(from, req, body)
	case *kmsg.UpdateMetadataRequest:
		b.handleUpdateMetadata(from, req, body)
	case *kmsg.StopReplicaRequest:
		b.handleStopReplica(from, req, body)
	case *kmsg.InitProducerIDRequest:
		b.handleInitProducerID(from, req, body)
	case *kmsg.WriteTxnMarkersRequest:
		b.handleWriteTxnMarkers(from, req, body)
	case *kmsg.ApiVersionsRequest:
		b.handleAPIVersions(from, req, body)
	case *kmsg.CreateTopicsRequest:
		b.handleCreateTopics(from, req, body)
	case *kmsg.DescribeConfigsRequest:
		b.handleDescribeConfigs(from, req, body)
	default:
		if !b.serveMore(from, req) {
			panic(fmt.Sprintf("broker %d: no handler for %s", b.cfg.BrokerID, req.Kind()))
		}
	}
}

// logp writes a transition to the trace, tagged with the partition.
func (b *Broker) logp(kind string, p *Partition, fields ...sim.Field) {
	b.ctx.LogFirst(kind, sim.S("partition", p.name), fields...)
}

// halt stops the broker for good, as Kafka's Runtime.halt / System.exit
// did when a follower found its log ahead of the leader and could not
// truncate it. Its ZooKeeper session then expires and the controller sees
// it as dead.
func (b *Broker) halt(reason string) {
	b.ctx.Log("halt", sim.S("reason", reason))
	b.halted = true
}

// errCode returns the Kafka error code of err (0 for nil).
func errCode(err *kerr.Error) int16 {
	if err == nil {
		return 0
	}
	return err.Code
}
