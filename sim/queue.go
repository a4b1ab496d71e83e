package sim

// evKind says what an event does when it fires.
type evKind uint8

const (
	evDeliver evKind = iota // a message reaches its destination
	evTimer                 // a node's timer fires
	evAction                // a scheduled world action: a fault or a script step
)

// event is one entry of the queue. It is a value in a slice, so scheduling
// and firing allocate nothing once the queue has grown.
type event struct {
	at     Time
	seq    uint64
	kind   evKind
	node   NodeID // destination (deliver, timer)
	from   NodeID // sender (deliver)
	inc    uint32 // destination's incarnation when scheduled
	timer  TimerID
	name   string // timer name, or action name
	msg    Message
	action func(*World)
}

// key is a heap entry: an event's order and the slot its payload waits
// in. It holds no pointers, so sifting keys costs no write barriers while
// the collector runs; sifting whole events did (a barrier call per move,
// about a tenth of a cluster run's instructions).
type key struct {
	at   Time
	seq  uint64
	slot int32
}

// queue is a binary min-heap of keys ordered by (at, seq).
// Invariant: seq values are unique, so the order is total.
type queue []key

// before reports whether a is due before b.
func before(a, b *key) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// push adds k. Like down, it moves a hole rather than swapping: each
// level costs one copy of a key instead of three (the order, and so every
// run, is the same: (at, seq) is total).
func (q *queue) push(k key) {
	*q = append(*q, key{})
	h := *q
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !before(&k, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = k
}

// init restores the heap order after the slice was rewritten.
func (q queue) init() {
	for i := len(q)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}

func (q queue) down(i int) {
	if i >= len(q) {
		return
	}
	k := q[i]
	for {
		l := 2*i + 1
		if l >= len(q) {
			break
		}
		m := l
		if r := l + 1; r < len(q) && before(&q[r], &q[l]) {
			m = r
		}
		if !before(&q[m], &k) {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = k
}

func (q *queue) pop() key {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	h.down(0)
	*q = h
	return top
}

// events is the world's queue of pending events: the payloads in slots,
// reused, and their keys in two heaps. near holds those due within
// farHorizon of the time they were scheduled, far the rest (request
// timeouts, purgatory deadlines, fetch waits, periodic tasks). Most
// events are deliveries due in microseconds to milliseconds, pushed and
// popped through a small near heap, while thousands of far ones wait: a
// single heap made every push and pop sift through all of them.
// Invariant: popping returns the smaller top by (at, seq), so the order
// of events is that of one heap; a slot is in at most one heap key or
// one held slot (World.ready) at a time.
type events struct {
	near, far queue
	slots     []event // payloads, by key.slot
	free      []int32 // unused slots
}

// farHorizon is how far ahead an event must be due to wait in the far
// heap. It only sorts events between the heaps, never changes their order.
const farHorizon = 100 * Millisecond

func (q *events) push(e event, now Time) {
	var s int32
	if n := len(q.free); n > 0 {
		s = q.free[n-1]
		q.free = q.free[:n-1]
		q.slots[s] = e
	} else {
		s = int32(len(q.slots))
		q.slots = append(q.slots, e)
	}
	k := key{at: e.at, seq: e.seq, slot: s}
	if e.at > now.Add(farHorizon) {
		q.far.push(k)
	} else {
		q.near.push(k)
	}
}

func (q *events) len() int { return len(q.near) + len(q.far) }

// nearFirst reports whether the next event is near's. q must not be empty.
func (q *events) nearFirst() bool {
	return len(q.far) == 0 || (len(q.near) > 0 && before(&q.near[0], &q.far[0]))
}

// next returns the time of the next event. q must not be empty.
func (q *events) next() Time {
	if q.nearFirst() {
		return q.near[0].at
	}
	return q.far[0].at
}

// popSlot removes the next event's key and returns its slot, which the
// caller holds until it takes the event. q must not be empty.
func (q *events) popSlot() int32 {
	if q.nearFirst() {
		return q.near.pop().slot
	}
	return q.far.pop().slot
}

// take returns the event in slot s and frees the slot.
func (q *events) take(s int32) event {
	e := q.slots[s]
	q.slots[s] = event{} // drop references for the garbage collector
	q.free = append(q.free, s)
	return e
}

// pop removes and returns the next event. q must not be empty.
func (q *events) pop() event { return q.take(q.popSlot()) }

// filter keeps the events keep accepts (those in the heaps: not held
// slots).
func (q *events) filter(keep func(*event) bool) {
	for _, h := range []*queue{&q.near, &q.far} {
		kept := (*h)[:0]
		for _, k := range *h {
			if keep(&q.slots[k.slot]) {
				kept = append(kept, k)
			} else {
				q.take(k.slot)
			}
		}
		*h = kept
		h.init()
	}
}
