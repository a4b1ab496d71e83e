// raft.go: the raft checker, judging KRaft's metadata quorum (KIP-595).
//
// What it checks, on every KRaft run, Raft's safety properties as the
// Raft paper (Figure 3) and Vanlightly's TLA+ specification of KRaft state
// them:
//   - Election Safety: at most one leader per epoch, as the elections
//     (raft-leader) and every node's view of the epoch's leader (a
//     raft-state naming one: a follower, a resigned or restarted leader)
//     tell it: a node may only know as an epoch's leader the one node
//     that won that epoch;
//   - Leader Completeness: a node that becomes leader holds every record
//     committed before (its log end offset is at least the committed end);
//   - State Machine Safety (Vanlightly's Metadata Log Matching): every node
//     — voter or observer, in any of its lives — that hands a record at an
//     offset to its state machine (the controller or the broker's metadata
//     image) hands over the same record: the same batch, epoch and CRC;
//   - Log Matching, on the final logs: two logs with an entry of the same
//     offset and epoch agree on every entry up to it;
//   - KIP-853's one voter change at a time: a leader appends a new voter
//     set (AddRaftVoter, RemoveRaftVoter) only once the previous set's
//     record is committed (voter-change-overlap). Each change moves the
//     set by one voter, so a majority of the old set and one of the new
//     share a voter; two changes away they need not, and two leaders may
//     then each commit with a majority of their own set;
//   - the persistent election state (Raft's Figure 2: currentTerm and
//     votedFor live on stable storage, updated before any answer leaves;
//     KIP-595's quorum-state): a node's epoch never goes back, in any of
//     its lives (epoch-regression), and a voter grants its vote in an epoch
//     to one candidate only (vote-once; pre-votes, which promise nothing,
//     apart). Both hold under every fault the simulation injects, since
//     quorum-state is synced before a member acts on it.
//
// How it decides: from the raft client's trace records (raft-leader,
// raft-commit, raft-snapshot, raft-state, raft-vote), collected by the runner into RaftRun, and the
// final logs of the quorum's nodes. Every anomaly breaks the contract: Raft
// promises these properties under every fault the simulation injects
// (crashes, partitions, message loss, power loss of unflushed data, since
// the raft log is flushed before it counts).
//
// What the contract permits: a voter of a static quorum
// (controller.quorum.voters, kraft.version 0) that comes back with a blank
// disk (the wipe-disk fault) has forgotten its log, its epoch and its
// vote, yet still votes: it can elect a leader that lacks committed
// records (KAFKA-14077), which Kafka documents as the hazard of static
// quorums. Every anomaly from the wipe on (and log matching of the final
// logs) is then Permitted, naming the wipe. With KIP-853 (kraft.version
// 1) the wiped node is another replica (a new directory id), an observer
// until it is added again: its own epoch and votes start over (neither
// epoch-regression nor vote-once follows it across the wipe), and any
// anomaly breaks the contract. A wiped broker that is no voter is an
// observer in both: nothing of the quorum depends on its disk.
//
// What it simplifies: a batch is identified by its base offset, last
// offset, epoch and CRC, not by its bytes.

package checkers

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// NameRaft is the raft checker's name.
const NameRaft = "raft"

// RaftEventKind is what a RaftEvent records.
type RaftEventKind uint8

// The kinds of raft events.
const (
	// RaftBecameLeader: Node became leader of Epoch with log end Offset.
	RaftBecameLeader RaftEventKind = iota + 1
	// RaftCommitted: Node handed the batch [Offset, LastOffset] of Epoch,
	// with CRC, to its state machine.
	RaftCommitted
	// RaftLoadedSnapshot: Node replaced its state with a snapshot ending
	// at Offset (exclusive).
	RaftLoadedSnapshot
	// RaftFatal: Node's raft client met a fatal error (Reason: a broken
	// invariant, such as a leader asking it to truncate below its high
	// watermark) and the node halted, as Kafka's fault handler halts it.
	RaftFatal
	// RaftStateChanged: Node entered a new election state (any role) in
	// Epoch, knowing Leader as its leader (-1: none).
	RaftStateChanged
	// RaftVoteGranted: Node granted its (standard, not pre-) vote in Epoch
	// to Candidate.
	RaftVoteGranted
	// RaftDiskWiped: Node lost its disk (the wipe-disk fault) and will
	// restart blank; Voter says whether it was a voter of the quorum.
	RaftDiskWiped
	// RaftVotersAppended: Node, leader of Epoch, appended a new voter set
	// (Voters) at Offset while its high watermark was HW and the previous
	// set's record was at Previous (-1: the bootstrap checkpoint's).
	RaftVotersAppended
)

