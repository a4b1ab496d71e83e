package harness

// This file collects what the raft checker judges on a KRaft run: the raft
// clients' trace records (raft-leader, raft-commit, raft-snapshot,
// raft-fatal, raft-state, raft-vote, raft-voter-append) and the
// final metadata log of every node that is up at the end.

import (
	"strconv"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// raftKinds are the trace kinds the raft checker reads, and the KRaft
// controller's partition-change (for the timeline) and partition-committed
// (the contract's facts: kraft.go); a KRaft
// run keeps them (sim.Config.KeepKinds) whether or not it keeps the whole
// trace.
var raftKinds = []string{"raft-leader", "raft-commit", "raft-snapshot", "raft-fatal", "raft-state", "raft-vote", "partition-change", "partition-committed", "wipe-disk", "raft-voter-append"}

// KeepKinds returns base plus, for a KRaft cluster, the raft kinds.
func KeepKinds(base map[string]bool, kraft bool) map[string]bool {
	if !kraft {
		return base
	}
	out := make(map[string]bool, len(base)+len(raftKinds))
	for k, v := range base {
		out[k] = v
	}
	for _, k := range raftKinds {
		out[k] = true
	}
	return out
}

// RaftRun builds the raft checker's input from the world's trace and the
// nodes' final logs; nil in ZooKeeper mode.
func RaftRun(w *sim.World, c *cluster.Cluster) *checkers.RaftRun {
	if !c.Spec.KRaft() {
		return nil
	}
	run := &checkers.RaftRun{KRaftVersion: int16(c.Spec.Config.Broker.KRaft.KRaftVersion)}
	voters := map[string]bool{}
	for _, id := range c.Spec.Voters() {
		voters[server.NodeName(id)] = true
	}
	num := func(r sim.Record, key string) int64 {
		s, _ := r.Get(key)
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	}
	for _, r := range w.Trace().Records() {
		ev := checkers.RaftEvent{Step: r.Event, Time: r.Time, Node: r.Name}
		switch r.Kind {
		case "raft-leader":
			ev.Kind, ev.Epoch, ev.Offset = checkers.RaftBecameLeader, int32(num(r, "epoch")), num(r, "leo")
		case "raft-commit":
			ev.Kind, ev.Epoch, ev.Offset, ev.LastOffset = checkers.RaftCommitted, int32(num(r, "epoch")), num(r, "base-offset"), num(r, "last-offset")
			ev.CRC, _ = r.Get("crc")
		case "raft-snapshot":
			if k, _ := r.Get("kind"); k != "load" {
				continue
			}
			ev.Kind, ev.Epoch, ev.Offset = checkers.RaftLoadedSnapshot, int32(num(r, "epoch")), num(r, "end-offset")
		case "raft-fatal":
			ev.Kind = checkers.RaftFatal
			ev.Reason, _ = r.Get("reason")
		case "raft-state":
			ev.Kind, ev.Epoch, ev.Leader = checkers.RaftStateChanged, int32(num(r, "epoch")), int32(num(r, "leader"))
		case "wipe-disk":
			ev.Kind, ev.Voter = checkers.RaftDiskWiped, voters[r.Name]
		case "raft-voter-append":
			ev.Kind, ev.Epoch, ev.Offset, ev.Previous, ev.HW = checkers.RaftVotersAppended, int32(num(r, "epoch")), num(r, "offset"), num(r, "previous"), num(r, "hw")
			ev.Voters, _ = r.Get("voters")
		case "raft-vote":
			if g, _ := r.Get("granted"); g != "true" {
				continue
			}
			if pv, _ := r.Get("pre-vote"); pv == "true" {
				continue
			}
			ev.Kind, ev.Epoch, ev.Candidate = checkers.RaftVoteGranted, int32(num(r, "epoch")), int32(num(r, "candidate"))
		default:
			continue
		}
		run.Events = append(run.Events, ev)
	}
	nodes := append(append([]sim.NodeID(nil), c.Controllers...), c.Brokers...)
	for _, n := range nodes {
		b, _ := w.Node(n).(*server.Broker)
		if b == nil || b.Raft() == nil {
			continue
		}
		l := checkers.RaftLog{Node: w.Name(n)}
		for _, e := range b.Raft().Entries() {
			l.Entries = append(l.Entries, checkers.RaftEntry{Offset: e.BaseOffset, LastOffset: e.LastOffset, Epoch: e.Epoch, CRC: strconv.FormatUint(uint64(e.CRC), 10)})
		}
		run.Logs = append(run.Logs, l)
	}
	return run
}
