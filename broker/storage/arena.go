package storage

// readArena hands out the buffers that reads return, carved one after
// another from shared chunks: one allocation per chunk rather than one per
// read (a caught-up follower's Fetch reads a batch or two each time).
//
// Invariant: a region, once handed out, is never handed out again nor
// written by the arena: it belongs to the reader as a fresh allocation
// would (read bytes leave the node in Fetch responses, which are immutable
// once sent). Only the unseen tail of the latest region may be taken back
// (trim).
type readArena struct {
	chunk []byte // len: bytes handed out; cap: the chunk's size
	next  int    // the next chunk's size; 0: arenaFirst
}

// Chunks start at arenaFirst and double up to arenaChunk, so that a log
// read only a few times (a short explored run) does not allocate and clear
// a whole arenaChunk.
const (
	arenaFirst = 2 << 10
	arenaChunk = 16 << 10
	arenaMax   = arenaChunk / 4 // larger reads get an allocation of their own
)

// take returns a zeroed buffer of n bytes, with no room to grow into the
// next region.
func (a *readArena) take(n int) []byte {
	if n > arenaMax {
		return make([]byte, n)
	}
	if len(a.chunk)+n > cap(a.chunk) {
		size := max(a.next, arenaFirst, n)
		a.chunk = make([]byte, 0, size)
		a.next = min(2*size, arenaChunk)
	}
	start := len(a.chunk)
	a.chunk = a.chunk[:start+n]
	return a.chunk[start : start+n : start+n]
}

// trim returns b, the latest region taken, cut to keep bytes; the rest
// goes back to the arena if nobody was given it.
func (a *readArena) trim(b []byte, keep int) []byte {
	if n := len(a.chunk); cap(b) > 0 && cap(b) <= n && &b[:cap(b)][cap(b)-1] == &a.chunk[n-1] {
		a.chunk = a.chunk[:n-cap(b)+keep]
		clear(a.chunk[n-cap(b)+keep : n]) // handed out again: zeroed as make's
	}
	return b[:keep:keep]
}
