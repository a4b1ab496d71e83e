package raft

// This file serves Fetch (key 1) for __cluster_metadata on the leader, as
// KafkaRaftClient.handleFetchRequest does (Fetch v17, as Kafka 4.0's raft
// sends it: the replica in ReplicaState, the topic by its id): a request
// with a negative max wait, fetch offset or last fetched epoch, or a last
// fetched epoch above its leader epoch, is refused with INVALID_REQUEST
// before anything else is looked at; then the epoch is
// validated (FENCED_LEADER_EPOCH below, UNKNOWN_LEADER_EPOCH above,
// NOT_LEADER_OR_FOLLOWER off the leader, each with CurrentLeader filled),
// then the fetch offset and last fetched epoch (KIP-595's log
// reconciliation: a DivergingEpoch from the epoch cache when they do not
// match the leader's log, a SnapshotID when the offset lies below the log
// start). With kraft.version 1 the fetcher's ReplicaDirectoryID (KIP-853)
// says whether it is the voter of its id or an observer. A valid fetch records the replica's end offset (the fetch offset),
// counts for check-quorum (state.go: noteVoterFetch) and may advance the HW; one that finds no new data is parked up to
// FetchMaxWait, as Kafka's purgatory does, and answered at once when data
// is appended or the HW moves. From 4.1 (KIP-1166, Fetch v18) the fetch
// carries the fetcher's HW and is not parked while the leader's is higher:
// before, a fetch arriving just after the HW moved waited out
// FetchMaxWait, so one broker applied a new topic up to 500 ms after
// another had shown it in Metadata (kafka-go's tests then produced to a
// leader that did not know its partition yet).
// Simplification: one partition per request (KRaft never sends more).

