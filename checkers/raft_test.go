package checkers

import (
	"strings"
	"testing"
)

func leaderEv(step uint64, node string, epoch int32, leo int64) RaftEvent {
	return RaftEvent{Step: step, Node: node, Kind: RaftBecameLeader, Epoch: epoch, Offset: leo}
}

func commitEv(step uint64, node string, base, last int64, epoch int32, crc string) RaftEvent {
	return RaftEvent{Step: step, Node: node, Kind: RaftCommitted, Offset: base, LastOffset: last, Epoch: epoch, CRC: crc}
}

func TestRaftCheckerPassesAHealthyQuorum(t *testing.T) {
	run := &RaftRun{
		Events: []RaftEvent{
			leaderEv(1, "c0", 1, 0),
			commitEv(2, "c0", 0, 0, 1, "a"), commitEv(3, "c1", 0, 0, 1, "a"),
			commitEv(4, "c0", 1, 3, 1, "b"), commitEv(5, "b0", 0, 0, 1, "a"), commitEv(6, "b0", 1, 3, 1, "b"),
			leaderEv(7, "c1", 2, 4), // a new leader holding everything committed
			commitEv(8, "c1", 1, 3, 1, "b"), commitEv(9, "c1", 4, 4, 2, "c"),
			// a restarted node replays the same batches
			commitEv(10, "c0", 0, 0, 1, "a"),
		},
		Logs: []RaftLog{
			{Node: "c0", Entries: []RaftEntry{{0, 0, 1, "a"}, {1, 3, 1, "b"}, {4, 4, 2, "c"}}},
			{Node: "c1", Entries: []RaftEntry{{0, 0, 1, "a"}, {1, 3, 1, "b"}, {4, 4, 2, "c"}, {5, 5, 2, "d"}}},
			{Node: "c2", Entries: []RaftEntry{{0, 0, 1, "a"}, {1, 3, 1, "b"}, {4, 4, 1, "x"}}}, // an uncommitted stale tail
		},
	}
	if v := Raft(run); v.Result != ResultOK {
		t.Fatalf("healthy quorum: %s", v)
	}
}

func TestRaftCheckerFindsEachViolation(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  RaftRun
		kind string
	}{
		{"two leaders in one epoch", RaftRun{Events: []RaftEvent{leaderEv(1, "c0", 3, 0), leaderEv(2, "c1", 3, 0)}}, "election-safety"},
		{"a leader missing committed records", RaftRun{Events: []RaftEvent{
			leaderEv(1, "c0", 1, 0), commitEv(2, "c0", 0, 4, 1, "a"), commitEv(3, "c1", 0, 4, 1, "a"),
			leaderEv(4, "c2", 2, 2)}}, "leader-completeness"},
		{"two nodes apply different records at one offset", RaftRun{Events: []RaftEvent{
			commitEv(1, "c0", 0, 1, 1, "a"), commitEv(2, "b1", 0, 1, 2, "z")}}, "state-machine-safety"},
		{"overlapping batches that differ", RaftRun{Events: []RaftEvent{
			commitEv(1, "c0", 0, 3, 1, "a"), commitEv(2, "c1", 2, 2, 1, "a")}}, "state-machine-safety"},
		{"final logs agree on an entry but not before it", RaftRun{Logs: []RaftLog{
			{Node: "c0", Entries: []RaftEntry{{0, 0, 1, "a"}, {1, 1, 2, "b"}}},
			{Node: "c1", Entries: []RaftEntry{{0, 0, 1, "q"}, {1, 1, 2, "b"}}}}}, "log-matching"},
		{"a follower asked to truncate below its high watermark halts", RaftRun{Events: []RaftEvent{
			{Step: 9, Node: "ctl2", Kind: RaftFatal, Reason: "raft: invariant: node 3002 (epoch 2, leader 3001) asked to truncate to offset 10 (diverging epoch 1), below its high watermark 11"}}}, "fatal"},
		{"a node back in an older epoch after a restart", RaftRun{Events: []RaftEvent{
			{Step: 1, Node: "ctl0", Kind: RaftStateChanged, Epoch: 4, Leader: -1}, {Step: 2, Node: "ctl1", Kind: RaftStateChanged, Epoch: 5, Leader: -1},
			{Step: 3, Node: "ctl0", Kind: RaftStateChanged, Epoch: 3, Leader: -1}}}, "epoch-regression"},
		{"a follower of a leader that did not win the epoch", RaftRun{Events: []RaftEvent{
			leaderEv(1, "ctl0", 3, 0), {Step: 2, Node: "ctl1", Kind: RaftStateChanged, Epoch: 3, Leader: 3000},
			{Step: 3, Node: "b0", Kind: RaftStateChanged, Epoch: 3, Leader: 3002}}}, "election-safety"},
		{"a voter granting two candidates one epoch", RaftRun{Events: []RaftEvent{
			{Step: 1, Node: "ctl0", Kind: RaftVoteGranted, Epoch: 4, Candidate: 3001},
			{Step: 2, Node: "ctl0", Kind: RaftVoteGranted, Epoch: 4, Candidate: 3001}, // a retried request
			{Step: 3, Node: "ctl0", Kind: RaftVoteGranted, Epoch: 4, Candidate: 3002}}}, "vote-once"},
	} {
		v := Raft(&tc.run)
		if v.Result != ResultViolation || len(v.Anomalies) == 0 || v.Anomalies[0].Kind != tc.kind || v.Anomalies[0].Permitted {
			t.Errorf("%s: %s; want a %s violation outside the contract", tc.name, v, tc.kind)
			continue
		}
		if !strings.Contains(v.String(), "__cluster_metadata") {
			t.Errorf("%s: evidence does not name the metadata log: %s", tc.name, v)
		}
	}
}

