package raft_test

// Spec-claim tests of the leader's timers, after LeaderState and
// KafkaRaftClient.pollLeader (Kafka 4.x): check-quorum (KIP-996) and the
// BeginQuorumEpoch resends; and of the follower's truncation invariant.

import (
	"errors"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/raft"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lead makes the unit's node 0 leader: its election timeout fires and
// voter 1 grants the vote. It returns the epoch.
func (x *unitWorld) lead() int32 {
	x.t.Helper()
	x.w.RunFor(sim.Ms(2100))
	for _, s := range x.u.sent {
		v, ok := s.req.(*kmsg.VoteRequest)
		if !ok || v.Topics[0].Partitions[0].PreVote {
			continue
		}
		epoch := v.Topics[0].Partitions[0].CandidateEpoch
		if err := x.w.Act(0, func(*sim.Context) {
			r := kmsg.NewPtrVoteResponse()
			r.Version = 2
			tp := kmsg.NewVoteResponseTopic()
			pp := kmsg.NewVoteResponseTopicPartition()
			pp.LeaderEpoch, pp.LeaderID, pp.VoteGranted = epoch, -1, true
			tp.Partitions = append(tp.Partitions, pp)
			r.Topics = append(r.Topics, tp)
			s.cb(r, nil)
		}); err != nil {
			x.t.Fatal(err)
		}
		if !x.u.c.IsLeader() {
			x.t.Fatal("not leader after a majority of votes")
		}
		return epoch
	}
	x.t.Fatal("no Vote sent")
	return -1
}

// at runs the unit's world until virtual time t (relative to its start).
func (x *unitWorld) at(t sim.Duration) {
	x.t.Helper()
	if d := sim.Time(t).Sub(x.w.Now()); d > 0 {
		x.w.RunFor(d)
	}
}

// TestCheckQuorumTimerResetsOnMajority (LeaderState.checkQuorumTimer): the
// leader resigns 1.5 × fetch timeout after the last time a majority of
// voters had fetched — not at a fixed window boundary, where a fetch early
// in a window would keep it for a second window.
func TestCheckQuorumTimerResetsOnMajority(t *testing.T) {
	x := newUnit(t, func(c *raft.Config) { c.CheckQuorum = true })
	epoch := x.lead()
	start := sim.Duration(x.w.Now())
	// Voter 1 fetches 100ms into the epoch: with node 0 that is a majority
	// of 3, and the 3000ms timer starts again from there.
	x.at(start + sim.Ms(100))
	x.handle(1, fetchReq(1, epoch, 0, 0))
	x.at(start + sim.Ms(3050))
	if !x.u.c.IsLeader() {
		t.Fatalf("resigned %v after a majority fetched at +100ms: the timer runs 3000ms from that fetch", sim.Duration(x.w.Now())-start)
	}
	x.at(start + sim.Ms(3150))
	if x.u.c.IsLeader() {
		t.Fatal("still leader 3050ms after the last majority fetch (check-quorum timeout 3000ms)")
	}
	if x.u.c.State() != "resigned" {
		t.Fatalf("state %s after check-quorum, want resigned", x.u.c.State())
	}
}

// TestCheckQuorumKeptByRegularFetches: fetches of one voter every 2.9s keep
// a leader of three for as long as they come.
func TestCheckQuorumKeptByRegularFetches(t *testing.T) {
	x := newUnit(t, func(c *raft.Config) { c.CheckQuorum = true })
	epoch := x.lead()
	start := sim.Duration(x.w.Now())
	for i := 1; i <= 5; i++ {
		x.at(start + sim.Ms(int64(2900*i)))
		x.handle(2, fetchReq(2, epoch, 0, 0))
		if !x.u.c.IsLeader() {
			t.Fatalf("resigned at fetch %d", i)
		}
	}
	x.at(start + sim.Ms(2900*5+3100))
	if x.u.c.IsLeader() {
		t.Fatal("still leader 3100ms after the fetches stopped")
	}
}

// TestFetchSnapshotCountsForCheckQuorum: a voter that only fetches the
// snapshot counts as one that fetches (handleFetchSnapshotRequest updates
// check-quorum too).
func TestFetchSnapshotCountsForCheckQuorum(t *testing.T) {
	x := newUnit(t, func(c *raft.Config) { c.CheckQuorum = true; c.SnapshotBytes = 1 })
	epoch := x.lead()
	var err error
	if e := x.w.Act(0, func(ctx *sim.Context) { _, err = x.u.c.Append(ctx, [][]byte{[]byte("r")}) }); e != nil || err != nil {
		t.Fatal(e, err)
	}
	leo := x.u.c.LogEndOffset()
	x.handle(1, fetchReq(1, epoch, leo, epoch)) // commits: the leader snapshots
	end, snapEpoch := x.u.c.SnapshotID()
	if end < 0 {
		t.Fatalf("no snapshot after committing %d", leo)
	}
	start := sim.Duration(x.w.Now())
	req := func() *kmsg.FetchSnapshotRequest {
		r := kmsg.NewPtrFetchSnapshotRequest()
		r.Version = 1
		r.ReplicaID = 2
		r.MaxBytes = 1 << 20
		tp := kmsg.NewFetchSnapshotRequestTopic()
		tp.Topic = raft.MetadataTopic
		pp := kmsg.NewFetchSnapshotRequestTopicPartition()
		pp.CurrentLeaderEpoch = epoch
		pp.SnapshotID.EndOffset, pp.SnapshotID.Epoch = end, snapEpoch
		tp.Partitions = append(tp.Partitions, pp)
		r.Topics = append(r.Topics, tp)
		return r
	}
	for i := 1; i <= 3; i++ {
		x.at(start + sim.Ms(int64(2500*i)))
		resp := x.handle(2, req()).(*kmsg.FetchSnapshotResponse)
		if c := resp.Topics[0].Partitions[0].ErrorCode; c != 0 {
			t.Fatalf("FetchSnapshot %d: error %d", i, c)
		}
	}
	if !x.u.c.IsLeader() {
		t.Fatal("resigned although voter 2 fetched the snapshot every 2.5s")
	}
}

// beginSent returns the BeginQuorumEpoch requests sent to voter to.
func (x *unitWorld) beginSent(to int32) []sent {
	var out []sent
	for _, s := range x.u.sent {
		if _, ok := s.req.(*kmsg.BeginQuorumEpochRequest); ok && s.to == to {
			out = append(out, s)
		}
	}
	return out
}

// TestBeginQuorumEpochResentUntilAcknowledged (LeaderState: unacknowledged
// voters are the targets of BeginQuorumEpoch until they acknowledge): a
// voter that answers is not asked again, one that fetched neither; one
// that never answers is asked again once its request timed out, every
// fetch timeout / 2, and after a failed request only past retry.backoff.
func TestBeginQuorumEpochResentUntilAcknowledged(t *testing.T) {
	x := newUnit(t, nil)
	epoch := x.lead()
	start := sim.Duration(x.w.Now())
	if len(x.beginSent(1)) != 1 || len(x.beginSent(2)) != 1 {
		t.Fatalf("BeginQuorumEpoch at election: %d to 1, %d to 2, want 1 each", len(x.beginSent(1)), len(x.beginSent(2)))
	}
	// Voter 1 answers; voter 2 does not (its request is in flight).
	ok := kmsg.NewPtrBeginQuorumEpochResponse()
	ok.Version = 1
	tp := kmsg.NewBeginQuorumEpochResponseTopic()
	pp := kmsg.NewBeginQuorumEpochResponseTopicPartition()
	pp.LeaderID, pp.LeaderEpoch = 0, epoch
	tp.Partitions = append(tp.Partitions, pp)
	ok.Topics = append(ok.Topics, tp)
	if err := x.w.Act(0, func(*sim.Context) { x.beginSent(1)[0].cb(ok, nil) }); err != nil {
		t.Fatal(err)
	}
	x.at(start + sim.Ms(1050)) // first resend round: 2's request still in flight
	if n1, n2 := len(x.beginSent(1)), len(x.beginSent(2)); n1 != 1 || n2 != 1 {
		t.Fatalf("after 1s: %d to 1 (acknowledged), %d to 2 (in flight), want 1 and 1", n1, n2)
	}
	// Voter 2's request times out: the next round asks again.
	if err := x.w.Act(0, func(*sim.Context) { x.beginSent(2)[0].cb(nil, errors.New("request timed out")) }); err != nil {
		t.Fatal(err)
	}
	x.at(start + sim.Ms(2050))
	if n := len(x.beginSent(2)); n != 2 {
		t.Fatalf("after the timeout: %d BeginQuorumEpoch to 2, want 2", n)
	}
	if n := len(x.beginSent(1)); n != 1 {
		t.Fatalf("acknowledged voter 1 asked again: %d", n)
	}
	// A fetch acknowledges too: no more rounds once every voter has.
	if err := x.w.Act(0, func(*sim.Context) { x.beginSent(2)[1].cb(nil, errors.New("request timed out")) }); err != nil {
		t.Fatal(err)
	}
	x.handle(2, fetchReq(2, epoch, 0, 0))
	x.at(start + sim.Ms(5050))
	if n := len(x.beginSent(2)); n != 2 {
		t.Fatalf("voter 2 asked again after it fetched: %d", n)
	}
}

// TestTruncateBelowHighWatermarkIsInvariant: a follower that the leader
// asks to truncate below its high watermark stops (Kafka's
// handleFetchResponse throws); it never removes committed records.
func TestTruncateBelowHighWatermarkIsInvariant(t *testing.T) {
	x := newUnit(t, nil)
	x.handle(1, beginEpoch(1, 2))
	last := func() sent { return x.u.sent[len(x.u.sent)-1] }
	data := append(batchBytes(t, 0, 1, "a", "b"), batchBytes(t, 2, 2, "c", "d")...)
	if err := x.w.Act(0, func(*sim.Context) { last().cb(fetchResp(2, 1, 4, data), nil) }); err != nil {
		t.Fatal(err)
	}
	if hw := x.u.c.HighWatermark(); hw != 4 {
		t.Fatalf("HW %d, want 4", hw)
	}
	resp := fetchResp(2, 1, 4, nil)
	resp.Topics[0].Partitions[0].DivergingEpoch.Epoch = 1
	resp.Topics[0].Partitions[0].DivergingEpoch.EndOffset = 2
	var panicked any
	func() {
		defer func() { panicked = recover() }()
		_ = x.w.Act(0, func(*sim.Context) { last().cb(resp, nil) })
	}()
	msg := ""
	if panicked != nil {
		msg = strings.TrimSpace(strings.SplitN(toString(panicked), "\n", 2)[0])
	}
	if !strings.Contains(msg, "raft: invariant") || !strings.Contains(msg, "below its high watermark 4") {
		t.Fatalf("truncation to 2 below HW 4: panic %q, want the raft invariant", msg)
	}
	if leo := x.u.c.LogEndOffset(); leo != 4 {
		t.Fatalf("LEO %d after the refused truncation, want 4 (nothing removed)", leo)
	}
}

func toString(v any) string {
	if e, ok := v.(error); ok {
		return e.Error()
	}
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

// TestFetchInvalidRequest: the Fetch requests handleFetchRequest refuses
// with INVALID_REQUEST before it looks at the epoch (a negative max wait,
// fetch offset or last fetched epoch, or a last fetched epoch above the
// request's leader epoch), even when the epoch is stale.
func TestFetchInvalidRequest(t *testing.T) {
	x := newUnit(t, nil)
	epoch := x.lead()
	for _, tc := range []struct {
		name string
		req  *kmsg.FetchRequest
	}{
		{"negative max wait", func() *kmsg.FetchRequest { r := fetchReq(1, epoch, 0, 0); r.MaxWaitMillis = -1; return r }()},
		{"negative offset", fetchReq(1, epoch, -1, 0)},
		{"negative last epoch", fetchReq(1, epoch, 0, -1)},
		{"last epoch above leader epoch", fetchReq(1, epoch, 0, epoch+1)},
		{"stale epoch, negative offset", fetchReq(1, epoch-1, -1, 0)},
	} {
		p := x.handle(1, tc.req).(*kmsg.FetchResponse).Topics[0].Partitions[0]
		if p.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("%s: error %d, want INVALID_REQUEST", tc.name, p.ErrorCode)
		}
	}
	if p := x.handle(1, fetchReq(1, epoch, 0, 0)).(*kmsg.FetchResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 {
		t.Fatalf("valid fetch: error %d", p.ErrorCode)
	}
}

// TestNewLeaderHidesItsHighWatermarkUntilItCommits (LeaderState's
// highWatermark starts empty; KafkaRaftClient answers a Fetch with
// highWatermark().orElse(-1)): a new leader exposes no high watermark,
// not even the one it knew in an earlier epoch, until a majority has
// fetched past its epoch's start. A follower that took the old one would
// apply an image older than what the last leader committed (a restarted
// partition leader acting on a stale ISR: group-swarm/kraft seed 192).
func TestNewLeaderHidesItsHighWatermarkUntilItCommits(t *testing.T) {
	x := newUnit(t, nil)
	e1 := x.lead()
	if p := x.handle(1, fetchReq(1, e1, 0, 0)).(*kmsg.FetchResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != -1 {
		t.Fatalf("first fetch: error %d, high watermark %d; want -1 before the epoch commits", p.ErrorCode, p.HighWatermark)
	}
	if p := x.handle(1, fetchReq(1, e1, 1, e1)).(*kmsg.FetchResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != 1 {
		t.Fatalf("after a majority fetched the LeaderChange: error %d, high watermark %d; want 1", p.ErrorCode, p.HighWatermark)
	}
	// Node 1 wins an epoch and goes silent; node 0 leads the next one,
	// knowing HW 1 from before.
	if r := x.handle(1, voteReq(1, e1+1, e1, 1, false)).(*kmsg.VoteResponse); !r.Topics[0].Partitions[0].VoteGranted {
		t.Fatalf("vote for node 1 not granted: %+v", r.Topics[0].Partitions[0])
	}
	x.u.sent = nil
	e3 := x.lead()
	if p := x.handle(1, fetchReq(1, e3, 1, e1)).(*kmsg.FetchResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != -1 {
		t.Fatalf("epoch %d's first fetch: error %d, high watermark %d; want -1, not the HW of epoch %d", e3, p.ErrorCode, p.HighWatermark, e1)
	}
	if p := x.handle(1, fetchReq(1, e3, 2, e3)).(*kmsg.FetchResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != 2 {
		t.Fatalf("epoch %d committed: error %d, high watermark %d; want 2", e3, p.ErrorCode, p.HighWatermark)
	}
}
