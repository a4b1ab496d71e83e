package raft_test

// Unit tests after KafkaRaftClientTest: one member in a world of its own,
// its requests captured, requests from its peers handed to it directly.

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type sent struct {
	to  int32
	req kmsg.Request
	cb  func(kmsg.Response, error)
}

type unit struct {
	cfg     raft.Config
	c       *raft.Client
	sent    []sent
	commits []raft.Batch
	changes []raft.LeaderAndEpoch
}

func (u *unit) Start(ctx *sim.Context) {
	c, err := raft.New(u.cfg, raft.Env{Send: func(to int32, req kmsg.Request, _ sim.Duration, cb func(kmsg.Response, error)) {
		u.sent = append(u.sent, sent{to, req, cb})
	}}, u)
	if err != nil {
		panic(err)
	}
	u.c = c
	c.Start(ctx)
}
func (u *unit) Receive(*sim.Context, sim.NodeID, sim.Message) {}
func (u *unit) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	u.c.Timer(ctx, id, name)
}
func (u *unit) HandleCommit(_ *sim.Context, b raft.Batch)      { u.commits = append(u.commits, b) }
func (u *unit) HandleLoadSnapshot(*sim.Context, raft.Snapshot) {}
func (u *unit) HandleLeaderChange(_ *sim.Context, l raft.LeaderAndEpoch) {
	u.changes = append(u.changes, l)
}
func (u *unit) Snapshot() [][]byte { return nil }

type unitWorld struct {
	t *testing.T
	w *sim.World
	u *unit
}

