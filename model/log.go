// log.go: the state of the partition-log model, a persistent (immutable,
// structure-sharing) sequence of committed values.
//
// What it checks: nothing by itself; it is the value porcupine caches and
// compares while it searches for a linearization.
//
// What it simplifies: a committed entry is only its value. Record keys,
// headers, batches and leader epochs are not part of the sequential
// specification: two logs with the same values in the same order are equal.

package model

import "strings"

// Log is the state of one partition's log in the model: the sequence of
// committed values, offset 0 first. The zero Log is the empty log.
//
// Log is persistent: Append returns a new Log that shares every existing
// entry with the old one, so porcupine can keep thousands of states in its
// cache without copying logs. Invariant: a Log is never mutated once built.
type Log struct {
	tail *logNode
}

// logNode is one committed entry, linked to the entry before it.
type logNode struct {
	value string
	prev  *logNode
	// n is the number of entries up to and including this one.
	n int64
	// hash chains every value up to this one (FNV-1a, separated by a 0 byte),
	// so two logs of different content almost never share a hash.
	hash uint64
}

const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

// Len returns the number of committed entries: the committed log's end
// offset, which is also the high watermark the model predicts.
func (l Log) Len() int64 {
	if l.tail == nil {
		return 0
	}
	return l.tail.n
}

// Hash returns a hash of the log's content; equal logs hash equal.
func (l Log) Hash() uint64 {
	if l.tail == nil {
		return fnvOffset
	}
	return l.tail.hash
}

// Append returns the log with value appended at offset l.Len(). The receiver
// is unchanged.
func (l Log) Append(value string) Log {
	h := l.Hash()
	for i := 0; i < len(value); i++ {
		h ^= uint64(value[i])
		h *= fnvPrime
	}
	h *= fnvPrime // the 0-byte separator: h ^= 0 is a no-op
	return Log{tail: &logNode{value: value, prev: l.tail, n: l.Len() + 1, hash: h}}
}

// At returns the value at offset, and false if offset is outside the log.
// NB: it walks back from the tail, so it costs O(Len()-offset); reads in a
// simulated run are mostly near the tail.
func (l Log) At(offset int64) (string, bool) {
	if offset < 0 || offset >= l.Len() {
		return "", false
	}
	n := l.tail
	for n.n-1 > offset {
		n = n.prev
	}
	return n.value, true
}

// holds reports whether every record is committed with its value. Records
// in ascending offset order (as reads return them) cost one walk back from
// the tail, O(Len()) in all rather than O(Len()) each.
func (l Log) holds(recs []Record) bool {
	n := l.tail
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Offset < 0 || r.Offset >= l.Len() {
			return false
		}
		if n == nil || n.n-1 < r.Offset {
			n = l.tail // NB: out of order: start again from the tail
		}
		for n.n-1 > r.Offset {
			n = n.prev
		}
		if n.value != r.Value {
			return false
		}
	}
	return true
}

// Values returns the committed values in offset order, as a new slice.
func (l Log) Values() []string {
	out := make([]string, l.Len())
	for n := l.tail; n != nil; n = n.prev {
		out[n.n-1] = n.value
	}
	return out
}

// Equal reports whether two logs hold the same values in the same order.
// Shared suffixes of the linked structure are compared by pointer, so
// comparing two branches of one search costs only their differing tails.
func (l Log) Equal(o Log) bool {
	if l.Len() != o.Len() || l.Hash() != o.Hash() {
		return false
	}
	a, b := l.tail, o.tail
	for a != b {
		if a.value != b.value {
			return false
		}
		a, b = a.prev, b.prev
	}
	return true
}

// String renders the log as "[m1 m2 m3]"; logs longer than 8 entries show
// their first 3 and last 3 values and the length, e.g.
// "[m1 m2 m3 … m98 m99 m100] (100 entries)".
func (l Log) String() string {
	vals := l.Values()
	var b strings.Builder
	b.WriteByte('[')
	if len(vals) <= 8 {
		b.WriteString(strings.Join(vals, " "))
		b.WriteByte(']')
		return b.String()
	}
	b.WriteString(strings.Join(vals[:3], " "))
	b.WriteString(" … ")
	b.WriteString(strings.Join(vals[len(vals)-3:], " "))
	b.WriteString("] (")
	b.WriteString(itoa(int64(len(vals))))
	b.WriteString(" entries)")
	return b.String()
}

// LogOf builds a Log from values, offset 0 first.
func LogOf(values ...string) Log {
	var l Log
	for _, v := range values {
		l = l.Append(v)
	}
	return l
}
