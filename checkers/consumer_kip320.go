// consumer_kip320.go: which of a group's lost writes a consumer with
// KIP-320 truncation detection should have caught.
//
// The consumer checker permits a lost write on a partition with a loss
// fact: a truncation below a consumer's position (an unclean election,
// the whole ISR down with data lost) lets new records take offsets the
// consumer has passed, and a consumer without KIP-320 fetches on from its
// old position and never sees them. A consumer with KIP-320 (2.1+,
// Consumer.TruncationDetection) validates its position whenever it sees a
// new leader or leader epoch: OffsetsForLeaderEpoch asks the leader for
// the end offset of the epoch of the last record it consumed, and a
// smaller end offset rewinds it there (SubscriptionState's
// AWAIT_VALIDATION). The skip is then a bug, when the history shows it
// (kip320Skip): within one assignment of a KIP-320 process,
//
//   - it delivered record x at an offset at or past the skipped record s,
//     with x's batch leader epoch and the leader epoch its fetch carried
//     both below s's epoch in the final committed log;
//   - its very next delivery y is past x, from a fetch carrying a newer
//     leader epoch than x's, and y sits in the final committed log at its
//     offset with the epoch it was fetched with.
//
// Why that is a missed validation: leader epochs never decrease along a
// log, and a log holding y at its offset and epoch agrees with the final
// log below it (leader-epoch truncation makes every follower agree with
// its leader up to the last common epoch), so the replica that served y
// held s, of a newer epoch than x's, below x. The consumer's metadata
// moved to a newer epoch after it fetched x, so before fetching y it
// validated x's epoch against that epoch's leader, whose log already
// began an epoch newer than x's at or below s (a leader never truncates
// its own log): the end offset answered is at most s's offset, below the
// position, and the consumer rewinds (auto.offset.reset earliest: to that
// end offset; latest: it may jump past s, so such a consumer is not
// judged) and delivers s before anything past x.
//
// What stays permitted: a consumer without KIP-320 (pre-2.1, or the
// pre-kip320 variants); a skipped record of an epoch not newer than the
// last one the consumer consumed (the new leader's log of older epochs
// runs past the position: an unclean election of a replica that missed the
// epoch the consumer read, which KIP-320's end offset comparison cannot
// see); a skip across a new assignment (the position came from a commit);
// a skipped record the final log does not hold; and a record fetched from
// a replica whose log broke the agreement above: a leader given its old
// leader epoch again after losing unflushed data (divergence.go's epoch
// reuse), where x and y share the epoch the consumer fetched at, so
// nothing is judged.

package checkers

import (
	"sort"
	"strconv"
)

// groupTP is a group's partition.
type groupTP struct {
	group string
	k     tp
}

// kip320Delivery is one record a process delivered, in delivery order.
type kip320Delivery struct {
	rec Record
	op  int
}

// kip320Windows returns, per KIP-320 process of group g, its deliveries of
// k, one slice per assignment (cached).
func (cf *consumerFacts) kip320Windows(g string, k tp) [][]kip320Delivery {
	key := groupTP{g, k}
	if cf.windows == nil {
		cf.windows = map[groupTP][][]kip320Delivery{}
	}
	if w, ok := cf.windows[key]; ok {
		return w
	}
	var out [][]kip320Delivery
	open := map[string]int{} // process -> index of its current window in out
	for _, op := range cf.h.Ops {
		if op.Topic != k.topic || op.Partition != k.partition || !cf.kip320[op.Process] || cf.group[op.Process] != g {
			continue
		}
		switch {
		case op.Kind == Assign || op.Kind == Revoke:
			delete(open, op.Process)
		case op.Kind == Consume && op.Outcome == OK && len(op.Records) > 0:
			i, ok := open[op.Process]
			if !ok {
				i = len(out)
				out = append(out, nil)
				open[op.Process] = i
			}
			for _, r := range op.Records {
				out[i] = append(out[i], kip320Delivery{r, op.Index})
			}
		}
	}
	cf.windows[key] = out
	return out
}

// finalEntry returns the final committed log's entry of k at offset.
func (cf *consumerFacts) finalEntry(k tp, offset int64) (Entry, bool) {
	es := cf.con.committed[k]
	i := sort.Search(len(es), func(i int) bool { return es[i].Offset >= offset })
	if i < len(es) && es[i].Offset == offset {
		return es[i], true
	}
	return Entry{}, false
}

// kip320Skip reports whether a KIP-320 process of group g skipped s in a
// way its position validation catches (the file comment), with the
// evidence.
func (cf *consumerFacts) kip320Skip(g string, k tp, s *Op) (string, []int, bool) {
	if len(cf.kip320) == 0 {
		return "", nil, false
	}
	es, ok := cf.finalEntry(k, s.Offset)
	if !ok || es.Value != s.Value {
		return "", nil, false
	}
	for _, w := range cf.kip320Windows(g, k) {
		for i := 0; i+1 < len(w); i++ {
			x, y := w[i].rec, w[i+1].rec
			if x.Offset < s.Offset || x.LeaderEpoch >= es.LeaderEpoch || x.CurrentLeaderEpoch >= es.LeaderEpoch ||
				y.Offset <= x.Offset || y.CurrentLeaderEpoch <= x.CurrentLeaderEpoch {
				continue
			}
			if ey, ok := cf.finalEntry(k, y.Offset); !ok || ey.Value != y.Value || ey.LeaderEpoch != y.LeaderEpoch {
				continue
			}
			p := cf.h.Ops[w[i].op].Process
			return "; not permitted: " + p + " (KIP-320 truncation detection) delivered offset " + strconv.FormatInt(x.Offset, 10) +
					" of leader epoch " + strconv.Itoa(int(x.LeaderEpoch)) + ", then offset " + strconv.FormatInt(y.Offset, 10) +
					" fetched at leader epoch " + strconv.Itoa(int(y.CurrentLeaderEpoch)) + " in the same assignment, never this record of leader epoch " +
					strconv.Itoa(int(es.LeaderEpoch)) + " below its position: validating its position after the leader change rewinds to it",
				[]int{w[i].op, w[i+1].op}, true
		}
	}
	return "", nil, false
}
