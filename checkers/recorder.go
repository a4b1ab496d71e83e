// recorder.go: a small builder that records invoke/complete pairs.
//
// What it checks: API misuse (completing an operation twice, completing an
// unknown one, time going backwards within an operation) panics with a
// message naming the operation: it is a bug in the scenario runner.
//
// What it simplifies: operations are stored in invocation order, which is
// the order the runner calls Invoke; the runner is single-threaded on the
// simulator's loop, so that order is deterministic.

package checkers

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/sim"
)

// OpID names an operation recorded by a Recorder: its index in the history.
type OpID int

// Recorder builds a History from invoke and completion calls. The zero
// Recorder is ready to use.
type Recorder struct {
	ops       []Op
	producers []Producer
	consumers []Consumer
	// shareGroups and shareLoads are History's (share_history.go).
	shareGroups []ShareGroup
	shareLoads  []ShareLoad
	open        int // number of Pending operations
	// next is the id of the next operation. Until Forget removes one, an
	// operation's id is its position in ops; after, pos maps the id of
	// each pending operation to its position.
	next      int
	pos       map[OpID]int
	forgotten int
	// groupRestarts are each group's generation restarts
	// (GroupGenerationsRestarted).
	groupRestarts map[string][]sim.Time
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Producer declares a producing client's configuration (see History.Producers).
// Declaring the same process twice replaces the first declaration.
func (r *Recorder) Producer(p Producer) {
	for i := range r.producers {
		if r.producers[i].Process == p.Process {
			r.producers[i] = p
			return
		}
	}
	r.producers = append(r.producers, p)
}

// Invoke records the invocation of op at op.Invoke and returns its id. The
// op's Index, Outcome and completion fields are set by the Recorder.
func (r *Recorder) Invoke(op Op) OpID {
	if op.Kind < Send || op.Kind > ShareLeave {
		panic(fmt.Sprintf("checkers: Invoke of an operation with kind %v: want Send, Poll, ReadHW, Consume, Commit, Assign, Revoke, FetchCommitted, ShareAcquire, ShareAck or ShareLeave", op.Kind))
	}
	op.Index = r.next
	r.next++
	if r.pos != nil {
		r.pos[OpID(op.Index)] = len(r.ops)
	}
	op.Outcome = Pending
	op.Complete = op.Invoke
	if len(r.ops) == cap(r.ops) {
		// NB: doubling: append grows a long slice by a quarter, and a
		// run's ops, hundreds of bytes each, got copied five times over.
		r.ops = slices.Grow(r.ops, max(cap(r.ops), 64))
	}
	r.ops = append(r.ops, op)
	r.open++
	return OpID(op.Index)
}

// Send records the invocation of a produce of value to topic-partition by
// process at time t with the given acks (0, 1 or -1). The leader is unknown
// (-1) until SetLeader.
func (r *Recorder) Send(t sim.Time, process, topic string, partition int32, key, value string, acks int16) OpID {
	return r.Invoke(Op{Process: process, Kind: Send, Topic: topic, Partition: partition,
		Key: key, Value: value, Acks: acks, Leader: -1, Invoke: t})
}

// Poll records the invocation of a fetch from topic-partition at offset.
func (r *Recorder) Poll(t sim.Time, process, topic string, partition int32, offset int64) OpID {
	return r.Invoke(Op{Process: process, Kind: Poll, Topic: topic, Partition: partition,
		FetchOffset: offset, Leader: -1, Invoke: t})
}

// ReadHW records the invocation of a high-watermark read of topic-partition.
func (r *Recorder) ReadHW(t sim.Time, process, topic string, partition int32) OpID {
	return r.Invoke(Op{Process: process, Kind: ReadHW, Topic: topic, Partition: partition,
		Leader: -1, Invoke: t})
}

// SetLeader records the broker a pending Send was sent to.
func (r *Recorder) SetLeader(id OpID, broker int32) { r.pending(id, "SetLeader").Leader = broker }

// SetFetchOffset records the offset a pending Poll fetches from, once the
// client knows it (a final read learns its partition's log start after it
// began).
func (r *Recorder) SetFetchOffset(id OpID, offset int64) {
	op := r.pending(id, "SetFetchOffset")
	if op.Kind != Poll {
		panic(fmt.Sprintf("checkers: SetFetchOffset of %s, a %s", op, op.Kind))
	}
	op.FetchOffset = offset
}

// SetProducerID records the idempotent-producer identity of a pending Send.
func (r *Recorder) SetProducerID(id OpID, producerID int64, epoch int16, sequence int32) {
	op := r.pending(id, "SetProducerID")
	op.ProducerID, op.ProducerEpoch, op.Sequence = producerID, epoch, sequence
}

// Acked completes a Send as OK at offset.
func (r *Recorder) Acked(id OpID, t sim.Time, offset int64) {
	op := r.complete(id, t, OK, "", Send)
	op.Offset = offset
}

// Polled completes a Poll as OK with the records it saw.
func (r *Recorder) Polled(id OpID, t sim.Time, records []Record) {
	op := r.complete(id, t, OK, "", Poll)
	op.Records = append([]Record(nil), records...)
}

// PolledInfo completes a Poll as Info (it did not finish: a bounded read
// that ran out of time) keeping the records it saw, which are still
// evidence: Jepsen's pollers always emit safe data.
func (r *Recorder) PolledInfo(id OpID, t sim.Time, records []Record, reason string) {
	op := r.complete(id, t, Info, reason, Poll)
	op.Records = append([]Record(nil), records...)
}

// HW completes a ReadHW as OK with the high watermark it returned.
func (r *Recorder) HW(id OpID, t sim.Time, hw int64) {
	op := r.complete(id, t, OK, "", ReadHW)
	op.HighWatermark = hw
}

// Fail completes an operation as certainly not applied, with the Kafka error.
func (r *Recorder) Fail(id OpID, t sim.Time, kafkaError string) {
	r.complete(id, t, Fail, kafkaError, 0)
}

// Info completes an operation with an unknown outcome, with the Kafka error
// or reason ("REQUEST_TIMED_OUT", "connection lost", "acks=0").
func (r *Recorder) Info(id OpID, t sim.Time, reason string) {
	r.complete(id, t, Info, reason, 0)
}

// Pending returns the number of operations not completed yet.
func (r *Recorder) Pending() int { return r.open }

// Finish completes every pending operation as Info ("pending at end") at
// time end and returns the history. The Recorder may keep recording; a
// later Finish returns a longer history.
func (r *Recorder) Finish(end sim.Time) History {
	for i := range r.ops {
		if r.ops[i].Outcome == Pending {
			r.Info(OpID(r.ops[i].Index), end, "pending at end")
		}
	}
	return r.History()
}

// History returns a copy of what was recorded so far; pending operations
// keep Outcome Pending (the checkers treat them as Info). Once Forget
// removed operations, the rest are numbered again in order (Op.Index is
// the position in the history), as SetAsideDeleted numbers them.
func (r *Recorder) History() History {
	ops := make([]Op, len(r.ops))
	copy(ops, r.ops)
	if r.forgotten > 0 {
		for i := range ops {
			ops[i].Index = i
		}
	}
	cs := append([]Consumer(nil), r.consumers...)
	for i := range cs {
		cs[i].GroupRestarts = slices.Clone(r.groupRestarts[cs[i].Group])
	}
	return History{Ops: ops, Producers: append([]Producer(nil), r.producers...), Consumers: cs,
		ShareGroups: append([]ShareGroup(nil), r.shareGroups...), ShareLoads: append([]ShareLoad(nil), r.shareLoads...)}
}

// Forget removes the completed operations drop reports, for good, and
// returns how many it removed; pending ones stay until completed. It is
// for a long run that learns as it goes that operations will never be
// judged (serve: a topic a client deleted, whose operations before the
// deletion SetAsideDeleted sets aside at the end), so that they no longer
// take memory. Ids already handed out stay valid; History numbers the
// rest again. Forgotten counts them all.
func (r *Recorder) Forget(drop func(op *Op) bool) int {
	n := len(r.ops)
	r.ops = slices.DeleteFunc(r.ops, func(op Op) bool { return op.Outcome != Pending && drop(&op) })
	removed := n - len(r.ops)
	if removed == 0 {
		return 0
	}
	r.forgotten += removed
	if len(r.ops) < cap(r.ops)/2 {
		// NB: the backing array is what takes the memory: a smaller one.
		r.ops = append(make([]Op, 0, len(r.ops)+len(r.ops)/4+64), r.ops...)
	}
	r.pos = map[OpID]int{}
	for i := range r.ops {
		if r.ops[i].Outcome == Pending {
			r.pos[OpID(r.ops[i].Index)] = i
		}
	}
	return removed
}

// Forgotten is how many operations Forget removed.
func (r *Recorder) Forgotten() int { return r.forgotten }

// at returns the position of operation id in ops, if it is there.
func (r *Recorder) at(id OpID) (int, bool) {
	if r.pos != nil {
		i, ok := r.pos[id]
		return i, ok
	}
	return int(id), id >= 0 && int(id) < len(r.ops)
}

// EachOp calls fn with each operation recorded so far, in order: History's
// ops without the copy, for a caller that only looks (the explorer hashes
// them after every step).
func (r *Recorder) EachOp(fn func(op *Op)) {
	for i := range r.ops {
		fn(&r.ops[i])
	}
}

func (r *Recorder) pending(id OpID, what string) *Op {
	i, ok := r.at(id)
	if !ok {
		panic(fmt.Sprintf("checkers: %s of unknown operation %d (%d recorded, %d forgotten)", what, id, r.next, r.forgotten))
	}
	op := &r.ops[i]
	if op.Outcome != Pending {
		panic(fmt.Sprintf("checkers: %s of operation %s, already completed", what, op))
	}
	return op
}

func (r *Recorder) complete(id OpID, t sim.Time, out Outcome, errName string, want Kind) *Op {
	// NB: the panic text is built only when it is needed (once per
	// completion it was an allocation).
	i, ok := r.at(id)
	if !ok || r.ops[i].Outcome != Pending {
		r.pending(id, "completion ("+out.String()+")") // panics
	}
	op := &r.ops[i]
	if r.pos != nil {
		delete(r.pos, id)
	}
	if want != 0 && op.Kind != want {
		panic(fmt.Sprintf("checkers: %s completion of %s, a %s", want, op, op.Kind))
	}
	if t < op.Invoke {
		panic(fmt.Sprintf("checkers: completion at %s of %s, invoked later", t, op))
	}
	op.Complete, op.Outcome, op.Error = t, out, errName
	r.open--
	return op
}
