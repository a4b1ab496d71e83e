package client

// This file keeps the producer's metadata: leaders and partition counts of
// the topics it sends to, from Metadata (api key 3) v7 answers (KIP-320
// leader epochs). Like Kafka's producer Metadata it asks only for its own
// topics, refreshes when a send reveals a stale leader
// (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE,
// UNKNOWN_TOPIC_OR_PARTITION), on a lost connection, when a topic or
// leader is missing, and every metadata.max.age.ms; refreshes are spaced by
// retry.backoff.ms; a partition's entry is not replaced by one with an
// older leader epoch.
// Simplified vs Kafka: the broker asked is the next one in a rotation over
// the known brokers (the bootstrap list until the first answer), advanced
// on every failure, instead of NetworkClient.leastLoadedNode; metadata
// requests do not count against max.in.flight.requests.per.connection.

import (
	"slices"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// partitionMeta is one partition's leader as last seen.
type partitionMeta struct {
	leader int32 // -1 when there is none
	epoch  int32
}

// topicMeta is one topic as last seen.
type topicMeta struct {
	partitions []partitionMeta // indexed by partition id
	avail      []int32         // partitions with a leader, sorted
	err        *kerr.Error     // topic-level error of the last answer
	id         [16]byte        // the topic id (Metadata v10+; zero before)
}

// metadata is the producer's cluster view.
type metadata struct {
	topics map[string]*topicMeta // written through setTopic only
	// last and lastName are the last topic looked up (topic): the sender
	// looks up its partitions' leaders several times per step, and a
	// comparison of the same name costs less than hashing it.
	last        *topicMeta
	lastName    string
	wanted      []string // topics in use, sorted
	brokers     []int32  // known brokers, sorted; empty before the first answer
	needUpdate  bool
	inflight    bool
	attempted   bool
	lastAttempt sim.Time
	lastRefresh sim.Time
	cursor      int
}

// want adds topic to the topics asked for.
func (m *metadata) want(topic string) {
	if i, found := slices.BinarySearch(m.wanted, topic); !found {
		m.wanted = slices.Insert(m.wanted, i, topic)
		m.needUpdate = true
	}
}

// topic returns the topic's metadata, nil if there is none.
func (m *metadata) topic(name string) *topicMeta {
	if m.last != nil && m.lastName == name {
		return m.last
	}
	t := m.topics[name]
	if t != nil {
		m.last, m.lastName = t, name
	}
	return t
}

// setTopic replaces the topic's metadata.
func (m *metadata) setTopic(name string, t *topicMeta) {
	m.topics[name] = t
	m.last, m.lastName = nil, ""
}

// leader returns the partition's leader, or -1.
func (m *metadata) leader(topic string, partition int32) int32 {
	t := m.topic(topic)
	if t == nil || int(partition) >= len(t.partitions) {
		return -1
	}
	return t.partitions[partition].leader
}

// metadataBroker returns the broker to ask next.
func (p *Producer) metadataBroker() int32 {
	cands := p.meta.brokers
	if len(cands) == 0 {
		cands = p.bootstrap
	}
	return cands[p.meta.cursor%len(cands)]
}

// metadataDue returns when the next metadata request should go out, and
// whether one is wanted at all.
func (p *Producer) metadataDue() (sim.Time, bool) {
	m := &p.meta
	if m.inflight {
		return 0, false
	}
	var at sim.Time
	switch {
	case m.needUpdate:
		at = 0
	case len(m.wanted) > 0 && p.MetadataMaxAge > 0:
		at = m.lastRefresh.Add(p.MetadataMaxAge)
	default:
		return 0, false
	}
	if m.attempted {
		at = max(at, m.lastAttempt.Add(p.cfg.RetryBackoff))
	}
	return at, true
}

// maybeSendMetadata sends a Metadata request if one is due.
func (p *Producer) maybeSendMetadata(ctx *sim.Context) {
	at, due := p.metadataDue()
	if !due || at > ctx.Now() {
		return
	}
	m := &p.meta
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 7
	req.AllowAutoTopicCreation = true // as Kafka's producer asks
	req.Topics = make([]kmsg.MetadataRequestTopic, 0, len(m.wanted))
	for _, t := range m.wanted {
		name := t
		req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: &name})
	}
	m.inflight, m.attempted, m.lastAttempt = true, true, ctx.Now()
	p.call(ctx, p.metadataBroker(), req, &request{kind: reqMetadata})
}

// metadataFailed records a failed metadata request: the next one goes to
// another broker.
func (p *Producer) metadataFailed() {
	p.meta.inflight = false
	p.meta.needUpdate = true
	p.meta.cursor++
}

// handleMetadata applies a Metadata answer.
func (p *Producer) handleMetadata(ctx *sim.Context, resp *kmsg.MetadataResponse) {
	m := &p.meta
	m.inflight, m.needUpdate, m.lastRefresh = false, false, ctx.Now()
	if len(resp.Brokers) > 0 {
		m.brokers = m.brokers[:0]
		for _, b := range resp.Brokers {
			m.brokers = append(m.brokers, b.NodeID)
		}
		slices.Sort(m.brokers)
	}
	for _, rt := range resp.Topics {
		if rt.Topic == nil {
			continue
		}
		name := *rt.Topic
		old := m.topics[name]
		if rt.ErrorCode != 0 {
			t := &topicMeta{err: kerr.TypedErrorForCode(rt.ErrorCode)}
			if old != nil && rt.ErrorCode != kerr.UnknownTopicOrPartition.Code {
				t.partitions, t.avail = old.partitions, old.avail
			}
			m.setTopic(name, t)
			continue
		}
		n := 0
		for _, rp := range rt.Partitions {
			n = max(n, int(rp.Partition)+1)
		}
		t := &topicMeta{partitions: make([]partitionMeta, n)}
		for i := range t.partitions {
			t.partitions[i] = partitionMeta{leader: -1, epoch: -1}
		}
		for _, rp := range rt.Partitions {
			pm := partitionMeta{leader: rp.Leader, epoch: rp.LeaderEpoch}
			if rp.ErrorCode != 0 && rp.ErrorCode != kerr.ReplicaNotAvailable.Code {
				pm.leader = -1
			}
			// KIP-320: never go back to an older leader epoch.
			if old != nil && int(rp.Partition) < len(old.partitions) && old.partitions[rp.Partition].epoch > pm.epoch {
				pm = old.partitions[rp.Partition]
			}
			t.partitions[rp.Partition] = pm
		}
		for i, pm := range t.partitions {
			if pm.leader >= 0 {
				t.avail = append(t.avail, int32(i))
			}
		}
		m.setTopic(name, t)
	}
	ctx.Log("producer-metadata", sim.I("topics", int64(len(resp.Topics))), sim.I("brokers", int64(len(resp.Brokers))))
	p.placeWaiting(ctx)
}
