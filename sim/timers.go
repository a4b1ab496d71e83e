package sim

// timerSet is the set of pending timers: a bit per id from base on. Ids
// are handed out in increasing order, so the bits of the timers still
// pending fill a window that slides forward as old ones fire or are
// cancelled; adding, testing and removing cost a few instructions, where a
// map hashed the id each time (a run sets a timer every few events).
// Memory is a bit per id between the oldest pending timer and the newest.
type timerSet struct {
	base  TimerID  // the id of bit 0 of words[0]; a multiple of 64
	words []uint64 // words[0] != 0 unless empty
}

// add adds id, which is larger than every id added before.
func (s *timerSet) add(id TimerID) {
	if len(s.words) == 0 {
		s.base = id &^ 63
	}
	i := int((id - s.base) / 64)
	for len(s.words) <= i {
		s.words = append(s.words, 0)
	}
	s.words[i] |= 1 << (id % 64)
}

// has reports whether id is pending.
func (s *timerSet) has(id TimerID) bool {
	if id < s.base {
		return false
	}
	i := (id - s.base) / 64
	return i < TimerID(len(s.words)) && s.words[i]&(1<<(id%64)) != 0
}

// remove removes id, if pending.
func (s *timerSet) remove(id TimerID) {
	if !s.has(id) {
		return
	}
	s.words[(id-s.base)/64] &^= 1 << (id % 64)
	for len(s.words) > 0 && s.words[0] == 0 {
		s.words = s.words[1:]
		s.base += 64
	}
}
