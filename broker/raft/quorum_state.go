package raft

// This file is the quorum-state file (FileQuorumStateStore.java,
// QuorumStateData data_version 0): the epoch, the leader and the vote of a
// quorum member, written atomically (a .tmp file, synced, renamed over the
// old one, the directory synced) before the member acts on a new election
// state, so that a vote cast is never forgotten by a crash.
// Simplification: data_version 0 also with kraft.version 1 (Kafka 3.9
// writes data_version 1, with the voted candidate's directory id and no
// currentVoters): the voter set lives in the log (voters.go), and the vote
// is kept by node id, which is enough since a wiped node starts with no
// quorum-state at all; currentVoters is written for the record.

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"

	"github.com/kafkasim/kafkasim/sim"
)

// quorumStateFile is the file's name in the metadata partition directory.
const quorumStateFile = "quorum-state"

type quorumVoter struct {
	VoterID int32 `json:"voterId"`
}

// quorumStateData is QuorumStateData v0, fields in Kafka's order.
type quorumStateData struct {
	ClusterID     string        `json:"clusterId"`
	LeaderID      int32         `json:"leaderId"`
	LeaderEpoch   int32         `json:"leaderEpoch"`
	VotedID       int32         `json:"votedId"`
	AppliedOffset int64         `json:"appliedOffset"`
	CurrentVoters []quorumVoter `json:"currentVoters"`
	DataVersion   int16         `json:"data_version"`
}

// electionState is what quorum-state holds: Kafka's ElectionState.
type electionState struct {
	epoch    int32
	leader   int32 // -1: none
	votedFor int32 // -1: none
}

func quorumStatePath(cfg Config) string {
	return path.Join(cfg.Dir, MetadataTopic+"-0", quorumStateFile)
}

// readQuorumState reads the file; a missing file is the empty state.
func readQuorumState(disk *sim.Disk, cfg Config) (electionState, error) {
	p := quorumStatePath(cfg)
	if !disk.Exists(p) {
		return electionState{epoch: 0, leader: -1, votedFor: -1}, nil
	}
	b, err := disk.ReadFile(p)
	if err != nil {
		return electionState{}, err
	}
	var d quorumStateData
	if err := json.Unmarshal(b, &d); err != nil {
		return electionState{}, fmt.Errorf("raft: %s: %v", p, err)
	}
	if d.DataVersion != 0 {
		return electionState{}, fmt.Errorf("raft: %s: data_version %d: only 0 is supported", p, d.DataVersion)
	}
	if d.ClusterID != "" && cfg.ClusterID != "" && d.ClusterID != cfg.ClusterID {
		return electionState{}, fmt.Errorf("raft: %s: clusterId %q, but cluster.id is %q", p, d.ClusterID, cfg.ClusterID)
	}
	return electionState{epoch: d.LeaderEpoch, leader: d.LeaderID, votedFor: d.VotedID}, nil
}

// writeQuorumState writes and syncs the file before returning.
func writeQuorumState(disk *sim.Disk, cfg Config, voters []int32, s electionState) {
	d := quorumStateData{ClusterID: cfg.ClusterID, LeaderID: s.leader, LeaderEpoch: s.epoch, VotedID: s.votedFor}
	vs := append([]int32(nil), voters...)
	sort.Slice(vs, func(i, j int) bool { return vs[i] < vs[j] })
	for _, v := range vs {
		d.CurrentVoters = append(d.CurrentVoters, quorumVoter{VoterID: v})
	}
	b, err := json.Marshal(d)
	must(err)
	p := quorumStatePath(cfg)
	tmp := p + ".tmp"
	if disk.Exists(tmp) {
		must(disk.Remove(tmp))
	}
	must(disk.Create(tmp))
	must(disk.Append(tmp, b))
	must(disk.Sync(tmp))
	must(disk.Rename(tmp, p))
	must(disk.SyncDir(path.Dir(p)))
}