// RaftEvent is one raft trace record, in trace order.
type RaftEvent struct {
	Step       uint64
	Time       sim.Time
	Node       string
	Kind       RaftEventKind
	Epoch      int32
	Offset     int64
	LastOffset int64
	CRC        string
	// Reason is a RaftFatal's error.
	Reason string
	// Candidate is a RaftVoteGranted's candidate.
	Candidate int32
	// Leader is a RaftStateChanged's leader (a node.id), -1 for none.
	Leader int32
	// Voter is set on a RaftDiskWiped of a voter of the quorum
	// (controller.quorum.voters, or the initial controllers).
	Voter bool `json:",omitempty"`
	// Previous, HW and Voters describe a RaftVotersAppended.
	Previous int64  `json:",omitempty"`
	HW       int64  `json:",omitempty"`
	Voters   string `json:",omitempty"`
}

// RaftEntry is one batch of a node's final metadata log.
type RaftEntry struct {
	Offset, LastOffset int64
	Epoch              int32
	CRC                string
}

// RaftLog is a node's final metadata log (its voters' and observers').
type RaftLog struct {
	Node    string
	Entries []RaftEntry
}

// RaftRun is what the raft checker judges.
type RaftRun struct {
	Events []RaftEvent
	Logs   []RaftLog
	// KRaftVersion is the quorum's kraft.version: 0 static voters
	// (controller.quorum.voters), 1 KIP-853's dynamic voters.
	KRaftVersion int16
}

