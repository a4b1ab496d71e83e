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

// queue is a binary min-heap of events ordered by (at, seq).
// Invariant: seq values are unique, so the order is total.
type queue []event

// before reports whether a is due before b.
func before(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// push adds e. Like down, it moves a hole rather than swapping: each
// level costs one copy of an event instead of three (the order, and so
// every run, is the same: (at, seq) is total).
func (q *queue) push(e event) {
	*q = append(*q, event{})
	h := *q
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !before(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
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
	e := q[i]
	for {
		l := 2*i + 1
		if l >= len(q) {
			break
		}
		m := l
		if r := l + 1; r < len(q) && before(&q[r], &q[l]) {
			m = r
		}
		if !before(&q[m], &e) {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = e
}

func (q *queue) pop() event {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = event{} // drop references for the garbage collector
	h = h[:last]
	h.down(0)
	*q = h
	return top
}

// events is the world's queue of pending events as two heaps: near holds
// those due within farHorizon of the time they were scheduled, far the
// rest (request timeouts, purgatory deadlines, fetch waits, periodic
// tasks). Most
// events are deliveries due in microseconds to milliseconds, pushed and
// popped through a small near heap, while thousands of far ones wait: a
// single heap made every push and pop sift through all of them.
// Invariant: popping returns the smaller top by (at, seq), so the order
// of events is that of one heap.
type events struct {
	near, far queue
}

// farHorizon is how far ahead an event must be due to wait in the far
// heap. It only sorts events between the heaps, never changes their order.
const farHorizon = 100 * Millisecond

func (q *events) push(e event, now Time) {
	if e.at > now.Add(farHorizon) {
		q.far.push(e)
	} else {
		q.near.push(e)
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

// pop removes and returns the next event. q must not be empty.
func (q *events) pop() event {
	if q.nearFirst() {
		return q.near.pop()
	}
	return q.far.pop()
}

// filter keeps the events keep accepts.
func (q *events) filter(keep func(*event) bool) {
	for _, h := range []*queue{&q.near, &q.far} {
		kept := (*h)[:0]
		for i := range *h {
			if keep(&(*h)[i]) {
				kept = append(kept, (*h)[i])
			}
		}
		clear((*h)[len(kept):])
		*h = kept
		h.init()
	}
}