func TestRaftCheckerUnknownWithoutKRaft(t *testing.T) {
	if v := Raft(nil); v.Result != ResultUnknown {
		t.Errorf("no KRaft run: %s, want unknown", v)
	}
}

// kafka14077 is KAFKA-14077 as the raft checker sees it: ctl0 leads and
// commits [0,4] with ctl1; ctl1's disk is wiped and it comes back blank
// (its epoch back at 0, its vote forgotten); ctl2, without the batch, is
// elected with ctl1's vote and commits another batch at offset 2.
func kafka14077(version int16) *RaftRun {
	return &RaftRun{KRaftVersion: version, Events: []RaftEvent{
		leaderEv(1, "ctl0", 1, 0), commitEv(2, "ctl0", 0, 4, 1, "a"), commitEv(3, "ctl1", 0, 4, 1, "a"),
		{Step: 4, Time: 40, Node: "ctl1", Kind: RaftStateChanged, Epoch: 1, Leader: 3000},
		{Step: 5, Time: 50, Node: "ctl1", Kind: RaftDiskWiped, Voter: true},
		{Step: 6, Time: 60, Node: "ctl1", Kind: RaftStateChanged, Epoch: 0, Leader: -1},
		{Step: 7, Time: 70, Node: "ctl2", Kind: RaftStateChanged, Epoch: 2, Leader: -1},
		{Step: 8, Time: 80, Node: "ctl1", Kind: RaftVoteGranted, Epoch: 2, Candidate: 3002},
		{Step: 9, Time: 90, Node: "ctl2", Kind: RaftBecameLeader, Epoch: 2, Offset: 2},
		{Step: 10, Time: 100, Node: "ctl2", Kind: RaftCommitted, Offset: 2, LastOffset: 2, Epoch: 2, CRC: "z"},
	}}
}

// TestRaftCheckerPermitsKAFKA14077OnAStaticQuorum: the lost committed
// batch is found (leader-completeness, state-machine-safety) and, on a
// static quorum, permitted naming the wiped voter; the blank voter's
// epoch going back is permitted too.
func TestRaftCheckerPermitsKAFKA14077OnAStaticQuorum(t *testing.T) {
	v := Raft(kafka14077(0))
	if v.Result != ResultViolation {
		t.Fatalf("KAFKA-14077 on a static quorum: %s, want a violation", v)
	}
	kinds := map[string]bool{}
	for _, a := range v.Anomalies {
		kinds[a.Kind] = true
		if !a.Permitted || !strings.Contains(a.Description, "KAFKA-14077: ctl1") {
			t.Errorf("%s not permitted as KAFKA-14077: %s", a.Kind, a)
		}
	}
	for _, k := range []string{"leader-completeness", "state-machine-safety", "epoch-regression"} {
		if !kinds[k] {
			t.Errorf("no %s anomaly in %s", k, v)
		}
	}
}

