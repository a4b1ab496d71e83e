package raft

// This file is the quorum member (KafkaRaftClient.java): its state, its
// start after every (re)start, the timers, the leader's append, and the
// read-only views for the host and for checkers. The protocol handlers
// live one per Kafka API: vote.go, quorum_epoch.go, fetch.go (leader side),
// follower.go (the fetching side), fetch_snapshot.go, describe_quorum.go.
//
// Voters: static (controller.quorum.voters, kraft.version 0) or KIP-853's
// dynamic voter set (kraft.version 1: voters.go, voter_change.go).
// Simplifications vs Kafka, and why: one batch per Append (no BatchAccumulator linger); the listener is called
// synchronously (Kafka runs it on the raft thread too, through
// registered listeners' own queues).

import (
	"errors"
	"fmt"
	"sort"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// ErrNotLeader is returned by Append on a member that is not the leader
// (Kafka's NotLeaderException).
var ErrNotLeader = errors.New("raft: not the leader")

// ErrEmptyAppend is returned by Append with no records.
var ErrEmptyAppend = errors.New("raft: append of no records")

// ErrNotStarted is returned by Append before Start or after Shutdown.
var ErrNotStarted = errors.New("raft: client not started")

// checkQuorumFactor is LeaderState's CHECK_QUORUM_TIMEOUT_FACTOR.
const checkQuorumFactor = 1.5

// replica is what a leader knows of one fetching replica (ReplicaState).
type replica struct {
	endOffset int64 // -1: unknown
	lastFetch sim.Time
	// fetched: a voter that fetched (Fetch or FetchSnapshot) since the
	// check-quorum timer was last reset (LeaderState.fetchedVoters).
	fetched bool
	// acked: the voter acknowledged this leader, by answering its
	// BeginQuorumEpoch or by fetching (ReplicaState.hasAcknowledgedLeader).
	acked bool
	// beginInflight and beginBackoff are the RequestManager's connection
	// state for BeginQuorumEpoch: a request awaiting its answer, and the
	// end of the retry backoff after a failed one.
	beginInflight bool
	beginBackoff  sim.Time
}

// Client is one member of the metadata quorum.
// Invariant: hw never decreases within one process life; nextDeliver <=
// max(hw, snapshot end); a leader holds the LeaderChange batch of its
// epoch at epochStart.
type Client struct {
	cfg    Config
	env    Env
	l      Listener
	voters []int32 // sorted: the ids of vset
	voter  bool    // this member's (id, directory id) is in vset
	// vset is the voter set in force (voters.go); vhist the sets the log
	// (and the bootstrap checkpoint or snapshot, at offset -1 or the
	// snapshot's end - 1) holds, oldest first, so that a truncation takes
	// the set back. Static voters: one entry with zero directory ids.
	vset  voterSet
	vhist []votersAt
	// dir is this member's directory id (meta.properties, kraft.version 1).
	dir [16]byte
	// bootstrap are the nodes an observer asks for the leader
	// (controller.quorum.voters or controller.quorum.bootstrap.servers).
	bootstrap []int32

	ctx     *sim.Context
	started bool
	stopped bool
	log     *metaLog

	role     role
	epoch    int32
	leader   int32
	votedFor int32
	gen      uint64 // bumped by every transition: older callbacks drop
	hw       int64  // -1: unknown

	electionTimer, fetchTimer, backoffTimer, checkQuorumTimer, beginTimer, retryTimer sim.TimerID

	electionDeadline    sim.Time
	checkQuorumDeadline sim.Time // the check-quorum timer's expiry (leader)

	// candidate and prospective
	granted, rejected map[int32]bool
	failedElections   int

	// leader
	epochStart int64
	// hwInEpoch: as leader, a majority has fetched past epochStart, so the
	// HW is known in this epoch (LeaderState's highWatermark is empty until
	// then, and Fetch answers carry -1: a new leader exposes nothing of
	// earlier epochs before committing one record of its own).
	hwInEpoch bool
	replicas  map[int32]*replica
	// observers are the fetchers that are no voter, by (id, directory
	// id): a voter's id with another directory id (a wiped disk) is one.
	observers map[voterKey]*replica
	// change is the voter change waiting for its commit (voter_change.go).
	change *voterChange
	// joinInflight and joinNext pace auto-join's requests (maybeAutoJoin).
	joinInflight bool
	joinNext     sim.Time
	parked       []*parkedFetch

	// follower and observer
	fetchFrom     int32 // the node fetched from (the leader, or a voter an observer asks)
	fetchInflight bool
	heardLeader   bool // the leader answered a fetch in this follower state (FollowerState.hasFetchedFromLeader)
	snapFetch     *snapshotFetch
	delivering    bool

	// listener
	nextDeliver    int64
	notified       LeaderAndEpoch
	selfNotifyWait bool
	snap           snapshotID
	bytesSinceSnap int64
}

// New checks cfg and returns a member that does nothing until Start.
func New(cfg Config, env Env, l Listener) (*Client, error) {
	if len(cfg.Voters) == 0 {
		return nil, fmt.Errorf("raft: controller.quorum.voters is empty: at least one voter is required")
	}
	seen := map[int32]bool{}
	for _, v := range cfg.Voters {
		if v < 0 {
			return nil, fmt.Errorf("raft: controller.quorum.voters holds %d: voter ids must be >= 0", v)
		}
		if seen[v] {
			return nil, fmt.Errorf("raft: controller.quorum.voters lists %d twice: voters must be unique", v)
		}
		seen[v] = true
	}
	for _, d := range []struct {
		prop string
		v    sim.Duration
	}{{"controller.quorum.election.timeout.ms", cfg.ElectionTimeout}, {"controller.quorum.fetch.timeout.ms", cfg.FetchTimeout},
		{"controller.quorum.election.backoff.max.ms", cfg.ElectionBackoffMax}, {"controller.quorum.request.timeout.ms", cfg.RequestTimeout},
		{"controller.quorum.retry.backoff.ms", cfg.RetryBackoff}, {"fetch max wait", cfg.FetchMaxWait}} {
		if d.v <= 0 {
			return nil, fmt.Errorf("raft: %s = %v: must be > 0", d.prop, d.v)
		}
	}
	if cfg.SnapshotBytes < 0 {
		return nil, fmt.Errorf("raft: metadata.log.max.record.bytes.between.snapshots = %d: must be >= 0 (0 = off)", cfg.SnapshotBytes)
	}
	if env.Send == nil {
		return nil, fmt.Errorf("raft: Env.Send is nil")
	}
	if l == nil {
		return nil, fmt.Errorf("raft: the listener is nil")
	}
	vs := append([]int32(nil), cfg.Voters...)
	sort.Slice(vs, func(i, j int) bool { return vs[i] < vs[j] })
	if cfg.KRaftVersion < 0 || cfg.KRaftVersion > 1 {
		return nil, fmt.Errorf("raft: kraft.version %d: allowed 0 (static controller.quorum.voters) or 1 (KIP-853 dynamic voters)", cfg.KRaftVersion)
	}
	c := &Client{cfg: cfg, env: env, l: l, bootstrap: vs, leader: -1, votedFor: -1, hw: -1,
		fetchFrom: -1, notified: LeaderAndEpoch{Leader: -1, Epoch: -1}}
	if !c.dynamic() {
		var set voterSet
		for _, v := range vs {
			set = append(set, voterKey{id: v})
		}
		c.vhist = []votersAt{{offset: -1, set: set}}
		c.vset, c.voters, c.voter = set, vs, seen[cfg.NodeID]
	}
	return c, nil
}

// Start recovers the metadata log, the latest snapshot and quorum-state
// from the disk, hands the snapshot to the listener (the log's batches
// follow as HandleCommit once the high watermark is learned again) and
// enters the stored election state, as QuorumState.initialize does: a
// stored leader that is this node resumes as resigned (it must not lead
// that epoch twice), another stored leader is followed, a stored vote is
// kept.
func (c *Client) Start(ctx *sim.Context) {
	c.ctx = ctx
	if c.started {
		return
	}
	c.started = true
	var boot voterSet
	if c.dynamic() {
		boot = c.format()
		c.vhist = []votersAt{{offset: -1, set: boot}}
		c.setVoters(boot)
	}
	var err error
	c.log, err = openMetaLog(ctx, c.cfg)
	must(err)
	c.loadLatestSnapshot()
	if c.dynamic() {
		c.scanVoters(c.log.batches(c.log.startOffset(), c.log.endOffset()))
	}
	st, err := readQuorumState(ctx.Disk(), c.cfg)
	must(err)
	if st.epoch < c.log.lastEpoch() {
		// The log holds a later epoch than the file (a lost write cannot
		// happen, the file is synced first; keep the larger one anyway).
		st = electionState{epoch: c.log.lastEpoch(), leader: -1, votedFor: -1}
	}
	c.epoch, c.leader, c.votedFor = st.epoch, st.leader, st.votedFor
	switch {
	case st.leader == c.cfg.NodeID && c.voter:
		c.setRole(roleResigned)
		c.armElection(c.randomElectionTimeout())
	case st.leader >= 0:
		c.becomeFollower(st.epoch, st.leader)
	default:
		c.becomeUnattached(st.epoch, st.votedFor)
	}
}

// Timer handles the member's timers, named "raft-..."; it returns false for
// any other name.
func (c *Client) Timer(ctx *sim.Context, id sim.TimerID, name string) bool {
	c.ctx = ctx
	switch name {
	case "raft-election":
		if id == c.electionTimer {
			c.electionTimer = 0
			c.onElectionTimeout()
		}
	case "raft-backoff":
		if id == c.backoffTimer {
			c.backoffTimer = 0
			c.onBackoff()
		}
	case "raft-fetch-timeout":
		if id == c.fetchTimer {
			c.fetchTimer = 0
			c.onFetchTimeout()
		}
	case "raft-fetch-retry":
		if id == c.retryTimer {
			c.retryTimer = 0
			c.maybeFetch()
		}
	case "raft-check-quorum":
		if id == c.checkQuorumTimer {
			c.checkQuorumTimer = 0
			c.onCheckQuorum()
		}
	case "raft-begin-epoch":
		if id == c.beginTimer {
			c.beginTimer = 0
			c.sendBeginQuorumEpoch()
		}
	case "raft-fetch-wait":
		c.expireParked(id)
	default:
		return false
	}
	return true
}

// Append appends records as one batch in the current epoch, flushed
// before it returns, and returns the batch's last offset. Only the leader
// may append.
func (c *Client) Append(ctx *sim.Context, records [][]byte) (int64, error) {
	c.ctx = ctx
	if !c.started || c.stopped {
		return -1, ErrNotStarted
	}
	if c.role != roleLeader {
		return -1, fmt.Errorf("%w (node %d is %s in epoch %d, leader %d)", ErrNotLeader, c.cfg.NodeID, c.role, c.epoch, c.leader)
	}
	if len(records) == 0 {
		return -1, ErrEmptyAppend
	}
	nowMs := sim.Duration(ctx.Now()).Milliseconds()
	rs := make([]storage.Record, len(records))
	for i, v := range records {
		rs[i] = storage.Record{Timestamp: nowMs, Value: append([]byte(nil), v...)}
	}
	info := c.log.appendLeader(ctx.Now(), c.epoch, false, rs)
	c.onLeaderAppend()
	return info.LastOffset, nil
}

// Leader returns the leader and epoch as this member knows them.
func (c *Client) Leader() LeaderAndEpoch { return LeaderAndEpoch{Leader: c.leader, Epoch: c.epoch} }

// IsLeader reports whether this member leads the current epoch.
func (c *Client) IsLeader() bool { return c.role == roleLeader }

// VotedFor returns the candidate this member voted for in the current
// epoch (persisted in quorum-state), or -1.
func (c *Client) VotedFor() int32 { return c.votedFor }

// IsVoter reports whether this member is among the voters: with
// kraft.version 1, its node id with its directory id.
func (c *Client) IsVoter() bool { return c.voter }

// DirectoryID is this member's directory id (meta.properties'
// directory.id; zero with kraft.version 0).
func (c *Client) DirectoryID() [16]byte { return c.dir }

// Voters renders the voter set in force: 3000:<directory id>,... (ids
// only for static voters).
func (c *Client) Voters() string { return c.vset.String() }

// HighWatermark returns the high watermark, or -1 while it is unknown
// (after a start, until a leader commits in its epoch or a follower
// learns it from a fetch response).
func (c *Client) HighWatermark() int64 { return c.hw }

// LogEndOffset returns the metadata log's end offset (0 before Start).
func (c *Client) LogEndOffset() int64 {
	if c.log == nil {
		return 0
	}
	return c.log.endOffset()
}

// LogStartOffset returns the metadata log's start offset.
func (c *Client) LogStartOffset() int64 {
	if c.log == nil {
		return 0
	}
	return c.log.startOffset()
}

// State returns the member's state name (unattached, prospective,
// candidate, leader, follower, resigned), for tests and describe output.
func (c *Client) State() string { return c.role.String() }

// Entries returns every batch of the local log, oldest first: offsets,
// epoch, CRC32C and whether it is a control batch. It is read-only and
// reads the log, so it is meant for tests and checkers.
func (c *Client) Entries() []Entry {
	if c.log == nil {
		return nil
	}
	return c.log.entries()
}

// SnapshotID returns the latest snapshot's end offset and epoch, or (-1,
// -1) when there is none.
func (c *Client) SnapshotID() (endOffset int64, epoch int32) {
	if !c.snap.ok {
		return -1, -1
	}
	return c.snap.end, c.snap.epoch
}

// Resign makes a leader give up its epoch: it becomes resigned and sends
// EndQuorumEpoch to the other voters so that one of them stands at once.
func (c *Client) Resign(ctx *sim.Context) {
	c.ctx = ctx
	if c.started && !c.stopped && c.role == roleLeader {
		c.resign("resign")
	}
}

// Shutdown stops the member; a leader first sends EndQuorumEpoch (as
// KafkaRaftClient's graceful shutdown does). Nothing is handled after it.
func (c *Client) Shutdown(ctx *sim.Context) {
	c.ctx = ctx
	if !c.started || c.stopped {
		return
	}
	if c.role == roleLeader {
		c.resign("shutdown")
	}
	c.cancelTimers()
	c.answerParked()
	c.stopped = true
}
