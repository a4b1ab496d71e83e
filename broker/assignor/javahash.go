package assignor

// This file reproduces the iteration order of Java's HashMap and HashSet,
// which decides some of AbstractStickyAssignor's results (which members
// keep maxQuota, which claimant of a partition wins a tie, which partition
// PartitionMovements moves back). A HashMap iterates its buckets in index
// order, hash ^ (hash >>> 16) masked by the table size, and each bucket in
// insertion order; the table starts at 16 and doubles when the size passes
// 3/4 of it, never shrinking. NB: tree bins (8+ keys in one bucket of a
// table of 64+) are not modelled; they need colliding hashes.

import (
	"slices"
	"unicode/utf16"
)

// JavaStringHashCode is Java's String.hashCode: h = 31*h + c over the
// string's UTF-16 code units, in wrapping 32-bit arithmetic. The sticky
// assignor's HashMap order and the group coordinator's placement
// (coordinator.CoordinatorPartition) both depend on it.
func JavaStringHashCode(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
	}
	return h
}

// javaTPHash is TopicPartition.hashCode.
func javaTPHash(tp TopicPartition) int32 {
	return 31*(31+tp.Partition) + JavaStringHashCode(tp.Topic)
}

// javaBucket is HashMap's bucket index for hash h in a table of size n.
func javaBucket(h int32, n int) int {
	u := uint32(h)
	return int((u ^ u>>16) & uint32(n-1))
}

// javaTableSize is the table size of a default HashMap after n puts of
// distinct keys.
func javaTableSize(n int) int {
	size := 16
	for n > size*3/4 {
		size *= 2
	}
	return size
}

// hashMapOrder returns the member numbers (indices into ms, sorted by id)
// in the order a HashMap keyed by member id iterates them, when the
// members were put in the order of members (the JoinGroup response order,
// as Kafka's ConsumerCoordinator builds its subscriptions map).
func hashMapOrder(ms, members []Member) []int {
	pos := map[string]int{}
	for i, m := range members {
		if _, ok := pos[m.ID]; !ok {
			pos[m.ID] = i
		}
	}
	n := javaTableSize(len(ms))
	order := make([]int, len(ms))
	bucket := make([]int, len(ms))
	for i, m := range ms {
		order[i] = i
		bucket[i] = javaBucket(JavaStringHashCode(m.ID), n)
	}
	slices.SortFunc(order, func(a, b int) int {
		if bucket[a] != bucket[b] {
			return bucket[a] - bucket[b]
		}
		return pos[ms[a].ID] - pos[ms[b].ID]
	})
	return order
}

// javaTPSet is a HashSet<TopicPartition> of partition numbers that knows
// which element its iterator returns first.
type javaTPSet struct {
	size  int // table size
	seq   int
	items map[int]int // partition number -> insertion sequence
}

func newJavaTPSet() *javaTPSet { return &javaTPSet{size: 16, items: map[int]int{}} }

func (s *javaTPSet) add(p int) {
	if _, ok := s.items[p]; ok {
		return
	}
	s.items[p] = s.seq
	s.seq++
	if len(s.items) > s.size*3/4 {
		s.size *= 2
	}
}

func (s *javaTPSet) remove(p int) { delete(s.items, p) }

// first is iterator().next(): the lowest bucket, then the earliest
// inserted. all maps partition numbers to partitions.
func (s *javaTPSet) first(all []TopicPartition) int {
	best, bb, bs := -1, 0, 0
	for p, seq := range s.items {
		b := javaBucket(javaTPHash(all[p]), s.size)
		if best < 0 || b < bb || (b == bb && seq < bs) {
			best, bb, bs = p, b, seq
		}
	}
	return best
}