// Raft judges a KRaft run's quorum.
func Raft(r *RaftRun) Verdict {
	if r == nil {
		return verdict(NameRaft, nil, true, "not a KRaft run")
	}
	var out []Anomaly
	var staticWipe *RaftEvent // the first wipe of a static voter: KAFKA-14077 from there on
	leaders := map[int32]RaftEvent{}
	byOffset := map[int64]RaftEvent{} // the first batch handed over covering each offset
	committedEnd := int64(0)
	var lastCommit RaftEvent
	commits, elections := 0, 0
	lastState := map[string]RaftEvent{}       // each node's latest election state
	votes := map[string]map[int32]RaftEvent{} // each voter's granted vote, by epoch
	for _, ev := range r.Events {
		switch ev.Kind {
		case RaftDiskWiped:
			if r.KRaftVersion == 0 && ev.Voter {
				if staticWipe == nil {
					w := ev
					staticWipe = &w
				}
				break
			}
			// KIP-853: a new directory id, another replica; or an
			// observer, whose epoch nothing depends on.
			delete(lastState, ev.Node)
			delete(votes, ev.Node)
		case RaftBecameLeader:
			elections++
			if prev, ok := leaders[ev.Epoch]; ok && prev.Node != ev.Node {
				out = append(out, raftAnomaly("election-safety", ev, prev,
					"two leaders in epoch "+strconv.Itoa(int(ev.Epoch))+": "+prev.Node+" and "+ev.Node))
			} else if !ok {
				leaders[ev.Epoch] = ev
			}
			if ev.Offset < committedEnd {
				out = append(out, raftAnomaly("leader-completeness", ev, lastCommit,
					ev.Node+" became leader of epoch "+strconv.Itoa(int(ev.Epoch))+" with log end "+strconv.FormatInt(ev.Offset, 10)+
						", below the committed end "+strconv.FormatInt(committedEnd, 10)+" ("+lastCommit.Node+" applied up to it): committed records are missing from the new leader"))
			}
		case RaftCommitted:
			commits++
			for o := ev.Offset; o <= ev.LastOffset; o++ {
				prev, ok := byOffset[o]
				if !ok {
					byOffset[o] = ev
					continue
				}
				if prev.Offset != ev.Offset || prev.LastOffset != ev.LastOffset || prev.Epoch != ev.Epoch || prev.CRC != ev.CRC {
					out = append(out, raftAnomaly("state-machine-safety", ev, prev,
						"offset "+strconv.FormatInt(o, 10)+": "+ev.Node+" applied "+batchString(ev)+", "+prev.Node+" applied "+batchString(prev)))
					break
				}
			}
			if ev.LastOffset+1 > committedEnd {
				committedEnd, lastCommit = ev.LastOffset+1, ev
			}
		case RaftStateChanged:
			if prev, ok := lastState[ev.Node]; ok && ev.Epoch < prev.Epoch {
				a := raftAnomaly("epoch-regression", ev, prev,
					ev.Node+" is back in epoch "+strconv.Itoa(int(ev.Epoch))+" after epoch "+strconv.Itoa(int(prev.Epoch))+
						": its election state (quorum-state) was not persisted before it acted on it")
				a.Offsets = nil
				out = append(out, a)
			}
			lastState[ev.Node] = ev
			if self, ok := raftNodeID(ev.Node); ev.Leader < 0 || ok && self == ev.Leader {
				// A leader's own state is logged just before its
				// raft-leader; a restarted leader resumes resigned.
				break
			}
			won, ok := leaders[ev.Epoch]
			if id, known := raftNodeID(won.Node); !ok || !known || id != ev.Leader {
				desc := ev.Node + " knows " + strconv.Itoa(int(ev.Leader)) + " as the leader of epoch " + strconv.Itoa(int(ev.Epoch)) + ", "
				if ok {
					desc += "but " + won.Node + " won that epoch: two leaders in one epoch"
				} else {
					desc += "which nobody won: a leader that was not elected in it"
				}
				a := raftAnomaly("election-safety", ev, won, desc)
				a.Offsets = nil
				out = append(out, a)
			}
		case RaftVoteGranted:
			byEpoch := votes[ev.Node]
			if byEpoch == nil {
				byEpoch = map[int32]RaftEvent{}
				votes[ev.Node] = byEpoch
			}
			if prev, ok := byEpoch[ev.Epoch]; ok && prev.Candidate != ev.Candidate {
				a := raftAnomaly("vote-once", ev, prev,
					ev.Node+" voted twice in epoch "+strconv.Itoa(int(ev.Epoch))+": for "+strconv.Itoa(int(prev.Candidate))+
						", then for "+strconv.Itoa(int(ev.Candidate)))
				a.Offsets = nil
				out = append(out, a)
			} else if !ok {
				byEpoch[ev.Epoch] = ev
			}
		case RaftVotersAppended:
			if ev.Previous >= ev.HW {
				out = append(out, raftAnomaly("voter-change-overlap", ev, RaftEvent{},
					ev.Node+", leader of epoch "+strconv.Itoa(int(ev.Epoch))+", appended the voter set "+ev.Voters+" at offset "+strconv.FormatInt(ev.Offset, 10)+
						" while the previous voter change (offset "+strconv.FormatInt(ev.Previous, 10)+") was uncommitted (high watermark "+strconv.FormatInt(ev.HW, 10)+
						"): KIP-853 allows one uncommitted voter change at a time"))
			}
		case RaftFatal:
			a := raftAnomaly("fatal", ev, RaftEvent{}, ev.Node+" halted on a fatal raft error: "+ev.Reason)
			a.Offsets = nil
			out = append(out, a)
		}
	}
	lm := logMatching(r.Logs)
	if staticWipe != nil {
		for i := range out {
			if out[i].Times == nil || out[i].Times[len(out[i].Times)-1] >= staticWipe.Time {
				permitKAFKA14077(&out[i], *staticWipe)
			}
		}
		for i := range lm {
			permitKAFKA14077(&lm[i], *staticWipe)
		}
	}
	out = append(out, lm...)
	notes := []string{strconv.Itoa(elections) + " elections, " + strconv.Itoa(commits) + " batches applied, committed end offset " + strconv.FormatInt(committedEnd, 10)}
	return verdict(NameRaft, out, false, notes...)
}

