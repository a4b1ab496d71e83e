// Package slab hands out fresh values carved from shared arrays: a node
// that makes one message block per record (a Fetch request, its answer, a
// Produce's state) allocates once per Chunk of them instead of once each.
//
// Nothing is ever reused: a value handed out belongs to its taker for good,
// as one from new(T) would, so a message built in it may be sent and stay
// immutable. The cost is memory: a chunk lives while any of its values is
// reachable. A Slab belongs to one node (it is not safe for use by two
// worlds at once); its zero value is ready to use.
package slab

// Chunk is how many values one allocation holds, once a slab has handed
// out a few: its first chunks hold firstChunk, then twice as many each time
// up to Chunk, so that a node which sends only a handful (a short explored
// run's broker) does not allocate and clear a whole Chunk of each kind.
const (
	Chunk      = 16
	firstChunk = 2
)

// Slab is a source of fresh *T.
type Slab[T any] struct {
	rest []T // the unused part of the current chunk
	next int // the next chunk's size; 0: firstChunk
}

// refill starts a new chunk with room for at least n values.
func (s *Slab[T]) refill(n int) {
	size := max(s.next, firstChunk, n)
	s.rest = make([]T, size)
	s.next = min(2*size, Chunk)
}

// New returns a pointer to a zero T that nothing else refers to.
func (s *Slab[T]) New() *T {
	if len(s.rest) == 0 {
		s.refill(1)
	}
	p := &s.rest[0]
	s.rest = s.rest[1:]
	return p
}

// Slice returns an empty slice with room for n zero Ts (length 0, capacity
// n) that nothing else refers to: appending up to n fills it, past n
// reallocates, as with make([]T, 0, n). Above Chunk it is make's.
func (s *Slab[T]) Slice(n int) []T {
	if n > Chunk {
		return make([]T, 0, n)
	}
	if len(s.rest) < n {
		s.refill(n)
	}
	p := s.rest[:0:n]
	s.rest = s.rest[n:]
	return p
}
