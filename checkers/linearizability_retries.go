// linearizability_retries.go: a value sent more than once on a partition,
// as attempts at one record.
//
// Why. A history whose sends are a client's requests (kafkasim serve: each
// Produce request is its own operation) holds a retried record as two
// sends of one value. An idempotent producer's retry of a batch the leader
// had appended is acknowledged at the first attempt's offset (KIP-98), and
// a first attempt of unknown outcome resolves, by the value a poll saw, to
// the offset its retry was acknowledged at: read as two appends, both at
// one offset, no order of them is legal, and offsetConflict called such a
// partition non-linearizable, a contract broken, where the log holds the
// record once, as Kafka promises.
//
// What it does. The sends of a value sent more than once on a partition
// are attempts at one record, any of which may have appended it: each may
// take effect from the first attempt's invocation on. Acknowledgements at
// one offset are one append, completed by the earliest of them. An attempt
// of unknown outcome takes one of the offsets polls saw the value at that
// no acknowledgement took (a retry that did write the record again: a
// producer without idempotence), in history order; once none is left, it
// can only fill a gap, as any unobserved send (or is left out when there
// is none).
//
// What it gives up: equal values of different records (two sessions that
// send the same values, issue 28) are judged as attempts at one record too:
// their invocations widen to the first one's, which can only make a
// history easier to linearize, never a linearizable one illegal. Histories
// whose values are unique (every scripted run's) are read as before.

package checkers

import (
	"slices"
	"strconv"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

// attempts are the sends of one value on one partition, sent more than
// once.
type attempts struct {
	call  int64   // the first attempt's invocation
	acked []int64 // the offsets they were acknowledged at
	// extra are the offsets polls saw the value at that no
	// acknowledgement took, ascending; next the first not yet taken.
	extra []int64
	next  int
	// at maps an acknowledged offset to its operation's position in the
	// partition's ops, once built.
	at map[int64]int
}

// countSend counts a send of value on p (an acknowledged one, or one of
// unknown outcome), and reports whether value was sent before.
func (p *partitionOps) countSend(value string) bool {
	if p.sends == nil {
		p.sends = make(map[string]int32)
	}
	p.sends[value]++
	return p.sends[value] == 2
}

// collectAttempts reads the sends of the values sent more than once into
// their partitions' attempts; where[i] is op i's partition in parts.
func collectAttempts(h History, parts *partitionTable, where []int32) {
	for i := range h.Ops {
		op := &h.Ops[i]
		if where[i] < 0 || op.Kind != Send || (op.Outcome != OK && op.Outcome != Info && op.Outcome != Pending) {
			continue
		}
		p := parts.all[where[i]]
		if p.sends[op.Value] < 2 {
			continue
		}
		if p.retried == nil {
			p.retried = make(map[string]*attempts)
		}
		a := p.retried[op.Value]
		if a == nil {
			a = &attempts{call: int64(op.Invoke), at: map[int64]int{}}
			p.retried[op.Value] = a
			if p.seen == nil {
				p.seen = make(map[string][]int64)
			}
			if _, ok := p.seen[op.Value]; !ok {
				p.seen[op.Value] = nil // where polls saw it: extraOffsets
			}
		}
		a.call = min(a.call, int64(op.Invoke))
		if op.Outcome == OK {
			a.acked = append(a.acked, op.Offset)
		}
	}
}

// extraOffsets sets each retried value's offsets that polls saw it at and
// no acknowledgement took; p.seen is filled.
func (p *partitionOps) extraOffsets() {
	for v, a := range p.retried {
		for _, off := range p.seen[v] {
			if !slices.Contains(a.acked, off) {
				a.extra = append(a.extra, off)
			}
		}
		slices.Sort(a.extra)
	}
}

// attempt builds pop, a send of a value sent more than once, as one
// attempt at its record, and reports whether it is an operation of its own
// (false: it was merged into an earlier acknowledgement at its offset, or
// left out).
func (p *partitionOps) attempt(a *attempts, op *Op, pop *porcupine.Operation) bool {
	pop.Call = a.call
	switch op.Outcome {
	case OK:
		ret := int64(op.Complete)
		if op.Acks != -1 {
			ret = never
		}
		if j, ok := a.at[op.Offset]; ok {
			if first := &p.ops[j]; ret < first.Return {
				first.Return = max(ret, first.Call)
			}
			p.merged++
			return false
		}
		a.at[op.Offset] = len(p.ops)
		pop.Output, pop.Return = model.Output{Offset: op.Offset}, ret
	case Info, Pending:
		pop.Return = never
		switch {
		case a.next < len(a.extra):
			pop.Output = model.Output{Offset: a.extra[a.next]}
			a.next++
		case len(p.gaps) > 0:
			pop.Output = model.Output{Unknown: true, Unobserved: true, Gaps: p.gaps, Tail: p.need}
			p.unresolved = append(p.unresolved, len(p.ops))
		default:
			p.dropped++
			return false
		}
	default:
		return false
	}
	return true
}

// mergedNote says how many acknowledgements were merged into an earlier
// one at their offset ("" for none).
func (p *partitionOps) mergedNote() string {
	if p.merged == 0 {
		return ""
	}
	return p.key.String() + ": " + strconv.Itoa(p.merged) + " acknowledgements of a value already acknowledged at the same offset count as one append (a retry: an idempotent producer's is acknowledged at the first attempt's offset, KIP-98)"
}
