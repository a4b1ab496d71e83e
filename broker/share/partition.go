package share

// This file is SharePartition (Kafka 4.2 core/.../share/SharePartition.java):
// the state a share group keeps on the leader of one topic partition.
//
// Records from the share-partition start offset (SPSO) up to the end
// offset are in flight: AVAILABLE (may be acquired), ACQUIRED (locked to
// one member until its acquisition lock expires), ACKNOWLEDGED (accepted,
// done) or ARCHIVED (rejected, gaps, or delivered
// group.share.delivery.count.limit times). Below the SPSO every record is
// done; from the end offset on none has been acquired. Acquiring a record
// increments its delivery count; its lock lasts
// group.share.record.lock.duration.ms (or the group's
// share.record.lock.duration.ms). A released record, or one whose lock
// expires, becomes AVAILABLE again, or ARCHIVED when its delivery count
// has reached the limit. The SPSO moves past every leading record that is
// ACKNOWLEDGED or ARCHIVED.
//
// Invariants: start <= end; len(recs) == end-start; an ACQUIRED record
// has a member and a lock deadline; 1 <= deliveryCount <= limit for any
// record acquired at least once.
//
// Simplifications: Kafka keeps in-flight batches and splits them into
// per-offset state only when needed; here every in-flight offset has its
// own entry (the same states, more memory). Acquisition covers whole
// offset ranges the host read from the log below the HW (control records
// included, which the client acknowledges as GAP, type 0), as Kafka's
// does; offsets between the batches read (compacted away, or batches of
// aborted transactions the host left out under read_committed) are
// ARCHIVED at once where Kafka leaves them untracked or archives them.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// RecordState is an in-flight record's state; the values are Kafka's
// RecordState ids (the ones __share_group_state stores).
type RecordState int8

// Kafka's RecordState ids.
const (
	Available    RecordState = 0
	Acquired     RecordState = 1
	Acknowledged RecordState = 2
	Archived     RecordState = 4
)

func (s RecordState) String() string {
	switch s {
	case Available:
		return "AVAILABLE"
	case Acquired:
		return "ACQUIRED"
	case Acknowledged:
		return "ACKNOWLEDGED"
	case Archived:
		return "ARCHIVED"
	}
	return fmt.Sprintf("RecordState(%d)", int8(s))
}

// AcknowledgeType is a ShareFetch/ShareAcknowledge acknowledgement type
// (KIP-932; 4 RENEW is KIP-1222, Kafka 4.2).
type AcknowledgeType int8

// Kafka's acknowledgement types.
const (
	Gap     AcknowledgeType = 0
	Accept  AcknowledgeType = 1
	Release AcknowledgeType = 2
	Reject  AcknowledgeType = 3
	Renew   AcknowledgeType = 4
)

type inflight struct {
	state         RecordState
	deliveryCount int16
	member        string
	deadline      sim.Time
}

// PartitionConfig is what a share-partition takes from its group's
// configuration.
type PartitionConfig struct {
	LockDuration       sim.Duration
	DeliveryCountLimit int
	MaxRecordLocks     int
}

// Partition is one share group's state on the leader of one partition.
type Partition struct {
	Group string
	cfg   PartitionConfig
	start int64 // SPSO
	recs  []inflight
	// StateEpoch is the share-partition's state epoch (bumped each time
	// the state is initialized from scratch or reset by an admin).
	StateEpoch int32
	// LeaderEpoch is the partition leader epoch the state belongs to.
	LeaderEpoch int32
}

// NewPartition returns a share-partition that starts at start (its SPSO,
// from share.auto.offset.reset or from persisted state).
func NewPartition(group string, start int64, cfg PartitionConfig) *Partition {
	return &Partition{Group: group, cfg: cfg, start: start}
}

// SetConfig changes the lock duration and limits used from now on.
func (p *Partition) SetConfig(cfg PartitionConfig) { p.cfg = cfg }

// StartOffset returns the SPSO.
func (p *Partition) StartOffset() int64 { return p.start }

// EndOffset returns the first offset never acquired (Kafka's endOffset + 1).
func (p *Partition) EndOffset() int64 { return p.start + int64(len(p.recs)) }

// InFlight returns the number of in-flight records not yet done.
func (p *Partition) InFlight() int { return len(p.recs) }

// State returns the state, delivery count and holder of offset (below
// the SPSO: ACKNOWLEDGED; from the end offset: AVAILABLE, count 0).
func (p *Partition) State(offset int64) (RecordState, int16, string) {
	switch {
	case offset < p.start:
		return Acknowledged, 0, ""
	case offset >= p.EndOffset():
		return Available, 0, ""
	}
	r := p.recs[offset-p.start]
	return r.state, r.deliveryCount, r.member
}

// Acquisition is a range of acquired offsets with one delivery count.
type Acquisition struct {
	FirstOffset, LastOffset int64
	DeliveryCount           int16
}

// Span is a range of offsets the host read from the log, [First, Last].
type Span struct{ First, Last int64 }

