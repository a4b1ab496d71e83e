package workload

// This file ends a searched run's settle early: once the cluster has
// converged, the rest of settleTime is idle fetch polling that changes
// nothing the checkers read, so a search (ExploreSearch.Run) stops there
// and judges at once. A replayed or reported run (ExploreRun) still runs
// the whole settleTime: its trace, trace hash and end time are part of
// what it reports.
//
// Why the verdicts are the same. The checkers read the history (every
// operation with its outcome and times), the final state of each replica
// (alive, role, leader, leader epoch, LEO, HW, the leader's ISR and
// pending ISR, the log's entries), the facts gathered from the trace's
// kept records (faults, ISR changes, unclean elections, healed), and what
// the invariants monitor saw at each replica change. Converged means:
//
//   - no operation is pending, so the history is final, and its end time
//     (Recorder.Finish closes pending operations at it) is never read;
//   - no link was cut and no broker lost power during the run: a message
//     lost in a cut or to a host without power is the only one that can
//     leave its sender (a fetcher) waiting out replica.socket.timeout.ms; a
//     crashed process's peers are told at once (sim: a reset), and a
//     message to it is refused;
//   - every broker is up and not halted, and no message from a client or
//     the controller to a broker is in flight (an acks=0 produce completes
//     at once, before its request arrives);
//   - the leader is the controller's, in the controller's epoch, with no
//     ISR change in flight, every replica in its ISR and its HW at its LEO;
//   - every other replica follows it in that epoch with the same log
//     entries and the same HW.
//
// From there each follower's fetch is answered with nothing new and it
// fetches again within replica.fetch.wait.max.ms, so the leader keeps
// every follower caught up and shrinks no ISR; no HW moves, no log is
// truncated or appended, no ISR is written, no role changes, and no
// operation starts (the workload's steps are over). The periodic
// checkpoints rewrite what they hold (the disk is not judged). So the
// state the checkers read at the end of settleTime is the state now, and
// the monitor sees no further change. TestExploreSearchSame runs
// explorations both ways and compares every verdict, history and final
// state.

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

// settleUntilConverged runs events until the cluster has converged (see
// the file comment) or until deadline.
func (e *explorer) settleUntilConverged(deadline sim.Time) error {
	r := e.r
	for !e.converged() {
		at, ok := r.World.NextEventTime()
		if !ok || at > deadline {
			return r.Advance(deadline)
		}
		if err := r.StepOne(); err != nil {
			return err
		}
	}
	return nil
}

// converged reports whether nothing the checkers read can change any more
// (see the file comment).
func (e *explorer) converged() bool {
	r, w := e.r, e.r.World
	if r.Recorder.Pending() > 0 {
		return false
	}
	for i, id := range r.Cluster.Brokers {
		if !w.Up(id) {
			return false
		}
		if b := r.Cluster.Broker(i); b == nil || b.Halted() {
			return false
		}
		for from := range sim.NodeID(w.Nodes()) {
			if !slices.Contains(r.Cluster.Brokers, from) && inFlight(w.LinkStats(from, id)) != 0 {
				return false
			}
		}
	}
	lp := e.partition(e.leader)
	if lp == nil || lp.Role() != server.Leader || lp.LeaderEpoch() != e.epoch || lp.HighWatermark() != lp.LogEndOffset() ||
		len(lp.PendingISRView()) > 0 || len(lp.ISRView()) != len(e.replicas) {
		return false
	}
	for _, b := range e.replicas {
		if !slices.Contains(lp.ISRView(), b) {
			return false
		}
	}
	e.bbuf = appendLogState(e.bbuf[:0], e, lp)
	n := len(e.bbuf)
	for _, b := range e.replicas {
		if b == e.leader {
			continue
		}
		p := e.partition(b)
		if p == nil || p.Role() != server.Follower || p.LeaderEpoch() != e.epoch || p.Leader() != e.leader ||
			p.HighWatermark() != lp.HighWatermark() || p.LogEndOffset() != lp.LogEndOffset() {
			return false
		}
		e.bbuf = appendLogState(e.bbuf[:n], e, p)
		if !bytes.Equal(e.bbuf[:n], e.bbuf[n:]) {
			return false
		}
	}
	return true
}

// appendLogState appends p's log start offset and its (offset, epoch,
// value) entries.
func appendLogState(b []byte, e *explorer, p *server.Partition) []byte {
	b = binary.AppendVarint(b, p.Log().LogStartOffset())
	harness.EachLogEntry(p.Log(), &e.rb, func(offset int64, epoch int32, value []byte) {
		b = binary.AppendVarint(b, offset)
		b = binary.AppendVarint(b, int64(epoch))
		b = binary.AppendUvarint(b, uint64(len(value)))
		b = append(b, value...)
	})
	return b
}

// inFlight is the number of messages on a link not yet delivered or
// dropped. A link from a node that never crashes (a client, the
// controller) carries no connection reset, which the counts leave out.
func inFlight(st sim.LinkStats) int64 {
	return st.Sent + st.Duplicated - st.Delivered - st.Dropped
}