// TestRaftCheckerBreaksKAFKA14077OnADynamicQuorum: the same history with
// kraft.version 1 breaks the contract (KIP-853 must prevent it); the wiped
// node's own epoch starting over is no anomaly (another replica).
func TestRaftCheckerBreaksKAFKA14077OnADynamicQuorum(t *testing.T) {
	v := Raft(kafka14077(1))
	broken := map[string]bool{}
	for _, a := range v.Anomalies {
		if a.Permitted {
			t.Errorf("permitted on a dynamic quorum: %s", a)
		}
		broken[a.Kind] = true
	}
	if !broken["leader-completeness"] || !broken["state-machine-safety"] || broken["epoch-regression"] {
		t.Fatalf("dynamic quorum: %s; want leader-completeness and state-machine-safety broken, no epoch-regression", v)
	}
}

// TestRaftCheckerDoesNotPermitBeforeTheWipe: an anomaly before the wipe is
// not excused by it.
func TestRaftCheckerDoesNotPermitBeforeTheWipe(t *testing.T) {
	run := &RaftRun{Events: []RaftEvent{
		leaderEv(1, "ctl0", 1, 0), commitEv(2, "ctl0", 0, 4, 1, "a"),
		{Step: 3, Time: 30, Node: "ctl2", Kind: RaftBecameLeader, Epoch: 2, Offset: 2},
		{Step: 4, Time: 40, Node: "ctl1", Kind: RaftDiskWiped, Voter: true},
	}}
	v := Raft(run)
	if len(v.Anomalies) != 1 || v.Anomalies[0].Permitted {
		t.Fatalf("a leader-completeness break before any wipe: %s, want it not permitted", v)
	}
}

// TestRaftCheckerWipedObserverStartsOver: a broker (an observer) whose
// disk was wiped starts again at epoch 0: no epoch-regression, on either
// quorum kind, and nothing is permitted by it.
func TestRaftCheckerWipedObserverStartsOver(t *testing.T) {
	for _, version := range []int16{0, 1} {
		run := &RaftRun{KRaftVersion: version, Events: []RaftEvent{
			{Step: 1, Time: 10, Node: "b0", Kind: RaftStateChanged, Epoch: 3, Leader: -1},
			{Step: 2, Time: 20, Node: "b0", Kind: RaftDiskWiped},
			{Step: 3, Time: 30, Node: "b0", Kind: RaftStateChanged, Epoch: 0, Leader: -1},
			leaderEv(4, "ctl0", 4, 0), commitEv(5, "ctl0", 0, 4, 4, "a"), leaderEv(6, "ctl1", 5, 2),
		}}
		v := Raft(run)
		if len(v.Anomalies) != 1 || v.Anomalies[0].Kind != "leader-completeness" || v.Anomalies[0].Permitted {
			t.Fatalf("kraft.version %d: %s; want only a leader-completeness break, not permitted by an observer's wipe", version, v)
		}
	}
}

// TestRaftCheckerOneVoterChangeAtATime: KIP-853's rule. A leader that
// appends a voter set once the previous one is committed passes; one
// that appends it while the previous change is uncommitted (at or above
// its high watermark) is a voter-change-overlap.
func TestRaftCheckerOneVoterChangeAtATime(t *testing.T) {
	appended := func(step uint64, offset, previous, hw int64) RaftEvent {
		return RaftEvent{Step: step, Node: "ctl0", Kind: RaftVotersAppended, Epoch: 1, Offset: offset, Previous: previous, HW: hw, Voters: "3000:x,3001:y"}
	}
	ok := &RaftRun{Events: []RaftEvent{leaderEv(1, "ctl0", 1, 3), appended(2, 12, -1, 4), appended(3, 15, 12, 13)}}
	if v := Raft(ok); v.Result != ResultOK {
		t.Fatalf("changes one at a time: %s", v)
	}
	for _, hw := range []int64{12, 5} { // the previous record at the HW, or above it
		bad := &RaftRun{Events: []RaftEvent{leaderEv(1, "ctl0", 1, 3), appended(2, 12, -1, 4), appended(3, 13, 12, hw)}}
		v := Raft(bad)
		if v.Result != ResultViolation || !v.ContractBroken() || len(v.Anomalies) != 1 || v.Anomalies[0].Kind != "voter-change-overlap" {
			t.Fatalf("hw %d: %s; want one voter-change-overlap breaking the contract", hw, v)
		}
		if d := v.Anomalies[0].Description; !strings.Contains(d, "offset 12) was uncommitted") {
			t.Errorf("evidence %q: want the uncommitted change named", d)
		}
	}
}