func newUnit(t *testing.T, mutate func(*raft.Config)) *unitWorld {
	cfg := testConfig([]int32{0, 1, 2})
	if mutate != nil {
		mutate(&cfg)
	}
	w, err := sim.New(sim.Config{Seed: 7, KeepTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	u := &unit{cfg: cfg}
	if _, err := w.AddNode("n0", func() sim.Node { *u = unit{cfg: cfg}; return u }, sim.NodeOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Inject(sim.Start{Node: 0}); err != nil {
		t.Fatal(err)
	}
	return &unitWorld{t: t, w: w, u: u}
}

func (x *unitWorld) handle(from int32, req kmsg.Request) kmsg.Response {
	var got kmsg.Response
	if err := x.w.Act(0, func(ctx *sim.Context) {
		if !x.u.c.Handle(ctx, from, req, func(r kmsg.Response) { got = r }) {
			x.t.Fatalf("request %T not handled", req)
		}
	}); err != nil {
		x.t.Fatal(err)
	}
	return got
}

func voteReq(candidate, epoch, lastEpoch int32, lastOffset int64, preVote bool) *kmsg.VoteRequest {
	req := kmsg.NewPtrVoteRequest()
	req.Version = 2
	id := "kafkasim-raft"
	req.ClusterID = &id
	req.VoterID = 0 // the unit's own id
	t := kmsg.NewVoteRequestTopic()
	t.Topic = raft.MetadataTopic
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateID, p.CandidateEpoch, p.LastOffsetEpoch, p.LastOffset, p.PreVote = candidate, epoch, lastEpoch, lastOffset, preVote
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func votePart(r kmsg.Response) kmsg.VoteResponseTopicPartition {
	return r.(*kmsg.VoteResponse).Topics[0].Partitions[0]
}

func (x *unitWorld) quorumState() string {
	b, err := x.w.Disk(0).ReadFile("/kraft/__cluster_metadata-0/quorum-state")
	if err != nil {
		return ""
	}
	return string(b)
}

// TestVoteGrantedOncePerEpoch: a vote is granted to one candidate per
// epoch, persisted before the answer, and a higher epoch resets it.
func TestVoteGrantedOncePerEpoch(t *testing.T) {
	x := newUnit(t, nil)
	if p := votePart(x.handle(1, voteReq(1, 1, 0, 0, false))); !p.VoteGranted || p.ErrorCode != 0 {
		t.Fatalf("first vote in epoch 1: %+v", p)
	}
	if qs := x.quorumState(); !strings.Contains(qs, `"leaderEpoch":1`) || !strings.Contains(qs, `"votedId":1`) {
		t.Fatalf("quorum-state after the vote: %s", qs)
	}
	if p := votePart(x.handle(2, voteReq(2, 1, 0, 0, false))); p.VoteGranted {
		t.Fatal("a second candidate got a vote in the same epoch")
	}
	if p := votePart(x.handle(1, voteReq(1, 1, 0, 0, false))); !p.VoteGranted {
		t.Fatal("the same candidate was refused its vote again")
	}
	if p := votePart(x.handle(2, voteReq(2, 2, 0, 0, false))); !p.VoteGranted || p.LeaderEpoch != 2 {
		t.Fatalf("higher epoch should reset the vote: %+v", p)
	}
	if p := votePart(x.handle(1, voteReq(1, 1, 0, 0, false))); p.VoteGranted || p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("stale epoch: want FENCED_LEADER_EPOCH, got %+v", p)
	}
}

// TestVoteLogCheck: a candidate with a shorter log is refused, unless the
// planted bug turns the check off.
func TestVoteLogCheck(t *testing.T) {
	for _, check := range []bool{true, false} {
		x := newUnit(t, func(c *raft.Config) { c.VoteCheckLog = check; c.Voters = []int32{0, 1, 2} })
		// Make node 0 leader of epoch 1 alone: a one-voter view is not
		// possible with static voters, so give it a log by following.
		begin := kmsg.NewPtrBeginQuorumEpochRequest()
		begin.Version = 1
		bt := kmsg.NewBeginQuorumEpochRequestTopic()
		bt.Topic = raft.MetadataTopic
		bp := kmsg.NewBeginQuorumEpochRequestTopicPartition()
		bp.LeaderID, bp.LeaderEpoch = 1, 3
		bt.Partitions = append(bt.Partitions, bp)
		begin.Topics = append(begin.Topics, bt)
		x.handle(1, begin)
		// Fake a local log of epoch 3 by the fetch answer of leader 1.
		var fetch sent
		for _, s := range x.u.sent {
			if _, ok := s.req.(*kmsg.FetchRequest); ok {
				fetch = s
			}
		}
		if fetch.cb == nil {
			t.Fatal("follower sent no Fetch")
		}
		resp := fetchResp(3, 1, 0, batchBytes(t, 0, 3, "a", "b"))
		if err := x.w.Act(0, func(*sim.Context) { fetch.cb(resp, nil) }); err != nil {
			t.Fatal(err)
		}
		if x.u.c.LogEndOffset() != 2 {
			t.Fatalf("log end %d after the fetch, want 2", x.u.c.LogEndOffset())
		}
		p := votePart(x.handle(2, voteReq(2, 4, 2, 5, false)))
		if p.VoteGranted != !check {
			t.Fatalf("check=%v: candidate with last epoch 2 < 3 granted=%v", check, p.VoteGranted)
		}
	}
}

// TestPreVoteDoesNotBumpEpoch (KIP-996 as Kafka 4.x ships it): a pre-vote
// names the prospective's current epoch; a receiver at a lower epoch moves
// to that epoch (it exists: the prospective is in it), unattached with no
// vote, and grants when the log is up to date; nothing of the pre-vote is
// persisted, and the receiver's epoch does not go past the prospective's.
func TestPreVoteDoesNotBumpEpoch(t *testing.T) {
	x := newUnit(t, func(c *raft.Config) { c.PreVote = true })
	p := votePart(x.handle(1, voteReq(1, 5, 0, 0, true)))
	if !p.VoteGranted || p.ErrorCode != 0 {
		t.Fatalf("pre-vote refused: %+v", p)
	}
	if e := x.u.c.Leader().Epoch; e != 5 {
		t.Fatalf("epoch %d after a pre-vote of epoch 5 from epoch 0, want 5", e)
	}
	if v := x.u.c.VotedFor(); v != -1 {
		t.Fatalf("voted for %d after a pre-vote, want -1", v)
	}
	if qs := x.quorumState(); strings.Contains(qs, `"votedId":1`) {
		t.Fatalf("pre-vote was persisted: %s", qs)
	}
	// A standard vote in the same epoch is still free to go to anyone.
	if p := votePart(x.handle(2, voteReq(2, 6, 0, 0, false))); !p.VoteGranted {
		t.Fatalf("standard vote after a pre-vote refused: %+v", p)
	}
}

// TestProspectiveSendsCurrentEpoch (KIP-996): a prospective's pre-vote
// carries its current epoch, and only a standard vote the bumped one.
func TestProspectiveSendsCurrentEpoch(t *testing.T) {
	x := newUnit(t, func(c *raft.Config) { c.PreVote = true })
	x.handle(1, voteReq(1, 3, 0, 0, false)) // epoch 3, voted for 1
	x.w.RunFor(sim.Ms(2100))                // election timeout: prospective
	var pre []*kmsg.VoteRequest
	for _, s := range x.u.sent {
		if v, ok := s.req.(*kmsg.VoteRequest); ok {
			pre = append(pre, v)
		}
	}
	if len(pre) == 0 || x.u.c.State() != "prospective" {
		t.Fatalf("state %s, %d vote requests: want a prospective's pre-votes", x.u.c.State(), len(pre))
	}
	for _, v := range pre {
		p := v.Topics[0].Partitions[0]
		if !p.PreVote || p.CandidateEpoch != 3 || v.VoterID == 0 {
			t.Fatalf("pre-vote to %d: PreVote=%v epoch %d, want a pre-vote of epoch 3 to another voter", v.VoterID, p.PreVote, p.CandidateEpoch)
		}
	}
	if e := x.u.c.Leader().Epoch; e != 3 {
		t.Fatalf("prospective epoch %d, want 3", e)
	}
}

// TestFollowerRefusesPreVoteOnceLeaderFetched (KIP-996): a follower that
// got a fetch answer from its leader refuses pre-votes, naming the leader;
// before that it grants an up-to-date one.
func TestFollowerRefusesPreVoteOnceLeaderFetched(t *testing.T) {
	x := newUnit(t, func(c *raft.Config) { c.PreVote = true })
	x.handle(1, beginEpoch(1, 2))
	if p := votePart(x.handle(2, voteReq(2, 2, 0, 0, true))); !p.VoteGranted {
		t.Fatalf("follower that never fetched refused an up-to-date pre-vote: %+v", p)
	}
	fetch := x.u.sent[len(x.u.sent)-1]
	if err := x.w.Act(0, func(*sim.Context) { fetch.cb(fetchResp(2, 1, 0, nil), nil) }); err != nil {
		t.Fatal(err)
	}
	p := votePart(x.handle(2, voteReq(2, 2, 0, 0, true)))
	if p.VoteGranted || p.LeaderID != 1 || p.LeaderEpoch != 2 {
		t.Fatalf("follower with a live leader: %+v, want a refusal naming leader 1 in epoch 2", p)
	}
}

// TestObserverAnswersVotes: an observer answers a Vote from its own state,
// with no error (Kafka 4.0 dropped INCONSISTENT_VOTER_SET for Vote), and
// never persists a pre-vote.
func TestObserverAnswersVotes(t *testing.T) {
	x := newUnit(t, func(c *raft.Config) { c.Voters = []int32{1, 2, 3}; c.PreVote = true })
	if x.u.c.IsVoter() {
		t.Fatal("node 0 should be an observer")
	}
	if p := votePart(x.handle(1, voteReq(1, 1, 0, 0, true))); p.ErrorCode != 0 || !p.VoteGranted {
		t.Fatalf("observer, pre-vote: %+v, want granted with no error", p)
	}
	if v := x.u.c.VotedFor(); v != -1 {
		t.Fatalf("observer voted for %d after a pre-vote", v)
	}
	if p := votePart(x.handle(1, voteReq(1, 2, 0, 0, false))); p.ErrorCode != 0 || !p.VoteGranted {
		t.Fatalf("observer, vote: %+v, want granted with no error", p)
	}
}

// TestVoteInvalidRequest: the Vote requests handleVoteRequest refuses with
// INVALID_REQUEST (a negative last offset or epoch, a last epoch not below
// a candidate's epoch, or above a prospective's, a negative candidate id),
// and one for another voter id with INVALID_VOTER_KEY; none changes the
// receiver's epoch or vote.
func TestVoteInvalidRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  *kmsg.VoteRequest
		code int16
	}{
		{"negative last offset", voteReq(1, 3, 0, -1, false), kerr.InvalidRequest.Code},
		{"negative last epoch", voteReq(1, 3, -1, 0, false), kerr.InvalidRequest.Code},
		{"vote: last epoch == epoch", voteReq(1, 3, 3, 10, false), kerr.InvalidRequest.Code},
		{"pre-vote: last epoch > epoch", voteReq(1, 3, 4, 10, true), kerr.InvalidRequest.Code},
		{"negative candidate", voteReq(-1, 3, 0, 0, false), kerr.InvalidRequest.Code},
		{"another voter's key", func() *kmsg.VoteRequest { r := voteReq(1, 3, 0, 0, false); r.VoterID = 2; return r }(), kerr.InvalidVoterKey.Code},
	} {
		x := newUnit(t, func(c *raft.Config) { c.PreVote = true })
		p := votePart(x.handle(1, tc.req))
		if p.ErrorCode != tc.code || p.VoteGranted {
			t.Errorf("%s: %+v, want error %d and no vote", tc.name, p, tc.code)
		}
		if v := x.u.c.VotedFor(); v != -1 {
			t.Errorf("%s: voted for %d", tc.name, v)
		}
	}
	// A pre-vote whose last epoch equals its epoch is valid.
	x := newUnit(t, func(c *raft.Config) { c.PreVote = true })
	if p := votePart(x.handle(1, voteReq(1, 3, 3, 10, true))); p.ErrorCode != 0 || !p.VoteGranted {
		t.Errorf("pre-vote with last epoch == epoch: %+v, want granted", p)
	}
}

func beginEpoch(leader, epoch int32) *kmsg.BeginQuorumEpochRequest {
	begin := kmsg.NewPtrBeginQuorumEpochRequest()
	begin.Version = 1
	bt := kmsg.NewBeginQuorumEpochRequestTopic()
	bt.Topic = raft.MetadataTopic
	bp := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	bp.LeaderID, bp.LeaderEpoch = leader, epoch
	bt.Partitions = append(bt.Partitions, bp)
	begin.Topics = append(begin.Topics, bt)
	return begin
}

// TestStaleFetchFenced: a Fetch of an older epoch gets FENCED_LEADER_EPOCH,
// one to a non-leader NOT_LEADER_OR_FOLLOWER.
func TestStaleFetchFenced(t *testing.T) {
	x := newUnit(t, nil)
	x.handle(1, voteReq(1, 2, 0, 0, false))
	r := x.handle(1, fetchReq(1, 1, 0, 0)).(*kmsg.FetchResponse)
	if c := r.Topics[0].Partitions[0].ErrorCode; c != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("stale fetch: error %d, want FENCED_LEADER_EPOCH", c)
	}
	r = x.handle(1, fetchReq(1, 2, 0, 0)).(*kmsg.FetchResponse)
	if c := r.Topics[0].Partitions[0].ErrorCode; c != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fetch to a non-leader: error %d, want NOT_LEADER_OR_FOLLOWER", c)
	}
}