// permitKAFKA14077 marks a as what a static quorum permits after a voter's
// disk was wiped.
func permitKAFKA14077(a *Anomaly, wipe RaftEvent) {
	a.Permitted = true
	a.Description += "; permitted: KAFKA-14077: " + wipe.Node + ", a voter of a static quorum (controller.quorum.voters, kraft.version 0), lost its disk at " +
		wipe.Time.String() + " and came back blank, voting with an empty log (KIP-853's directory ids, kraft.version 1, prevent it)"
}

func batchString(ev RaftEvent) string {
	return "[" + strconv.FormatInt(ev.Offset, 10) + "," + strconv.FormatInt(ev.LastOffset, 10) + "] epoch " + strconv.Itoa(int(ev.Epoch)) + " crc " + ev.CRC
}

func raftAnomaly(kind string, ev, other RaftEvent, desc string) Anomaly {
	a := Anomaly{Kind: kind, Topic: "__cluster_metadata", Partition: 0, Description: desc, Offsets: []int64{ev.Offset}}
	for _, e := range []RaftEvent{other, ev} {
		if e.Node == "" {
			continue
		}
		if id, ok := raftNodeID(e.Node); ok {
			a.Replicas = append(a.Replicas, id)
		}
		a.Steps = append(a.Steps, e.Step)
		a.Times = append(a.Times, e.Time)
	}
	return a
}

// raftNodeID maps a node name to its node.id: "b2" is 2, "ctl1" is 3001
// (dedicated controllers are numbered from 3000).
func raftNodeID(name string) (int32, bool) {
	digits, base := "", 0
	switch {
	case strings.HasPrefix(name, "ctl"):
		digits, base = name[3:], 3000
	case strings.HasPrefix(name, "b"):
		digits = name[1:]
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || digits[0] == '+' {
		return 0, false
	}
	return int32(base + n), true
}

// logMatching checks Raft's Log Matching property on the final logs: if
// two logs hold a batch with the same base offset and epoch, every batch
// up to it is the same in both.
func logMatching(logs []RaftLog) []Anomaly {
	sorted := append([]RaftLog(nil), logs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Node < sorted[j].Node })
	var out []Anomaly
	for i := range sorted {
		for j := i + 1; j < len(sorted); j++ {
			a, b := sorted[i], sorted[j]
			at := map[int64]RaftEntry{}
			for _, e := range b.Entries {
				at[e.Offset] = e
			}
			// The last batch both hold with the same offset and epoch.
			last := -1
			for k, e := range a.Entries {
				if o, ok := at[e.Offset]; ok && o.Epoch == e.Epoch {
					last = k
				}
			}
			for k := 0; k <= last; k++ {
				e := a.Entries[k]
				o, ok := at[e.Offset]
				if ok && o == e {
					continue
				}
				if !ok && e.Offset < firstOffset(b) {
					continue // below b's log start (a snapshot replaced it)
				}
				desc := "logs of " + a.Node + " and " + b.Node + " share batch " + strconv.FormatInt(a.Entries[last].Offset, 10) +
					" of epoch " + strconv.Itoa(int(a.Entries[last].Epoch)) + " but differ at offset " + strconv.FormatInt(e.Offset, 10)
				an := Anomaly{Kind: "log-matching", Topic: "__cluster_metadata", Description: desc, Offsets: []int64{e.Offset}}
				for _, n := range []string{a.Node, b.Node} {
					if id, ok := raftNodeID(n); ok {
						an.Replicas = append(an.Replicas, id)
					}
				}
				out = append(out, an)
				break
			}
		}
	}
	return out
}

func firstOffset(l RaftLog) int64 {
	if len(l.Entries) == 0 {
		return 0
	}
	return l.Entries[0].Offset
}