import (
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const fetchVersion = 17

// fetchVersionKIP1166 is Fetch v18 (4.1): the partition carries the
// fetcher's high watermark (KIP-1166).
const fetchVersionKIP1166 = 18

// metadataTopicID is Uuid.METADATA_TOPIC_ID (AAAAAAAAAAAAAAAAAAAAAQ).
var metadataTopicID = [16]byte{15: 1}

const fetchMaxBytes = 8 << 20

type parkedFetch struct {
	from  int32
	req   *kmsg.FetchRequest
	reply func(kmsg.Response)
	timer sim.TimerID
}

func isMetadataFetch(r *kmsg.FetchRequest) bool {
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 || r.Topics[0].Partitions[0].Partition != 0 {
		return false
	}
	t := r.Topics[0]
	if r.Version >= 13 {
		return t.TopicID == metadataTopicID
	}
	return t.Topic == MetadataTopic
}

func fetchReplicaID(r *kmsg.FetchRequest) int32 {
	if r.Version >= 15 {
		return r.ReplicaState.ID
	}
	return r.ReplicaID
}

func (c *Client) handleFetch(from int32, req *kmsg.FetchRequest, reply func(kmsg.Response)) {
	resp, park := c.fetchResponse(req, false)
	if !park {
		reply(resp)
		return
	}
	wait := min(sim.Ms(int64(req.MaxWaitMillis)), c.cfg.FetchMaxWait)
	pf := &parkedFetch{from: from, req: req, reply: reply}
	pf.timer = c.ctx.SetTimer(wait, "raft-fetch-wait")
	c.parked = append(c.parked, pf)
}

// answerParked answers every parked fetch with what the log holds now.
func (c *Client) answerParked() {
	ps := c.parked
	c.parked = nil
	for _, pf := range ps {
		c.ctx.CancelTimer(pf.timer)
		resp, _ := c.fetchResponse(pf.req, true)
		pf.reply(resp)
	}
}

func (c *Client) expireParked(id sim.TimerID) {
	for i, pf := range c.parked {
		if pf.timer == id {
			c.parked = append(c.parked[:i], c.parked[i+1:]...)
			resp, _ := c.fetchResponse(pf.req, true)
			pf.reply(resp)
			return
		}
	}
}

// fetchResponse answers req; park says it found nothing new and may wait.
func (c *Client) fetchResponse(req *kmsg.FetchRequest, final bool) (*kmsg.FetchResponse, bool) {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = req.Version
	t := kmsg.NewFetchResponseTopic()
	t.Topic, t.TopicID = MetadataTopic, metadataTopicID
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
	rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = -1, -1
	rp.SnapshotID.Epoch, rp.SnapshotID.EndOffset = -1, -1
	rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = c.leader, c.epoch
	rp.PreferredReadReplica = -1
	defer func() {
		t.Partitions = []kmsg.FetchResponseTopicPartition{rp}
		resp.Topics = []kmsg.FetchResponseTopic{t}
	}()
	if req.ClusterID != nil && *req.ClusterID != c.cfg.ClusterID {
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		return resp, false
	}
	p := req.Topics[0].Partitions[0]
	if req.MaxWaitMillis < 0 || p.FetchOffset < 0 || p.LastFetchedEpoch < 0 || p.LastFetchedEpoch > p.CurrentLeaderEpoch {
		// handleFetchRequest refuses these before it looks at the epoch.
		rp.ErrorCode = kerr.InvalidRequest.Code
		return resp, false
	}
	switch {
	case p.CurrentLeaderEpoch < c.epoch:
		rp.ErrorCode = kerr.FencedLeaderEpoch.Code
		return resp, false
	case p.CurrentLeaderEpoch > c.epoch:
		rp.ErrorCode = kerr.UnknownLeaderEpoch.Code
		return resp, false
	case c.role != roleLeader:
		rp.ErrorCode = kerr.NotLeaderForPartition.Code
		return resp, false
	}
	rp.HighWatermark = c.leaderHW()
	rp.LogStartOffset = c.log.startOffset()
	if !c.validFetchPosition(p.FetchOffset, p.LastFetchedEpoch, &rp) {
		return resp, false
	}
	if id := fetchReplicaID(req); id >= 0 && c.dynamic() && (!c.isVoterKey(id, p.ReplicaDirectoryID) || p.ReplicaDirectoryID == [16]byte{}) {
		// KIP-853: a fetcher is a voter only with the voter's directory
		// id; any other (a voter's id on a wiped disk, a broker) is an
		// observer, whose progress neither commits nor keeps the leader.
		k := voterKey{id: id, dir: p.ReplicaDirectoryID}
		r := c.observers[k]
		if r == nil {
			r = &replica{endOffset: -1}
			c.observers[k] = r
		}
		r.endOffset, r.lastFetch = p.FetchOffset, c.ctx.Now()
	} else if id >= 0 {
		r := c.replicas[id]
		if r == nil {
			r = &replica{endOffset: -1}
			c.replicas[id] = r // an observer
		}
		r.endOffset, r.lastFetch = p.FetchOffset, c.ctx.Now()
		c.noteVoterFetch(id)
		if c.isVoter(id) {
			c.maybeAdvanceHW()
			rp.HighWatermark = c.leaderHW()
		}
	}
	leo := c.log.endOffset()
	if p.FetchOffset < leo {
		rp.RecordBatches = c.log.read(p.FetchOffset, int(max(min(req.MaxBytes, p.PartitionMaxBytes), 1)), leo)
		return resp, false
	}
	if req.Version >= fetchVersionKIP1166 && p.HighWatermark < rp.HighWatermark {
		// KIP-1166 (KafkaRaftClient's isHighWatermarkUpdated): the
		// fetcher has every record but not the HW that commits them; a
		// parked fetch would tell it only after fetch.max.wait.
		return resp, false
	}
	return resp, !final && req.MaxWaitMillis > 0
}

// validFetchPosition checks the follower's (fetch offset, last fetched
// epoch) against the leader's log (ReplicatedLog.validateOffsetAndEpoch);
// when they do not match it fills DivergingEpoch or SnapshotID.
func (c *Client) validFetchPosition(offset int64, lastEpoch int32, rp *kmsg.FetchResponseTopicPartition) bool {
	start := c.log.startOffset()
	needSnapshot := func() bool {
		rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = c.snap.end, c.snap.epoch
		return false
	}
	// KafkaMetadataLog.validateOffsetAndEpoch: below the log start, at it
	// with another epoch than the snapshot's, or with an epoch older than
	// the snapshot's, the log cannot say where the follower diverges (the
	// epochs before the snapshot were deleted with the prefix): send the
	// snapshot.
	if c.snap.ok && (offset < start || (offset == start && lastEpoch != c.snap.epoch) || lastEpoch < c.snap.epoch) {
		return needSnapshot()
	}
	if offset == 0 {
		return true
	}
	if c.snap.ok && offset == c.snap.end && lastEpoch == c.snap.epoch {
		return true
	}
	epoch, end := c.log.endOffsetForEpoch(lastEpoch)
	if epoch == lastEpoch && end >= offset {
		return true
	}
	if (epoch < 0 || end < start) && c.snap.ok {
		return needSnapshot()
	}
	if epoch < 0 || end < 0 {
		epoch, end = max(c.log.epochAt(start), 0), start
	}
	rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = epoch, end
	return false
}