func fetchReq(replica, epoch int32, offset int64, lastEpoch int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 17
	req.ReplicaState.ID = replica
	t := kmsg.NewFetchRequestTopic()
	t.Topic, t.TopicID = raft.MetadataTopic, [16]byte{15: 1}
	p := kmsg.NewFetchRequestTopicPartition()
	p.CurrentLeaderEpoch, p.FetchOffset, p.LastFetchedEpoch = epoch, offset, lastEpoch
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func fetchResp(epoch, leader int32, hw int64, data []byte) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 17
	t := kmsg.NewFetchResponseTopic()
	p := kmsg.NewFetchResponseTopicPartition()
	p.HighWatermark = hw
	p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = -1, -1
	p.SnapshotID.Epoch, p.SnapshotID.EndOffset = -1, -1
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = leader, epoch
	p.RecordBatches = data
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}

func batchBytes(t *testing.T, base int64, epoch int32, values ...string) []byte {
	var rs []storage.Record
	for _, v := range values {
		rs = append(rs, storage.Record{Value: []byte(v)})
	}
	b := storage.NewBatch(base, rs)
	b.PartitionLeaderEpoch = epoch
	return b.AppendTo(nil)
}

// TestDivergingEpochTruncates (KIP-595): a follower told its log diverges
// truncates to the leader's end offset for that epoch.
func TestDivergingEpochTruncates(t *testing.T) {
	x := newUnit(t, nil)
	begin := kmsg.NewPtrBeginQuorumEpochRequest()
	begin.Version = 1
	bt := kmsg.NewBeginQuorumEpochRequestTopic()
	bt.Topic = raft.MetadataTopic
	bp := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	bp.LeaderID, bp.LeaderEpoch = 1, 2
	bt.Partitions = append(bt.Partitions, bp)
	begin.Topics = append(begin.Topics, bt)
	x.handle(1, begin)
	last := func() sent { return x.u.sent[len(x.u.sent)-1] }
	data := append(batchBytes(t, 0, 1, "a", "b"), batchBytes(t, 2, 2, "c", "d")...)
	if err := x.w.Act(0, func(*sim.Context) { last().cb(fetchResp(2, 1, 0, data), nil) }); err != nil {
		t.Fatal(err)
	}
	if x.u.c.LogEndOffset() != 4 {
		t.Fatalf("LEO %d, want 4", x.u.c.LogEndOffset())
	}
	resp := fetchResp(2, 1, 0, nil)
	resp.Topics[0].Partitions[0].DivergingEpoch.Epoch = 2
	resp.Topics[0].Partitions[0].DivergingEpoch.EndOffset = 3
	if err := x.w.Act(0, func(*sim.Context) { last().cb(resp, nil) }); err != nil {
		t.Fatal(err)
	}
	// The whole batch holding offset 3 goes (storage truncates batches).
	if x.u.c.LogEndOffset() != 2 {
		t.Fatalf("LEO %d after DivergingEpoch{2, 3}, want 2", x.u.c.LogEndOffset())
	}
	f := last().req.(*kmsg.FetchRequest).Topics[0].Partitions[0]
	if f.FetchOffset != 2 || f.LastFetchedEpoch != 1 {
		t.Fatalf("refetch at %d epoch %d, want 2 epoch 1", f.FetchOffset, f.LastFetchedEpoch)
	}
}

// TestHighWatermarkNeedsCurrentEpochRecord: the leader's HW moves only
// when a majority holds a record of its own epoch.
func TestHighWatermarkNeedsCurrentEpochRecord(t *testing.T) {
	x := newUnit(t, nil)
	epoch := x.lead()                 // election timeout: node 0 stands, voter 1 grants
	start := x.u.c.LogEndOffset() - 1 // the LeaderChange batch
	// A follower that has nothing of this epoch yet: HW stays unknown.
	x.handle(1, fetchReq(1, epoch, start, 0))
	if hw := x.u.c.HighWatermark(); hw != -1 {
		t.Fatalf("HW %d before a current-epoch record is replicated, want -1", hw)
	}
	x.handle(1, fetchReq(1, epoch, start+1, epoch))
	if hw := x.u.c.HighWatermark(); hw != start+1 {
		t.Fatalf("HW %d after the follower holds the LeaderChange batch, want %d", hw, start+1)
	}
	if len(x.u.changes) == 0 || x.u.changes[len(x.u.changes)-1].Leader != 0 {
		t.Fatalf("leader change not delivered to the listener: %v", x.u.changes)
	}
}