// Acquire acquires for member up to maxRecords of the offsets in spans
// (sorted, what the host read below the HW), re-acquiring AVAILABLE ones
// and acquiring new ones from the end offset on. A span is taken whole
// unless exact (ShareAcquireMode record-limit), so one fetch may pass
// maxRecords to end at a batch boundary, as Kafka's batch-optimized mode
// does. New records are not acquired while MaxRecordLocks are in flight.
func (p *Partition) Acquire(now sim.Time, member string, spans []Span, maxRecords int, exact bool) []Acquisition {
	var out []Acquisition
	n := 0
	add := func(off int64, count int16) {
		if k := len(out); k > 0 && out[k-1].LastOffset == off-1 && out[k-1].DeliveryCount == count {
			out[k-1].LastOffset = off
		} else {
			out = append(out, Acquisition{FirstOffset: off, LastOffset: off, DeliveryCount: count})
		}
		n++
	}
	for _, s := range spans {
		if maxRecords > 0 && n >= maxRecords {
			break
		}
		for off := max(s.First, p.start); off <= s.Last; off++ {
			if exact && maxRecords > 0 && n >= maxRecords {
				break
			}
			if off >= p.EndOffset() {
				if len(p.recs) >= p.cfg.MaxRecordLocks {
					break
				}
				for p.EndOffset() < off {
					// Offsets the log does not hold (compacted away,
					// or below the first batch read): untracked in
					// Kafka, done here.
					p.recs = append(p.recs, inflight{state: Archived})
				}
				p.recs = append(p.recs, inflight{state: Available})
			}
			r := &p.recs[off-p.start]
			if r.state != Available {
				continue
			}
			r.state, r.member, r.deadline = Acquired, member, now.Add(p.cfg.LockDuration)
			r.deliveryCount++
			add(off, r.deliveryCount)
		}
	}
	return out
}

// AckBatch is one acknowledgement batch: offsets First..Last with one
// type for all (len(Types) == 1) or one per offset.
type AckBatch struct {
	First, Last int64
	Types       []int8
}

// Acknowledge applies member's acknowledgements, all or none: a batch
// that names an offset not ACQUIRED by member (or below the SPSO, or past
// the end offset) fails them all with INVALID_RECORD_STATE; malformed
// batches with INVALID_REQUEST. Renew (4) extends the lock.
func (p *Partition) Acknowledge(now sim.Time, member string, batches []AckBatch) *kerr.Error {
	_, err := p.AcknowledgeUndo(now, member, batches)
	return err
}

// Undo is what Rollback needs to take acknowledgements back.
type Undo struct {
	member  string
	offsets []int64
	prev    []inflight
	set     []inflight
}

// AcknowledgeUndo is Acknowledge, and returns what takes it back.
func (p *Partition) AcknowledgeUndo(now sim.Time, member string, batches []AckBatch) (Undo, *kerr.Error) {
	u := Undo{member: member}
	err := p.acknowledge(now, member, batches, &u)
	return u, err
}

// Rollback takes acknowledgements back when the write that persisted
// them failed (Kafka's SharePartition.rollbackOrProcessStateUpdates): each
// record returns to the state it had before (ACQUIRED by the member, its
// lock as it was), unless it changed since. The SPSO moves back as
// needed; records below it that were done before stay done.
func (p *Partition) Rollback(u Undo) int {
	n, start := 0, p.start
	for i, off := range u.offsets {
		trimmed := off < start // done since: nothing else changed it
		if off < p.start {
			gap := make([]inflight, p.start-off)
			for j := range gap {
				gap[j] = inflight{state: Acknowledged}
			}
			p.recs = append(gap, p.recs...)
			p.start = off
		}
		if off >= p.EndOffset() {
			continue
		}
		r := &p.recs[off-p.start]
		if trimmed || r.state == u.set[i].state && r.member == u.set[i].member && r.deliveryCount == u.set[i].deliveryCount {
			*r = u.prev[i]
			n++
		}
	}
	p.advance()
	return n
}

func (p *Partition) acknowledge(now sim.Time, member string, batches []AckBatch, u *Undo) *kerr.Error {
	prev := int64(-1)
	for _, b := range batches {
		if b.First > b.Last || b.First <= prev || (len(b.Types) != 1 && int64(len(b.Types)) != b.Last-b.First+1) {
			return kerr.InvalidRequest
		}
		prev = b.Last
		for _, t := range b.Types {
			if t < int8(Gap) || t > int8(Renew) {
				return kerr.InvalidRequest
			}
		}
		for off := b.First; off <= b.Last; off++ {
			if off < p.start || off >= p.EndOffset() {
				return kerr.InvalidRecordState
			}
			if r := p.recs[off-p.start]; r.state != Acquired || r.member != member {
				return kerr.InvalidRecordState
			}
		}
	}
	for _, b := range batches {
		for off := b.First; off <= b.Last; off++ {
			t := AcknowledgeType(b.Types[0])
			if len(b.Types) > 1 {
				t = AcknowledgeType(b.Types[off-b.First])
			}
			r := &p.recs[off-p.start]
			prev := *r
			switch t {
			case Accept:
				r.state, r.member = Acknowledged, ""
			case Gap, Reject:
				r.state, r.member = Archived, ""
			case Release:
				p.release(r)
			case Renew:
				r.deadline = now.Add(p.cfg.LockDuration)
			}
			if t != Renew {
				u.offsets, u.prev, u.set = append(u.offsets, off), append(u.prev, prev), append(u.set, *r)
			}
		}
	}
	p.advance()
	return nil
}

// release makes an acquired record AVAILABLE, or ARCHIVED at the limit.
func (p *Partition) release(r *inflight) {
	r.member = ""
	if int(r.deliveryCount) >= p.cfg.DeliveryCountLimit {
		r.state = Archived
		return
	}
	r.state = Available
}

// advance moves the SPSO past the leading done records.
func (p *Partition) advance() {
	i := 0
	for i < len(p.recs) && (p.recs[i].state == Acknowledged || p.recs[i].state == Archived) {
		i++
	}
	if i > 0 {
		p.start += int64(i)
		p.recs = append(p.recs[:0], p.recs[i:]...)
	}
}

// ReleaseMember releases every record member holds (its share session
// closed) and returns how many.
func (p *Partition) ReleaseMember(member string) int {
	n := 0
	for i := range p.recs {
		if r := &p.recs[i]; r.state == Acquired && r.member == member {
			p.release(r)
			n++
		}
	}
	p.advance()
	return n
}

// Expire releases the records whose acquisition lock expired by now and
// returns their offsets.
func (p *Partition) Expire(now sim.Time) []int64 {
	var out []int64
	for i := range p.recs {
		if r := &p.recs[i]; r.state == Acquired && r.deadline <= now {
			p.release(r)
			out = append(out, p.start+int64(i))
		}
	}
	p.advance()
	return out
}

// NextDeadline returns the earliest acquisition lock deadline.
func (p *Partition) NextDeadline() (sim.Time, bool) {
	var at sim.Time
	ok := false
	for _, r := range p.recs {
		if r.state == Acquired && (!ok || r.deadline < at) {
			at, ok = r.deadline, true
		}
	}
	return at, ok
}

// Reset moves the SPSO to start and forgets every in-flight record
// (AlterShareGroupOffsets, or a log truncated below the SPSO).
func (p *Partition) Reset(start int64) {
	p.start, p.recs = start, nil
	p.StateEpoch++
}

// Batch is an in-flight range with one state and delivery count, as
// __share_group_state stores it.
type Batch struct {
	FirstOffset, LastOffset int64
	DeliveryCount           int16
	State                   RecordState
}

// Batches returns the in-flight records as ranges of equal state and
// delivery count (ACQUIRED stored as AVAILABLE: a lock does not survive
// a fail-over).
func (p *Partition) Batches() []Batch {
	var out []Batch
	for i, r := range p.recs {
		off, st := p.start+int64(i), r.state
		if st == Acquired {
			st = Available
		}
		if k := len(out); k > 0 && out[k-1].LastOffset == off-1 && out[k-1].State == st && out[k-1].DeliveryCount == r.deliveryCount {
			out[k-1].LastOffset = off
			continue
		}
		out = append(out, Batch{FirstOffset: off, LastOffset: off, DeliveryCount: r.deliveryCount, State: st})
	}
	return out
}

// Restore sets the state from persisted batches (the SPSO and the
// in-flight ranges read from __share_group_state).
func (p *Partition) Restore(start int64, stateEpoch int32, batches []Batch) {
	p.start, p.recs, p.StateEpoch = start, nil, stateEpoch
	for _, b := range batches {
		for off := max(b.FirstOffset, start); off <= b.LastOffset; off++ {
			for p.EndOffset() < off {
				p.recs = append(p.recs, inflight{state: Available})
			}
			if off == p.EndOffset() {
				st := b.State
				if st == Acquired {
					st = Available
				}
				p.recs = append(p.recs, inflight{state: st, deliveryCount: b.DeliveryCount})
			}
		}
	}
	p.advance()
}

// FirstAvailable returns the first AVAILABLE in-flight offset, or the end
// offset when none is.
func (p *Partition) FirstAvailable() int64 {
	for i, r := range p.recs {
		if r.state == Available {
			return p.start + int64(i)
		}
	}
	return p.EndOffset()
}

// MoveStart moves the SPSO up to start (the log start passed it: the
// records below are gone), keeping the in-flight records from start on.
func (p *Partition) MoveStart(start int64) {
	if start <= p.start {
		return
	}
	if n := start - p.start; n < int64(len(p.recs)) {
		p.recs = append(p.recs[:0], p.recs[n:]...)
	} else {
		p.recs = nil
	}
	p.start = start
	p.advance()
}
